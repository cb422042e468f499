"""Turning the translator's changes on a list of words into byte edits, and reporting its notes.

Each build format lays out its words differently: CMake arguments and Make words are separated
by blanks, the inside of a generator expression by `;`, a Python list by commas. Replacing a
word keeps its place; deleting words takes one separator with them so that the result stays
valid in that format (never a dangling comma, never a joined continuation line).
"""

from __future__ import annotations

import json

from ..engine.context import ScanContext
from .nvcc import Translation, Word
from ..engine.codes import Code
from ..engine.platform.regions import PORTED
from ..core.edits import EditKind


def note(ctx: ScanContext, code: str, start: int, end: int, message: str, subject: str) -> None:
    """A PK508 (not migrated) or PK509 (a choice made for you) finding at [start, end).

    The audit keeps PK508 only: a choice convert would make is news when converting, not a hazard.
    A PK508 in the NVIDIA side of a vendor switch becomes info "already ported" (ScanContext.report)."""
    if code == Code.BUILD_MIGRATION_CHOICE and ctx.options.audit:
        return
    regions = getattr(ctx, "regions", None)     # setup.py's reader passes an edit collector, no regions
    if code == Code.BUILD_MIGRATION_CHOICE and regions is not None and regions.kind_at(start) == PORTED:
        return      # the NVIDIA side of a vendor switch is left as written (cmake_vendor.py): no choice made
    ctx.flag(code, start, end, message, subject=subject)


def report(ctx: ScanContext, words: list[Word], translation: Translation) -> None:
    """The translation's notes (PK508/PK509), at the words they are about."""
    for change in translation.changes:
        if change.code:
            note(ctx, change.code, words[change.first].start, words[change.last - 1].end, change.message,
                 change.subject)


def rewritten(ctx: ScanContext, words: list[Word], translation: Translation) -> list[str]:
    """The words after the translation, its notes reported: for options that are written
    elsewhere (FindCUDA's OPTIONS become target_compile_options, CUDA_NVCC_FLAGS a string)."""
    report(ctx, words, translation)
    new = [w.text for w in words]
    for change in sorted(translation.changes, key=lambda c: -c.first):
        if change.words is not None:
            new[change.first:change.last] = change.words
    return new


def apply(ctx: ScanContext, words: list[Word], translation: Translation, style: str = "space") -> None:
    """Edits and findings for `translation` over `words`; style: "space", "semicolon" or "python"."""
    report(ctx, words, translation)
    for change in translation.changes:
        if change.words:
            ctx.edit(words[change.first].start, words[change.last - 1].end,
                     render(change.words, words[change.first], style).encode("utf-8"), "build", kind=EditKind.BUILD)
    for first, last in _runs(sorted(translation.deleted()), words, ctx.source.data):
        start, end = _deletion(ctx.source.data, words, first, last, style)
        ctx.edit(start, end, b"", "build", kind=EditKind.BUILD)


def render(new: list[str], like: Word, style: str) -> str:
    if style == "python":
        quote = like.text[0] if like.text[:1] in ("'", '"') else '"'
        return ", ".join(quote + w + quote if quote not in w and "\\" not in w else json.dumps(w) for w in new)
    return (";" if style == "semicolon" else " ").join(new)


def _runs(indices: list[int], words: list[Word], data: bytes) -> list[tuple[int, int]]:
    """Runs of adjacent deleted words; a run never spans text that is not a separator."""
    runs: list[tuple[int, int]] = []
    for i in indices:
        if runs and runs[-1][1] == i and not data[words[i - 1].end:words[i].start].strip(_SEPARATORS):
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


_SEPARATORS = b" \t\r\n,;\\"


def _deletion(data: bytes, words: list[Word], first: int, last: int, style: str) -> tuple[int, int]:
    """The byte range that removes words[first:last] and one separator."""
    start, end = words[first].start, words[last - 1].end
    multiline = style != "python"
    # Only a separator may go: the words given can be a selection (the nvcc word left out of a
    # make line's options), and the text between two of them then holds a word of its own.
    if first > 0:
        gap = data[words[first - 1].end:start]
        if not (multiline and b"\n" in gap) and not gap.strip(_SEPARATORS):
            return words[first - 1].end, end
    elif last < len(words):
        gap = data[end:words[last].start]
        if not (multiline and b"\n" in gap) and not gap.strip(_SEPARATORS):
            return start, words[last].start
    # The words open a line of their own: take them and the blanks after them on that line.
    while end < len(data) and data[end:end + 1] in (b" ", b"\t"):
        end += 1
    return start, end
