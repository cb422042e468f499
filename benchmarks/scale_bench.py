"""Issue 52's scale curve: convert and audit of 1M, 3M and 10M lines with default options.

    PYTHONPATH=CHECKOUT python benchmarks/scale_bench.py --trees /tmp/trees/ggml /tmp/trees/faiss ... \
        [--lines 1000000 3000000 10000000] [--work DIR]

The corpus is the real trees given, their C/C++/CUDA sources and build files copied whole into
copy-1/, copy-2/, ... of a scratch folder until it holds the asked lines (never committed: it is
made and removed here). Each point runs `portkit convert CORPUS -o OUT` and then `portkit audit
CORPUS --format json` (output to /dev/null) in a fresh process with defaults (-j: the usable CPUs;
the caches off, PORTKIT_NO_CACHE=1: a cold run), and prints wall, CPU (user+sys of the process
and its workers) and peak memory: the process's own peak RSS plus -j times the largest worker's
(ru_maxrss of RUSAGE_SELF and RUSAGE_CHILDREN, read in the measured process: an upper bound of the
tree's peak, as the workers run at once; a forked worker's inherited pages count in its RSS and in
its parent's), and pss_mb, the peak of the process tree's proportional set size sampled every 0.1 s
(shared pages counted once: what the run holds). On a terminal each step shows a progress line on
stderr; piped, only the results are printed. The recorded output is in
benchmarks/results/perf_corpus.txt. No figure is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

KEPT = (".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl", ".txt", ".cmake", ".py")
# runs portkit's command in the measured process and prints its peaks (KiB) as the last line of stderr
MEASURE = ("import resource, sys\nfrom portkit.cli import main\ncode = main(sys.argv[1:])\n"
           "self_, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))\n"
           "print('PEAK', self_.ru_maxrss, kids.ru_maxrss, file=sys.stderr)\nsys.exit(code)\n")


def progress(text: str) -> None:
    """A progress line, on a terminal only (rewritten in place)."""
    if sys.stderr.isatty():
        sys.stderr.write(f"\r\x1b[K{text}")
        sys.stderr.flush()


def tree_files(trees: list[Path]) -> list[tuple[Path, Path, int]]:
    """(source, path in a copy, lines) of every kept file of the trees (.git and build outputs aside)."""
    out = []
    for tree in trees:
        for path in sorted(tree.rglob("*")):
            if ".git" in path.parts or not path.is_file() or path.is_symlink() or not path.name.endswith(KEPT):
                continue
            if path.suffix in (".txt", ".py") and path.name not in ("CMakeLists.txt", "setup.py"):
                continue
            out.append((path, Path(tree.name) / path.relative_to(tree), path.read_bytes().count(b"\n")))
    return out


def make_corpus(files: list[tuple[Path, Path, int]], lines: int, into: Path) -> tuple[int, int]:
    """Copies of the trees under `into` until they hold `lines` lines: (files, lines) written."""
    written = count = copy = 0
    while written < lines:
        copy += 1
        for source, rel, n in files:
            target = into / f"copy-{copy}" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            written, count = written + n, count + 1
            if count % 500 == 0:
                progress(f"corpus: {written:,} of {lines:,} lines")
            if written >= lines:
                break
    progress("")
    return count, written


def tree_pss(pid: int) -> int:
    """The proportional set size (KiB) of a process and its descendants now: a page that processes
    share (a forked worker's inherited memory) counts once over them, which ru_maxrss does not. 0
    for a process gone; Linux only (/proc/PID/smaps_rollup)."""
    total, todo = 0, [pid]
    while todo:
        pid = todo.pop()
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
            todo += [int(c) for t in Path(f"/proc/{pid}/task").iterdir()
                     for c in (t / "children").read_text().split()]
        except (OSError, ValueError):
            continue
        total += next((int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")), 0)
    return total


def measure(args: list[str], jobs: int) -> dict:
    """Wall, CPU and peak memory of one portkit run in a fresh process: ru_maxrss (own + jobs x the
    largest worker's: an upper bound) and the tree's PSS sampled every 0.1 s (pss_mb: the peak of
    what the processes hold together)."""
    env = dict(os.environ, PORTKIT_NO_CACHE="1")
    before = os.times()
    start = time.perf_counter()
    run = subprocess.Popen([sys.executable, "-c", MEASURE, *args], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, env=env, cwd=tempfile.gettempdir())
    pss, stop = [0], threading.Event()

    def sample() -> None:
        while not stop.wait(0.1):
            pss[0] = max(pss[0], tree_pss(run.pid))
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = run.communicate()
    stop.set()
    sampler.join()
    proc = subprocess.CompletedProcess(run.args, run.returncode, None, stderr)
    wall = time.perf_counter() - start
    after = os.times()
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    peak = [line.split() for line in lines if line.startswith("PEAK ")]
    if proc.returncode not in (0, 1) or not peak:
        raise SystemExit(f"{' '.join(args[:2])} failed ({proc.returncode}): {lines[-1] if lines else ''}")
    own, worker = int(peak[-1][1]), int(peak[-1][2])
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "peak_mb": round((own + jobs * worker) / 1024),
            "self_mb": round(own / 1024), "worker_mb": round(worker / 1024), "pss_mb": round(pss[0] / 1024)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", type=Path, nargs="+", required=True)
    parser.add_argument("--lines", type=int, nargs="+", default=[1_000_000, 3_000_000, 10_000_000])
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: a new temporary one)")
    args = parser.parse_args()
    files = tree_files(args.trees)
    jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    work = Path(tempfile.mkdtemp(prefix="scale-", dir=args.work))
    try:
        for lines in args.lines:
            corpus, out = work / "corpus", work / "out"
            shutil.rmtree(corpus, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
            count, written = make_corpus(files, lines, corpus)
            progress(f"{written:,} lines: convert")
            convert = measure(["convert", str(corpus), "-o", str(out), "--quiet"], jobs)
            shutil.rmtree(out, ignore_errors=True)
            progress(f"{written:,} lines: audit")
            audit = measure(["audit", str(corpus), "--format", "json", "-o", os.devnull], jobs)
            progress("")
            print(json.dumps({"lines": written, "files": count, "jobs": jobs, "load": os.getloadavg()[0],
                              "convert": convert, "audit": audit}), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
