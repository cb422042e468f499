"""The little of git that `portkit check` needs: the repository root, what is staged, which lines
a diff adds, and staged file contents. Plain `git` subprocesses; no library.

Every input is untrusted: the user's and the repository's git configuration, `.gitattributes`,
path names (any byte but NUL) and file contents. So diffs are read with options that fix their
format (explicit prefixes, no external diff, no textconv, text even for "binary" files, no colour),
names come NUL-separated or are unquoted exactly, hunks are consumed by their line counts (an
added line that reads `+++ b/x` is content, not a header), and a revision from the command line
is resolved to a commit id before it reaches git, so it can never act as an option.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import NamedTuple

from ..core.errors import PortkitError
from ..core.files import MAX_FILE_BYTES

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"   # git's well-known empty tree
_HUNK = re.compile(rb"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
# configuration that would change what `git diff` prints; the command-line options below win over
# most of it, these settings cover the rest
# core.fsmonitor names a program git would run to list changed files: a repository's own
# configuration must never make portkit run one.
_GIT = ["git", "--literal-pathspecs", "-c", "core.fsmonitor=false", "-c", "core.quotePath=false", "-c", "diff.noprefix=false",
        "-c", "diff.mnemonicPrefix=false", "-c", "diff.relative=false", "-c", "color.ui=never",
        "-c", "color.diff=never", "-c", "diff.suppressBlankEmpty=false"]
_DIFF = ["diff", "--no-ext-diff", "--no-textconv", "--text", "--no-color", "--no-relative",
         "--src-prefix=a/", "--dst-prefix=b/", "-M", "--ignore-submodules"]
# environment variables that change a diff's output behind the options' back
_UNSET = ("GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_DIFF_PATH_COUNTER", "GIT_DIFF_PATH_TOTAL")
_ESCAPES = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12,
            ord("r"): 13, ord('"'): 34, ord("\\"): 92}


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _UNSET}


def run(args: list[str], cwd: Path, stdin: bytes | None = None, check: bool = True) -> bytes:
    try:
        proc = subprocess.run(_GIT + args, cwd=cwd, input=stdin, capture_output=True, env=_env())
    except FileNotFoundError:
        raise PortkitError("git is not installed (needed to find staged changes)") from None
    if check and proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise PortkitError(f"git {' '.join(args[:2])}: {message[-1] if message else 'failed'}")
    return proc.stdout


def toplevel(cwd: Path) -> Path | None:
    """The working tree's root, or None outside a repository."""
    try:
        proc = subprocess.run(_GIT + ["rev-parse", "--show-toplevel"], cwd=cwd, capture_output=True, env=_env())
    except FileNotFoundError:
        return None
    if proc.returncode != 0:
        return None
    return Path(os.fsdecode(proc.stdout.removesuffix(b"\n")))


def has_head(root: Path) -> bool:
    return head_commit(root) is not None


def head_commit(root: Path) -> str | None:
    """HEAD's commit id, or None in a repository with no commit yet: one git process for both
    questions the commit gate asks of HEAD (is there one, which)."""
    try:
        return commit_id(root, "HEAD", "HEAD")
    except PortkitError:
        return None


def merge_base(root: Path, a: str, b: str) -> str | None:
    """The best common ancestor of two commit ids (None: unrelated histories)."""
    out = run(["merge-base", "--end-of-options", a, b], root, check=False).decode("ascii", "replace").strip()
    return out if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", out) else None


def commit_id(root: Path, rev: str, option: str = "--diff-base") -> str:
    """The full id of the commit `rev` names; a user error if it names none. A value that starts
    with `-` is refused outright: it must never reach git, where it would be an option."""
    if not rev or rev.startswith("-") or "\0" in rev:
        raise PortkitError(f"{option}: {rev!r} is not a revision")
    out = run(["rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}"], root, check=False)
    sha = out.decode("ascii", "replace").strip()
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha):
        raise PortkitError(f"{option}: {rev!r} is not a commit in this repository")
    return sha


class Change(NamedTuple):
    blob: str              # the new blob id; all zeros for a working-tree file git has not hashed
    source: str | None     # the path it was renamed or copied from
    old: str               # the old blob id; all zeros for an added file


def changed_files(root: Path, diff_args: list[str]) -> dict[str, Change]:
    """{path: Change} of the regular files added, copied, modified, renamed or changed in type by
    `git diff <diff_args>` (paths relative to root)."""
    out = run([*_DIFF, "--raw", "-z", "--no-abbrev", "--diff-filter=ACMRT", *diff_args, "--"], root)
    fields = out.split(b"\0")
    found: dict[str, Change] = {}
    i = 0
    while i < len(fields) and fields[i].startswith(b":"):
        meta = fields[i][1:].split(b" ")        # old mode, new mode, old id, new id, status
        names = 2 if meta[4][:1] in (b"R", b"C") else 1
        if meta[1][:2] == b"10":                 # 100644/100755; not a symlink or submodule
            source = os.fsdecode(fields[i + 1]) if names == 2 else None
            old = meta[2].decode("ascii") if meta[0][:2] == b"10" else "0" * len(meta[2])
            found[os.fsdecode(fields[i + names])] = Change(meta[3].decode("ascii"), source, old)
        i += 1 + names
    return found


