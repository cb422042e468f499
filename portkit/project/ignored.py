"""The files git ignores: never part of the project a command sees.

In a git work tree every command takes the files git would: tracked ones, and untracked ones
that no .gitignore, .git/info/exclude or core.excludesFile ignores. A `build/_deps/b.cu` CMake
fetched or a `.venv/` is not the project's code: converting it rewrites someone else's files,
auditing it prices them. Files named on the command line are taken all the same (the user asked
for them), a tracked file is never ignored, whatever .gitignore says (git's own rule), and a
submodule is taken whole (its own files are its repository's business).

git lists the files it takes itself (`git ls-files --cached --others --exclude-standard`), so the
patterns mean exactly what they mean to git: negations, `**`, nested .gitignore files. It runs
with project.git's hardened options: a repository's configuration can make it read other
ignore files, never run a program (core.fsmonitor is forced off). Outside a work tree, or
without git, nothing is ignored.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import PortkitError
from . import git


@dataclass(frozen=True)
class Kept:
    """What git takes under some folders, by absolute path: files (and submodules, taken whole),
    and every folder on the way to one. Anything else under those folders is ignored."""

    roots: frozenset[str]       # the folders asked about
    taken: frozenset[str]       # files and submodule folders git lists
    on_the_way: frozenset[str]  # folders holding something taken

    def folder(self, path: Path) -> bool:
        """True: git ignores everything in the folder `path`, so the walk leaves it."""
        text = str(path)
        return self._governed(text) and text not in self.taken and text not in self.on_the_way \
            and not self._in_submodule(text)

    def file(self, path: Path) -> bool:
        """True: git ignores the file `path`."""
        text = str(path)
        return self._governed(text) and text not in self.taken and not self._in_submodule(text)

    def _governed(self, text: str) -> bool:
        return any(text.startswith(root + os.sep) for root in self.roots)

    def _in_submodule(self, text: str) -> bool:
        parent = os.path.dirname(text)
        while parent not in self.roots and len(parent) > 1:
            if parent in self.taken:
                return True
            parent = os.path.dirname(parent)
        return False


def ignored_under(folders: list[Path]) -> Kept | None:
    """What git takes under each folder (absolute, as given); None when no folder is in a work tree."""
    roots: set[str] = set()
    taken: set[str] = set()
    for folder in folders:
        top = git.toplevel(folder)
        if top is None:
            continue
        try:
            out = git.run(["ls-files", "-z", "--cached", "--others", "--exclude-standard",
                           *_taken_as_named(top, folder), "--", "."], folder, check=False)
        except PortkitError:   # git vanished mid-run: take every file rather than fail the command
            continue
        roots.add(str(folder))
        taken.update(str(folder / os.fsdecode(raw)) for raw in out.split(b"\0") if raw)
    if not roots:
        return None
    return _kept(roots, taken)


def _taken_as_named(top: Path, folder: Path) -> list[str]:
    """git's own options that take a folder named on the command line, as ruff and ripgrep do,
    though it or a folder above it is ignored (`portkit audit out/x` where .gitignore holds `out/`:
    before, git listed nothing and the audit said "nothing to port"). Each folder from the top down
    to it is re-included by a command-line pattern, which outranks every .gitignore; the patterns
    inside it (`*.o`, its own .gitignore) still apply to what it holds."""
    try:
        rel = folder.resolve().relative_to(top.resolve())
    except (OSError, ValueError):
        return []
    parts = [_GLOB.sub(r"\\\g<0>", part) for part in rel.parts]
    return [f"--exclude=!/{'/'.join(parts[:depth])}/" for depth in range(1, len(parts) + 1)]


_GLOB = re.compile(r"[\\*?\[\]! #]")   # what a gitignore pattern reads as more than the character itself


def _kept(roots: set[str], taken: set[str]) -> Kept:
    """The answer, with every folder on the way to a taken file (the walk enters those)."""
    on_the_way: set[str] = set()
    for path in taken:
        parent = os.path.dirname(path)
        while parent not in on_the_way and parent not in roots and len(parent) > 1:
            on_the_way.add(parent)
            parent = os.path.dirname(parent)
    return Kept(frozenset(roots), frozenset(taken), frozenset(on_the_way))
