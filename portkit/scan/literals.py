"""The integer literals the warp rules and fixes read, found by one regular expression over the
bytes rather than by a query capture per literal.

The rules look at a handful of values (rules.literal_hooks: 1, 5, 16, 31, 32, 0xffffffff), while
a tree holds a literal every few tokens: 220,000 in ggml, 660,000 in a 5 MB generated table.
Capturing each as a Python node and reading its value cost more than everything the rules then
did. Here a pattern made from the wanted values finds their spellings (decimal, hex, binary,
digit separators, u/l suffixes: every spelling rules/_tree.int_value reads as one of them), and
each match counts only where the tree has a number_literal spanning exactly those bytes, so a
value in a comment, a string or a longer token is not one. The nodes are the query's nodes: the
same rules run on the same literals (tests/test_scan_literals.py compares the two on real trees).
"""

from __future__ import annotations

import re
from functools import lru_cache

from tree_sitter import Node

from ..rules import _tree

SUFFIX = rb"[ul]*"                # rstrip("ul") in _tree._int_of, after lower()
_BEFORE = rb"(?<![\w.'])"             # not the tail of a longer token (0x20, 1.5, 3'2)
_AFTER = rb"(?![0-9a-fxb.'])"         # nor its head (0 of 0x01, 16 of 160, 32 of 32.0f), which also
# makes the alternation go on to a longer spelling; letters that are no number's (`0ui64` is the
# grammar's 0u then i64) may follow. The tree has the last word: find() keeps a match only where a
# literal spans exactly its bytes.


def _digits(text: str) -> bytes:
    """`text`'s digits, with the digit separators C++14 allows between them (`'`, dropped by
    _int_of), after any zeros a hex or binary spelling may lead with."""
    return b"'*".join(re.escape(c.encode()) for c in text)


def _spellings(value: int) -> list[bytes]:
    """Every literal spelling int(text, 0) reads as `value`: decimal (no leading zero: `032` is
    octal in C and int(..., 0) refuses it; zero itself may repeat), 0x hex and 0b binary with any
    leading zeros, and the sign the grammar makes part of a literal in some places (`- -1`)."""
    zeros = rb"(?:0'*)*"
    if value == 0:
        return [rb"[+-]?0(?:'*0)*", rb"[+-]?0x" + zeros + rb"0", rb"[+-]?0b" + zeros + rb"0"]
    sign = rb"-" if value < 0 else rb"\+?"
    value = abs(value)
    return [sign + _digits(str(value)), sign + rb"0x" + zeros + _digits(format(value, "x")),
            sign + rb"0b" + zeros + _digits(format(value, "b"))]


@lru_cache(maxsize=8)
def pattern(values: frozenset[int]) -> re.Pattern[bytes]:
    spellings = sorted({s for v in values for s in _spellings(v)}, key=len, reverse=True)
    return re.compile(_BEFORE + rb"(?:" + rb"|".join(spellings) + rb")" + SUFFIX + _AFTER, re.IGNORECASE)


def find(root: Node, data: bytes, values: frozenset[int]) -> list[Node]:
    """The number_literal nodes under `root` (the tree of `data`) whose value is in `values`, in
    source order."""
    if not values:
        return []
    found = []
    for m in pattern(values).finditer(data):
        node = _literal(root, m.start(), m.end())
        if node is None and data[m.start()] in b"+-":   # elsewhere the sign is an operator, and
            node = _literal(root, m.start() + 1, m.end())   # the literal after it has its own value
            if node is not None and _tree.int_value(node) not in values:
                node = None
        if node is not None:
            found.append(node)
    return found


def _literal(root: Node, start: int, end: int) -> Node | None:
    node = root.descendant_for_byte_range(start, end)
    if node is not None and node.type == "number_literal" and node.start_byte == start and node.end_byte == end:
        return node
    return None
