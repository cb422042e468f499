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
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from convert_bench import count_lines, generate, run_portkit  # noqa: E402


def run_once(tree: Path, jobs: int) -> dict:
    """One fresh `portkit audit` process over `tree`, writing JSON."""
    with tempfile.TemporaryDirectory(prefix="portkit-audit-bench-") as tmp:
        out = Path(tmp) / "audit.json"
        run = run_portkit(["audit", str(tree), "--format", "json", "-o", str(out), "--jobs", str(jobs)])
        doc = json.loads(out.read_text())
    return {"jobs": jobs, "wall_s": run["wall_s"], "audit_s": run["inner_s"], "cpu_s": run["cpu_s"],
            "peak_rss_mb": run["peak_rss_mb"], "files": doc["summary"]["files"],
            "findings": doc["summary"]["findings"], "p50_person_weeks": doc["estimate"]["person_weeks"]["p50"]}


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
