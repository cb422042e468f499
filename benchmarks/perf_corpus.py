"""Issue 34's figures in one run: convert against hipify-perl on a real corpus, parses per file,
audit of whole trees, the commit gate on a small change, a 5 MB single-line file.

    python benchmarks/perf_corpus.py --corpus DIR --hipify-perl FILE [--ggml DIR] [--faiss DIR] [--runs 3]

--corpus is a folder of real CUDA (.cu/.cuh; benchmarks/README.md says how the recorded one was
put together). hipify-perl (HIPIFY's bin/hipify-perl) converts every file in one process with
`-quiet-warnings`, its output to /dev/null; portkit converts the same folder with `-o` in a fresh
process (`--jobs 1` and `--jobs 2` with `-q`, and with no option at all: every CPU and the summary,
which runs the audit's scan too), so both include start-up. The runs alternate (hipify-perl,
portkit -j1, portkit -j2, ...) and the medians are printed. Parses per file: portkit's convert run
in this process with tree-sitter's parse counted, whole files apart from macro-body fragments.
--ggml/--faiss: `portkit audit TREE --jobs 2 --format json` (wall, median of --runs) with every
file scanned, then re-run with the result cache a first run filled; for ggml `portkit check` with
five changed files staged in a scratch git copy, the facts cache warm and the five files scanned,
then the same change checked again from the result cache, then a commit of the README alone (no
source to scan: the gate's start-up), and `portkit --version`. Then two generated 5 MB single-line
files: a CUDA call and a shuffle every 85 bytes, and a table of integers. Every run but the
cached ones has PORTKIT_NO_CACHE=1; the cache lives in a scratch folder.

Run it with PYTHONPATH naming the checkout to measure; each portkit run starts in an empty
folder (START_IN), so that `python -m portkit` neither imports another checkout from the current
folder nor lists a crowded one. No figure is asserted anywhere;
the recorded output is benchmarks/results/perf_corpus.txt.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUFFIXES = (".cu", ".cuh")
CACHE = Path(tempfile.gettempdir()) / "perf-corpus-cache"   # emptied before each use


class Failed(Exception):
    """A measured command ended with an error (its last words are the message)."""


# Where a run starts unless it needs a folder of its own: an empty one. `python -m portkit` puts
# the current folder first on sys.path, and Python lists a folder on sys.path to import from it:
# from this VM's /tmp (61,000 entries) `portkit --version` took 0.15-0.27 s, against 0.05 s from
# an empty folder. The `portkit` command users run puts its own bin/ folder there instead.
START_IN: Path | None = None   # main() makes it


def timed(cmd: list[str], cwd: Path | None = None, stdout=subprocess.DEVNULL, cache: bool = False) -> float:
    """Wall seconds of one run; portkit's result cache off unless `cache` (in a scratch folder)."""
    env = dict(os.environ, PORTKIT_CACHE_DIR=str(CACHE))
    if not cache:
        env["PORTKIT_NO_CACHE"] = "1"
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=START_IN if cwd is None else cwd, stdout=stdout, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise Failed(f"exit {proc.returncode} after {elapsed:.1f} s: {proc.stderr.decode().strip()[-300:]}")
    return elapsed


def portkit(*args: str) -> list[str]:
    return [sys.executable, "-m", "portkit", *args]


def corpus_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


def parses_per_file(corpus: Path, work: Path) -> tuple[int, int, int]:
    """(files, whole-file parses, fragment parses) of one `convert --jobs 1` in this process: a
    parse called by scan_source is a whole file's, any other a fragment's (a macro body)."""
    import traceback
    import portkit.core.parse as parse
    whole = fragments = 0
    real = parse.parse

    def counting(data: bytes):
        nonlocal whole, fragments
        if traceback.extract_stack(limit=2)[0].name == "scan_source":
            whole += 1
        else:
            fragments += 1
        return real(data)
    parse.parse = counting
    try:
        from portkit.cli.app import main
        main(["convert", str(corpus), "-o", str(work / "parses"), "-q", "--jobs", "1"])
    finally:
        parse.parse = real
    return len(corpus_files(corpus)), whole - 1, fragments     # less the warm-up kernel


