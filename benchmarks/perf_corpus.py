"""Issue 34's figures in one run: convert against hipify-perl on a real corpus, parses per file,
audit of whole trees, the commit gate on a small change, a 5 MB single-line file.

    python benchmarks/perf_corpus.py --corpus DIR --hipify-perl FILE [--ggml DIR] [--faiss DIR] [--runs 3]

--corpus is a folder of real CUDA (.cu/.cuh; benchmarks/README.md says how the recorded one was
put together). hipify-perl (HIPIFY's bin/hipify-perl) converts every file in one process with
`-quiet-warnings`, its output to /dev/null; portkit converts the same folder with `-o` in a fresh
process (`--jobs 1` and `--jobs 2`), so both include start-up. The runs alternate (hipify-perl,
portkit -j1, portkit -j2, ...) and the medians are printed. Parses per file: portkit's convert run
in this process with tree-sitter's parse counted, whole files apart from macro-body fragments.
--ggml/--faiss: `portkit audit TREE --jobs 2 --format json` (wall, median of --runs), and for
ggml `portkit check` warm with five changed files staged in a scratch git copy. No figure is
asserted anywhere; the recorded output is benchmarks/results/perf_corpus.txt.
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


class Failed(Exception):
    """A measured command ended with an error (its last words are the message)."""


def timed(cmd: list[str], cwd: Path | None = None, stdout=subprocess.DEVNULL) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE)
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
    try:
        times: dict[str, list[float]] = {"hipify-perl": [], "portkit -j1": [], "portkit -j2": []}
        rel = [str(p.relative_to(args.corpus)) for p in files]
        for run in range(args.runs):
            times["hipify-perl"].append(timed(["perl", str(args.hipify_perl), "-quiet-warnings", *rel],
                                              cwd=args.corpus))
            for jobs in (1, 2):
                out = work / f"out-{run}-{jobs}"
                times[f"portkit -j{jobs}"].append(timed(portkit("convert", str(args.corpus), "-o", str(out),
                                                                "-q", "--jobs", str(jobs))))
                shutil.rmtree(out)
        base = statistics.median(times["hipify-perl"])
        print(f"\n{'convert':<14} {'wall (median)':>14} {'lines/s':>10} {'vs hipify-perl':>15}   runs")
        for name, values in times.items():
            wall = statistics.median(values)
            print(f"{name:<14} {wall:>12.2f} s {lines / wall:>10,.0f} {base / wall:>14.1f}x   "
                  + " ".join(f"{v:.2f}" for v in values))
        count, whole, fragments = parses_per_file(args.corpus, work)
        print(f"\nparses: {whole} whole-file parses for {count} files ({whole / count:.2f} per file), "
              f"and {fragments} macro-body fragments")
        for name, tree in (("ggml", args.ggml), ("faiss", args.faiss)):
            if tree is None:
                continue
            audits = [timed(portkit("audit", str(tree), "--jobs", "2", "--format", "json")) for _ in range(args.runs)]
            print(f"audit {name} --jobs 2: {statistics.median(audits):.2f} s (runs: "
                  + " ".join(f"{v:.2f}" for v in audits) + ")")
        if args.ggml is not None:
            print(check_five_files(args.ggml, work, args.runs))
        print(single_line_file(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


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
    timed(portkit("check", "--staged"), cwd=copy)                  # fills the facts cache
    warm = [timed(portkit("check", "--staged"), cwd=copy) for _ in range(runs)]
    return (f"check --staged, 5 changed files in ggml, warm: {statistics.median(warm):.2f} s (runs: "
            + " ".join(f"{v:.2f}" for v in warm) + ")")


def single_line_file(work: Path) -> str:
    """A generated 5 MB file on one line (a minified table): audit's time."""
    folder = work / "one-line"
    folder.mkdir()
    chunk = b"cudaMemcpy(d, h, n, cudaMemcpyHostToDevice); x = __shfl_down_sync(0xffffffff, x, 16); "
    (folder / "gen.cu").write_bytes(chunk * (5 * 1024 * 1024 // len(chunk)) + b"\n")
    try:
        wall = timed(portkit("audit", str(folder), "--format", "json"))
    except Failed as exc:
        return f"audit of a 5 MB single-line file: {exc}"
    return f"audit of a 5 MB single-line file: {wall:.2f} s"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
