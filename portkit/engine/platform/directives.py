"""The preprocessor directives of a file, read without a preprocessor.

Every walk of the platform model (regions.py's classification, compilers.py's reading of the CUDA
compiler's macros, ppguards.py's guard groups, facts.py's learning) reads the same directives
the same way, so that they agree on every branch: one reader, here.
"""

from __future__ import annotations

import re

from ...core.source import begins_line

# Searched from the `#` (a literal prefix the regex engine finds fast); directives() checks that
# only blanks stand before it on its line.
_DIRECTIVE = re.compile(rb"#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define|undef|error)\b([^\n]*)")
COMMENT = re.compile(r"/\*.*?\*/|//.*", re.S)


def directives(data: bytes, errors: bool = False):
    """The conditional and #define/#undef directives of a file, in order (and #error with
    `errors`, for the guard rule: ppguards.py)."""
    for m in _DIRECTIVE.finditer(data):
        if not errors and m.group(1) == b"error":
            continue
        if begins_line(data, m.start()):
            yield m


def directive_text(data: bytes, m: re.Match) -> tuple[bytes, int]:
    """The directive's text after its keyword, continuation lines joined, and where the next line starts."""
    text, end = m.group(2), m.end()
    while text.endswith((b"\\", b"\\\r")) and end < len(data):
        nl = data.find(b"\n", end + 1)
        nxt = data[end + 1:len(data) if nl == -1 else nl]
        text, end = text.rstrip(b"\r")[:-1] + b" " + nxt, (len(data) if nl == -1 else nl)
    return text, min(end + 1, len(data))


def condition(kind: str, text: str) -> tuple[str, str | None]:
    """The directive as an #if expression, and X for a positive `defined(X)` test."""
    text = COMMENT.sub(" ", text.replace("\\\n", " ").replace("\\\r\n", " ")).strip()
    if kind in ("ifdef", "elifdef"):
        name = text.split()[0] if text.split() else ""
        return f"defined({name})", name or None
    if kind in ("ifndef", "elifndef"):
        name = text.split()[0] if text.split() else ""
        return f"!defined({name})", None
    m = re.fullmatch(r"\(?\s*defined\s*\(?\s*(\w+)\s*\)?\s*\)?", text)
    return text, (m.group(1) if m else None)
