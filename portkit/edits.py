"""Byte-range edits on the original text, and applying them without touching other bytes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Edit:
    """Replace data[start:end] with `text`; start == end is an insertion."""

    start: int
    end: int
    text: bytes
    # the CUDA name or construct this edit converts (for metrics and reports)
    what: str = ""
    # a deletion that swallows whatever other edits fall inside it (a dropped argument)
    covers: bool = False


class OverlappingEdits(Exception):
    """Two edits touch the same bytes: a bug in a rewriter, never a user error."""


def normalize(edits: list[Edit]) -> list[Edit]:
    """Sort edits, drop exact duplicates (the same rewrite reached twice), reject overlaps."""
    covering = [e for e in edits if e.covers]
    if covering:
        edits = [e for e in edits if e.covers or not any(
            c.start <= e.start and e.end <= c.end and (c.start, c.end) != (e.start, e.end) for c in covering)]
    out: list[Edit] = []
    for edit in sorted(set(edits), key=lambda e: (e.start, e.end, e.text)):
        if out:
            prev = out[-1]
            if edit.start < prev.end or (edit.start == prev.start and edit.start == edit.end == prev.end):
                if (edit.start, edit.end, edit.text) == (prev.start, prev.end, prev.text):
                    continue
                raise OverlappingEdits(f"edits overlap: {prev} and {edit}")
        out.append(edit)
    return out


def apply_edits(data: bytes, edits: list[Edit]) -> bytes:
    """The original bytes with the edits applied; every byte outside an edit is copied as is."""
    if not edits:
        return data
    parts: list[bytes] = []
    pos = 0
    for edit in normalize(edits):
        parts.append(data[pos:edit.start])
        parts.append(edit.text)
        pos = edit.end
    parts.append(data[pos:])
    return b"".join(parts)
