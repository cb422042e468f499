"""A tree's paths, sorted, for the build files' globs (CMake's file(GLOB), setup.py's glob.glob).

A glob compared every path of the tree with its pattern: with a build file per component and a
glob or two in each, the work grew with the tree squared (a 3M-line corpus: 6 of the 11 s of its
CMake switches; a 10M-line one, setup.py's globs 4 s). A match begins with the pattern's literal
text, up to its first wildcard, so only the paths that begin with it are compared.
"""

from __future__ import annotations

import bisect
import re

_WILDCARD = re.compile(r"[*?\[]")   # what fnmatch reads as a pattern: a match has the text before it as it is


class TreePaths:
    """The paths of a tree, sorted once; the candidates of a glob by its literal start."""

    def __init__(self, paths: frozenset[str] | set[str]):
        self._sorted = sorted(paths)
        self._set = frozenset(paths)

    def __contains__(self, path: object) -> bool:
        return path in self._set

    def __iter__(self):
        return iter(self._sorted)

    def matching_start(self, pattern: str) -> list[str]:
        """The paths that begin with `pattern`'s text before its first wildcard (every one a match may be)."""
        prefix = pattern[:_WILDCARD.search(pattern + "*").start()]
        at = bisect.bisect_left(self._sorted, prefix)
        end = at
        while end < len(self._sorted) and self._sorted[end].startswith(prefix):
            end += 1
        return self._sorted[at:end]
