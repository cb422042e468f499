"""Benchmark: `portkit check` as a pre-commit hook, on a commit of 5 changed files in a large repository.

    python benchmarks/check_bench.py [--lines 300000] [--changed 5] [--repeat 10]

Builds a git repository holding convert_bench.py's corpus (grown to --lines), commits it and
writes its baseline, then changes --changed files (a new warp-size hazard appended to each) and
stages them. Each run is a fresh `portkit check` process, as git or pre-commit would start it:
interpreter start-up, imports, the mapping tables' cache, git calls and the scan of the staged
files included. Reports the best and the median wall time for two commits:
- typical: the changed files are real-sized sources (the fixture inputs in the corpus, 20-250
  lines each);
- heavy: the changed files are the corpus's largest generated units (over 2,000 lines each,
  dense with CUDA).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from convert_bench import count_lines, generate  # noqa: E402

HAZARD = "\n__global__ void added_in_commit(int* out) { out[threadIdx.x % 32] = 1; }\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=300_000)
    parser.add_argument("--changed", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    portkit = shutil.which("portkit") or str(Path(sys.executable).parent / "portkit")
    with tempfile.TemporaryDirectory(prefix="portkit-check-bench-") as tmp:
        repo = Path(tmp)
        generate(repo, args.lines)
        git(repo, "init", "-q")
        git(repo, "-c", "user.email=b@b", "-c", "user.name=b", "add", ".")
        git(repo, "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "corpus")
        subprocess.run([portkit, "baseline"], cwd=repo, check=True, capture_output=True)
        sources = [p for p in repo.glob("fixtures/**/input*") if p.suffix == ".cu"]
        commits = {
            "typical": sorted(sources, key=lambda p: (abs(p.stat().st_size - 4000), str(p)))[: args.changed],
            "heavy": sorted(repo.glob("generated/*/*.cu"), key=lambda p: (-p.stat().st_size, str(p)))[: args.changed],
        }
        for label, units in commits.items():
            for unit in units:
                with unit.open("a") as handle:
                    handle.write(HAZARD)
            git(repo, "add", *[str(u.relative_to(repo)) for u in units])
            changed_lines = sum(u.read_bytes().count(b"\n") for u in units)
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                proc = subprocess.run([portkit, "check"], cwd=repo, capture_output=True, text=True)
                times.append(time.perf_counter() - start)
                assert proc.returncode == 1 and proc.stdout.count(": PK201 ") == args.changed, proc.stdout
            print(json.dumps({"commit": label, "repo_lines": count_lines(repo), "changed_files": args.changed,
                              "changed_files_lines": changed_lines, "best_s": round(min(times), 3),
                              "median_s": round(statistics.median(times), 3), "runs": args.repeat}), flush=True)
            git(repo, "reset", "-q", "--hard")


if __name__ == "__main__":
    main()
