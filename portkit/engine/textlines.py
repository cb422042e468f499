"""Build, dependency and Python files as lines with `#` comments blanked out.

They are not C, so they get no tree: the text rules (engine/textmatch.py, PK401, PK601) read a
file's lines with comments blanked (every column kept where it was) and report byte positions
like the tree rules do. This module sits below the rules so they need nothing of the scan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from .context import ScanContext


@dataclass(frozen=True)
class Line:
    number: int        # 1-based
    start: int         # byte offset of the line in the file
    code: str          # the line with any `#` comment blanked out (same length)
    raw: bytes

    def offset(self, index: int) -> int:
        """Byte offset in the file of character `index` of `code`."""
        return self.start + len(self.code[:index].encode("utf-8", "surrogateescape"))


def lines(ctx: ScanContext) -> Iterator[Line]:
    """The file's lines (computed once per file), with `#` comments blanked except inside quotes."""
    return iter(ctx.derived(_read_lines))


def _read_lines(ctx: ScanContext) -> list[Line]:
    out = []
    data = ctx.source.data
    starts = ctx.source.line_starts()   # LF, CRLF and lone-CR endings alike
    for number, start in enumerate(starts, 1):
        end = starts[number] if number < len(starts) else len(data)
        raw = data[start:end].rstrip(b"\r\n")
        text = raw.decode("utf-8", "surrogateescape")
        out.append(Line(number, start, _blank_comment(text), raw))
    return out


def _blank_comment(text: str) -> str:
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return text[:i] + " " * (len(text) - i)
    return text
