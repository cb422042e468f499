"""Run a per-file function over many files, in worker processes when asked, in input order."""

from __future__ import annotations

from typing import Callable, Iterable, TypeVar

from ..engine.context import Options
from ..scan.walk import warm_up

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
    if jobs <= 1 or len(items) < 2:
        for item in items:
            yield fn(item, options)
            if progress:
                progress(1)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    LIVE.add(pool)
    try:
        chunk = max(1, min(64, len(items) // (jobs * 8)))
        for result in pool.map(fn, items, [options] * len(items), chunksize=chunk):
            yield result
            if progress:
                progress(1)
    except BaseException:
        stop(pool)
        raise
    LIVE.discard(pool)
    pool.shutdown(wait=True)


LIVE: set = set()   # the pools still working: what an interrupt stops (cli/app.py)


def stop(pool) -> None:
    """An interrupt (SIGINT or SIGTERM sent to this process alone, as `kill` and CI runners send
    them) or a consumer that stops early: cancel what is queued and end the workers now. The
    interrupt is raised in the command's loop, not in this generator, and at exit the pool then
    waited for every file already submitted (pool.map submits them all): an interrupted convert
    of a large tree ran on. The workers write nothing, this process does: ending them loses no file."""
    LIVE.discard(pool)
    processes = list((getattr(pool, "_processes", None) or {}).values())   # shutdown forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:   # SIGKILL: a worker inherits portkit's SIGTERM handler, whose
        process.kill()          # exception its pool loop reports and goes on to the next file


def stop_all() -> None:
    for pool in list(LIVE):
        stop(pool)


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
