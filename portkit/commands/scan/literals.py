"""The integer literals the warp rules and fixes read, found by one regular expression over the
bytes rather than by a query capture per literal.

The rules look at a handful of values (rules.literal_hooks: 1, 5, 16, 31, 32, 0xffffffff), while
a tree holds a literal every few tokens: 220,000 in ggml, 660,000 in a 5 MB generated table.
Capturing each as a Python node and reading its value cost more than everything the rules then
did. Here a pattern made from the wanted values finds their spellings (decimal, hex, binary,
digit separators, u/l suffixes: every spelling engine/syntax.int_value reads as one of them), and
each match counts only where the tree has a number_literal spanning exactly those bytes, so a
value in a comment, a string or a longer token is not one. The nodes are the query's nodes: the
same rules run on the same literals (tests/test_scan_literals.py compares the two on real trees).
"""

from __future__ import annotations

import re
from functools import lru_cache

from tree_sitter import Node

from ...engine import syntax

SUFFIX = rb"[uUlL]*"              # rstrip("ul") in syntax._int_of, after lower()
_AFTER = rb"(?![0-9a-fA-FxXbB.'])"    # not the head of a longer token (0 of 0x01, 16 of 160, 32 of
# 32.0f), which also makes the alternation go on to a longer spelling; letters that are no
# number's (`0ui64` is the grammar's 0u then i64) may follow. The tree has the last word: find()
# keeps a match only where a literal spans exactly its bytes.
_WORDISH = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.'")
# A match right after one of these is the tail of a longer token (0x20, 1.5, 3'2, uint32_t). It is
# tested in find(), not by a look-behind: a pattern that starts with one is tried at every byte
# (1.8 s over ggml's 18 MB), one whose branches all start with a character is not (re skips to
# the next digit or sign in C).


def _digits(text: str) -> bytes:
    """`text`'s digits, either case for hex letters, with the digit separators C++14 allows
    between them (`'`, dropped by _int_of)."""
    return b"'*".join(f"[{c.lower()}{c.upper()}]".encode() if c.isalpha() else c.encode() for c in text)


def _spellings(value: int) -> list[bytes]:
    """Every literal spelling int(text, 0) reads as `value`: decimal (no leading zero: `032` is
    octal in C and int(..., 0) refuses it; zero itself may repeat), 0x hex and 0b binary with any
    leading zeros, and the sign the grammar makes part of a literal in some places (`- -1`). Each
    starts with a character, not an optional part (see _WORDISH)."""
    zeros = rb"(?:0'*)*"
    magnitude = abs(value)
    plain = [rb"0(?:'*0)*"] if value == 0 else [_digits(str(magnitude))]
    plain += [rb"0[xX]" + zeros + _digits(format(magnitude, "x")), rb"0[bB]" + zeros + _digits(format(magnitude, "b"))]
    if value < 0:
        return [rb"-" + s for s in plain]
    return plain + [rb"\+" + s for s in plain] + ([rb"-" + s for s in plain] if value == 0 else [])


@lru_cache(maxsize=8)
def pattern(values: frozenset[int]) -> re.Pattern[bytes]:
    spellings = sorted({s for v in values for s in _spellings(v)}, key=len, reverse=True)
    return re.compile(rb"(?:" + rb"|".join(spellings) + rb")" + SUFFIX + _AFTER)


def find(root: Node, data: bytes, values: frozenset[int]) -> list[Node]:
    """The number_literal nodes under `root` (the tree of `data`) whose value is in `values`, in
    source order."""
    if not values:
        return []
    found = []
    wordish = _WORDISH
    for m in pattern(values).finditer(data):
        start, end = m.span()
        signed = data[start] in b"+-"
        if start and data[start - 1] in wordish:
            if not signed:
                continue      # the tail of a longer token
            node = None       # `a-1`, `a+1`: the sign is an operator
        else:
            node = _literal(root, start, end)
        if node is None and signed:   # the literal after the sign, by its own value
            node = _literal(root, start + 1, end)
            if node is not None and syntax.int_value(node) not in values:
                node = None
        if node is not None:
            found.append(node)
    return found


def _literal(root: Node, start: int, end: int) -> Node | None:
    node = root.descendant_for_byte_range(start, end)
    if node is not None and node.type == "number_literal" and node.start_byte == start and node.end_byte == end:
        return node
    return None
