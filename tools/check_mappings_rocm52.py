"""Check the mapping tables against the ROCm 5.2 headers installed on this machine.

Usage: python tools/check_mappings_rocm52.py [--mappings mappings/] [--include DIR ...]

For every entry of runtime, device, complex, curand, cusparse and coop_groups whose hip_since is 5.2 or
older and that is not removed by 5.2, the HIP name must occur as a word in the HIP headers
(default: /usr/include/hip, /usr/include/hiprand, /usr/include/hipsparse, plus clang's
__clang_hip_*.h wrappers, which provide part of HIP's device math on hipcc's clang). A
miss means the table claims more than ROCm 5.2 delivers: either the hip_since is too early
or the name is wrong; fix it in tools/mapping_overrides.toml. The NVIDIA-platform folders
(nvidia_detail, nvcc_detail, *_nvcc.h) are skipped since they only forward to CUDA,
and so are comments: a name that HIP only mentions in a comment does not count.
Note: Debian's hiprand/hipsparse packages here are 5.3.x, so those two are checked against
5.3 headers. Exit status 1 when anything is missing.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the tomli backport has the same API
    import tomli as tomllib

FAMILIES = ["runtime", "device", "complex", "curand", "cusparse", "coop_groups"]
DEFAULT_DIRS = ["/usr/include/hip", "/usr/include/hiprand", "/usr/include/hipsparse"]
CLANG_WRAPPERS = "/usr/lib/llvm-{version}/lib/clang/*/include/__clang_hip_*.h"
HIPCC_SCRIPT = "/usr/bin/hipcc.pl"   # Debian's hipcc names the clang it runs (clang++-15)


def hipcc_clang_wrappers() -> str:
    """The HIP wrapper headers of hipcc's own clang, not of every clang installed beside it
    (deep mode's clang-19 knows names ROCm 5.2's clang does not)."""
    try:
        with open(HIPCC_SCRIPT, encoding="utf-8", errors="replace") as fh:
            match = re.search(r"clang\+\+-(\d+)", fh.read())
    except OSError:
        match = None
    return CLANG_WRAPPERS.format(version=match.group(1) if match else "*")
TARGET = (5, 2)


def version(text: str) -> tuple[int, ...]:
    """'5.2.0' -> (5, 2, 0), comparable with TARGET."""
    return tuple(int(p) for p in text.split("."))


def header_words(dirs: list[str], extra_files: list[str]) -> set[str]:
    """Every identifier that occurs outside comments in the given AMD-platform headers."""
    files = list(extra_files)
    for top in dirs:
        for root, subdirs, names in os.walk(top):
            subdirs[:] = [d for d in subdirs if d not in ("nvidia_detail", "nvcc_detail")]
            files += [os.path.join(root, n) for n in names]
    words: set[str] = set()
    for path in files:
        if re.search(r"nvcc|nvidia", os.path.basename(path)):
            continue
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        text = re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", " ", text, flags=re.S))
        words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    return words


def due_by_target(entry: dict) -> bool:
    """True when the table says the HIP name exists in ROCm 5.2."""
    if "hip" not in entry or "hip_since" not in entry:
        return False
    if "hip_removed" in entry and version(entry["hip_removed"])[:2] <= TARGET:
        return False
    return version(entry["hip_since"])[:2] <= TARGET


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mappings", type=Path, default=Path(__file__).resolve().parent.parent / "mappings")
    parser.add_argument("--include", action="append", default=None)
    args = parser.parse_args(argv)
    words = header_words(args.include or DEFAULT_DIRS, sorted(glob.glob(hipcc_clang_wrappers())))
    checked = missing = 0
    for family in FAMILIES:
        data = tomllib.loads((args.mappings / f"{family}.toml").read_text(encoding="utf-8"))
        for entry in data["entries"]:
            if not due_by_target(entry):
                continue
            checked += 1
            if entry["hip"] not in words:
                missing += 1
                print(f"{family}: {entry['cuda']} -> {entry['hip']} "
                      f"(hip_since {entry['hip_since']}) not found in ROCm 5.2 headers")
    print(f"checked {checked} entries with hip_since <= 5.2; {missing} not found")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
