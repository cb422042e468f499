"""Where a file's comments are, as byte ranges: what makes a `portkit: ignore` a suppression.

A lexer, not a parser: it needs to tell comments from string and character literals, nothing
more. C-family files: `//` (with backslash-newline continuations) and `/* */`, skipping "strings",
'c'haracters, raw strings R"x(...)x" and the digit separators of 1'000'000. Build, dependency and
Python files: `#` to the end of the line, skipping quoted text ('...', "...", and Python's
triple-quoted strings, which may span lines).
"""

from __future__ import annotations

import bisect
import re

_C_NEXT = re.compile(rb"//|/\*|[\"']")
_C_STRING = {b'"': re.compile(rb'"(?:[^"\\\n]|\\.)*"?', re.S), b"'": re.compile(rb"'(?:[^'\\\n]|\\.)*'?", re.S)}
_RAW_PREFIXES = (b"R", b"LR", b"uR", b"UR", b"u8R")
_WORD = re.compile(rb"[A-Za-z0-9_]+$")
_HASH_NEXT = re.compile(rb"#|\"\"\"|'''|[\"']")
_HASH_STRING = {
    b'"""': re.compile(rb'"""(?:[^\\]|\\.)*?(?:"""|$)', re.S), b"'''": re.compile(rb"'''(?:[^\\]|\\.)*?(?:'''|$)", re.S),
    b'"': re.compile(rb'"(?:[^"\\\n]|\\.)*"?'), b"'": re.compile(rb"'(?:[^'\\\n]|\\.)*'?"),
}


def comment_spans(data: bytes, c_family: bool) -> list[tuple[int, int]]:
    """Sorted, disjoint (start, end) byte ranges of the comments in `data`."""
    return _c_spans(data) if c_family else _hash_spans(data)


def inside(spans: list[tuple[int, int]], offset: int) -> bool:
    i = bisect.bisect_right(spans, (offset, float("inf"))) - 1
    return i >= 0 and spans[i][0] <= offset < spans[i][1]


def _c_spans(data: bytes) -> list[tuple[int, int]]:
    spans = []
    pos = 0
    while (match := _C_NEXT.search(data, pos)) is not None:
        start, token = match.start(), match.group()
        if token == b"//":
            end = _line_end(data, start)
            spans.append((start, end))
        elif token == b"/*":
            close = data.find(b"*/", start + 2)
            end = len(data) if close == -1 else close + 2
            spans.append((start, end))
        else:
            end = _literal_end(data, start, token)
        pos = max(end, start + 1)
    return spans


def _line_end(data: bytes, start: int) -> int:
    """End of a `//` comment: the newline, unless a backslash continues it onto the next line."""
    while True:
        nl = data.find(b"\n", start)
        if nl == -1:
            return len(data)
        if not data[:nl].rstrip(b"\r").endswith(b"\\"):
            return nl
        start = nl + 1


def _literal_end(data: bytes, start: int, quote: bytes) -> int:
    word = _WORD.search(data, max(0, start - 16), start)
    prefix = word.group() if word else b""
    if quote == b"'" and prefix[:1].isdigit():
        return start + 1                          # 1'000'000: a digit separator
    if quote == b'"' and prefix in _RAW_PREFIXES:
        paren = data.find(b"(", start + 1, start + 18)      # a delimiter has at most 16 characters
        if paren != -1:
            closing = b")" + data[start + 1:paren] + b'"'
            close = data.find(closing, paren)
            return len(data) if close == -1 else close + len(closing)
    return _C_STRING[quote].match(data, start).end()


def _hash_spans(data: bytes) -> list[tuple[int, int]]:
    spans = []
    pos = 0
    while (match := _HASH_NEXT.search(data, pos)) is not None:
        start, token = match.start(), match.group()
        if token == b"#":
            nl = data.find(b"\n", start)
            end = len(data) if nl == -1 else nl
            spans.append((start, end))
        else:
            end = _HASH_STRING[token].match(data, start).end()
        pos = max(end, start + 1)
    return spans
