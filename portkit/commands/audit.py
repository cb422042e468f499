"""audit: scan every file with the rules on, aggregate findings and metrics, estimate the port.

The audit runs the converter's own scan (with the rules switched on), so its "converted
automatically" figures are the edits `portkit convert` would apply. Nothing here prints.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable

from ..core.tables import ecosystem
from ..estimate.scope import Scope
from ..estimate import effort, workitems
from .. import rules
from .scan import resultcache, suppress
from .scan.job import ScanJob
from ..core.errors import PortkitError
from ..core.files import Entry, Skipped
from ..core.findings import SEVERITIES
from ..core.findingstore import CAP_PER_CODE
from ..project import pipeline
from ..project.config import Config
from ..project.settings import resolve
from ..engine.facts import ProjectFacts
from . import torch_sources
from .results import AuditOptions, AuditResult, FileAudit
from .scan.job import scan_file
from .scan.walk import FileScan, Options
from ..core.source import SourceFile
from .workers import PerFile, Wording, run_files


def audit_bytes(rel: str, data: bytes, kind: str, job: ScanJob) -> FileScan:
    """The findings of one file, filtered by the enabled codes and its suppression comments."""
    source = SourceFile.from_bytes(rel, data)
    scan = scan_file(source, kind, job)
    kept = [f for f in scan.findings if f.code in job.enabled]
    kept = suppress.apply(source, kept, job.enabled, host_only=rel in job.facts.host_only)
    if scan.metrics.findings_not_stored:
        scan.metrics.findings_not_stored = _counted(source, kind, scan.metrics.findings_not_stored, job.enabled)
    if job.hours:
        hours = effort.default_model().file_finding_hours(kept)
        kept = [replace(f, effort_hours=h) for f, h in zip(kept, hours)]
    scan.findings = kept
    return scan


def _counted(source: SourceFile, kind: str, counts: dict, enabled: frozenset[str]) -> dict:
    """The counts of findings past the cap (findingstore.py) of enabled rules the file does not
    ignore as a whole (`file-ignore`); a line's own suppression is not matched against them."""
    whole = [s.codes for s in suppress.find(source, kind) if s.target is None]
    return {key: n for key, n in counts.items()
            if key[0] in enabled and not any(not codes or key[0].startswith(codes) for codes in whole)}


def _audit_data(entry: Entry, data: bytes, job: ScanJob) -> FileAudit:
    return FileAudit(entry, scan=audit_bytes(entry.rel, data, entry.kind, job),
                     content=resultcache.content_key(entry.kind, data))


def _not_audited(entry: Entry, skipped: Skipped | None, job: ScanJob) -> FileAudit:
    return FileAudit(entry, skipped=skipped)


def _wanted(entry: Entry, job: ScanJob) -> bool:
    return entry.kind is not None   # a file of no kind the audit knows is listed, never read


# how each file goes through the one driver (workers.run_files), and the audit's words for a file it could not finish
PER_FILE = PerFile(_audit_data, _not_audited, Wording(
    timeout="{exc} to audit: not audited (--file-timeout)",
    too_deep="nested too deeply to audit",
    internal="internal error while auditing ({kind}: {exc}); please report it"), wanted=_wanted)


