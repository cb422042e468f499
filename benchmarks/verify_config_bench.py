"""verify with and without the build's configuration (CMakeLists.txt / Makefile: -std, -I, -D).

    python benchmarks/verify_config_bench.py TREE [--under DIR] [--sample N] [--jobs 2] [--rocm 5.2]

Converts the whole tree (so its build files and headers come along) to a temporary directory,
then verifies the units under DIR (every unit, or N of them spread evenly over the sorted list)
twice: with the configuration the build asks for, and with --no-build-config (hipcc's defaults
and include directories inferred from the tree). Prints, for each, the configurations used and
units compiled / failed / explained / unexplained / not reached. The tree is only read.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from portkit.api import convert_paths
from portkit.report.verify import configuration_lines, summary
from portkit.commands.verify import VerifyOptions, verify_tree

UNIT_SUFFIXES = (".cu", ".hip")


def sample(out: Path, under: str, n: int | None) -> list[str]:
    """The units under `under`, or n of them spread evenly (deterministic)."""
    base = out / under if under else out
    units = sorted(p.relative_to(out).as_posix() for p in base.rglob("*") if p.suffix in UNIT_SUFFIXES)
    if n is None or n >= len(units):
        return units
    step = len(units) / n
    return [units[int(i * step)] for i in range(n)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--under", default="", help="verify only the units under this directory of the tree")
    parser.add_argument("--sample", type=int, help="verify only this many units, spread over the list")
    parser.add_argument("--rocm", default="5.2")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        start = time.perf_counter()
        convert_paths([args.tree], output=out, rocm=args.rocm, jobs=args.jobs)
        print(f"{args.tree.name}: converted in {time.perf_counter() - start:.1f} s")
        chosen = sample(out, args.under, args.sample)
        total = len(sample(out, args.under, None))
        print(f"units: {len(chosen)} of {total} under {args.under or '.'}")
        for label, build_config in (("with the build's configuration", True), ("without (--no-build-config)", False)):
            result = verify_tree(out, VerifyOptions(source=args.tree, jobs=args.jobs, only=frozenset(chosen),
                                                    build_config=build_config))
            s = summary(result)
            print(f"\n{label}:")
            for line in configuration_lines(result):
                print(f"  {line.replace(str(out), '<out>')}")
            print(f"  {s['units']} units: {s['compiled']} compiled, {s['failed']} failed "
                  f"({s['explained']} explained, {s['unexplained']} unexplained, {s['not_reached']} not reached) "
                  f"in {s['seconds']:.0f} s")
            for unit in result.units:
                first = unit.errors[0] if unit.errors else None
                what = f"{first.rel}:{first.line}: {first.message[:90]}" if first else unit.output[-90:]
                print(f"    {unit.rel}: {unit.status}" + (f" ({len(unit.errors)} errors; first {what})"
                                                          if unit.failed else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
