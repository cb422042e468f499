"""--rename's plan: which files get a new name, and what an #include of one becomes.

The plan is data every file's scan reads (ProjectFacts.rename: rewrite/includes.py follows the
project's own `#include "x.cuh"` lines), so it sits in the engine with the facts; project/rename.py
makes it from the list of files (`plan`) and renames the sources build files list.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


def renamed(rel: str, mapping: tuple[tuple[str, str], ...]) -> str | None:
    """The new name of a path under the suffix map, or None when no suffix matches."""
    for old, new in sorted(mapping, key=lambda p: -len(p[0])):   # .cuh before .cu if both are given
        if rel.endswith(old) and len(rel) > len(old) and not rel.endswith("/" + old):
            return rel[: -len(old)] + new
    return None


@dataclass(frozen=True)
class RenamePlan:
    mapping: tuple[tuple[str, str], ...]
    files: frozenset[str]                  # old root-relative names of the files that are renamed
    kept: frozenset[str] = frozenset()     # files with a renamed suffix that keep their names (clashes, skips)

    def keeping(self, rels: "frozenset[str] | set[str]") -> "RenamePlan":
        """The plan with `rels` keeping their names: files that will not be written under the new
        one (skipped, refused, left as they are), which no reference may then name."""
        return RenamePlan(self.mapping, self.files - rels,
                          self.kept | {r for r in rels if renamed(r, self.mapping) is not None})

    def target(self, rel: str) -> str:
        """The name a file is written under."""
        return (renamed(rel, self.mapping) or rel) if rel in self.files else rel

    def include(self, spelled: str, includer: str) -> str | None:
        """The new spelling of an #include of a renamed project file, or None to keep it.

        The include resolves next to the including file, or, failing that, to the one renamed
        file whose path ends with the spelled path (an include directory).
        """
        new = renamed(spelled, self.mapping)
        if new is None:
            return None
        here = includer.rsplit("/", 1)[0] if "/" in includer else ""
        local = os.path.normpath(os.path.join(here, spelled)).replace(os.sep, "/")
        if local in self.files:
            return new
        if local in self.kept:   # the file beside the includer is the one it gets, and keeps its name
            return None
        parts = os.path.normpath(spelled).replace(os.sep, "/").split("/")
        tail = "/" + "/".join(p for p in parts if p not in (".", ".."))   # keeps .hidden/ as it is
        if any(("/" + f).endswith(tail) for f in self.files):
            return new
        return None
