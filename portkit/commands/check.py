"""check: the pre-commit gate. Fails only on findings that are new: on a line the change adds
(staged diff, or against --diff-base) AND not accepted in the baseline.

Only the files given or staged are scanned, never the whole tree, so a commit of a few files in
a large repository is checked in well under a second. What the change is comes from
gate_changes.py; the policy it is judged by (configuration, baseline) from gate_policy.py, read
from the version it is compared with, never from the change itself.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..project import baseline as baseline_file
from ..project import config, git, mapping_files
from . import gate_changes, gate_policy
from .. import rules
from .check_result import CheckResult
from ..core.errors import PortkitError
from ..core.files import Skipped, kind_of
from ..core.findings import SEVERITIES, Finding
from ..project.settings import resolve
from ..core.source import SourceFile
from ..engine.codes import Code

# The scanner (the rewriters, the rules, tree-sitter, the project pipeline) is imported by
# _scan_changes, when the change holds a file to scan: most commits of a repository touch no
# CUDA source, and loading it was most of such a commit's check (0.2-0.35 s of 0.3-0.4 s here).
if TYPE_CHECKING:
    from ..engine.options import Options
    from .scan import resultcache
    from .scan.job import ScanJob
    from .scan.suppress import Suppression


@dataclass(frozen=True)
class CheckOptions:
    """What the user asked for; unset settings come from the gate's policy (gate_policy.py)."""

    files: tuple[Path, ...] = ()      # given by pre-commit or the user; empty: the staged files
    staged: bool = False              # compare with the index (default in a repository, no files)
    diff_base: str | None = None      # compare the working tree with this revision
    to_ref: str | None = None         # pre-commit's PRE_COMMIT_TO_REF: from the merge base with it
    fail_on: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    baseline: Path | None = None
    rocm: str | None = None
    mappings: tuple[Path, ...] = ()   # --mappings FILE: applied after the policy's own mapping files
    cache: bool = True                # reuse scan results by file content (commands/scan/resultcache.py)


def run_check(opts: CheckOptions, cwd: Path | None = None) -> CheckResult:
    cwd = cwd or Path.cwd()
    cmp = gate_changes.collect(opts, cwd)
    enforced, proposed = _policies(cmp, opts, cwd)
    cfg = enforced.config
    fail_on = opts.fail_on or cfg.fail_on or "high"
    if fail_on not in SEVERITIES:
        raise PortkitError(f"--fail-on must be one of {', '.join(SEVERITIES)}")
    enabled = rules.selected(list(opts.select or cfg.select), list(opts.ignore or cfg.ignore))
    # the project mapping files of the policy's version, then the user's own --mappings
    tables = enforced.tables + mapping_files.read_given(opts.mappings, cfg)
    scan = resolve(cfg, rocm=opts.rocm, tables=tables, audit=True)
    accepted = enforced.accepted.copy()
    result = CheckResult(root=cmp.root, fail_on=fail_on, mode=cmp.mode)
    limit = SEVERITIES.index(fail_on)
    if proposed is not None:
        described = gate_policy.changes(*proposed)
        if described and Code.GATE_POLICY_CHANGED in enabled:
            result.policy.append(gate_policy.changed_finding(*proposed, described, enforced))
    if any(not cfg.excluded(rel) for rel in cmp.contents):
        _scan_changes(cmp, cfg, scan, enabled, accepted, result, opts.cache)
    return _sort(result, limit)


def _scan_changes(cmp: gate_changes.Comparison, cfg: config.Config, scan: Options, enabled: frozenset[str],
                  accepted: Counter, result: CheckResult, use_cache: bool) -> None:
    """Scan the change's files with the tree's facts, as the baseline's audit learned them
    (project/pipeline.py: the gate and its baseline classify every region alike), through the
    result cache."""
    from ..project import pipeline
    from .scan import resultcache
    from .scan.job import ScanJob
    job = ScanJob(scan, pipeline.tree_facts(cmp.root, scan, cfg), enabled=enabled, hours=False)
    cache = resultcache.ResultCache("gate", cmp.root, job, keep_others=KEPT_FILES) \
        if resultcache.enabled(use_cache) else None
    _check_files(cmp, cfg, job, accepted, result, cache)
    if cache is not None:
        cache.save()


