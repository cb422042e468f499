"""The git work tree a path lies in, found by looking for `.git` on the way up: no git run.

SARIF for GitHub code scanning names files relative to the repository root. Running
`git rev-parse --show-toplevel` would read the tree's own configuration (and fail on a checkout
another user owns, as in CI containers, where git refuses the "dubious ownership"); the root is
only the nearest directory above the path that holds a `.git` directory (a repository) or a
`.git` file (a worktree or a submodule: `gitdir: ...`), which is what git's own discovery finds.
Nothing in the tree is run or trusted beyond that.
"""

from __future__ import annotations

import os
from pathlib import Path


def root_of(path: Path) -> Path | None:
    """The work tree's root above `path` (itself included, links resolved), or None outside one."""
    try:
        here = path.resolve()
    except (OSError, RuntimeError):
        return None
    if not here.is_dir():
        here = here.parent
    for candidate in (here, *here.parents):
        if _is_git(candidate / ".git"):
            return candidate
    return None


def _is_git(dot_git: Path) -> bool:
    try:
        if dot_git.is_dir():
            return (dot_git / "HEAD").is_file()
        if dot_git.is_file():
            with open(dot_git, "rb") as f:
                return f.read(8) == b"gitdir: "
    except OSError:
        return False
    return False


def relative_to_root(path: Path) -> tuple[Path | None, str]:
    """(the work tree's root or None, `path` relative to it with forward slashes; "" at the root).
    Outside a work tree the path is its own root."""
    root = root_of(path)
    if root is None:
        return None, ""
    rel = os.path.relpath(path.resolve(), root)
    return root, "" if rel == "." else Path(rel).as_posix()
