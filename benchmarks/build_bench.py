"""Benchmark: build-file migration on a real tree, and whether the converted projects build.

    python benchmarks/build_bench.py TREE [--build SUBDIR ...] [--rocm 5.2] [--repeat 3]

1. Times the conversion of every CMake file, Makefile and Python file under TREE (in-process,
   best of --repeat) and counts what it reports (PK508 not migrated, PK509 choices).
2. With --build, converts the whole TREE (sources too) to a temporary folder, then configures
   and builds each given sample folder (relative to TREE; a glob like Samples/0_Introduction/*
   is expanded) with CMake's HIP language: `cmake -S ... -DCMAKE_TOOLCHAIN_FILE=tools/debian-rocm.cmake`
   on Debian/Ubuntu's packaged ROCm, then `cmake --build -j2`. Each folder ends as built,
   build-failed or configure-failed, with the first error line.

TREE is read, never written; nothing from it is kept (use e.g. NVIDIA/cuda-samples, fetched
locally).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from portkit import api  # noqa: E402
from portkit.core.files import kind_of  # noqa: E402

TOOLCHAIN = REPO / "tools" / "debian-rocm.cmake"
DEBIAN_HIP_LANG = Path("/usr/lib/x86_64-linux-gnu/cmake/hip-lang")
FIRST_ERROR = re.compile(r"(error:.*|CMake Error.*|Could not find a package configuration file provided by \"\w+\")")


def time_build_files(tree: Path, rocm: str, repeat: int) -> None:
    files = [p for p in sorted(tree.rglob("*")) if p.is_file() and kind_of(p.name) in ("cmake", "make", "python")]
    lines = sum(len(p.read_bytes().splitlines()) for p in files)
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = api.convert_paths(files, diff=True, rocm=rocm)
        best = min(best, time.perf_counter() - start)
    assert result is not None
    codes = collections.Counter(f.code for f in result.findings if f.code in ("PK508", "PK509"))
    print(f"build files: {len(files)} ({lines} lines), {sum(1 for o in result.outcomes if o.changed)} changed, "
          f"best {best:.3f} s ({lines / best:,.0f} lines/s); PK508 {codes['PK508']}, PK509 {codes['PK509']}")
    left = collections.Counter(f.subject for f in result.findings if f.code == "PK508")
    print("PK508 subjects:", ", ".join(f"{s} x{n}" for s, n in left.most_common(12)))


def build_samples(tree: Path, patterns: list[str], rocm: str) -> None:
    with tempfile.TemporaryDirectory(prefix="portkit-build-bench-") as tmp:
        out = Path(tmp) / "hip"
        api.convert_paths([tree], output=out, rocm=rocm)
        folders = sorted({p for pattern in patterns for p in out.glob(pattern) if (p / "CMakeLists.txt").is_file()})
        env = dict(os.environ, HIP_PLATFORM="amd")
        outcomes: collections.Counter = collections.Counter()
        for folder in folders:
            build = Path(tmp) / "b" / folder.name
            configure = ["cmake", "-S", str(folder), "-B", str(build)]
            if DEBIAN_HIP_LANG.is_dir():
                configure.append(f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN}")
            status, log = "built", ""
            proc = subprocess.run(configure, capture_output=True, text=True, env=env, timeout=300)
            if proc.returncode:
                status, log = "configure-failed", proc.stdout + proc.stderr
            else:
                proc = subprocess.run(["cmake", "--build", str(build), "-j2"], capture_output=True, text=True,
                                      env=env, timeout=900)
                if proc.returncode:
                    status, log = "build-failed", proc.stdout + proc.stderr
            outcomes[status] += 1
            first = FIRST_ERROR.search(log)
            print(f"{folder.relative_to(out)}: {status}" + (f": {first.group(1)[:150]}" if first else ""),
                  flush=True)
        print(f"{len(folders)} samples: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--build", action="append", default=[], metavar="SUBDIR",
                        help="sample folders (globs) under TREE to build after converting")
    parser.add_argument("--rocm", default="5.2")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    time_build_files(args.tree, args.rocm, args.repeat)
    if args.build:
        build_samples(args.tree, args.build, args.rocm)


if __name__ == "__main__":
    main()
