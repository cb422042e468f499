"""What `portkit audit` says needs a person in the tree convert was given, for convert's summary.

convert's own scan runs the converter only (the rules read the tree in the audit's scan, which keeps
no edits: commands/scan/walk.py), so on its own it saw no warp-size or PTX finding and said
"100.0% converted" where the audit said 4 findings need a person. The audit's scan runs here with
the settings convert resolved (the same ROCm, mapping files, polyfills, -D/-U, configuration), its
result cache shared with `portkit audit`, and the findings its headline counts are kept: the same
codes and lines, so convert's "N sites need a person" and the audit's are one number.

It rides on convert's own pass (Summary): a file both scan is read once, by convert's worker, which
scans it for convert and then for the audit on the tree convert's scan parsed (core/parse.kept), so
the summary no longer reads, parses and sends every file through a second pool. The files only the
audit reads (AMD-built files, carried copies) are scanned before convert writes anything, and a
file whose conversion convert's result cache answers is audited as its kept result is taken: every
file's findings are of its bytes before any is written (--in-place).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Iterator, NamedTuple

from .. import rules
from ..core.files import Entry
from ..core.findings import Finding
from ..engine.context import FileScan
from ..project.pipeline import Project
from . import torch_sources
from .results import AuditOptions, ConvertOptions, FileAudit, FileOutcome
from .scan import resultcache
from .scan.job import Job, ScanJob
from .scan.walk import warm_up
from .workers import PerFile, Wording, one_file, run_files

Finish = Callable[[Entry, bytes, FileScan, Job], FileOutcome]   # convert_cache's: a kept result's outcome
NEEDS_PERSON = ("blocker", "high")   # the audit's headline: "N findings need a person (high severity or worse)"


def audit_options(opts: ConvertOptions) -> AuditOptions:
    """`portkit audit`'s options for the run convert was asked for: its scan settings with the
    rules on (--fix, the launch and builtin spellings are convert's choices of output, not what the
    audit reads), the configuration's select and ignore."""
    scan = replace(opts.scan, audit=True, fixes=frozenset(), launch_syntax="cuda", builtins="cuda")
    cfg = opts.config
    return AuditOptions(scan=scan, select=cfg.select, ignore=cfg.ignore, config=cfg, jobs=opts.jobs, cache=opts.cache,
                        extension_sources=opts.extension_sources)


@dataclass(frozen=True)
class Paired(Job):
    """convert's job (its settings and facts: `convert`'s functions read them), with the audit's for
    the files `rels` whose audit rides on convert's read and parse (picklable: module-level functions)."""

    convert: PerFile = field(kw_only=True)
    audit: ScanJob = field(kw_only=True)
    rels: frozenset[str] = field(kw_only=True)


def _both(entry: Entry, data: bytes, job: Paired) -> tuple[FileOutcome, FileAudit | None]:
    """convert's outcome, then the audit's of the same bytes (its tree parsed once), each under its
    own time limit and in its own words, as each command's run would."""
    from . import audit
    outcome = one_file(entry, data, job, job.convert)
    return outcome, one_file(entry, data, job.audit, audit.PER_FILE) if entry.rel in job.rels else None


def _neither(entry: Entry, skipped, job: Paired) -> tuple[FileOutcome, FileAudit | None]:
    from . import audit
    outcome = job.convert.skipped(entry, skipped, job)
    return outcome, audit.PER_FILE.skipped(entry, skipped, job.audit) if entry.rel in job.rels else None


# the two commands' own functions and words are applied inside (workers.one_file): none here
PAIRED = PerFile(_both, _neither, Wording())