def audit_paths(paths: list[Path], opts: AuditOptions,
                progress_factory: Callable[[int], Callable[[int], None] | None] | None = None) -> AuditResult:
    """Audit files and trees: findings per file, then the estimate over all of them."""
    if opts.jobs < 1:
        raise PortkitError(f"--jobs must be at least 1, not {opts.jobs}")
    if opts.fail_on is not None and opts.fail_on not in SEVERITIES:
        raise PortkitError(f"--fail-on must be one of {', '.join(SEVERITIES)}")
    enabled = rules.selected(list(opts.select), list(opts.ignore))
    project = pipeline.prepare([Path(p) for p in paths], opts.scan, opts.config, optional=True,
                               cache=resultcache.enabled(opts.cache), jobs=opts.jobs)
    entries = project.scanned
    result = AuditResult(root=project.root, options=opts, skipped=project.skipped, facts=project.facts,
                         left_out=project.left_out)
    progress = progress_factory(len(entries)) if progress_factory else None
    # the scan reads a PyTorch extension's sources as convert ports them (torch_sources.mode: --extension-sources)
    job = audit_job(opts.scan, enabled, torch_sources.mode(project.facts, opts.extension_sources))
    if opts.deep is not None:   # parse: libclang's facts first, in worker processes
        from .deep import engine
        result.deep = engine.collect(project.root, entries, opts.deep, progress_factory)
    result.files = _outcomes(entries, job, opts, project, progress)
    if result.deep is not None:  # scan: the tree-sitter findings, refined by the facts
        from .deep.refine import refine
        refine({s.rel: s for s in result.scans}, result.deep, project.root, enabled, job.hours, project.facts.host_only)
    metrics = [(s.rel, s.metrics) for s in result.scans]
    scope = result.scope = Scope.of(metrics, project.optional, project.amd, project.components,
                                    project.facts.own_packages, project.facts.carried, project.own_build,
                                    findings=result.findings)
    result.estimate = workitems.estimate(metrics, result.findings, ecosystem.default(), effort.default_model(),
                                         opts.team_size, opts.focus_hours, scope, project.facts.own_packages,
                                         project.facts.requirements, opts.scan.port_style)
    return result


def _outcomes(entries: list[Entry], job: ScanJob, opts: AuditOptions, project: pipeline.Project,
              progress: Callable[[int], None] | None) -> list[FileAudit]:
    """Each entry's outcome, in order: kept results for files whose bytes were audited before
    with the same settings (commands/scan/resultcache.py), the others scanned in `opts.jobs` processes."""
    cache = resultcache.ResultCache("scans", project.root, job) if resultcache.enabled(opts.cache) else None
    kept: dict[int, FileAudit] = {}
    if cache is not None:
        for index, entry in enumerate(entries):   # read here only what the cache may answer
            scan = cache.get_entry(entry, project.stamps)
            if scan is not None:
                kept[index] = FileAudit(entry, scan=scan)
    scanned = iter(run_files([e for i, e in enumerate(entries) if i not in kept], job, PER_FILE, opts.jobs, progress))
    outcomes = []
    for index in range(len(entries)):
        outcome = kept.get(index)
        if outcome is None:
            outcome = next(scanned)
            if cache is not None and outcome.scan is not None and outcome.content:
                cache.put(outcome.entry.rel, outcome.content, outcome.scan)
        elif progress:
            progress(1)
        outcomes.append(outcome)
    if cache is not None:
        cache.save()
        project.stamps.save()   # the files read here, for the kept results' keys next time
    return outcomes


def configured(cfg: Config, *, rocm: str | None = None, select: tuple[str, ...] = (),
               ignore: tuple[str, ...] = (), fail_on: str | None = None, scan: dict | None = None,
               mappings: tuple[Path, ...] = (), **fields) -> AuditOptions:
    """The options `portkit audit` runs with, for the CLI and the API alike, so they never drift: a
    flag (an API argument) wins over the project's configuration, which wins over the default, and
    the configuration travels whole (the pipeline applies its `exclude` and `amd-macros`). `scan`:
    further scan settings (polyfills, defines ...); `mappings`: --mappings files, after the configuration's
    own; `fields`: further AuditOptions (team_size ...)."""
    settings = resolve(cfg, rocm=rocm, mappings=mappings, audit=True, **(scan or {}))
    return AuditOptions(scan=settings, select=tuple(select) or cfg.select, ignore=tuple(ignore) or cfg.ignore,
                        fail_on=fail_on or cfg.fail_on, config=cfg, **fields)


def audit_job(scan: Options, enabled: frozenset[str], facts: ProjectFacts) -> ScanJob:
    """The audit's scan: rules on, CUDA launch and builtin spellings (what convert's default keeps),
    and a report keeps CAP_PER_CODE findings of a rule per file and counts the rest."""
    if not scan.audit:
        scan = replace(scan, audit=True, launch_syntax="cuda", builtins="cuda")
    return ScanJob(replace(scan, finding_cap=scan.finding_cap or CAP_PER_CODE), facts, enabled=enabled)
