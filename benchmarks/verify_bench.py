"""Convert a CUDA tree, verify the result with a ROCm compiler, and count what explains the failures.

    python benchmarks/verify_bench.py CUDA_TREE [--rocm 5.2] [--jobs 2] [--json verify.json]
    python benchmarks/verify_bench.py --table NAME=VERIFY.json ...    # one row per verify JSON document

The --table rows (units, compiled, failed explained, unexplained, not reached, seconds) are those of
benchmarks/results/verify_bench.txt, from `portkit verify OUT --rocm 6.2 -j 2 --format json` runs on
converted real trees, before and after a change, cold (empty cache) and warm (a second run).

Prints the conversion time, the verify summary (units compiled / failed / explained /
unexplained), the finding codes that explain the failures, and the unexplained errors grouped
by message (names replaced by '...'): the list of portkit's gaps on that tree. The tree is
read, never modified; the converted copy goes to a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from portkit.api import convert_paths
from portkit.report.verify import document
from portkit.commands.verify import VerifyOptions, verify_tree


def table(named: list[str]) -> int:
    """One row per verify document: what the issue's measurements name."""
    print(f"{'run':34} {'units':>5} {'compiled':>8} {'explained':>9} {'unexplained':>11} {'not reached':>11} "
          f"{'seconds':>8}  missing libraries")
    for item in named:
        name, _, path = item.partition("=")
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        s = doc["summary"]
        explained = s["failed"] - s["unexplained"] - s["not_reached"]
        libraries = "; ".join(line.split(":")[0] for line in doc.get("missing_libraries", [])) or "-"
        print(f"{name:34} {s['units']:5} {s['compiled']:8} {explained:9} {s['unexplained']:11} "
              f"{s['not_reached']:11} {s['seconds']:8.1f}  {libraries}")
    return 0


def main() -> int:
    if sys.argv[1:2] == ["--table"]:
        return table(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--rocm", default="5.2")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write the verify JSON document here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        start = time.perf_counter()
        converted = convert_paths([args.tree], output=out, rocm=args.rocm, jobs=args.jobs)
        convert_s = time.perf_counter() - start
        print(f"convert: {len(converted.scans)} files, {converted.total('lines'):,} lines in {convert_s:.2f} s")
        result = verify_tree(out, VerifyOptions(source=args.tree, jobs=args.jobs))
        doc = document(result)
    if args.json:
        args.json.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    s = doc["summary"]
    print(f"verify ({doc['compiler']['path']}, ROCm {doc['compiler']['rocm']}, -j{args.jobs}): "
          f"{s['units']} units, {s['compiled']} compiled, {s['failed']} failed, {s['explained']} explained, "
          f"{s['unexplained']} unexplained, {s['seconds']:.0f} s")
    errors = [e for u in doc["units"] for e in u["errors"]]
    print(f"errors: {len(errors)}, explained {sum(e['explained'] for e in errors)}")
    codes = Counter(f["code"] for e in errors for f in e["findings"][:1])
    print("explaining codes (first finding per error): " + ", ".join(f"{c} {n}" for c, n in codes.most_common()))
    first = Counter(_first_unexplained(u) for u in doc["units"] if u["unexplained"])
    print("unexplained units by their first unexplained error:")
    for message, n in first.most_common(25):
        print(f"  {n:4d}  {message}")
    return 0


def _first_unexplained(unit: dict) -> str:
    for error in unit["errors"]:
        if error["unexplained"]:
            return _shape(error["message"])
    return f"({unit['status']}, no error parsed)"


def _shape(message: str) -> str:
    """A message with its quoted names kept for CUDA/HIP names and hidden otherwise."""
    return re.sub(r"'([^']*)'", lambda m: m.group(0) if re.match(r"(cu|hip|CU|HIP)", m.group(1)) else "'...'",
                  message)


if __name__ == "__main__":
    sys.exit(main())
