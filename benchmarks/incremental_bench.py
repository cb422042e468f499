"""Issue 52's whole-tree and incremental figures: convert and audit of whole real trees with
default options against hipify-perl over the same files, and a re-run after one file changed
against the cold run.

    PYTHONPATH=CHECKOUT python benchmarks/incremental_bench.py --hipify-perl HIPIFY/bin/hipify-perl \
        --trees /tmp/trees/ggml /tmp/trees/faiss /tmp/trees/llm.c [--runs 3]

Each tree is copied (no .git) into a scratch folder, never edited in place. hipify-perl converts
every C/C++/CUDA source of the copy (SOURCES) in one process, `-quiet-warnings`, output to
/dev/null, as perf_corpus.py runs it: what a port of the whole tree with it would read. portkit
runs `convert COPY -o OUT` and `audit COPY --format json` (output to /dev/null) in a fresh
process with no option of its own: -j is the usable CPUs, the result cache is on (in a scratch
folder, as a user's is by default), and convert prints its default summary, whose list of what
needs a person runs the audit's scan too (-q would skip it).

For each edit below, the cache folder is emptied, the tree is run cold (the cache filled), the
edit is made in one real .cu file (the tree's median-sized one) and the command is run again
(convert into the same -o folder): that second run is the incremental one. The file is restored after each. Edits: none (an
unchanged re-run), a comment line appended, and a small kernel appended (new CUDA code that
convert rewrites and audit reports). A cold run is thus measured once per edit and run; the
median of all is printed. Each portkit figure also gives the CPU seconds the run took (user + system
of the process and its workers, which it waits for) and the re-run's share of the cold run's: on a
machine others share, wall time grows with their load and CPU time does not. No figure is
asserted; the recorded output is in benchmarks/results/perf_corpus.txt.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCES = (".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl")
EDITS = {
    "unchanged": b"",
    "comment": b"\n// one line changed by incremental_bench\n",
    "kernel": b"\n__global__ void added_by_incremental_bench(int* o) { o[threadIdx.x & 31] = 0; }\n",
}


def timed(cmd: list[str], cwd: Path, cache: Path | None) -> tuple[float, float]:
    """(wall, CPU) seconds of one run in a fresh process; the result cache in `cache`, or off if None."""
    env = dict(os.environ)
    env.pop("PORTKIT_NO_CACHE", None)
    if cache is None:
        env["PORTKIT_NO_CACHE"] = "1"
    else:
        env["PORTKIT_CACHE_DIR"] = str(cache)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - start
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[:4])}: exit {proc.returncode}: {proc.stderr.decode()[-300:]}")
    return elapsed, cpu


def sources(tree: Path) -> list[Path]:
    return sorted(p for p in tree.rglob("*") if p.is_file() and not p.is_symlink() and p.suffix in SOURCES)


def median_cu(tree: Path) -> Path:
    """The tree's median-sized .cu file: an ordinary one, neither its largest nor a stub."""
    cus = sorted((p.stat().st_size, str(p)) for p in tree.rglob("*.cu") if p.is_file())
    return Path(cus[len(cus) // 2][1])


def command(name: str, copy: Path, out: Path) -> list[str]:
    if name == "convert":
        return [sys.executable, "-m", "portkit", "convert", str(copy), "-o", str(out)]
    return [sys.executable, "-m", "portkit", "audit", str(copy), "--format", "json"]


Runs = list[tuple[float, float]]


def incremental(name: str, copy: Path, work: Path, runs: int) -> tuple[Runs, dict[str, Runs]]:
    """(cold (wall, CPU)s, incremental (wall, CPU)s per edit) of one command on one tree copy."""
    target = median_cu(copy)
    original = target.read_bytes()
    cache, out, start = work / "cache", work / "out", work / "start-here"
    start.mkdir(exist_ok=True)
    cold: Runs = []
    again: dict[str, Runs] = {edit: [] for edit in EDITS}
    for _ in range(runs):
        for edit, extra in EDITS.items():
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
            cold.append(timed(command(name, copy, out), start, cache))
            target.write_bytes(original + extra)
            try:    # into the same -o, as a user re-runs: unchanged outputs are not written again
                again[edit].append(timed(command(name, copy, out), start, cache))
            finally:
                target.write_bytes(original)
    shutil.rmtree(out, ignore_errors=True)
    return cold, again


def tree_figures(tree: Path, hipify: Path, work: Path, runs: int) -> str:
    copy = work / tree.name
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".git"), symlinks=True)
    files = sources(copy)
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    rel = [str(p.relative_to(copy)) for p in files]
    hip = [timed(["perl", str(hipify), "-quiet-warnings", *rel], copy, None)[0] for _ in range(runs)]
    base = statistics.median(hip)
    report = [f"{tree.name}: {len(files)} C/C++/CUDA sources, {lines:,} lines; edited: "
              f"{median_cu(copy).relative_to(copy)}",
              f"  hipify-perl, one process: {_runs(hip)}"]
    for name in ("convert", "audit"):
        cold, again = incremental(name, copy, work, runs)
        wall, cpu = statistics.median(w for w, _ in cold), statistics.median(c for _, c in cold)
        report.append(f"  portkit {name}, defaults, cold: {_runs([w for w, _ in cold])}: {base / wall:.1f}x hipify-perl; "
                      f"CPU {cpu:.2f} s")
        for edit, values in again.items():
            walls, cpus = [w for w, _ in values], [c for _, c in values]
            report.append(f"    re-run, {edit}: {_runs(walls)}: {statistics.median(walls) / wall:.0%} of cold; "
                          f"CPU {statistics.median(cpus):.2f} s: {statistics.median(cpus) / cpu:.0%} of cold's")
    shutil.rmtree(copy)
    return "\n".join(report)


def _runs(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s (runs: " + " ".join(f"{v:.2f}" for v in values) + ")"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hipify-perl", type=Path, required=True)
    ap.add_argument("--trees", type=Path, nargs="+", required=True)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{jobs} usable CPUs (portkit's default -j); load {os.getloadavg()[0]:.2f}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="incremental-"))
    try:
        for tree in args.trees:
            print(tree_figures(tree.resolve(), args.hipify_perl.resolve(), work, args.runs), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
