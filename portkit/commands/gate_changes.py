"""What the commit gate compares: which files, their new bytes, the lines the change adds, the
old version of each, and where the gate's policy comes from.

Four ways in, one answer (Comparison):
- `check --staged` (the git hook): the index against HEAD; policy from the index;
- `check FILE...` (the pre-commit framework during a commit): the work tree against HEAD;
  policy from the index. A file given that does not differ from HEAD (`pre-commit run
  --all-files`) has no change to compare with: it is checked whole, against the baseline, as a
  plain audit of it would be, never passed unread;
- `check --diff-base REV [FILE...]`, or pre-commit's PRE_COMMIT_FROM_REF/TO_REF (CI): the work
  tree against REV (the merge base with TO_REF); policy from REV. Files git does not track and
  does not ignore are new in every line;
- outside a repository, named files only: every line is new; policy from the work tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..project import config, git
from ..core.errors import PortkitError
from ..core.files import kind_of, read_regular
from ..project.includes import TreeSources
from ..core.source import SourceFile


@dataclass
class Comparison:
    root: Path
    contents: dict[str, bytes]               # new bytes of the files to check, root-relative
    changed: dict[str, set[int]] | None      # lines the change adds per file; None: every line
    mode: str                                # how the change was found, for the summary
    old: dict[str, str] = field(default_factory=dict)   # blob id of each file's version before
    policy_rev: str | None = None            # the commit the policy comes from; None: see below
    policy_in_index: bool = False            # policy from the index (--staged, files vs HEAD)
    unchanged: int = 0                       # files given that the change does not touch: checked whole
    renamed: dict[str, str] = field(default_factory=dict)   # new path -> the path it was renamed from
    head: str | None = None                  # HEAD's commit id when collect() asked git ("": no commit yet)


def collect(opts, cwd: Path) -> Comparison:
    root = git.toplevel(cwd)
    if root is None:
        if not opts.files:
            raise PortkitError("not in a git repository: name the files to check")
        if opts.staged or opts.diff_base:
            raise PortkitError("--staged and --diff-base need a git repository")
        base = config.find(cwd).root or cwd
        return Comparison(base, read_files(base, opts.files), None, "files (no git: baseline only)")
    # the user's revision becomes a commit id before it reaches any git command line
    base = git.commit_id(root, opts.diff_base) if opts.diff_base is not None else None
    shown = opts.diff_base
    if base and opts.to_ref:
        to = git.commit_id(root, opts.to_ref, "--to-ref")
        base = git.merge_base(root, base, to) or base
        shown = f"the merge base of {opts.diff_base} and {opts.to_ref}"
    if opts.files and not opts.staged:
        return _given_files(root, opts, base, shown)
    if base:
        changes = git.changed_files(root, [base])
        scanned = TreeSources(root)
        rels = [r for r in changes if scanned.scans(root / r)]
        fresh = [r for r in git.untracked(root) if scanned.scans(root / r)]
        contents = read_files(root, [root / r for r in rels + fresh], scanned)
        lines = added(root, [base], contents, changes)
        for rel in fresh:
            if rel in contents:
                lines[rel] = every_line(contents[rel])
        return Comparison(root, contents, lines, f"changes against {shown}",
                          old={r: c.old for r, c in changes.items()}, policy_rev=base, renamed=_renamed(changes))
    head = git.head_commit(root) or ""
    against = ["--cached"] + ([] if head else [git.EMPTY_TREE])
    staged = git.changed_files(root, against)
    if opts.files:
        wanted = {relative(root, p) for p in opts.files}
        staged = {r: c for r, c in staged.items() if r in wanted}
    scanned = TreeSources(root)   # any name a source of the tree includes is scanned too (includes.py)
    staged = {r: c for r, c in staged.items() if scanned.scans(root / r)}
    contents = git.blobs(root, {r: c.blob for r, c in staged.items()})
    return Comparison(root, contents, added(root, against, contents, staged), "staged changes",
                      old={r: c.old for r, c in staged.items()}, policy_in_index=True, renamed=_renamed(staged),
                      head=head)


def _given_files(root: Path, opts, base: str | None, shown: str | None) -> Comparison:
    """Named files in the work tree, against `base` or HEAD."""
    against = [base] if base else (["HEAD"] if git.has_head(root) else [git.EMPTY_TREE])
    rels = [relative(root, p) for p in opts.files]
    contents = read_files(root, opts.files)
    changes = git.changed_files(root, against)
    lines = added(root, against, contents, changes)
    known = git.tracked(root, list(contents))
    for rel in contents:   # a file git does not track is new in every line
        if rel not in known and rel not in lines:
            lines[rel] = every_line(contents[rel])
    mode = f"changes against {shown or 'HEAD'}"
    whole = [] if base else [rel for rel in contents if rel not in changes and rel in known]
    for rel in whole:   # no change to compare with (`pre-commit run --all-files`): the file whole
        lines[rel] = every_line(contents[rel])
    if whole:
        mode = _whole_mode(len(whole), len(contents), mode)
    return Comparison(root, {r: contents[r] for r in rels if r in contents}, lines, mode,
                      old={r: c.old for r, c in changes.items()}, policy_rev=base, policy_in_index=base is None,
                      unchanged=len(whole), renamed=_renamed(changes))


def _whole_mode(whole: int, given: int, mode: str) -> str:
    """How the summary names a check of files with no change: each is checked whole, against the
    baseline, as a plain audit of it would be. Passing them unread ("nothing to compare", then
    pre-commit's green "Passed") checked nothing."""
    if whole == given:
        return "no change to compare: each file whole, against the baseline"
    return f"{mode}; {whole} file{'s' if whole != 1 else ''} without a change checked whole, against the baseline"


def _renamed(changes: dict[str, git.Change]) -> dict[str, str]:
    return {rel: change.source for rel, change in changes.items() if change.source is not None}


def relative(root: Path, path: Path) -> str:
    try:
        return path.absolute().relative_to(root).as_posix()
    except ValueError:
        raise PortkitError(f"{path}: outside the project root {root}") from None


def added(root: Path, against: list[str], contents: dict[str, bytes],
          changes: dict[str, git.Change]) -> dict[str, set[int]]:
    """Changed lines per file. A file renamed or copied from one the gate never checks (notes.txt)
    is new in every line: its old name vouches for nothing (check does the same for a file
    renamed from an excluded path, once it knows the policy: Comparison.renamed)."""
    lines = git.added_lines(root, against, list(contents))
    for rel, change in changes.items():
        if rel in contents and change.source is not None and kind_of(change.source.rsplit("/", 1)[-1]) is None:
            lines[rel] = every_line(contents[rel])
    for rel, changed in lines.items():
        if rel in contents and _LONE_CR.search(contents[rel]):
            lines[rel] = _source_lines(contents[rel], changed)
    return lines


# git numbers lines by LF; findings number them as the source does (a lone CR ends a line too).
_LONE_CR = re.compile(rb"\r(?!\n)")


def _source_lines(data: bytes, lf_lines: set[int]) -> set[int]:
    """The source's line numbers inside the LF-numbered lines git reports as changed: one git line
    of an old-Mac (CR) file is many source lines, and a hazard on any of them is new."""
    out, lf = set(), 1
    starts = SourceFile.from_bytes("", data).line_starts()
    for number, start in enumerate(starts, 1):
        lf += data.count(b"\n", starts[number - 2] if number > 1 else 0, start)
        if lf in lf_lines:
            out.add(number)
    return out


def every_line(data: bytes) -> set[int]:
    return set(range(1, SourceFile.from_bytes("", data).line_count + 1))


def read_files(root: Path, paths, scanned: TreeSources | None = None) -> dict[str, bytes]:
    """The files of `paths` check scans, by root-relative name (`scanned`: the tree's answer to
    which those are, when the caller has one already)."""
    out = {}
    scanned = scanned or TreeSources(root)
    for path in paths:
        path = Path(path)
        if not path.is_file():
            if path.exists() or path.is_symlink():
                continue
            raise PortkitError(f"{path}: no such file")
        if not scanned.scans(path):
            continue
        try:
            out[relative(root, path)] = read_regular(path, follow=True)
        except OSError as exc:
            raise PortkitError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return out
