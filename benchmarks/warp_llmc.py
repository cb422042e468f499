"""Benchmark: `portkit convert --fix warp` on llm.c: what the audit still finds, and does it compile.

    python benchmarks/warp_llmc.py [--llmc DIR] [--mirrors DIR] [--rocm 6.2] [--work DIR] [--out FILE]

Issue 23's bar on real code: after `--fix warp`, no PK201/PK202/PK203 finding above info that the
fix did not explain, and the result compiles. Steps:

1. audit the llm.c checkout (`--rocm X`, JSON) and count the warp findings (PK201-PK207) by code
   and severity;
2. convert it with `--fix warp --rocm X` and audit the converted tree the same way (the fixes are
   HIP code the audit reads like any other; what is left is what the fix did not change);
3. compile every translation unit that builds on one machine (dev/cuda/*.cu, and the root
   *.cu trainers) with `HIP_PLATFORM=amd hipcc -x hip --offload-arch=gfx90a -c` against the HIP,
   hipBLAS and hipBLASLt headers of ROCm X, taken from the git mirrors of ROCm/HIP, ROCm/clr,
   ROCm/hipBLAS and ROCm/hipBLASLt at tag rocm-X.0 (Debian ships ROCm 5.2 only: hipcc's clang
   is 15, the headers are X's).

The compile flags are the ones a user of llm.c sets, each for a stated reason (FLAGS below); the
stub headers (STUBS) stand for libraries that are not installed here, or for a header portkit
reports as unsupported (the user deletes the include). Both are printed in the results. Nothing is
cached in the repository; llm.c and the mirrors are read-only inputs.
"""

from __future__ import annotations

import argparse
import collections
import difflib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

WARP_CODES = ("PK201", "PK202", "PK203", "PK204", "PK205", "PK206", "PK207")
# (mirror, path in the repository, where it goes under the include root)
HEADERS = (
    ("ROCm+HIP", "include/hip", "hip"),
    ("ROCm+clr", "hipamd/include/hip", "hip"),
    ("ROCm+hipBLAS", "library/include", "hipblas"),
    ("ROCm+hipBLASLt", "library/include", "hipblaslt"),
)
# What cmake generates at install time: version and export headers.
GENERATED = {
    "hip/hip_version.h": "#pragma once\n#define HIP_VERSION_MAJOR {major}\n#define HIP_VERSION_MINOR {minor}\n"
                         "#define HIP_VERSION_PATCH 0\n#define HIP_VERSION (HIP_VERSION_MAJOR * 10000000 + "
                         "HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)\n",
    "hipblas/hipblas-export.h": "#pragma once\n#define HIPBLAS_EXPORT\n",
    "hipblas/hipblas-version.h": "#pragma once\n",
    "hipblaslt/hipblaslt-export.h": "#pragma once\n#define HIPBLASLT_EXPORT\n",
    "hipblaslt/hipblaslt-version.h": "#pragma once\n",
}
STUBS = {
    "roctracer/roctx.h": ("roctracer is not installed here: its declarations of what llm.c calls (roctx.h's "
                          "own spelling: the A functions and the macros over them)",
                          "#pragma once\nextern \"C\" { int roctxRangePushA(const char*); int roctxRangePop(void); "
                          "void roctxMarkA(const char*); }\n#define roctxRangePush(m) roctxRangePushA(m)\n"
                          "#define roctxMark(m) roctxMarkA(m)\n"),
    "nvtx3/nvToolsExtCudaRt.h": ("portkit reports it (PK001: no roctx equivalent, drop the include): dropped",
                                 "#pragma once\n"),
}
FLAGS = (
    ("-std=c++17", "llm.c's Makefile"),
    ("-DHIPBLAS_V2", "hipBLAS 6.x's opt-in to the hipDataType/hipblasComputeType_t API that cuBLAS's "
                     "cudaDataType/cublasComputeType_t map to (the default from ROCm 7)"),
    ("-include hip/hip_bf16.h", "cuBLAS's headers include cuda_bf16.h, which llm.c relies on; hipBLAS's do not"),
    ("-include math.h", "CUDA's runtime header declares the host math functions llm.c's host code calls "
                        "(isfinite); HIP's does not"),
)
NEEDS_MPI = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*<mpi\.h>", re.M)
ERROR = re.compile(r"^(?P<where>[^\s:][^:]*:\d+:\d+): (?:fatal )?error: (?P<msg>.*)$", re.M)