KEPT_FILES = 2000   # results of files earlier checks saw, kept beside this run's (each commit's few)


# check's words for a file it could not finish (workers.Wording, built where the scanner is
# loaded): never hang a commit, and never let an unchecked file through
TIMEOUT, TOO_DEEP = "took longer than the per-file time limit to check", "is nested too deeply to check"


def _check_files(cmp: gate_changes.Comparison, cfg: config.Config, job: ScanJob, accepted: Counter,
                 result: CheckResult, cache: "resultcache.ResultCache | None") -> None:
    """Each changed file's new findings into `result`, less those the baseline accepts, through
    the one per-file driver (workers.run_files: its warm-up, time limit and words), in this process."""
    from .workers import PerFile, Wording, run_files
    # the versions before, for the files whose untouched findings _split compares: one git
    # process for all of them, not one per file
    olds = git.blobs(cmp.root, {rel: cmp.old.get(rel, "") for rel in cmp.contents if not cfg.excluded(rel)}) \
        if cmp.changed is not None else {}

    def split(rel: str, data: bytes, job: ScanJob) -> tuple[list[Finding], list[Finding]]:
        touched = cmp.changed.get(rel, set()) if cmp.changed is not None else None
        if touched is not None and cfg.excluded(cmp.renamed.get(rel, rel)):
            touched = gate_changes.every_line(cmp.contents[rel])   # its old name vouched for nothing
        return _split(cmp, rel, job, touched, result, cache, olds)
    rels = [rel for rel in sorted(cmp.contents) if not cfg.excluded(rel)]
    per = PerFile(split, lambda rel, skipped, job: skipped, Wording(TIMEOUT, TOO_DEEP),
                  read=lambda rel: (cmp.contents[rel], None))   # the bytes gate_changes read (index, revision)
    for rel, outcome in zip(rels, run_files(rels, job, per)):
        result.files.append(rel)   # NUL bytes or not: a hazard after a NUL is still a hazard
        if isinstance(outcome, Skipped):
            result.unchecked.append((rel, outcome.reason))
            continue
        on_changed, untouched = outcome
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
            else:
                result.below.append(f)


def _sort(result: CheckResult, limit: int) -> CheckResult:
    """New findings at or above the limit block; the rest are counted."""
    new = result.policy + result.below
    result.blocking = [f for f in new if SEVERITIES.index(f.severity) <= limit]
    result.below = [f for f in new if SEVERITIES.index(f.severity) > limit]
    return result


def _policies(cmp: gate_changes.Comparison, opts: CheckOptions, cwd: Path):
    """(the policy the gate applies, (before, after) when the change may alter it, else None)."""
    root = cmp.root
    if cmp.changed is None:   # no git: the work tree is all there is
        return gate_policy.from_worktree(root, cwd, config.find(cwd), opts.baseline), None
    if cmp.policy_rev is not None:
        enforced = gate_policy.from_version(root, cwd, cmp.policy_rev, opts.baseline)
        return enforced, (enforced, _proposed(lambda: gate_policy.from_worktree(
            root, cwd, config.find(cwd), opts.baseline), "the work tree"))
    enforced = gate_policy.from_version(root, cwd, None, opts.baseline)
    head_id = cmp.head if cmp.head is not None else git.head_commit(root)
    if not head_id:
        return enforced, None
    head = gate_policy.from_version(root, cwd, head_id, opts.baseline)
    return enforced, (head, enforced)


def _proposed(read, where: str) -> gate_policy.Policy:
    """The change's own policy, for the comparison only: one that does not read is a change too."""
    try:
        return read()
    except PortkitError as exc:
        return gate_policy.Policy(config.Config(), Counter(), "", "", where, problem=f"its policy does not read: {exc}")


