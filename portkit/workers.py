"""Run a per-file function over many files, in worker processes when asked, in input order."""

from __future__ import annotations

from typing import Callable, Iterable, TypeVar

from .mappings import default_db

T = TypeVar("T")
R = TypeVar("R")


def ordered_map(fn: Callable[[T, object], R], items: list[T], options: object, jobs: int,
                progress: Callable[[int], None] | None = None) -> Iterable[R]:
    """fn(item, options) for each item, yielded in the order of `items` (deterministic output)."""
    if jobs <= 1 or len(items) < 2:
        for item in items:
            yield fn(item, options)
            if progress:
                progress(1)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    default_db()  # loaded once here; forked workers inherit it instead of loading it again
    context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        chunk = max(1, min(64, len(items) // (jobs * 8)))
        for result in pool.map(fn, items, [options] * len(items), chunksize=chunk):
            yield result
            if progress:
                progress(1)
