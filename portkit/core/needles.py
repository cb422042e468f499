"""Whether any of many byte strings occurs in a text, in fewer passes over it.

Several passes ask this of every file before doing real work: does it name a polyfill (35
names), a feature flag of the tree (ggml: ~60), a library whose calls a rule reads (15
prefixes)? One `in` per string costs one pass over the file each; an alternation in `re` is
slower still (it tries every branch at every position). Here strings that begin alike are
searched together first, by the prefix they share (`cusparseGetError` for cusparseGetErrorName
and cusparseGetErrorString, `__v` for the eight SIMD names), and apart only where that prefix
occurs. The answer is exactly `any(s in data for s in strings)` (tests/test_fast_paths_34.py).
"""

from __future__ import annotations

import os
from typing import Iterable

GROUPED_BY = 3   # strings are grouped by their next 3 bytes, at each level


class Needles:
    """A fixed set of byte strings, for `any_in`: a tree of shared prefixes. A node's prefix is
    searched; a leaf's prefix is one of the strings, an inner node's is what its children share
    (`GGML_` for ggml's sixty feature flags, then `GGML_USE_`, `GGML_CUDA_` ... under it), so a
    branch whose prefix is absent costs one search for all its strings."""

    def __init__(self, strings: Iterable[bytes]):
        self.nodes = _build(sorted(set(strings)), 0)

    def any_in(self, data: bytes) -> bool:
        return _any(self.nodes, data)


Node = tuple[bytes, bool, tuple]   # (prefix, a leaf: the prefix is one of the strings, children)


def _build(strings: list[bytes], shared: int) -> tuple[Node, ...]:
    """Nodes for `strings`, which share their first `shared` bytes, grouped by the next few."""
    groups: dict[bytes, list[bytes]] = {}
    for s in strings:
        groups.setdefault(s[:shared + GROUPED_BY], []).append(s)
    nodes = []
    for members in groups.values():
        prefix = os.path.commonprefix(members)
        if prefix in members:   # the shortest is in every other one: finding it is enough
            nodes.append((prefix, True, ()))
        else:
            nodes.append((prefix, False, _build(members, len(prefix))))
    return tuple(nodes)


def _any(nodes: tuple[Node, ...], data: bytes) -> bool:
    for prefix, leaf, children in nodes:
        if prefix in data and (leaf or _any(children, data)):
            return True
    return False


def finditer_from(pattern, data: bytes, words: tuple[bytes, ...]):
    """`pattern.finditer(data)` for a pattern each match of which starts where one of `words`
    does (after a zero-width `\\b` at most): the words are found with bytes.find, at memchr's
    speed, and the pattern is tried there only. A pattern that opens with `\\b(?:struct|class)`
    is otherwise tried at every byte of the file (re skips ahead only to a literal, or to one
    character of a set that here holds 's', 'c', 'u', 't'). The matches are the same, in the same
    order: the leftmost match at or after where the last one ended, as finditer finds them
    (`re.match` at an offset still reads the byte before it for `\\b`); tests/test_fast_paths_34.py."""
    starts: list[int] = []
    find = data.find
    for word in words:
        at = find(word)
        while at >= 0:
            starts.append(at)
            at = find(word, at + 1)
    starts.sort()
    match = pattern.match
    end = 0
    for at in starts:
        if at < end:
            continue
        m = match(data, at)
        if m is not None and m.end() > at:   # none of these patterns matches empty text
            end = m.end()
            yield m
