"""The one per-file driver every command runs its files through (run_files): each file read,
given to the command under the one time limit, in worker processes when asked, in input order."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Generic, Iterable, TypeVar

from ..core.files import Entry, Skipped, read
from ..core.pool import forked_map
from ..engine.context import Options
from .scan.job import Job
from .scan.walk import warm_up

T = TypeVar("T")
R = TypeVar("R")


def ordered_map(fn: Callable[[T, object], R], items: list[T], options: object, jobs: int,
                progress: Callable[[int], None] | None = None, scan: Options | None = None) -> Iterable[R]:
    """fn(item, options) for each item, yielded in the order of `items` (deterministic output).

    The process is warmed up first (tables, grammar, queries loaded by scanning a small kernel
    with `scan`, the settings the files are scanned with, so that the query it compiles, 10 to
    15 ms each, is theirs): forked workers inherit it, and no file's --file-timeout pays for the
    process's first scan."""
    if items:
        warm_up(scan or Options())
    jobs = workers_for(len(items), jobs)
    if jobs <= 1:
        for item in items:
            yield fn(item, options)
            if progress:
                progress(1)
        return
    for result in forked_map(fn, items, options, jobs):
        yield result
        if progress:
            progress(1)


# A worker costs its fork and the pickling of every result back (a 5-file convert took 0.06 s more
# CPU with 2 workers than in this process); a file costs a few milliseconds to scan. Below this
# many files per worker the pool is not worth starting: `-j` defaults to every CPU, and a 5-file
# commit or convert must stay as fast as in one process.
MIN_FILES_PER_WORKER = 8


def workers_for(files: int, jobs: int) -> int:
    """How many processes scan `files` files with `-j jobs`: at most `jobs`, and only as many as
    have MIN_FILES_PER_WORKER files each; 1 (this process, no pool) for fewer than two workers' worth."""
    return max(1, min(jobs, files // MIN_FILES_PER_WORKER))


@dataclass(frozen=True)
class Wording:
    """How a command says that one file was not done; its users' scripts and docs know each line,
    so the driver is shared and the words stay the command's. `{exc}`: what went wrong (a
    FileTimeout says "took longer than N s"), `{kind}`: an internal error's type. A line that is
    None is no line: no time limit without `timeout` (compat has none), and a file too deep or a
    bug in the scanner is not caught without `too_deep` or `internal`: the command stops."""

    timeout: str | None = None
    too_deep: str | None = None
    internal: str | None = None


@dataclass(frozen=True)
class PerFile(Generic[T, R]):
    """What a command does with each file. Module-level functions, so that they travel to
    worker processes by name (check's, which runs in its own process, may be closures)."""

    scan: Callable[[T, bytes, Job], R]                   # the file's bytes, within the time limit
    skipped: Callable[[T, Skipped | None, Job], R]       # not wanted (None), unreadable, or past a limit
    wording: Wording
    wanted: Callable[[T, Job], bool] | None = None       # read at all? None: every file is read
    read: Callable[[T], tuple[bytes | None, Skipped | None]] = read   # core/files.read: the skip reasons


def run_files(items: list[T], job: Job, per: PerFile[T, R], jobs: int = 1,
              progress: Callable[[int], None] | None = None) -> Iterable[R]:
    """Each file's outcome, in the order of `items`, computed in `jobs` processes: the one driver
    of convert, audit, check and compat, so that reading, the time limit and a failure's line
    are decided once for all of them."""
    return ordered_map(_one_file, items, (job, per), jobs, progress, job.scan)


def _one_file(item, task: tuple[Job, PerFile]):
    job, per = task
    if per.wanted is not None and not per.wanted(item, job):
        return per.skipped(item, None, job)
    data, skipped = per.read(item)
    if data is None or skipped is not None:
        return per.skipped(item, skipped, job)
    return _limited(item, data, job, per)


def one_file(item, data: bytes, job: Job, per: PerFile):
    """`per`'s work on bytes the caller read, under that command's time limit and in its words: the
    audit's scan of a file convert read, for convert's summary (convert_audit.py)."""
    return _limited(item, data, job, per)


def _limited(item, data: bytes, job: Job, per: PerFile):
    """The command's work on one file under --file-timeout (the one time-limit wrapper): a file
    past the limit, nested too deeply or hitting a bug costs only itself, in the command's words."""
    words = per.wording
    try:
        with time_limit(job.scan.file_timeout if words.timeout is not None else 0):
            return per.scan(item, data, job)
    except FileTimeout as exc:
        if words.timeout is None:
            raise
        reason = words.timeout.format(exc=exc)
    except RecursionError:
        if words.too_deep is None:
            raise
        reason = words.too_deep
    except Exception as exc:  # a bug in one rule or rewriter must not cost the user the other files
        if words.internal is None or os.environ.get("PORTKIT_DEBUG"):
            raise
        reason = words.internal.format(kind=type(exc).__name__, exc=exc)
    return per.skipped(item, Skipped(_rel(item), reason, error=True), job)


def _rel(item) -> str:
    return item.rel if isinstance(item, Entry) else str(item)


DEFAULT_FILE_TIMEOUT = 60.0   # seconds one file may take to scan (--file-timeout)


class FileTimeout(Exception):
    """One file took longer than the per-file time limit to scan."""


class time_limit:
    """`with time_limit(seconds):` raises FileTimeout in the block after `seconds` of wall time.

    A SIGALRM timer: it works in a process's main thread, which is where files are scanned
    (the CLI, and each worker process). Elsewhere, and for seconds <= 0, it does nothing.
    """

    def __init__(self, seconds: float | None):
        self.seconds = seconds or 0.0
        self.armed = False

    def __enter__(self) -> "time_limit":
        import signal
        import threading
        if self.seconds <= 0 or threading.current_thread() is not threading.main_thread() \
                or not hasattr(signal, "setitimer"):
            return self

        def expired(signum, frame):
            raise FileTimeout(f"took longer than {self.seconds:g} s")
        self.previous = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)
        self.armed = True
        return self

    def __exit__(self, *exc) -> bool:
        if self.armed:
            import signal
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        return False
