"""Benchmark: loading the mapping tables from TOML, from the JSON cache, and (for comparison) pickle.

    python benchmarks/mapping_cache_bench.py [--repeat 7]

In one process, best of --repeat: `load_tables` (parse and validate every TOML table), the JSON
cache's read (datacache.py: digest check, json.loads, the records rebuilt), and `pickle.loads`
of the same tables, the cache format before issue 28. Then `portkit mappings cudaMalloc` in
fresh processes with a warm cache and with no usable cache (a cache directory that is a file),
best of --repeat: what a user waits for.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return round(min(times) * 1000, 1)


def in_process(repeat: int) -> dict:
    from portkit.core import datacache
    from portkit.core.tables import mappings
    directory = mappings.tables_dir()
    with tempfile.TemporaryDirectory(prefix="portkit-cache-bench-") as tmp:
        os.environ["PORTKIT_CACHE_DIR"] = tmp
        db = mappings.load_tables_cached(directory)          # writes the cache
        (cache,) = Path(tmp).glob("tables-*.json")
        blob = pickle.dumps(db, protocol=pickle.HIGHEST_PROTOCOL)
        return {"records": len(db), "toml_ms": best(lambda: mappings.load_tables(directory), max(3, repeat // 2)),
                "json_cache_ms": best(lambda: mappings._from_plain(datacache._read(cache)), repeat),
                "pickle_ms": best(lambda: pickle.loads(blob), repeat),
                "json_cache_kb": cache.stat().st_size // 1024, "pickle_kb": len(blob) // 1024}


def fresh_process(repeat: int) -> dict:
    command = [sys.executable, "-m", "portkit", "mappings", "cudaMalloc"]
    with tempfile.TemporaryDirectory(prefix="portkit-cache-bench-") as tmp:
        warm = dict(os.environ, PORTKIT_CACHE_DIR=str(Path(tmp) / "cache"))
        unusable = Path(tmp) / "not-a-directory"
        unusable.write_text("")
        none = dict(os.environ, PORTKIT_CACHE_DIR=str(unusable))
        subprocess.run(command, env=warm, check=True, capture_output=True)
        return {"process_warm_cache_ms": best(lambda: subprocess.run(command, env=warm, check=True,
                                                                      capture_output=True), repeat),
                "process_no_cache_ms": best(lambda: subprocess.run(command, env=none, check=True,
                                                                    capture_output=True), repeat)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(json.dumps({**in_process(args.repeat), **fresh_process(args.repeat)}), flush=True)


if __name__ == "__main__":
    main()
