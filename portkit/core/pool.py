"""Worker processes: a function mapped over items in forked processes, results in input order.

Two stages of a run fan out over files: the project's per-file facts (project/file_facts.py), and
the per-file scan (commands/workers.py). Both fork from this process, so that the workers inherit
what it loaded (the tables, the grammar, the facts) instead of loading or receiving them, and both
register their pool here, so that an interrupt ends every worker at once (cli/app.py, stop_all).
"""

from __future__ import annotations

from typing import Callable, Iterable, TypeVar

T = TypeVar("T")
R = TypeVar("R")

LIVE: set = set()   # the pools still working: what an interrupt stops (cli/app.py)

# A chunk is a run of neighbouring files, and the costly ones sit together (ggml: its 150 CUDA
# files that are parsed among 736 host files that the pre-filter skips, in path order): chunks of
# 55 left one worker with the last costly run, and ggml's audit at -j 2 took 6.1-6.5 s where
# chunks of 16 took 4.8-5.8 (3 runs each; faiss, CTranslate2, llm.c the same either way).
MAX_CHUNK = 16


def forked_map(fn: Callable[..., R], items: list[T], extra: object, jobs: int) -> Iterable[R]:
    """fn(item, extra) for each item in `jobs` forked processes (spawned where fork is not
    offered: forks() says which), yielded in the order of `items`; the items go to the workers
    in chunks of an eighth of each one's share, MAX_CHUNK at most. The caller decides that
    `jobs` > 1 is worth a pool."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork") if forks() else None
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    LIVE.add(pool)
    try:
        chunk = max(1, min(MAX_CHUNK, len(items) // (jobs * 8)))
        yield from pool.map(fn, items, [extra] * len(items), chunksize=chunk)
    except BaseException:
        stop(pool)
        raise
    LIVE.discard(pool)
    pool.shutdown(wait=True)


def forks() -> bool:
    """Whether the workers are forked, and so inherit this process's memory (not on Windows or macOS's default)."""
    import multiprocessing
    return "fork" in multiprocessing.get_all_start_methods()


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
