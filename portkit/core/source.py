"""SourceFile: the original bytes of one file plus what is needed to edit them faithfully."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# Kernel attributes tree-sitter-cuda does not know: with them a kernel's body parses as a
# separate, unqualified function. The parser sees spaces instead; rules that care about them
# get their positions (SourceFile.masked).
MASKED_ATTRIBUTES = re.compile(rb"\b(__cluster_dims__|__maxnreg__)\s*\([^()]*\)")
# Line endings as C compilers read them: CRLF, LF, and a lone CR (old Mac files) all end a line.
LINE_BREAK = re.compile(rb"\r\n?|\n")
LONE_CR = re.compile(rb"\r(?!\n)")
LINE = re.compile(rb"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+\Z")
INCLUDE_LINE = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"\n]+)[>\"]", re.M)   # group 1: the path as spelled


def include_matches(data: bytes):
    """INCLUDE_LINE.finditer(data), the same matches, tried only at the start of each line that
    holds a '#' (a pattern that starts with `^[ \t]*` is tried at every line: 0.08 s of the 349k
    lines of issue 34's corpus, against 0.015 s). A match starts at its line's start and ends on
    that line, so the matches at distinct lines are finditer's (tests/test_fast_paths_34.py)."""
    find, rfind, match = data.find, data.rfind, INCLUDE_LINE.match
    at = find(b"#")
    while at >= 0:
        m = match(data, rfind(b"\n", 0, at) + 1)   # re.M's `^` matches after the byte before it
        if m is not None:
            yield m
        newline = find(b"\n", at)
        if newline < 0:
            return
        at = find(b"#", newline)


def detect_newline(data: bytes) -> bytes:
    """The file's own line ending, so that inserted lines match it (CRLF files stay CRLF)."""
    i = data.find(b"\n")
    j = data.find(b"\r")
    if j != -1 and (i == -1 or j < i):
        return b"\r\n" if data[j:j + 2] == b"\r\n" else b"\r"
    return b"\n"


def split_lines(data: bytes) -> list[bytes]:
    """The lines of `data` with their endings, broken where LINE_BREAK breaks them (and only there)."""
    return LINE.findall(data)


# `#include "x"` or `#include <x>` (the delimiters must pair). No `^` anchor: a pattern that starts
# with a literal is found by a fast scan, four times faster on large trees; begins_line checks
# the rest.
INCLUDE = re.compile(rb'#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)')


def include_lines(data: bytes) -> list[tuple[bool, str]]:
    """(quoted, spelled path) of each #include line, in file order; names decode as file names do
    (project/includes.py's walk; core/filestamps.py keeps them per file)."""
    return [(m.group(1) is not None, (m.group(1) or m.group(2)).decode("utf-8", "surrogateescape").strip())
            for m in INCLUDE.finditer(data) if begins_line(data, m.start())]


def begins_line(data: bytes, at: int) -> bool:
    """Whether only spaces and tabs come before `at` on its line (`^[ \\t]*`): a directive pattern
    that starts with its '#' is found by re's fast scan for that byte, and this checks the rest
    (one that starts with `^[ \\t]*` is tried at every line)."""
    return not data[data.rfind(b"\n", 0, at) + 1:at].strip(b" \t")


@dataclass
class SourceFile:
    """One file's bytes. Edits are byte ranges on `data`; nothing here ever decodes the whole text."""

    rel: str                      # path relative to the root, forward slashes (for reports)
    data: bytes
    newline: bytes = b"\n"
    has_bom: bool = False
    _line_starts: list[int] | None = field(default=None, repr=False)

    @classmethod
    def from_bytes(cls, rel: str, data: bytes) -> "SourceFile":
        return cls(rel=rel, data=data, newline=detect_newline(data), has_bom=data.startswith(UTF8_BOM))

    @property
    def parse_bytes(self) -> bytes:
        """Bytes handed to the parser, at the same offsets as `data`: a UTF-8 BOM becomes three
        spaces, and so do the attributes the grammar does not know (MASKED_ATTRIBUTES). A lone
        CR becomes LF: the grammar ends lines, `//` comments and directives only at LF, so an
        old Mac file would otherwise be one line whose first comment hides the rest."""
        data = b"   " + self.data[3:] if self.has_bom else self.data
        if b"\r" in data:
            data = LONE_CR.sub(b"\n", data)
        masked = self.masked()
        if masked:
            parts, last = [], 0
            for start, end, _ in masked:
                parts.append(data[last:start])
                parts.append(re.sub(rb"[^\r\n]", b" ", data[start:end]))
                last = end
            parts.append(data[last:])
            data = b"".join(parts)
        return data

    def masked(self) -> list[tuple[int, int, bytes]]:
        """(start, end, name) of each attribute hidden from the parser."""
        if b"__cluster_dims__" not in self.data and b"__maxnreg__" not in self.data:
            return []
        return [(m.start(), m.end(), m.group(1)) for m in MASKED_ATTRIBUTES.finditer(self.data)]

    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            starts = [0]
            data = self.data
            if b"\r" in data:
                starts += [m.end() for m in LINE_BREAK.finditer(data)]
            else:   # the common case, twice as fast as the expression
                pos = data.find(b"\n")
                while pos != -1:
                    starts.append(pos + 1)
                    pos = data.find(b"\n", pos + 1)
            self._line_starts = starts
        return self._line_starts

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a byte offset; the column counts bytes."""
        starts = self.line_starts()
        row = bisect.bisect_right(starts, offset) - 1
        return row + 1, offset - starts[row] + 1

    def line_text(self, line: int) -> str:
        """The text of a 1-based line without its ending, decoded leniently (for snippets)."""
        starts = self.line_starts()
        if line < 1 or line > len(starts):
            return ""
        end = starts[line] if line < len(starts) else len(self.data)
        return self.data[starts[line - 1]:end].rstrip(b"\r\n").decode("utf-8", "replace")

    @property
    def line_count(self) -> int:
        data = self.data
        if not data:
            return 0
        if self._line_starts is None and b"\r" not in data:   # counting is 10x cheaper than listing
            return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        return len(self.line_starts()) - (1 if data.endswith((b"\n", b"\r")) else 0)
