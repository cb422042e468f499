"""Benchmark: end-to-end `portkit audit` on a large tree of realistic CUDA.

    python benchmarks/audit_bench.py [--lines 300000] [--extra DIR ...] [--repeat 3]

The corpus is convert_bench.py's (fixture inputs plus seeded generated translation units whose
kernels carry the usual warp-size hazards, so the rules have work to do), grown to --lines.
Each configuration runs `portkit audit TREE --format json -o FILE` in a fresh process: start-up,
table loading, parsing, the rules, the estimate's Monte Carlo and writing the JSON included.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from convert_bench import count_lines, generate  # noqa: E402


def run_once(tree: Path, jobs: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="portkit-audit-bench-") as tmp:
        out = Path(tmp) / "audit.json"
        script = (
            "import resource, sys, time\n"
            "from portkit.cli import main\n"
            "t = time.perf_counter()\n"
            f"code = main(['audit', {str(tree)!r}, '--format', 'json', '-o', {str(out)!r}, '--jobs', '{jobs}'])\n"
            "el = time.perf_counter() - t\n"
            "me = resource.getrusage(resource.RUSAGE_SELF)\n"
            "kids = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime\n"
            "print(code, el, max(me.ru_maxrss, kids.ru_maxrss), cpu)\n")
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
        wall = time.perf_counter() - start
        code, inner, rss_kb, cpu = proc.stdout.split()
        assert code == "0", proc.stderr
        doc = json.loads(out.read_text())
    return {"jobs": jobs, "wall_s": round(wall, 3), "audit_s": round(float(inner), 3),
            "cpu_s": round(float(cpu), 3), "peak_rss_mb": round(int(rss_kb) / 1024, 1),
            "files": doc["summary"]["files"], "findings": doc["summary"]["findings"],
            "p50_person_weeks": doc["estimate"]["person_weeks"]["p50"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=300_000)
    parser.add_argument("--extra", type=Path, action="append", default=[],
                        help="also benchmark this real tree on its own")
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration (best is kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="portkit-bench-") as tmp:
        corpus = Path(tmp) / "fixtures+generated"
        generate(corpus, args.lines)
        trees = [("fixtures+generated", corpus)] + [(str(extra), extra) for extra in args.extra]
        for label, tree in trees:
            lines = count_lines(tree)
            for jobs in (1, 2):
                best = min((run_once(tree, jobs) for _ in range(args.repeat)), key=lambda r: r["wall_s"])
                best.update(tree=label, lines=lines, lines_per_s=round(lines / best["wall_s"]))
                print(json.dumps(best), flush=True)


if __name__ == "__main__":
    main()