def headers(mirrors: Path, rocm: str, into: Path) -> Path:
    """The include root for ROCm `rocm`, from the mirrors (git archive; no shell)."""
    major, minor = rocm.split(".")[:2]
    tag = f"rocm-{major}.{minor}.0"
    for mirror, path, dest in HEADERS:
        archive = subprocess.run(["git", "-C", str(mirrors / mirror / "repo"), "archive", tag, path],
                                 capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            for member in tar.getmembers():
                if member.isfile() and member.name.endswith((".h", ".hpp", ".inl")):
                    target = into / dest / Path(member.name).relative_to(path)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(tar.extractfile(member).read())
    for rel, text in GENERATED.items():
        (into / rel).write_text(text.format(major=major, minor=minor))
    for rel, (_why, text) in STUBS.items():
        (into / rel).parent.mkdir(parents=True, exist_ok=True)
        (into / rel).write_text(text)
    return into


def warp_findings(tree: Path, rocm: str) -> collections.Counter:
    from portkit.cli.app import main
    out = tree.parent / f"{tree.name}.audit.json"
    main(["audit", str(tree), "--rocm", rocm, "--format", "json", "-o", str(out), "-q"])
    doc = json.loads(out.read_text())
    return collections.Counter((f["code"], f["severity"]) for f in doc["findings"] if f["code"] in WARP_CODES)


def units(tree: Path) -> list[Path]:
    return sorted((tree / "dev" / "cuda").glob("*.cu")) + sorted(tree.glob("*.cu"))


def fixed_lines(plain: Path, fixed: Path) -> dict[str, set[int]]:
    """Per file of the fixed tree (relative path): the line numbers --fix warp changed or added."""
    changed: dict[str, set[int]] = {}
    for path in sorted(fixed.rglob("*")):
        rel = path.relative_to(fixed)
        if not path.is_file() or not (plain / rel).is_file():
            continue
        a = (plain / rel).read_bytes().splitlines()
        b = path.read_bytes().splitlines()
        if a == b:
            continue
        lines = set()
        for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag != "equal":
                lines.update(range(j1 + 1, j2 + 1))
        changed[str(rel)] = lines
    return changed


def compile_unit(unit: Path, tree: Path, include: Path, hipcc: str) -> tuple[str, list[tuple[str, int]]]:
    """('' when it compiles, else its first error), and where every error is (tree-relative file, line)."""
    if NEEDS_MPI.search(unit.read_bytes()):
        return "excluded: needs MPI (not installed)", []
    flags = [part for flag, _why in FLAGS for part in flag.split()]
    command = [hipcc, "-x", "hip", "--offload-arch=gfx90a", "-w", *flags, "-I", str(include),
               "-c", unit.name, "-o", os.devnull]
    done = subprocess.run(command, cwd=unit.parent, capture_output=True, text=True,
                          env={**os.environ, "HIP_PLATFORM": "amd"}, timeout=600, check=False)
    if done.returncode == 0:
        return "", []
    errors = list(ERROR.finditer(done.stderr))
    where = []
    for e in errors:
        file, line, _col = e["where"].rsplit(":", 2)
        path = (unit.parent / file).resolve()
        if path.is_relative_to(tree.resolve()):
            where.append((str(path.relative_to(tree.resolve())), int(line)))
    first = f"{errors[0]['where']}: {errors[0]['msg']}" if errors else done.stderr.strip().splitlines()[-1]
    return first, where


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llmc", type=Path, default=Path("/tmp/real/karpathy+llm.c"))
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--rocm", default="6.2")
    parser.add_argument("--work", type=Path, help="keep the converted tree here (default: a temporary directory)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "warp_llmc.txt")
    parser.add_argument("--hipcc", default=shutil.which("hipcc") or "hipcc")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="warp-llmc-"))
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    from portkit.cli.app import main as portkit
    before = warp_findings(args.llmc, args.rocm)
    converted = work / "llm.c"
    assert portkit(["convert", str(args.llmc), "-o", str(converted), "--fix", "warp", "--rocm", args.rocm, "-q"]) in (0, 1)
    assert portkit(["convert", str(args.llmc), "-o", str(work / "plain"), "--rocm", args.rocm, "-q"]) in (0, 1)
    changed = fixed_lines(work / "plain", converted)
    after = warp_findings(converted, args.rocm)
    include = headers(args.mirrors, args.rocm, work / "include")
    lines = [f"llm.c ({args.llmc}), portkit convert --fix warp --rocm {args.rocm}", "",
             "warp findings (code, severity): before -> after --fix warp"]
    for key in sorted(set(before) | set(after)):
        lines.append(f"  {key[0]} {key[1]}: {before[key]} -> {after[key]}")
    lines += ["", f"compile: hipcc -x hip --offload-arch=gfx90a -c, ROCm {args.rocm} headers from the mirrors, flags:"]
    lines += [f"  {flag}: {why}" for flag, why in FLAGS]
    lines += ["stub headers:"] + [f"  {rel}: {why}" for rel, (why, _text) in STUBS.items()]
    results = []
    for unit in units(converted):
        error, where = compile_unit(unit, converted, include, args.hipcc)
        on_fix = sum(1 for file, line in where if line in changed.get(file, ()))
        results.append((unit.relative_to(converted), error, len(where), on_fix))
    ok = sum(1 for r in results if not r[1])
    excluded = sum(1 for r in results if r[1].startswith("excluded"))
    lines += ["", f"--fix warp changed {sum(len(v) for v in changed.values())} lines in {len(changed)} files",
              f"units: {ok} of {len(results) - excluded} compile ({excluded} excluded); errors on lines --fix warp "
              f"changed: {sum(r[3] for r in results)}"]
    for unit, error, count, on_fix in results:
        state = "ok  " if not error else "skip" if error.startswith("excluded") else "FAIL"
        detail = f": {error}" if error.startswith("excluded") else \
            f": {count} errors, {on_fix} on fixed lines; first {error}" if error else ""
        lines.append(f"  {state} {unit}{detail}")
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
