"""check: the pre-commit gate. Fails only on findings that are new: on a line the change adds
(staged diff, or against --diff-base) AND not accepted in the baseline.

Only the files given or staged are scanned, never the whole tree, so a commit of a few files in
a large repository is checked in well under a second.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from pathlib import Path

from . import baseline as baseline_file
from . import git, rules, suppress
from .audit import ScanJob
from .workers import FileTimeout, time_limit
from .config import Config
from .errors import PortkitError
from .files import kind_of, read_regular
from .includes import TreeSources
from .findings import SEVERITIES, Finding
from .mappings import parse_version
from .context import Options
from .scan import scan_source
from .source import SourceFile
from .textscan import scan_text


@dataclass(frozen=True)
class CheckOptions:
    files: tuple[Path, ...] = ()      # given by pre-commit or the user; empty: the staged files
    staged: bool = False              # compare with the index (default in a repository, no files)
    diff_base: str | None = None      # compare the working tree with this revision
    fail_on: str = "high"
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    baseline: Path | None = None
    rocm: str | None = None
    config: Config = Config()


@dataclass
class CheckResult:
    root: Path
    files: list[str] = field(default_factory=list)   # checked, relative to root
    blocking: list[Finding] = field(default_factory=list)
    accepted: int = 0        # in the baseline
    untouched: int = 0       # on lines the change does not touch
    below: int = 0           # new, but under --fail-on
    mode: str = ""
    too_slow: list[str] = field(default_factory=list)   # over the per-file time limit: not checked, so blocking


def _relative(root: Path, path: Path) -> str:
    try:
        return path.absolute().relative_to(root).as_posix()
    except ValueError:
        raise PortkitError(f"{path}: outside the project root {root}") from None


def _sources(opts: CheckOptions, cwd: Path) -> tuple[Path, dict[str, bytes], dict[str, set[int]] | None, str]:
    """(root, {path: bytes}, changed lines per path or None for "every line", mode)."""
    root = git.toplevel(cwd)
    if root is None:
        if not opts.files:
            raise PortkitError("not in a git repository: name the files to check")
        if opts.staged or opts.diff_base:
            raise PortkitError("--staged and --diff-base need a git repository")
        base = opts.config.root or cwd
        return base, _read_files(base, opts.files), None, "files (no git: baseline only)"
    # the user's revision becomes a commit id before it reaches any git command line
    base = git.commit_id(root, opts.diff_base) if opts.diff_base is not None else None
    if opts.files and not opts.staged:
        against = [base] if base else (["HEAD"] if git.has_head(root) else [git.EMPTY_TREE])
        rels = [_relative(root, p) for p in opts.files]
        contents = _read_files(root, opts.files)
        lines = _added(root, opts, against, contents)
        known = git.tracked(root, list(contents)) if not base else set(contents)
        for rel in contents:   # an untracked file is new in every line
            if rel not in known and rel not in lines:
                lines[rel] = _every_line(contents[rel])
        return root, {r: contents[r] for r in rels if r in contents}, lines, \
            f"changes against {opts.diff_base or 'HEAD'}"
    if base:
        rels = list(git.changed_files(root, [base]))
        contents = _read_files(root, [root / r for r in rels])
        return root, contents, _added(root, opts, [base], contents), f"changes against {opts.diff_base}"
    against = ["--cached"] + ([] if git.has_head(root) else [git.EMPTY_TREE])
    staged = git.changed_files(root, against)
    if opts.files:
        wanted = {_relative(root, p) for p in opts.files}
        staged = {r: c for r, c in staged.items() if r in wanted}
    scanned = TreeSources(root)
    staged = {r: c for r, c in staged.items() if scanned.scans(root / r)}
    contents = git.blobs(root, {r: blob for r, (blob, _) in staged.items()})
    return root, contents, _added(root, opts, against, contents), "staged changes"


def _added(root: Path, opts: CheckOptions, against: list[str], contents: dict[str, bytes]) -> dict[str, set[int]]:
    """Changed lines per file. A file renamed or copied from one the gate never checks (notes.txt,
    an excluded path) is new in every line: its old name vouches for nothing."""
    lines = git.added_lines(root, against, list(contents))
    for rel, (_, source) in git.changed_files(root, against).items():
        if rel in contents and source is not None and (
                kind_of(source.rsplit("/", 1)[-1]) is None or opts.config.excluded(source)):
            lines[rel] = _every_line(contents[rel])
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


def _every_line(data: bytes) -> set[int]:
    return set(range(1, SourceFile.from_bytes("", data).line_count + 1))


def _read_files(root: Path, paths) -> dict[str, bytes]:
    out = {}
    scanned = TreeSources(root)
    for path in paths:
        path = Path(path)
        if not path.is_file():
            if path.exists() or path.is_symlink():
                continue
            raise PortkitError(f"{path}: no such file")
        if not scanned.scans(path):
            continue
        try:
            out[_relative(root, path)] = read_regular(path, follow=True)
        except OSError as exc:
            raise PortkitError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return out


def run_check(opts: CheckOptions, cwd: Path | None = None) -> CheckResult:
    cwd = cwd or Path.cwd()
    if opts.fail_on not in SEVERITIES:
        raise PortkitError(f"--fail-on must be one of {', '.join(SEVERITIES)}")
    root, contents, changed, mode = _sources(opts, cwd)
    enabled = rules.selected(list(opts.select), list(opts.ignore))
    try:
        target = parse_version(opts.rocm) if opts.rocm else None
    except ValueError as exc:
        raise PortkitError(f"--rocm: {exc}") from None
    job = ScanJob(Options(audit=True, rocm=target, amd_macros=opts.config.amd_macros), enabled, hours=False)
    accepted = baseline_file.load(opts.baseline or root / opts.config.baseline)
    result = CheckResult(root=root, mode=mode)
    limit = SEVERITIES.index(opts.fail_on)
    for rel in sorted(contents):
        if opts.config.excluded(rel):
            continue
        kind = kind_of(rel.rsplit("/", 1)[-1]) or "source"
        result.files.append(rel)   # NUL bytes or not: a hazard after a NUL is still a hazard
        touched = changed.get(rel, set()) if changed is not None else None
        try:
            with time_limit(job.scan.file_timeout):
                findings = _findings(rel, contents[rel], kind, job, touched)
        except FileTimeout:     # never hang a commit, and never let an unchecked file through
            result.too_slow.append(rel)
            continue
        on_changed = [f for f in findings if touched is None or _touches(f, touched)]
        untouched = [f for f in findings if touched is not None and not _touches(f, touched)]
        result.untouched += len(untouched)
        # accepted fingerprints go first to findings on untouched lines, so that a copy of an
        # accepted hazard on a new line is the one reported
        for f in untouched:
            if accepted[f.fingerprint] > 0:
                accepted[f.fingerprint] -= 1
        for f in on_changed:
            if accepted[f.fingerprint] > 0:
                accepted[f.fingerprint] -= 1
                result.accepted += 1
            elif SEVERITIES.index(f.severity) <= limit:
                result.blocking.append(f)
            else:
                result.below += 1
    return result


def _findings(rel: str, data: bytes, kind: str, job: ScanJob, touched: set[int] | None) -> list[Finding]:
    """The file's enabled findings less the suppressed ones. A line suppression that the change
    does not touch covers no changed line: code added under an old standalone
    `// portkit: ignore[...]` comment is not what that comment was written for."""
    source = SourceFile.from_bytes(rel, data)
    scan = scan_source(source, job.scan) if kind == "source" else scan_text(source, kind, job.scan)
    kept = [f for f in scan.findings if f.code in job.enabled]
    return suppress.apply(source, kept, job.enabled, kind=kind, changed=touched)


def _touches(f: Finding, lines: set[int]) -> bool:
    return any(line in lines for line in range(f.line, f.end_line + 1))


def write_baseline(root: Path, target: Path, opts: CheckOptions) -> tuple[int, int]:
    """Audit the whole project and accept every current finding; (findings, files)."""
    from .audit import AuditOptions, audit_paths

    scan = Options(audit=True, rocm=parse_version(opts.rocm) if opts.rocm else None, amd_macros=opts.config.amd_macros)
    result = audit_paths([root], AuditOptions(scan=scan, select=opts.select, ignore=opts.ignore,
                                              exclude=opts.config.exclude))
    findings = result.findings
    from .output import write_output
    write_output(target, baseline_file.dumps(findings).encode("utf-8"))
    return len(findings), len(result.scans)


