"""The lines of a PyTorch extension's source that neither convert nor torch's build-time hipify can
port, as findings that say what to write there (commands/scan/torch_gaps.py sorts the edits).

convert's edit there is HIP's spelling, which nvcc does not compile, and torch's map has no word
for it, so the line would reach hipcc as CUDA. The human ports of causal-conv1d and mamba wrote
HIP's form under `#ifdef USE_ROCM` and kept CUDA's under `#ifndef USE_ROCM` (`namespace cub =
hipcub;` beside the CUB includes, `__shfl_xor(val, offset)` without the mask). The alias nvcc
compiles too (under `#ifdef USE_ROCM`, which the NVIDIA build never defines), so convert writes it
after the file's last CUB include and the `cub::` uses it serves leave the person's list; each
other line is a finding that says
that, with the line convert would have written, and carries the caveat the convert-side rule gave
for the edit (PK004's "the mask is dropped ..."), whose "Converted with a caveat" entry goes, since
nothing was converted. The code is PK506's: the extension's code torch's hipify does not fix, at
high severity, the bar of the summary's "needs a person".
"""

from __future__ import annotations

import re

from ... import rules
from ...core.edits import Edit, EditKind, apply_edits
from ...core.findings import Finding, fingerprint
from ...core.source import SourceFile
from ...engine.codes import Code
from ...engine.context import line_snippet

CODE = Code.TORCH_CUDA_EXTENSION
SEVERITY = "high"   # it does not compile for AMD until a person writes it: convert's "needs a person"
# the edits that convert one CUDA reference (the metrics count one reference for each)
REFERENCES = frozenset({EditKind.NAME, EditKind.INCLUDE, EditKind.REMOVED_INCLUDE, EditKind.POLYFILL_DIRECTIVE})
_QUALIFIED = re.compile(rb"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+")


def findings(source: SourceFile, person: list[Edit], others: list[Edit],
             caveats: list[Finding]) -> tuple[tuple[Finding, ...], list[Finding], list[Edit], list[Edit]]:
    """(one finding per line of `person`'s edits, the caveats of edits not written, to drop, the
    namespace aliases convert writes, the edits of `person` those aliases serve).
    `others`: the file's other edits, applied too where the line shows what convert would write."""
    lines: dict[int, list[Edit]] = {}
    for edit in person:
        lines.setdefault(source.position(edit.start)[0], []).append(edit)
    made, dropped = [], []
    aliased: dict[tuple[str, str], list[tuple[int, list[Edit], list[Finding]]]] = {}
    for line, edits in sorted(lines.items()):
        names = _names(edits)
        notes = [f for f in caveats if f.line == line and f.subject in names]
        dropped += notes
        alias = _alias(source, edits)
        if alias is not None:
            aliased.setdefault(alias, []).append((line, edits, notes))
        else:
            made.append(_finding(source, line, edits, others, names, notes))
    written, served = [], []
    for (old, new), uses in aliased.items():
        served += [e for _, edits, _ in uses for e in edits]
        if f"namespace {old} = {new};".encode() not in source.data:   # a re-run: the alias is there
            written.append(_alias_edit(source, old, new))
    return tuple(sorted(made, key=lambda f: f.sort_key())), dropped, written, served


def _names(edits: list[Edit]) -> list[str]:
    return list(dict.fromkeys(e.what or e.kind for e in edits if e.kind in REFERENCES)) or \
        list(dict.fromkeys(e.what or e.kind for e in edits))


def _alias(source: SourceFile, edits: list[Edit]) -> tuple[str, str] | None:
    """(old, new) where the line's edits rename a namespace and the file includes that library's
    headers (`#include <cub/...>`): the alias goes after those includes, where the human ports
    wrote it, and one alias serves every use, so the uses are one finding there."""
    shown, _ = _namespace(source.data, edits)
    if not shown:
        return None
    old = source.data[edits[0].start:edits[0].end].decode(errors="replace")
    if _last_include(source, old) is None:
        return None
    return old, edits[0].text.decode(errors="replace")


def _last_include(source: SourceFile, namespace: str) -> int | None:
    """The line of the file's last `#include` of a header under `namespace/` (None: none)."""
    found = None
    for match in re.finditer(rb'^[ \t]*#[ \t]*include[ \t]*[<"]' + re.escape(namespace.encode()) + rb"/", source.data,
                             re.M):
        found = source.position(match.start())[0]
    return found


