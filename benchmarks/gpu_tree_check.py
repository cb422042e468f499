"""Does portkit's HIP for real code (llm.c's dev/cuda kernel benchmarks) still validate on a GPU?

    python benchmarks/gpu_tree_check.py prepare-tree --tree /tmp/trees/llm.c/dev/cuda --bundle .gpu-llmc
    PATH=/usr/local/cuda/bin:$PATH python3 .gpu-llmc/run_on_gpu.py --out $OUT    # on the GPU machine
    python benchmarks/gpu_tree_check.py compare-tree --bundle .gpu-llmc --results OUT/gpu_results.json \
        [--write benchmarks/results/gpu_llmc_check.txt]

gpu_fixture_check.py runs portkit's own fixtures; this runs a tree nobody wrote for portkit. Each
dev/cuda program checks its kernels against a CPU reference itself (common.h's validate_result
prints "Mismatch of ..." and exits 1), so the verdict needs no expected output: a program that
validates as CUDA must validate as HIP. Three variants, each a folder of the bundle: the original
tree (nvcc), `portkit convert --fix warp` and plain `portkit convert` (both through HIP's NVIDIA
backend, nvcc -D__HIP_PLATFORM_NVIDIA__ with the patched HIP headers gpu_fixture_check bundles).
A program taking a kernel number (argv[1] into a switch) is run once per case label.

Two headers the GPU machine lacks are written into the bundle's include folder, both forwarding to
CUDA exactly as HIP's NVIDIA backend does (its hipBLAS is itself a thin library over cuBLAS):
hip/hip_bf16.h (ROCm 5.2's HIP predates it; ROCm/hipother's NVIDIA version is two typedefs over
cuda_bf16.h) and hipblas/hipblas.h + hipblaslt/hipblaslt.h, one #define per hipBLAS name the HIP
sources use, each checked here to have a cuBLAS twin; a program using a name without one has its
HIP builds skipped with that reason. The shims are listed in the manifest and in compare's output.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_fixture_check import ARCH, HIP, REPO, first_error, hip_headers  # noqa: E402

CUDA_INCLUDES = [Path("/usr/local/cuda/include"),
                 Path(os.environ.get("CUDA_LIB_INCLUDE", REPO / ".ci" / "cache" / "cuda-libs" / "include"))]
SKIP_INCLUDES = {"cudnn": "needs cuDNN", "nccl": "needs NCCL", "mpi.h": "needs MPI"}
LINKS = (("cublasLt", ["-lcublasLt"]), ("cublas", ["-lcublas"]), ("omp.h", ["-Xcompiler", "-fopenmp"]),
         ("curand.h", ["-lcurand"]))
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
BLAS_NAME = re.compile(r"\b(?:hipblas|HIPBLAS\w*_|HIP_[RC]_)\w+\b(?![/.])")   # not <hipblaslt/hipblaslt.h>
FAILED_LINE = re.compile(r"^(Mismatch of .*|.*\bFAIL.*|\[CUDA ERROR\].*|\[cuBLAS ERROR\].*|Invalid kernel.*)$", re.M)
VARIANTS = {"original": None, "hip": ["--fix", "warp"], "hip_plain": []}
RUNNER = {"compile_timeout": 90, "run_timeout": 60, "run_workers": 2, "deadline": 320}
MAX_KERNELS = 10
UNJUDGED = ("skipped", "built (not run)", "not run", "not built", "no result")   # neither ok nor a failure
BF16_HEADER = """// Written by benchmarks/gpu_tree_check.py: ROCm 5.2's HIP has no hip_bf16.h; this is what
// ROCm/hipother's NVIDIA backend (hipnv/include/hip/nvidia_detail/nvidia_hip_bf16.h) defines.
#pragma once
#include <hip/hip_common.h>
#include <cuda_bf16.h>
typedef struct __nv_bfloat16 __hip_bfloat16;
typedef struct __nv_bfloat162 __hip_bfloat162;
"""


def active(text: str, defined: set[str]) -> str:
    """The text without #ifdef X blocks for an X the program never defines (and #ifndef X blocks
    for one it does): ENABLE_CUDNN guards llm.c's cuDNN include and kernel 10. Other #if lines
    keep both branches."""
    keep, stack = [], []   # stack: None for an #if left alone, else whether the branch is on
    for line in text.splitlines():
        token = line.strip().replace("# ", "#").split()
        head = token[0] if token else ""
        if head in ("#ifdef", "#ifndef") and len(token) > 1:
            stack.append((token[1] in defined) == (head == "#ifdef"))
        elif head.startswith("#if"):
            stack.append(None)
        elif head in ("#else", "#elif") and stack and stack[-1] is not None:
            stack[-1] = not stack[-1]
        elif head == "#endif" and stack:
            stack.pop()
        elif all(on is not False for on in stack):
            keep.append(line)
    return "\n".join(keep)


def local_headers(source: Path) -> list[Path]:
    """Every "quoted" header the file reaches, resolved beside the including file."""
    found, todo = [], [source]
    while todo:
        text = todo.pop().read_text(encoding="utf-8", errors="replace")
        for kind, name in INCLUDE.findall(text):
            path = (source.parent / name).resolve()
            if kind == '"' and path.is_file() and path not in found:
                found.append(path)
                todo.append(path)
    return found


def kernel_numbers(text: str) -> list[int] | None:
    """The case labels of `switch (kernel_num)`: the values main() accepts as argv[1]."""
    start = re.search(r"switch\s*\(\s*kernel_num\s*\)\s*\{", text)
    if not start or not re.search(r"kernel_num\s*=\s*atoi\s*\(\s*argv\s*\[\s*1\s*\]", text):
        return None
    body = text[start.end():]
    body = body[:m.start()] if (m := re.search(r"\bdefault\s*:", body)) else body
    return sorted({int(n) for n in re.findall(r"\bcase\s+(\d+)\s*:", body)})[:MAX_KERNELS]


def copy_tree(tree: Path, dest: Path) -> tuple[Path, list[Path]]:
    """The tree's files (subfolders left out) and the headers its programs include from elsewhere
    in the project, under dest at their paths relative to the folder holding all of them."""
    files = [p for p in sorted(tree.iterdir()) if p.is_file()]
    extra = sorted({h for p in files if p.suffix == ".cu" for h in local_headers(p)} - set(files))
    root = Path(os.path.commonpath([tree, *(h.parent for h in extra)]))
    for path in files + extra:
        target = dest / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    return dest / tree.relative_to(root), [dest / p.relative_to(root) for p in files]


def convert(src: Path, out: Path, fix: list[str]) -> dict:
    """portkit convert at its default target; the summary it prints goes into the manifest. It
    converts a copy outside this repository: the bundle is git-ignored, and convert skips ignored files."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(src, Path(tmp, "tree"))
        done = subprocess.run([sys.executable, "-m", "portkit", "convert", *fix, "tree", "-o", "out"],
                              capture_output=True, text=True, cwd=tmp, timeout=600,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
        shutil.copytree(Path(tmp, "out"), out)
    return {"command": ["portkit", "convert", *fix, "<tree>", "-o", out.name], "rc": done.returncode,
            "stdout": done.stdout[-30_000:], "stderr": done.stderr[-5_000:]}


def blas_twins(names: set[str], hip: str) -> dict[str, str | None]:
    """hipblasX -> cublasX (HIPBLAS_ -> CUBLAS_; hipBLAS's _v2 suffix dropped) where CUDA's
    headers declare that twin; None where they do not. HIP_R_ data types that HIP's NVIDIA
    headers (`hip`, their text) lack, as ROCm 5.2's lack HIP_R_16BF, go to CUDA_R_ alike."""
    text = "\n".join(p.read_text(errors="replace") for d in CUDA_INCLUDES if d.is_dir()
                     for p in d.glob("*.h") if re.match(r"(cublas|library_types)", p.name))
    declared = set(re.findall(r"\b(?:cublas|CUBLAS|CUDA_)\w+", text))
    twins = {}
    for name in sorted(n for n in names if not re.search(rf"#\s*define\s+{n}\b", hip)):
        twin = re.sub(r"^(hipblas|HIPBLAS|HIP_)", lambda m: {"hipblas": "cublas", "HIPBLAS": "CUBLAS",
                                                             "HIP_": "CUDA_"}[m.group(1)], name)
        twin = twin if twin in declared else twin.removesuffix("_v2")
        twins[name] = twin if twin in declared else None
    return twins


def write_blas_shim(include: Path, twins: dict[str, str | None]) -> None:
    for header, cuda in (("hipblas/hipblas.h", "cublas_v2.h"), ("hipblaslt/hipblaslt.h", "cublasLt.h")):
        lines = ["// Written by benchmarks/gpu_tree_check.py: hipBLAS names forwarded to cuBLAS, as hipBLAS's",
                 "// NVIDIA backend does in a library; only the names the bundled HIP sources use.",
                 "#pragma once", "#include <hip/hip_runtime.h>", f"#include <{cuda}>"]
        lines += [f"#ifndef {name}\n#define {name} {twin}\n#endif" for name, twin in twins.items() if twin]
        (include / header).parent.mkdir(parents=True, exist_ok=True)
        (include / header).write_text("\n".join(lines) + "\n", encoding="utf-8")


def program(bundle: Path, cu: Path, roots: dict[str, Path], twins: dict) -> dict:
    """One .cu with a main(): its builds, its runs (one per kernel number) or why it is skipped."""
    name, rel = cu.stem, cu.relative_to(roots["original"])
    text = cu.read_text(encoding="utf-8", errors="replace")
    whole = "\n".join([text] + [h.read_text(errors="replace") for h in local_headers(cu)])
    defined = set(re.findall(r"^\s*#\s*define\s+(\w+)", whole, re.M))
    live = active(whole, defined)
    entry = {"id": name, "kind": "tree", "source": rel.as_posix(), "variants": {}, "skipped_variants": {},
             "notes": []}
    includes = [n for _, n in INCLUDE.findall(live)]
    if why := next((why for key, why in SKIP_INCLUDES.items() for n in includes if key in n), None):
        entry["skipped"] = why
        return entry
    numbers = kernel_numbers(active(text, defined))
    runs = {f"k{n}": [str(n)] for n in numbers} if numbers else {"all": []}
    entry["kernels"] = numbers
    link = [flag for key, flags in LINKS if any(key in n for n in includes) for flag in flags]
    for variant, root in roots.items():
        source = root / rel
        if variant != "original":
            used = set(BLAS_NAME.findall(active(source.read_text(errors="replace"), defined)))
            used |= {n for h in local_headers(source) for n in BLAS_NAME.findall(h.read_text(errors="replace"))}
            if missing := sorted(n for n in used if twins.get(n, "") is None):
                entry["skipped_variants"][variant] = f"hipBLAS names without a cuBLAS twin: {missing}"
                continue
        binary = f"build/{name}/{variant}/prog"
        entry["variants"][variant] = {
            "compile": ["nvcc", ARCH, "-O3", *(HIP if variant != "original" else []),
                        source.relative_to(bundle).as_posix(), "-o", binary, *link],
            "binary": binary, "runs": runs}
    return entry


def prepare_tree(tree: Path, bundle: Path) -> int:
    if not (tree / "common.h").exists() and not list(tree.glob("*.cu")):
        sys.exit(f"{tree}: no .cu files")
    hip_headers(bundle)
    (bundle / "include" / "hip" / "hip_bf16.h").write_text(BF16_HEADER, encoding="utf-8")
    original, files = copy_tree(tree, bundle / "original")
    roots, notes = {"original": original}, {}
    for variant, fix in VARIANTS.items():
        if fix is not None:
            notes[variant] = convert(bundle / "original", bundle / variant, fix)
            roots[variant] = bundle / variant / original.relative_to(bundle / "original")
    names = {n for v in ("hip", "hip_plain") for p in roots[v].rglob("*") if p.suffix in (".cu", ".h", ".cuh")
             for n in BLAS_NAME.findall(p.read_text(errors="replace"))}
    hip = "\n".join(p.read_text(errors="replace") for p in (bundle / "include" / "hip").rglob("*.h"))
    twins = blas_twins(names, hip)
    write_blas_shim(bundle / "include", twins)
    mains = [p for p in files if p.suffix == ".cu" and re.search(r"\bint\s+main\s*\(", p.read_text(errors="replace"))]
    cases = [program(bundle, cu, roots, twins) for cu in mains]
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True)
    manifest = {"arch": ARCH, "made_by": "benchmarks/gpu_tree_check.py prepare-tree", "tree": str(tree),
                "commit": head.stdout.strip(), "runner": RUNNER, "convert": notes, "blas_shim": twins,
                "cases": cases}
    (bundle / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    builds = sum(len(c["variants"]) for c in cases)
    runs = sum(len(v["runs"]) for c in cases for v in c["variants"].values())
    print(f"{bundle}: {len(cases)} programs, {builds} builds, {runs} runs; skipped: "
          + "; ".join([f"{c['id']} ({c['skipped']})" for c in cases if c.get("skipped")]
                      + [f"{c['id']} {v} ({why})" for c in cases for v, why in c["skipped_variants"].items()]))
    for variant, note in notes.items():
        print(f"convert for {variant}: exit {note['rc']}; " + " | ".join(note["stdout"].splitlines()[:3]))
    print(f"hipBLAS names forwarded: {sum(bool(t) for t in twins.values())}, without a twin: "
          f"{[n for n, t in twins.items() if not t]}")
    return 0


def verdict(got: dict | None, run: str) -> tuple[str, str]:
    """("ok" | why not, output tail): ok is exit 0 with no line validate_result or cudaCheck
    prints on a failure ("Mismatch of ...", "[CUDA ERROR]" ...)."""
    if not got:
        return "no result", ""
    if "harness_error" in got:
        return f"runner error: {got['harness_error']}", ""
    if got.get("compile_rc") is None:
        return "not built: the run's deadline passed", ""
    if got.get("compile_rc") != 0:
        text = got.get("compile_stderr", "")
        why = next((line.strip() for line in text.splitlines() if "ptxas error" in line), first_error(text))
        return f"COMPILE rc={got.get('compile_rc')}: {why}", ""
    res = got.get("runs", {}).get(run)
    if res is None:
        return "built (not run)", ""
    out = (res.get("stdout") or "") + (res.get("run_stderr") or "")
    outtail = "\n".join(out.strip().splitlines()[-12:])
    if res.get("run_rc") is None:
        return res.get("run_stderr", "not run"), ""
    bad = FAILED_LINE.findall(out)
    if res["run_rc"] == 0 and not bad:
        return "ok", outtail
    kind = "TIMEOUT" if res["run_rc"] == 124 else "FAILED"
    return f"{kind} rc={res['run_rc']}" + (f": {bad[0][:120]}" if bad else ""), outtail


def merged(results_files: list[Path]) -> dict:
    """Several device runs of one bundle as one: a later run's build and each of its runs replace
    the earlier ones where the later run got that far (a run cut by its deadline keeps the earlier
    result), so a second, narrower run (--only) completes the first."""
    data: dict = {"cases": {}, "environments": []}
    for path in results_files:
        part = json.loads(path.read_text(encoding="utf-8"))
        data["environments"].append(part.get("environment", {}))
        data["compile_only"] = data.get("compile_only") or part.get("compile_only")
        for case, variants in part.get("cases", {}).items():
            for variant, got in variants.items():
                old = data["cases"].setdefault(case, {}).get(variant)
                if old is None or got.get("compile_rc") is not None:
                    runs = dict((old or {}).get("runs", {}))
                    runs.update((n, r) for n, r in got.get("runs", {}).items()
                                if r.get("run_rc") is not None or n not in runs)
                    data["cases"][case][variant] = {**got, "runs": runs} if runs else got
    return data


def compare_tree(bundle: Path, results_files: list[Path]) -> str:
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    data = merged(results_files)
    envs = data["environments"]
    out = [f"llm.c {manifest.get('commit', '?')[:12]} {manifest['tree']}",
           *(f"GPU: {env.get('nvidia_smi', '?')}" for env in envs),
           f"nvcc: {(envs[0].get('nvcc_version') or '?').splitlines()[-1]}",
           "compile only: nothing was run" if data.get("compile_only") else "",
           "shims: hip/hip_bf16.h (hipother's NVIDIA typedefs); hipBLAS names forwarded to cuBLAS: "
           + ", ".join(n for n, t in manifest.get("blas_shim", {}).items() if t), ""]
    names = list(VARIANTS)
    ok = dict.fromkeys(names, 0)
    runs, findings, failures = 0, [], []
    for case in manifest["cases"]:
        if case.get("skipped"):
            out.append(f"{case['id']:<32} skipped: {case['skipped']}")
            continue
        got = data["cases"].get(case["id"], {})
        for variant, why in case["skipped_variants"].items():
            out.append(f"{case['id']:<32} {variant} skipped: {why}")
        if (got.get("original") or {}).get("compile_rc") == 0:   # a build the original passes and HIP fails
            findings += [(f"{case['id']} {v} (build): {verdict(got.get(v), '')[0]}", "") for v in names[1:]
                         if v in case["variants"] and (got.get(v) or {}).get("compile_rc") not in (0, None)]
        any_spec = next(iter(case["variants"].values()))
        for run in any_spec["runs"]:
            runs += 1
            judged = {v: verdict(got.get(v), run) if v in case["variants"] else ("skipped", "") for v in names}
            out.append(f"{case['id'] + ' ' + run:<32} " + "; ".join(f"{v}: {judged[v][0]}" for v in names))
            for v in names:
                ok[v] += judged[v][0] == "ok"
                if judged[v][0] != "ok" and not judged[v][0].startswith(UNJUDGED):
                    failures.append(f"{case['id']} {run} {v}")
            if judged["original"][0] == "ok":
                findings += [(f"{case['id']} {run} {v}: {judged[v][0]}", judged[v][1]) for v in names[1:]
                             if judged[v][0] != "ok" and not judged[v][0].startswith(UNJUDGED)]
    out += ["", f"FINDINGS: the original builds (and validates), a HIP variant does not ({len(findings)})"]
    for head, outtail in findings:
        out += [f"  {head}", *(f"      {line}" for line in outtail.splitlines())]
    programs = sum(not c.get("skipped") for c in manifest["cases"])
    out += ["", f"llm.c dev/cuda: {programs} programs, {runs} runs; original ok {ok['original']}/{runs}; "
                f"--fix warp ok {ok['hip']}/{runs}; plain ok {ok['hip_plain']}/{runs}; "
                f"failures: {', '.join(failures) or 'none'}"]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    prep = sub.add_parser("prepare-tree", help="write the bundle the GPU machine runs")
    prep.add_argument("--tree", type=Path, required=True, help="a folder of .cu programs (llm.c/dev/cuda)")
    prep.add_argument("--bundle", type=Path, required=True)
    comp = sub.add_parser("compare-tree", help="judge the GPU machine's gpu_results.json")
    comp.add_argument("--bundle", type=Path, required=True)
    comp.add_argument("--results", type=Path, required=True, action="append",
                      help="gpu_results.json of a device run; repeat to merge a later, narrower run")
    comp.add_argument("--write", type=Path, help="also write the table to this file")
    args = parser.parse_args(argv)
    if args.command == "prepare-tree":
        return prepare_tree(args.tree.resolve(), args.bundle.resolve())
    text = compare_tree(args.bundle, args.results)
    print(text, end="")
    if args.write:
        args.write.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
