"""Benchmark: `portkit audit` on one huge generated single-line file (time and peak memory).

    python benchmarks/huge_file_bench.py [--repeats 250000] [--lines] [--format json]

Generated code (minified kernels, amalgamations) can report a hazard hundreds of thousands of
times. The file is one kernel whose body repeats `o[threadIdx.x%32]=1;` (a warp-size hazard at
every repetition): 250,000 repetitions are 5 MB, on one line (issue 28's case: one finding per
rule and line, so one finding in the end) or with `--lines` one per line (250,000 distinct
findings: the per-file cap's case). The audit runs in a fresh process (as convert_bench.py's
run_portkit does); the figure to watch is peak RSS / input size, which issue 28 bounds at ~20x.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from convert_bench import run_portkit  # noqa: E402

STATEMENT = "o[threadIdx.x%32]=1;"


def generate(path: Path, repeats: int, lines: bool = False) -> int:
    """Write the kernel (on one line, or a statement per line); its size in bytes."""
    text = "__global__ void k(int*o){" + (STATEMENT + "\n" if lines else STATEMENT) * repeats + "}"
    path.write_text(text)
    return len(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=250_000)
    parser.add_argument("--lines", action="store_true", help="one statement per line")
    parser.add_argument("--format", choices=("json", "text"), default="json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="portkit-huge-") as tmp:
        source = Path(tmp) / "gen.cu"
        size = generate(source, args.repeats, args.lines)
        out = Path(tmp) / "audit.out"
        run = run_portkit(["audit", str(source), "--format", args.format, "-o", str(out), "-q"])
        record = {"repeats": args.repeats, "lines": args.lines, "input_mb": round(size / 2**20, 2),
                  "format": args.format, **run,
                  "rss_per_input": round(run["peak_rss_mb"] / (size / 2**20), 1)}
        if args.format == "json":
            doc = json.loads(out.read_text())
            record.update(findings=doc["summary"]["findings"],
                          not_stored=doc["summary"].get("findings_not_stored", 0),
                          p50_person_weeks=doc["estimate"]["person_weeks"]["p50"])
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