def _alias_edit(source: SourceFile, old: str, new: str) -> Edit:
    """`namespace cub = hipcub;` under `#ifdef USE_ROCM`, on the lines after the file's last include
    of the library, where the human ports of causal-conv1d and mamba wrote it: torch's hipify turns
    those includes into hipCUB's and renames only the `cub::` names its map lists, so the alias gives
    the others their HIP meaning; the NVIDIA build, with no USE_ROCM, never sees it."""
    line = _last_include(source, old)
    starts = source.line_starts()
    at = starts[line] if line < len(starts) else len(source.data)
    nl = source.newline
    text = b"#ifdef USE_ROCM" + nl + f"namespace {old} = {new};".encode() + nl + b"#endif" + nl
    if at == len(source.data) and not source.data.endswith((b"\n", b"\r")):
        text = nl + text
    return Edit(at, at, text, f"namespace {old} = {new}", kind=EditKind.TORCH_ALIAS)


def _finding(source: SourceFile, line: int, edits: list[Edit], others: list[Edit], names: list[str],
             notes: list[Finding]) -> Finding:
    rule = rules.of(CODE)
    first, last = min(e.start for e in edits), max(e.end for e in edits)
    shown, advice = _namespace(source.data, edits)
    if not advice:
        shown, advice = ", ".join(f"`{n}`" for n in names), _line(source, line, edits + others)
    many = len(names) > 1
    message = (f"{shown} left as {'they are' if many else 'it is'}: torch's hipify does not rename "
               f"{'them' if many else 'it'} and convert's HIP form does not compile with nvcc; {advice}"
               + "".join(f" ({n.message})" for n in notes))
    snippet = line_snippet(source, line)
    end_line, end_column = source.position(last)
    return Finding(code=CODE, name=rule.name, severity=SEVERITY, category=rule.category, path=source.rel,
                   line=line, column=source.position(first)[1], end_line=end_line, end_column=end_column,
                   message=message, snippet=snippet, fix=advice, subject=names[0],
                   fingerprint=fingerprint(CODE, source.rel, names[0], snippet))


def _namespace(data: bytes, edits: list[Edit]) -> tuple[str, str]:
    """A renamed namespace (`cub::` -> `hipcub::`, torch's map has `cub::BlockLoad` but not every
    member): one alias serves the whole file, as the human ports wrote it."""
    pairs = []
    for e in edits:
        if e.kind != EditKind.NAME or data[e.end:e.end + 2] != b"::" or not e.text.decode(errors="replace").isidentifier():
            return "", ""
        used = _QUALIFIED.match(data, e.start)
        pairs.append((data[e.start:e.end].decode(), e.text.decode(), used.group().decode() if used else ""))
    old, new, _ = pairs[0]
    if any((o, n) != (old, new) for o, n, _ in pairs):
        return "", ""
    shown = ", ".join(f"`{u or old}`" for _, _, u in pairs)
    return shown, (f"under `#ifdef USE_ROCM`, after the includes, write `namespace {old} = {new};`, which gives "
                   f"the file's `{old}::` names their HIP meaning")


def _line(source: SourceFile, line: int, edits: list[Edit]) -> str:
    """The line as convert would write it, to write under `#ifdef USE_ROCM` (an edit running past
    the line: HIP's text alone)."""
    starts = source.line_starts()
    begin = starts[line - 1]
    end = starts[line] if line < len(starts) else len(source.data)
    inside = [e._replace(start=e.start - begin, end=e.end - begin, parts=()) for e in edits
              if begin <= e.start and e.end <= end and not e.parts]
    if len(inside) < sum(1 for e in edits if source.position(e.start)[0] == line):
        texts = ", ".join(f"`{e.text.decode(errors='replace')}`" for e in edits if e.text.strip())
        return f"under `#ifdef USE_ROCM` write HIP's {texts}, and keep CUDA's under `#ifndef USE_ROCM`"
    written = apply_edits(source.data[begin:end], inside).decode(errors="replace").strip()
    return f"under `#ifdef USE_ROCM` write `{written}`, and keep this line under `#ifndef USE_ROCM`"