def parse_floor(files: list[Path], runs: int) -> list[float]:
    """Seconds to parse every file once with tree-sitter-cuda, nothing else: what any convert
    that reads a syntax tree of each file spends at least."""
    import portkit.core.parse as parse
    datas = [p.read_bytes() for p in files]
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        for data in datas:
            parse.parse(data)
        walls.append(time.perf_counter() - start)
    return walls


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--hipify-perl", type=Path, required=True)
    ap.add_argument("--ggml", type=Path)
    ap.add_argument("--faiss", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    files = corpus_files(args.corpus)
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    print(f"corpus: {args.corpus}: {len(files)} files, {lines:,} lines of .cu/.cuh; {os.cpu_count()} cores")
    work = Path(tempfile.mkdtemp(prefix="perf-corpus-"))
    global START_IN
    START_IN = work / "start-here"
    START_IN.mkdir()
    try:
        times: dict[str, list[float]] = {"hipify-perl": [], "portkit -j1": [], "portkit -j2": [], "portkit defaults": []}
        rel = [str(p.relative_to(args.corpus)) for p in files]
        for run in range(args.runs):
            times["hipify-perl"].append(timed(["perl", str(args.hipify_perl), "-quiet-warnings", *rel],
                                              cwd=args.corpus))
            for jobs in (1, 2):
                out = work / f"out-{run}-{jobs}"
                times[f"portkit -j{jobs}"].append(timed(portkit("convert", str(args.corpus), "-o", str(out),
                                                                "-q", "--jobs", str(jobs))))
                shutil.rmtree(out)
            out = work / f"out-{run}-defaults"   # what a user types: every CPU, the summary of what needs a person
            times["portkit defaults"].append(timed(portkit("convert", str(args.corpus), "-o", str(out))))
            shutil.rmtree(out)
        base = statistics.median(times["hipify-perl"])
        print(f"\n{'convert':<16} {'wall (median)':>14} {'lines/s':>10} {'vs hipify-perl':>15}   runs")
        for name, values in times.items():
            wall = statistics.median(values)
            print(f"{name:<16} {wall:>12.2f} s {lines / wall:>10,.0f} {base / wall:>14.1f}x   "
                  + " ".join(f"{v:.2f}" for v in values))
        count, whole, fragments = parses_per_file(args.corpus, work)
        print(f"\nparses: {whole} whole-file parses for {count} files ({whole / count:.2f} per file), "
              f"and {fragments} macro-body fragments")
        floor = parse_floor(files, args.runs)
        print(f"tree-sitter alone, every corpus file parsed once in one process: {_runs(floor)}; "
              f"hipify-perl / 10 = {base / 10:.2f} s")
        for name, tree in (("ggml", args.ggml), ("faiss", args.faiss)):
            if tree is None:
                continue
            print(audit_tree(name, tree, args.runs))
        if args.ggml is not None:
            print(check_five_files(args.ggml, work, args.runs))
        print(single_line_file(work))
        print(generated_table(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _runs(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s (runs: " + " ".join(f"{v:.2f}" for v in values) + ")"


def audit_tree(name: str, tree: Path, runs: int) -> str:
    """`audit --jobs 2` of a whole tree: every file scanned (no result cache), then again with the
    cache a first run filled (a re-audit of an unchanged tree)."""
    cold = [timed(portkit("audit", str(tree), "--jobs", "2", "--format", "json")) for _ in range(runs)]
    shutil.rmtree(CACHE, ignore_errors=True)
    timed(portkit("audit", str(tree), "--jobs", "2", "--format", "json"), cache=True)
    warm = [timed(portkit("audit", str(tree), "--jobs", "2", "--format", "json"), cache=True) for _ in range(runs)]
    return f"audit {name} --jobs 2: {_runs(cold)}; re-run with its result cache: {_runs(warm)}"


def check_five_files(tree: Path, work: Path, runs: int) -> str:
    """`portkit check` with five changed .cu files staged in a scratch git copy, warm (the facts
    cache filled by a first run)."""
    copy = work / "ggml-git"
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".git"))
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *cmd], cwd=copy, env=env, check=True, capture_output=True)
    changed = sorted(p for p in copy.rglob("*.cu"))[:5]
    for path in changed:
        with path.open("ab") as handle:
            handle.write(b"\n__global__ void added_by_bench(int* o) { o[threadIdx.x & 31] = 0; }\n")
    subprocess.run(["git", "add", *map(str, changed)], cwd=copy, env=env, check=True)
    shutil.rmtree(CACHE, ignore_errors=True)
    timed(portkit("check", "--staged"), cwd=copy, cache=True)      # fills the facts cache (and results)
    fresh = [timed(portkit("check", "--staged"), cwd=copy) for _ in range(runs)]   # the 5 files scanned
    again = [timed(portkit("check", "--staged"), cwd=copy, cache=True) for _ in range(runs)]
    # then a commit of no source at all (most commits of a mixed repository): the README alone
    subprocess.run(["git", "commit", "-q", "-m", "five"], cwd=copy, env=env, check=True, capture_output=True)
    with (copy / "README.md").open("ab") as handle:
        handle.write(b"\nA line of documentation.\n")
    subprocess.run(["git", "add", "README.md"], cwd=copy, env=env, check=True)
    no_source = [timed(portkit("check", "--staged"), cwd=copy) for _ in range(runs)]
    version = [timed(portkit("--version")) for _ in range(runs)]
    return (f"check --staged, 5 changed files in ggml, facts cache warm, the 5 files scanned: {_runs(fresh)}; "
            f"the same change checked again (result cache): {_runs(again)}\n"
            f"check --staged, README.md alone staged in ggml (no source to scan): {_runs(no_source)}; "
            f"portkit --version: {_runs(version)}")


def single_line_file(work: Path) -> str:
    """A generated 5 MB file on one line, a CUDA call and a shuffle every 85 bytes (the worst
    case: 183,000 names to convert and 61,000 shuffles to judge): audit's time."""
    folder = work / "one-line"
    folder.mkdir()
    chunk = b"cudaMemcpy(d, h, n, cudaMemcpyHostToDevice); x = __shfl_down_sync(0xffffffff, x, 16); "
    (folder / "gen.cu").write_bytes(chunk * (5 * 1024 * 1024 // len(chunk)) + b"\n")
    try:
        wall = timed(portkit("audit", str(folder), "--format", "json"))
    except Failed as exc:
        return f"audit of a 5 MB single-line file: {exc}"
    return f"audit of a 5 MB single-line file: {wall:.2f} s"


def generated_table(work: Path) -> str:
    """A generated 5 MB single-line table of integers (`__device__ const int table[] = {...}`)."""
    import random
    folder = work / "table"
    folder.mkdir()
    rng = random.Random(1)
    parts, size = [], 0
    while size < 5 * 1024 * 1024:
        parts.append(f"{rng.randint(0, 1 << 20)}, ")
        size += len(parts[-1])
    (folder / "table.cu").write_text("__device__ const int table[] = {" + "".join(parts) + "0};\n")
    try:
        wall = timed(portkit("audit", str(folder), "--format", "json"))
    except Failed as exc:
        return f"audit of a 5 MB single-line table of integers: {exc}"
    return f"audit of a 5 MB single-line table of integers: {wall:.2f} s"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