def _split(cmp: gate_changes.Comparison, rel: str, job: ScanJob, touched: set[int] | None,
           result: CheckResult, cache: "resultcache.ResultCache | None", olds: dict[str, bytes]) -> tuple[list[Finding], list[Finding]]:
    """(findings new in this change, findings it leaves as they were). A finding on a line the
    change does not touch is still new when the file's version before held fewer findings with
    its fingerprint: the fingerprint carries the platform region, so deleting the
    `#ifndef __HIP_PLATFORM_AMD__` around a hazard makes it new."""
    data = cmp.contents[rel]
    kind = kind_of(rel.rsplit("/", 1)[-1]) or "source"
    findings, added = _findings(rel, data, kind, job, touched, cache)
    result.suppressions += [(rel, s) for s in added]
    if touched is None:
        return findings, []
    on_changed = [f for f in findings if _touches(f, touched)]
    untouched = [f for f in findings if not _touches(f, touched)]
    old_id = cmp.old.get(rel, "")
    old = olds.get(rel) if untouched and old_id.strip("0") else None   # _check_files read them in one git process
    if old is not None and _structure(old) != _structure(data):
        before = Counter(f.fingerprint for f in _findings(rel, old, kind, job, None, cache, "@before")[0])
        still = []
        for f in untouched:
            if before[f.fingerprint] > 0:
                before[f.fingerprint] -= 1
                still.append(f)
            else:
                on_changed.append(f)
        untouched = still
    return on_changed, untouched


# What decides an untouched line's region or suppression: conditionals, macro definitions and
# suppression comments. When the change leaves them all as they were, the version before need
# not be scanned: its untouched findings are the same.
_STRUCTURE = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define|undef)\b.*$"
                        rb"|^.*portkit:.*$", re.MULTILINE)


def _structure(data: bytes) -> list[bytes]:
    return [m.group().strip() for m in _STRUCTURE.finditer(data)]


def _findings(rel: str, data: bytes, kind: str, job: ScanJob, touched: set[int] | None,
              cache: "resultcache.ResultCache | None" = None, version: str = "") -> tuple[list[Finding], list[Suppression]]:
    """The file's enabled findings less the suppressed ones, and the suppressions the change adds
    (suppress.Suppression.covers says which comments still hide what on changed lines). The scan
    itself is the cache's when these bytes were checked before (`version`: which of the file's
    versions the cache keeps it as)."""
    from .scan import resultcache, suppress
    from .scan.job import scan_file
    source = SourceFile.from_bytes(rel, data)
    scan = cache.get(rel + version, kind, data) if cache is not None else None
    if scan is None:
        scan = scan_file(source, kind, job)
        if cache is not None:
            cache.put(rel + version, resultcache.content_key(kind, data), scan)
    kept = [f for f in scan.findings if f.code in job.enabled]
    added = suppress.added(source, touched, kind) if touched else []
    return suppress.apply(source, kept, job.enabled, kind=kind, changed=touched,
                          host_only=rel in job.facts.host_only), added


def _touches(f: Finding, lines: set[int]) -> bool:
    return any(line in lines for line in range(f.line, f.end_line + 1))


def write_baseline(root: Path, target: Path, cfg: config.Config, select: tuple[str, ...],
                   ignore: tuple[str, ...], rocm: str | None, mappings: tuple[Path, ...] = (),
                   in_tree: bool = False) -> tuple[int, int]:
    """Audit the whole project and accept every current finding; (findings, files). The project's
    mapping files apply, as they do to the check the baseline serves; `rocm` (--rocm) wins over the
    configuration's (project/settings.py). A baseline at the configuration's path (`in_tree`) was
    checked for links before the audit, which takes a while: it is written confined to the root and
    never through a link, so a link planted meanwhile is refused, not followed."""
    from .audit import AuditOptions, audit_paths

    scan = resolve(cfg, rocm=rocm, mappings=mappings, audit=True)
    result = audit_paths([root], AuditOptions(scan=scan, select=select, ignore=ignore, config=cfg))
    findings = result.findings
    from ..core.named_output import write_output
    from ..core.output import write_generated
    data = baseline_file.dumps(findings).encode("utf-8")
    if in_tree:
        write_generated(target, data, durable=False, hint="the baseline is never written through one; remove it",
                        root=root)
    else:   # -o FILE: the user's own choice of where it goes
        write_output(target, data)
    return len(findings), len(result.scans)