def added_lines(root: Path, diff_args: list[str], paths: list[str]) -> dict[str, set[int]]:
    """For each of `paths`, the line numbers (in its new version) that the diff adds or changes.

    The diff is not limited to `paths`: git detects a rename only when it sees both names, and a
    renamed file must not look new in every line."""
    if not paths:
        return {}
    out = run([*_DIFF, "-U0", *diff_args, "--"], root)
    wanted = set(paths)
    return {path: found for path, found in parse_patch(out).items() if path in wanted}


def parse_patch(patch: bytes) -> dict[str, set[int]]:
    """{new path: added line numbers} of a unified diff made with the prefixes a/ and b/."""
    lines: dict[str, set[int]] = {}
    current: set[int] | None = None
    rows = patch.split(b"\n")
    i = 0
    while i < len(rows):
        raw = rows[i]
        i += 1
        if raw.startswith(b"diff --git "):
            current = None
        elif raw.startswith(b"+++ "):
            name = _name(raw[4:])
            current = None if name is None else lines.setdefault(name, set())
        elif raw.startswith(b"@@ "):
            match = _HUNK.match(raw)
            if not match:
                continue
            old = int(match.group(1) or 1)
            line, new = int(match.group(2)), int(match.group(3) or 1)
            while (old > 0 or new > 0) and i < len(rows):   # the hunk's own lines: content only
                body = rows[i][:1]
                i += 1
                if body == b"+":
                    if current is not None:
                        current.add(line)
                    line, new = line + 1, new - 1
                elif body == b"-":
                    old -= 1
                elif body == b" " or body == b"":
                    line, old, new = line + 1, old - 1, new - 1
    return lines


def _name(field: bytes) -> str | None:
    """The path in a `+++` line (None for /dev/null): C-quoted when it has unusual bytes, and
    followed by a tab when it contains a space."""
    if field.startswith(b'"'):
        field = _unquote(field)
    else:
        field = field.removesuffix(b"\t")
    if not field.startswith(b"b/"):
        return None
    return os.fsdecode(field[2:])


def _unquote(quoted: bytes) -> bytes:
    """git's C-style quoting: \\" \\\\ \\t \\n ... and three-digit octal bytes."""
    out = bytearray()
    i = 1
    while i < len(quoted) and quoted[i] != ord('"'):
        ch = quoted[i]
        if ch == ord("\\") and i + 1 < len(quoted):
            nxt = quoted[i + 1]
            if ord("0") <= nxt <= ord("7"):
                out.append(int(quoted[i + 1:i + 4], 8))
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return bytes(out)


def untracked(root: Path) -> list[str]:
    """Files git does not track and does not ignore (what `git add -A` would add)."""
    out = run(["ls-files", "-z", "--others", "--exclude-standard", "--full-name"], root)
    return [os.fsdecode(p) for p in out.split(b"\0") if p]


def regular_blobs(root: Path, rev: str | None, paths: list[str]) -> dict[str, str]:
    """{path: blob id} of those paths that are regular files in commit `rev` (a full id) or, when
    `rev` is None, in the index; symbolic links and submodules are left out."""
    if rev is None:
        out = run(["ls-files", "-s", "-z", "--full-name", "--", *paths], root)
        rows = [row.split(b"\t", 1) for row in out.split(b"\0") if row]
        meta_of = {os.fsdecode(name): head.split(b" ") for head, name in rows}   # mode id stage
        return {p: m[1].decode("ascii") for p, m in meta_of.items() if m[0][:2] == b"10" and m[2] == b"0"}
    out = run(["ls-tree", "-z", "--full-name", "--end-of-options", rev, "--", *paths], root)
    rows = [row.split(b"\t", 1) for row in out.split(b"\0") if row]
    meta_of = {os.fsdecode(name): head.split(b" ") for head, name in rows}        # mode type id
    return {p: m[2].decode("ascii") for p, m in meta_of.items() if m[0][:2] == b"10" and m[1] == b"blob"}


def tracked(root: Path, paths: list[str]) -> set[str]:
    out = run(["ls-files", "-z", "--", *paths], root) if paths else b""
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


def blobs(root: Path, ids: dict[str, str]) -> dict[str, bytes]:
    """{path: bytes} of blobs by id, with one `git cat-file --batch` (names never reach git). Their
    sizes are asked first: a blob past core/files.MAX_FILE_BYTES (a few MB of zeros in the object
    store, gigabytes once read) stops the run with one line before anything is read, as a file
    that large does in the work tree: a change nobody checked never passes the gate."""
    order = [(path, blob) for path, blob in ids.items() if blob.strip("0")]
    if not order:
        return {}
    stdin = "".join(f"{b}\n" for _, b in order).encode("ascii")
    sizes = run(["cat-file", "--batch-check=%(objectsize)"], root, stdin=stdin).split()
    for (path, _), size in zip(order, sizes):
        if size.isdigit() and int(size) > MAX_FILE_BYTES:
            raise PortkitError(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB, not read")
    out = run(["cat-file", "--batch"], root, stdin=stdin)
    contents: dict[str, bytes] = {}
    pos = 0
    for path, _ in order:
        header_end = out.index(b"\n", pos)
        header = out[pos:header_end].split()
        pos = header_end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        contents[path] = out[pos:pos + size]
        pos += size + 1
    return contents


def hooks_dir(root: Path) -> Path:
    out = run(["rev-parse", "--git-path", "hooks"], root).removesuffix(b"\n")
    path = Path(os.fsdecode(out))
    return path if path.is_absolute() else root / path
