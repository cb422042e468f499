"""Compile rate of converted real trees at several ROCm releases (issue 32).

    python benchmarks/verify_releases.py --pack DIR TREE[:SUBDIR][+MACRO] ... [--releases 5.2,6.2] [-j 2]

Each tree is converted for each release (`portkit convert TREE -o OUT --rocm R --convert-amd-built`:
trees that already build for AMD, such as faiss, are converted whole here so that their CUDA is
compiled at all), then verified (`portkit verify OUT --rocm R --format json`, with `--rocm-headers
DIR` so that a release not installed here is checked against its header pack by clang). Printed: per
tree and release the compiler and headers used, the counts (compiled, explained, unexplained, not
reached), and each failing unit's first error with what explains it. A SUBDIR limits the units
verified: only its files are reported, the whole tree is the include root (faiss:faiss/gpu); a
+MACRO is passed as -DMACRO, as the project's own AMD build defines it (faiss:faiss/gpu+USE_AMD_ROCM).
Recorded output: benchmarks/results/verify_releases.txt.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def portkit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "portkit", *args], capture_output=True, text=True)


def one(tree: Path, subdir: str, release: str, pack: str, jobs: int, work: Path, macro: str = "") -> list[str]:
    out = work / f"{tree.name}-{release}"
    convert = portkit("convert", str(tree), "-o", str(out), "--rocm", release, "--convert-amd-built", "-q")
    if convert.returncode not in (0, 1):
        return [f"== {tree.name} at ROCm {release}: convert failed: {convert.stderr.strip()[:300]}"]
    run = portkit("verify", str(out), "--rocm", release, "--rocm-headers", pack, "--format", "json", "-j", str(jobs),
                  *(["-D", macro] if macro else []))
    if run.returncode not in (0, 1):
        return [f"== {tree.name}{'/' + subdir if subdir else ''} at ROCm {release}: verify: {run.stderr.strip()[:300]}"]
    doc = json.loads(run.stdout)
    units = [u for u in doc["units"] if not subdir or u["path"].startswith(subdir.rstrip("/") + "/")]
    counts = {s: sum(1 for u in units if u["status"] == s) for s in ("compiled", "failed", "not_reached", "timeout")}
    unexplained = sum(1 for u in units if u.get("unexplained"))
    headers = doc["compiler"].get("headers")
    used = f"{doc['compiler']['path']} + {headers['release']} pack" if headers else \
        f"{doc['compiler']['path']} (ROCm {doc['compiler']['rocm']})"
    lines = [f"== {tree.name}{'/' + subdir if subdir else ''}{' -D' + macro if macro else ''} at ROCm {release} ({used}): "
             f"{len(units)} units, "
             f"{counts['compiled']} compiled, {counts['failed']} failed ({unexplained} unexplained), "
             f"{counts['not_reached']} not reached, {counts['timeout']} timed out"]
    for unit in units:
        if unit["status"] == "compiled" or not unit["errors"]:
            continue
        error = unit["errors"][0]
        why = error["findings"][0]["code"] if error.get("findings") else "UNEXPLAINED"
        lines.append(f"  {unit['path']}: {unit['status']}: {error['path']}:{error['line']}: "
                     f"{error['message'][:110]} [{why}]")
        if len(unit.get("missing_headers", [])) > 1:
            lines.append(f"    every header it cannot find: {', '.join(unit['missing_headers'])}")
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", help="TREE or TREE:SUBDIR")
    parser.add_argument("--pack", required=True, help="a folder of ROCm header packs (or one pack)")
    parser.add_argument("--releases", default="5.2,6.2")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.trees:
            spec, _, macro = spec.partition("+")
            name, _, subdir = spec.partition(":")
            for release in args.releases.split(","):
                print("\n".join(one(Path(name).resolve(), subdir, release, args.pack, args.jobs, Path(tmp), macro)),
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
