"""The little of git that `portkit check` needs: the repository root, what is staged, which lines
a diff adds, and staged file contents. Plain `git` subprocesses; no library."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from .errors import PortkitError

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"   # git's well-known empty tree
_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_GIT = ["git", "-c", "core.quotePath=false", "-c", "diff.noprefix=false"]


def run(args: list[str], cwd: Path, stdin: bytes | None = None, check: bool = True) -> bytes:
    try:
        proc = subprocess.run(_GIT + args, cwd=cwd, input=stdin, capture_output=True)
    except FileNotFoundError:
        raise PortkitError("git is not installed (needed to find staged changes)") from None
    if check and proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise PortkitError(f"git {' '.join(args[:2])}: {message[-1] if message else 'failed'}")
    return proc.stdout


def toplevel(cwd: Path) -> Path | None:
    """The working tree's root, or None outside a repository."""
    try:
        proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=cwd, capture_output=True)
    except FileNotFoundError:
        return None
    if proc.returncode != 0:
        return None
    return Path(proc.stdout.decode("utf-8", "surrogateescape").strip())


def has_head(root: Path) -> bool:
    return subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=root,
                          capture_output=True).returncode == 0


def changed_files(root: Path, diff_args: list[str]) -> list[str]:
    """Paths (relative to root) added, copied, modified or renamed by `git diff <diff_args>`."""
    out = run(["diff", "--name-only", "-z", "-M", "--diff-filter=ACMR", "--no-ext-diff", *diff_args], root)
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def added_lines(root: Path, diff_args: list[str], paths: list[str]) -> dict[str, set[int]]:
    """For each of `paths`, the line numbers (in its new version) that the diff adds or changes.

    The diff is not limited to `paths`: git detects a rename only when it sees both names, and a
    renamed file must not look new in every line."""
    if not paths:
        return {}
    out = run(["diff", "-U0", "-M", "--no-color", "--no-ext-diff", *diff_args], root)
    lines: dict[str, set[int]] = {}
    current: set[int] | None = None
    for raw in out.split(b"\n"):
        if raw.startswith(b"+++ "):
            name = raw[4:]
            if name == b"/dev/null":
                current = None
                continue
            name = _unquote(name)
            current = lines.setdefault(name[2:] if name.startswith("b/") else name, set())
        elif raw.startswith(b"@@") and current is not None:
            match = _HUNK.match(raw)
            if match:
                start, count = int(match.group(1)), int(match.group(2) or 1)
                current.update(range(start, start + count))
    wanted = set(paths)
    return {path: found for path, found in lines.items() if path in wanted}


def tracked(root: Path, paths: list[str]) -> set[str]:
    out = run(["ls-files", "-z", "--", *paths], root) if paths else b""
    return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}


def staged_contents(root: Path, paths: list[str]) -> dict[str, bytes]:
    """The staged (index) bytes of each path, with one `git cat-file --batch`."""
    plain = [p for p in paths if "\n" not in p]
    request = "".join(f":{p}\n" for p in plain).encode("utf-8", "surrogateescape")
    out = run(["cat-file", "--batch"], root, stdin=request) if plain else b""
    contents: dict[str, bytes] = {}
    pos = 0
    for path in plain:
        header_end = out.index(b"\n", pos)
        header = out[pos:header_end].split()
        if len(header) < 3 or header[1] != b"blob":
            pos = header_end + 1
            continue
        size = int(header[2])
        contents[path] = out[header_end + 1:header_end + 1 + size]
        pos = header_end + 1 + size + 1
    for path in paths:
        if "\n" in path:
            contents[path] = run(["show", f":{path}"], root)
    return contents


def _unquote(name: bytes) -> str:
    """git's C-style quoting of unusual names ("b/na\\"me")."""
    if name.startswith(b'"') and name.endswith(b'"'):
        return name[1:-1].decode("unicode_escape").encode("latin-1").decode("utf-8", "surrogateescape")
    return name.decode("utf-8", "surrogateescape")


def hooks_dir(root: Path) -> Path:
    out = run(["rev-parse", "--git-path", "hooks"], root).decode("utf-8", "surrogateescape").strip()
    path = Path(out)
    return path if path.is_absolute() else root / path
