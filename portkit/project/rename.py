"""--rename: write CUDA file names the way ROCm projects lay them out (.cu -> .hip, .cuh -> .hip.h).

The plan is made once per run, before any file is scanned, from the list of files: which files
get a new name, and which keep theirs because the new name is taken (a.cu beside a.hip, or two
names that differ only in case on a case-insensitive disk). The plan (RenamePlan, in
engine/rename_plan.py) then travels with the project's facts, so that each file's scan can
rewrite the project's own `#include "x.cuh"` lines (rewrite/includes.py), and convert writes
each file under its new name. Build files (CMake, Make) get the new names of the sources they
list (`rename_in_build_file`). A file that turns out not to be written under its new name keeps
its old one, and so do the references to it (`keeping`; commands/renaming.py decides which).
"""

from __future__ import annotations

import os
import re

from ..core.errors import PortkitError
from ..core.files import Entry, Skipped
from ..core.output import NAME_MAX
from ..engine.rename_plan import RenamePlan, renamed

DEFAULT_MAP = ((".cu", ".hip"), (".cuh", ".hip.h"))
_SUFFIX = re.compile(r"\.[A-Za-z0-9_+]+(\.[A-Za-z0-9_+]+)*")


def parse_map(spec: str | None) -> tuple[tuple[str, str], ...]:
    """'.cu=.hip,.cuh=.hpp' -> ((".cu", ".hip"), (".cuh", ".hpp")); None gives the default."""
    if spec is None:
        return DEFAULT_MAP
    pairs = []
    for item in spec.split(","):
        old, sep, new = item.strip().partition("=")
        if not sep or not _SUFFIX.fullmatch(old) or not _SUFFIX.fullmatch(new) or old == new:
            raise PortkitError(f"--rename-map: {item.strip()!r} is not OLD=NEW with two different suffixes "
                               f"(e.g. .cu=.hip,.cuh=.hpp)")
        pairs.append((old, new))
    if len({old for old, _ in pairs}) != len(pairs):
        raise PortkitError("--rename-map: a suffix is given twice")
    return tuple(pairs)


def plan(entries: list[Entry], mapping: tuple[tuple[str, str], ...]) -> tuple[RenamePlan, list[Skipped]]:
    """Which source files get new names; a new name that is taken is reported, never overwritten."""
    taken = {e.rel.lower(): e.rel for e in entries}
    chosen: dict[str, str] = {}
    clashes: list[Skipped] = []
    for entry in entries:
        if not entry.is_source:
            continue
        new = renamed(entry.rel, mapping)
        if new is None:
            continue
        other = taken.get(new.lower()) or chosen.get(new.lower())
        if other is not None:
            clashes.append(Skipped(entry.rel, f"not renamed to {new}: {other} exists (the file keeps its name; "
                                              f"rename one of them by hand)", error=False))
            continue
        if len(os.fsencode(new.rsplit("/", 1)[-1])) > NAME_MAX:   # a legal name, too long once renamed
            clashes.append(Skipped(entry.rel, f"not renamed to {new}: a file name has at most {NAME_MAX} bytes "
                                              f"(the file keeps its name)", error=False))
            continue
        chosen[new.lower()] = entry.rel
    return RenamePlan(mapping, frozenset(chosen.values()), frozenset(c.rel for c in clashes)), clashes


_PATH_WORD = re.compile(rb"(?:\$\{[^}\s]*\}|\$\([^)\s]*\)|[A-Za-z0-9_./%@+-])+")


def rename_in_build_file(data: bytes, rel: str, plan: RenamePlan) -> bytes:
    """The build file with the renamed sources it names given their new names.

    A word is a source the build file names when, relative to the build file's folder (after a
    leading ${VAR}/ or $(VAR)/, which CMake and Make put before their own folder), it is a
    renamed file. Make's pattern rules (`%.o: %.cu`) follow when every file with that suffix
    under the build file's folder is renamed.
    """
    here = rel.rsplit("/", 1)[0] if "/" in rel else ""
    below = [f for f in plan.files if not here or f.startswith(here + "/")]

    def replace(match: re.Match) -> bytes:
        word = match.group(0)
        text = word.decode("utf-8", "surrogateescape")
        new = renamed(text, plan.mapping)
        if new is None:
            return word
        if text.startswith("%"):   # a pattern rule: only if nothing under here keeps that suffix
            old_suffix = text[1:]
            kept = [f for f in plan.kept if f.endswith(old_suffix) and (not here or f.startswith(here + "/"))]
            return new.encode() if not kept and any(f.endswith(old_suffix) for f in below) else word
        path = re.sub(r"^(\$\{[^}]*\}|\$\([^)]*\))/", "", text)
        if "$" in path:
            return word
        resolved = os.path.normpath(os.path.join(here, path)).replace(os.sep, "/")
        if resolved in plan.files:
            return (text[: len(text) - len(path)] + renamed(path, plan.mapping)).encode()
        return word
    return _PATH_WORD.sub(replace, data)

