"""A/B: the same portkit command from two checkouts, interleaved, on the same trees and machine.

    python benchmarks/ab_bench.py --a /path/to/old/checkout --b . --tree DIR [--tree DIR] [--repeat 3] [--jobs 1] [--rerun]

Each run is a fresh `python -m portkit ...` process (start-up, tables, scan, writes included)
with PYTHONPATH set to the checkout, so the two versions differ only in their code; runs
alternate A, B, A, B so that a noisy shared machine slows both alike. Prints one JSON line per
(tree, command, side) with the best and median wall and CPU seconds.

By default every run is cold (PORTKIT_NO_CACHE=1: the scan is timed, not the cache). With
--rerun, each side has its own cache folder (PORTKIT_CACHE_DIR) and output folder, filled by one
untimed run first: every timed run is a re-run of the unchanged tree, as a user's second run is.

Both checkouts' bytecode is compiled first (`python -m compileall`): where PYTHONDONTWRITEBYTECODE
is set, a module without an up-to-date .pyc is compiled again by every run (0.15 s of each run of
a fresh worktree, which made its side look that much slower).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = {
    "convert": lambda tree, out, jobs: ["convert", str(tree), "-o", str(out), "-q", "-j", str(jobs)],
    "audit": lambda tree, out, jobs: ["audit", str(tree), "--format", "json", "-o", str(out.parent / "a.json"),
                                      "-j", str(jobs)],
}


def run_once(code: Path, args: list[str], cache: Path | None = None) -> tuple[float, float]:
    # cold: every file scanned (a result cache would time the cache, not the scan); `cache`: the side's own
    env = {**os.environ, "PYTHONPATH": str(code.resolve()), "PORTKIT_NO_CACHE": "1"}
    if cache is not None:
        env = {**env, "PORTKIT_NO_CACHE": "0", "PORTKIT_CACHE_DIR": str(cache)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "portkit", *args], env=env, cwd=tempfile.gettempdir(),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", type=Path, required=True, help="checkout A (e.g. a git worktree of the old commit)")
    parser.add_argument("--b", type=Path, default=Path("."), help="checkout B (default: this one)")
    parser.add_argument("--tree", type=Path, action="append", required=True)
    parser.add_argument("--command", choices=sorted(COMMANDS), action="append")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--rerun", action="store_true", help="time re-runs of the unchanged tree (each side's cache warmed)")
    args = parser.parse_args()
    for code in (args.a, args.b):   # see the module docstring
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(code / "portkit")], check=True,
                       stdout=subprocess.DEVNULL)
    for tree in args.tree:
        for name in args.command or ["convert", "audit"]:
            times: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
            kept = {side: Path(tempfile.mkdtemp(prefix=f"ab-{side}-")) for side in times} if args.rerun else {}
            try:
                for side, code in (("A", args.a), ("B", args.b)) if args.rerun else ():
                    run_once(code, COMMANDS[name](tree, kept[side] / "o", args.jobs), kept[side] / "cache")
                for _ in range(args.repeat):
                    for side, code in (("A", args.a), ("B", args.b)):
                        out = kept.get(side) or Path(tempfile.mkdtemp(prefix="ab-"))
                        try:
                            times[side].append(run_once(code, COMMANDS[name](tree, out / "o", args.jobs),
                                                        out / "cache" if args.rerun else None))
                        finally:
                            if not args.rerun:
                                shutil.rmtree(out, ignore_errors=True)
            finally:
                for folder in kept.values():
                    shutil.rmtree(folder, ignore_errors=True)
            for side, runs in times.items():
                walls, cpus = [w for w, _ in runs], [c for _, c in runs]
                print(json.dumps({"tree": tree.name, "command": name, "jobs": args.jobs, "side": side, "rerun": args.rerun,
                                  "runs": len(runs),
                                  "wall_best": round(min(walls), 2), "wall_median": round(statistics.median(walls), 2),
                                  "cpu_best": round(min(cpus), 2), "cpu_median": round(statistics.median(cpus), 2)}))


if __name__ == "__main__":
    main()
