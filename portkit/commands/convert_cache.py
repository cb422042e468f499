"""convert's per-file results kept between runs: a second convert of a tree where one file changed
scans that file, and applies the kept edits of the others to their bytes again.

The cache is the audit's (commands/scan/resultcache.py) in its own slot, `converts-...`: one
file in the user's cache folder, never in the tree, under a key of the run's settings, the
tree's facts (the project facts every file is scanned with), portkit's version and the stamp of
its code and tables; a file's entry is reused only for the same kind and SHA-256 of its bytes. A
corrupt or foreign slot is read as empty and written afresh. Off with PORTKIT_NO_CACHE=1, and
for --rename, whose plan re-scans files under other settings as it settles (renaming.py), and
with --no-cache (`cache` False).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..core.files import Entry
from ..core.filestamps import Stamps
from ..engine.context import FileScan
from .inplace import digest
from .results import FileOutcome
from .scan import resultcache
from .scan.job import Job

ScanMany = Callable[[list[Entry]], Iterable[FileOutcome]]
Finish = Callable[[Entry, bytes, FileScan, Job], FileOutcome]


def outcomes(entries: list[Entry], job: Job, root: Path, scan_many: ScanMany, finish: Finish,
             progress: Callable[[int], None] | None, cache_on: bool = True,
             stamps: Stamps | None = None, ahead: Callable[[list[Entry]], None] | None = None) -> Iterator[FileOutcome]:
    """Each entry's outcome in order, as convert's writer takes them: kept results for bytes
    converted before with the same key (`finish` applies their edits), `scan_many` for the rest.
    `stamps`: the run's records of the files' bytes (core/filestamps.py): a file the last run left
    as it is is not hashed again. `ahead`: given the kept files at once before any is finished
    (the summary audits them in its workers: convert_audit.Summary.ahead)."""
    cache = resultcache.ResultCache("converts", root, job) \
        if resultcache.enabled(cache_on) and job.facts.rename is None else None
    if cache is None:
        yield from scan_many(entries)
        return
    kept = _kept(entries, job, cache, finish, stamps or Stamps(None, None), ahead)
    scanned = iter(scan_many([e for i, e in enumerate(entries) if i not in kept]))
    for index, entry in enumerate(entries):
        outcome = kept.pop(index, None)
        if outcome is None:
            outcome = next(scanned)
            if outcome.scan is not None and outcome.skipped is None and outcome.input_digest is not None:
                cache.put(entry.rel, resultcache.digest_key(entry.kind or "", outcome.input_digest), outcome.scan)
        elif progress:
            progress(1)
        yield outcome
    cache.save()
    if stamps is not None:
        stamps.save()   # the files read here and by the summary's audit, for the kept results' keys next time


def _kept(entries: list[Entry], job: Job, cache: resultcache.ResultCache, finish: Finish,
          stamps: Stamps, ahead: Callable[[list[Entry]], None] | None = None) -> dict[int, FileOutcome]:
    """The outcomes the cache answers, by index; only files it holds an entry for are read here
    (a file read twice, here and by its worker, is one whose bytes changed since the last run)."""
    found: dict[int, tuple[Entry, bytes, FileScan]] = {}
    for index, entry in enumerate(entries):
        if entry.kind is None or not cache.holds(entry.rel):
            continue
        data, skipped = stamps.read(entry)
        if data is None or skipped is not None:
            continue
        known = stamps.known(entry)   # of these very bytes (Stamps.read)
        scan = cache.get_content(entry.rel, resultcache.digest_key(entry.kind, known.sha256 if known else digest(data)))
        if scan is not None:
            found[index] = (entry, data, scan)
    if ahead is not None and found:
        ahead([entry for entry, _, _ in found.values()])
    return {index: finish(entry, data, scan, job) for index, (entry, data, scan) in found.items()}