class Summary:
    """needs_person for one convert run: the audit's view of the tree (`project`: pipeline.prepare's
    Project.audit), its result cache, and the audit's scan of each file as convert's pass reads it."""

    def __init__(self, project: Project, opts: ConvertOptions, convert_entries: list[Entry]):
        from . import audit
        options = audit_options(opts)
        # a PyTorch extension's sources as this run ports them (--extension-sources), as `portkit audit` reads them
        facts = torch_sources.mode(project.facts, options.extension_sources)
        self.job = audit.audit_job(options.scan, rules.selected(list(options.select), list(options.ignore)), facts)
        self.entries, self.jobs = project.scanned, opts.jobs
        self.cache = resultcache.ResultCache("scans", project.root, self.job) if resultcache.enabled(opts.cache) else None
        self.done: dict[str, FileAudit] = {}
        self.scanned: set[str] = set()   # audited in this run (not from the cache): kept for the next
        for entry in self.entries if self.cache is not None else ():
            scan = self.cache.get_entry(entry, project.stamps)
            if scan is not None:
                self.done[entry.rel] = FileAudit(entry, scan=scan)
        mine = {e.rel: e.kind for e in convert_entries if e.kind is not None}
        todo = [e for e in self.entries if e.rel not in self.done]
        self.rels = frozenset(e.rel for e in todo if mine.get(e.rel) == e.kind)
        if self.rels:   # the audit's query compiled before convert's workers start, as convert's is (workers.py)
            warm_up(self.job.scan)
        self._scan([e for e in todo if e.rel not in self.rels])   # the files convert leaves, before it writes

    def scan_many(self, job: Job, per: PerFile, progress: Callable[[int], None] | None
                  ) -> Callable[[list[Entry]], Iterator[FileOutcome]]:
        """convert's scan of some files (`per` with `job`), each one the audit reads audited on the way."""
        paired = Paired(job.scan, job.facts, convert=per, audit=self.job, rels=self.rels)

        def many(entries: list[Entry]) -> Iterator[FileOutcome]:
            for outcome, audited in run_files(entries, paired, PAIRED, self.jobs, progress):
                if audited is not None:
                    self._add(audited)
                yield outcome
        return many

    def kept(self, finish: Finish) -> Finish:
        """convert_cache's `finish` of a file whose conversion was kept: its bytes audited there, unless
        the audit's cache answered for them too, or ahead() audited these very bytes."""
        def finished(entry: Entry, data: bytes, scan: FileScan, job: Job) -> FileOutcome:
            if entry.rel in self.rels and not self._audited(entry, data):
                from . import audit
                self._add(one_file(entry, data, self.job, audit.PER_FILE))
            return finish(entry, data, scan, job)
        return finished

    def ahead(self, entries: list[Entry]) -> None:
        """The audit of the files whose conversion convert's cache kept, in `jobs` processes before
        kept() finishes them one by one: it ran in this process alone, file after file (a ggml
        convert after `convert -q`, 681 such files: 3.5 s serial). A worker reads the file again;
        kept() audits here any whose bytes were not the ones convert read (_audited)."""
        self._scan([e for e in entries if e.rel in self.rels and e.rel not in self.done])

    def _audited(self, entry: Entry, data: bytes) -> bool:
        """Whether the audit of `entry` is done for `data`: from the cache (by these bytes' key), or
        by ahead()'s worker, of the same bytes, or past a limit there (a file that timed out is not
        audited twice)."""
        outcome = self.done.get(entry.rel)
        if outcome is None or entry.rel not in self.scanned:
            return outcome is not None
        if outcome.skipped is not None:
            return outcome.skipped.error
        return outcome.content == resultcache.content_key(entry.kind or "", data)

    def findings(self) -> list[Finding]:
        """The findings of high severity or worse, in the audit's order; what was scanned is kept."""
        self._scan([e for e in self.entries if e.rel not in self.done])   # none: convert reads every file it pairs
        if self.cache is not None:
            for entry in self.entries:
                outcome = self.done[entry.rel]
                if entry.rel in self.scanned and outcome.scan is not None and outcome.content:
                    self.cache.put(entry.rel, outcome.content, outcome.scan)
            self.cache.save()
        return [f for e in self.entries if (scan := self.done[e.rel].scan) is not None
                for f in scan.findings if f.severity in NEEDS_PERSON]

    def _scan(self, entries: list[Entry]) -> None:
        from . import audit
        for outcome in run_files(entries, self.job, audit.PER_FILE, self.jobs, None):
            self._add(outcome)

    def _add(self, outcome: FileAudit) -> None:
        self.done[outcome.entry.rel] = outcome
        self.scanned.add(outcome.entry.rel)


class Passes(NamedTuple):
    """convert_cache.outcomes's ways to a file's outcome: scan it, or finish its kept result (with
    `ahead` given the kept files first, all at once)."""

    scan_many: Callable[[list[Entry]], Iterable[FileOutcome]]
    finish: Finish
    ahead: Callable[[list[Entry]], None] | None = None


def passes(summary: "Summary | None", job: Job, per: PerFile, finish: Finish, jobs: int,
           progress: Callable[[int], None] | None) -> Passes:
    """convert_cache.outcomes's two ways to a file's outcome (scan it, or finish its kept result), with the
    summary's audit of the file on each way when there is a summary."""
    if summary is not None:
        return Passes(summary.scan_many(job, per, progress), summary.kept(finish), summary.ahead)
    return Passes(lambda some: run_files(some, job, per, jobs, progress), finish)
