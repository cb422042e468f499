"""What the pre-filter skips on a real tree, what it costs against what it saves, and that it changes
nothing but PK005 (issue 52, item 2; commands/scan/prefilter.py).

For each tree: `portkit audit TREE -j 1` in this process, with prefilter.skips counted and timed; the
full scans of the files it skipped, re-run with the filter off; then, each in a fresh process with
the cache off, the audit's JSON and convert's output tree with the filter on and forced off,
compared (findings but PK005; every output byte).

    python benchmarks/prefilter_bench.py /tmp/trees/ggml /tmp/trees/faiss [--args --rocm 5.2]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_RUN = ("import sys\nfrom portkit.commands.scan import prefilter\n{off}"
        "from portkit.cli.app import main\nsys.exit(main(sys.argv[1:]))\n")


def measure(tree: Path, extra: list[str]) -> dict:
    """Skips and their cost, in this process (the filter's own time; the skipped files' full scans)."""
    os.environ["PORTKIT_NO_CACHE"] = "1"
    from dataclasses import replace
    from portkit.cli.app import main
    from portkit.commands.scan import prefilter, walk
    skipped, cost, seen = [], [0.0], {}
    original = prefilter.skips

    def counted(ctx):
        start = time.perf_counter()
        result = original(ctx)
        cost[0] += time.perf_counter() - start
        seen[ctx.source.rel] = result
        if result:
            skipped.append((ctx.source, ctx.options, ctx.facts))
        return result

    prefilter.skips = counted
    try:
        with open(os.devnull, "w") as quiet:
            saved, sys.stdout = sys.stdout, quiet
            try:
                main(["audit", str(tree), "--format", "json", "-o", os.devnull, "-j", "1", *extra])
            finally:
                sys.stdout = saved
    finally:
        prefilter.skips = original
    start = time.perf_counter()
    for source, options, facts in skipped:
        walk.scan_source(source, replace(options, prefilter=False), facts=facts)
    full = time.perf_counter() - start
    cuda = [rel for rel in seen if rel.endswith((".cu", ".cuh"))]
    return {"sources": len(seen), "skipped": len(skipped), "cuda_sources": len(cuda),
            "cuda_skipped": sum(1 for rel in cuda if seen[rel]), "filter_s": round(cost[0], 2),
            "skipped_scans_s": round(full, 2)}


def _portkit(args: list[str], off: bool) -> subprocess.CompletedProcess:
    code = _RUN.format(off="prefilter.skips = lambda ctx: False\n" if off else "")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=dict(os.environ, PORTKIT_NO_CACHE="1"))


def compare(tree: Path, extra: list[str]) -> dict:
    """The audit's findings but PK005, and convert's output tree, with the filter on and off."""
    with tempfile.TemporaryDirectory() as tmp:
        found, pk005, outputs = {}, {}, {}
        for off in (False, True):
            report = Path(tmp, f"audit{int(off)}.json")
            _portkit(["audit", str(tree), "--format", "json", "-o", str(report), *extra], off)
            findings = json.loads(report.read_text())["findings"]
            found[off] = sorted((f["path"], f["line"], f["column"], f["code"], f["message"])
                                for f in findings if f["code"] != "PK005")
            pk005[off] = len(findings) - len(found[off])
            outputs[off] = Path(tmp, f"convert{int(off)}")
            _portkit(["convert", str(tree), "-q", "-o", str(outputs[off]), *extra], off)
        same_outputs = _same_tree(outputs[False], outputs[True])
    return {"findings": len(found[False]), "same_findings": found[False] == found[True],
            "pk005_on": pk005[False], "pk005_off": pk005[True], "same_outputs": same_outputs}


def _same_tree(a: Path, b: Path) -> bool:
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    return files_a == files_b and all(filecmp.cmp(a / f, b / f, shallow=False) for f in files_a)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", type=Path, nargs="+")
    ap.add_argument("--args", nargs=argparse.REMAINDER, default=[], help="options for both audit and convert")
    args = ap.parse_args()
    for tree in args.trees:
        row = {"tree": tree.name, "args": args.args, **measure(tree, args.args), **compare(tree, args.args)}
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
