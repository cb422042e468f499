"""Which files `portkit convert` changes in a tree that already builds for AMD (issue 31).

    python benchmarks/dual_vendor_convert.py TREE [TREE ...]

A dual-vendor tree (ggml, faiss) keeps its NVIDIA build only if convert leaves the code its AMD
build compiles byte-identical and writes no CUDA architecture into a HIP list. For each tree this
converts a copy into a temporary folder with the default options and prints the summary's first
lines and every file whose bytes differ from the original (or that is new). Recorded output:
benchmarks/results/dual_vendor_convert.txt (with, by hand, why each listed file changes).
"""

from __future__ import annotations

import filecmp
import subprocess
import sys
import tempfile
from pathlib import Path


def changed(tree: Path, out: Path) -> list[str]:
    found = []
    for path in sorted(out.rglob("*")):
        if path.is_file():
            rel = path.relative_to(out)
            original = tree / rel
            if not original.is_file():
                found.append(f"new     {rel.as_posix()}")
            elif not filecmp.cmp(original, path, shallow=False):
                found.append(f"changed {rel.as_posix()}")
    return found


def main(trees: list[str]) -> None:
    for name in trees:
        tree = Path(name).resolve()
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            run = subprocess.run([sys.executable, "-m", "portkit", "convert", str(tree), "-o", str(out)],
                                 capture_output=True, text=True)
            print(f"== {tree.name} (exit {run.returncode})")
            print("\n".join(run.stdout.splitlines()[:3]))
            files = changed(tree, out)
            print(f"files changed or new: {len(files)}")
            print("\n".join(files))


if __name__ == "__main__":
    main(sys.argv[1:])
