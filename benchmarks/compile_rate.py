"""Benchmark: the share of NVIDIA cuda-samples programs that compile for AMD after conversion.

    python benchmarks/compile_rate.py [--samples DIR] [--hipify DIR] [--work DIR] [--out FILE]
                                      [-j 2] [--tools portkit,hipify-perl] [--only SUBSTR]
                                      [--reuse FILE]

A program is one sample directory (the nearest directory above its .cu files whose
CMakeLists.txt declares a project); its translation units are its .cu and .cpp files. The whole
tree (Samples/ and the shared Common/ helpers) is converted twice: by portkit with its defaults
and --rocm 5.2 (the ROCm release of the test toolchain: names it lacks are reported, not
written), and by hipify-perl file by file (its stdout; no file name reaches a shell). Every
translation unit of every program is then checked with
`HIP_PLATFORM=amd hipcc -x hip --offload-arch=gfx90a -fsyntax-only -std=c++17 -w` with the
program's include directories (Common/, the program, its inc/). A program compiles when all
its units do.

Programs that no converter can make compile here are excluded, by their errors, not by name:
a first error that is a missing header of a library Debian's ROCm 5.2 does not ship (EXCLUDED)
in either tool's output. The summary goes to stdout, the per-program list with the first
error of every failing unit to --out. The work directory is a temporary one unless --work is
given; nothing is cached in the repository. --reuse FILE takes the columns of the tools not in
--tools from a list written before (re-run only portkit after a fix: hipify-perl's column does not
change); exclusions are then decided on both columns as usual.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

SOURCES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".c", ".inl", ".cxx")
UNITS = (".cu", ".cpp")
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
ERROR = re.compile(r"^(?P<where>[^\s:][^:]*:\d+:\d+): (?:fatal )?error: (?P<msg>.*)$|^(?:clang|hipcc)\S*: error: (?P<drv>.*)$")
MISSING = re.compile(r"'([^']+)' file not found")
# header (prefix) -> why no converter can make the program compile with Debian's ROCm 5.2
EXCLUDED = {
    "hipblas": "hipBLAS is not packaged (cuBLAS -> hipBLAS)",
    "rocblas": "rocBLAS is not packaged",
    "hipfft": "hipFFT is not packaged (cuFFT -> hipFFT)",
    "hipsolver": "hipSOLVER is not packaged (cuSOLVER -> hipSOLVER)",
    "hipcub": "hipCUB/rocPRIM are not packaged (CUB -> hipCUB)",
    "thrust/": "rocThrust is not packaged (Thrust)",
    "cub/": "hipCUB/rocPRIM are not packaged (CUB)",
    "npp": "NPP has no ROCm counterpart",
    "nvjpeg": "nvJPEG has no ROCm counterpart",
    "cudla": "cuDLA (Tegra DLA) has no ROCm counterpart",
    "nvscibuf": "NvSci (Tegra) has no ROCm counterpart",
    "nvscisync": "NvSci (Tegra) has no ROCm counterpart",
    "nvmedia": "NvMedia (Tegra) has no ROCm counterpart",
    "vulkan": "Vulkan headers are not installed",
    "GLFW": "GLFW headers are not installed",
    "d3d": "Direct3D (Windows only)",
    "windows.h": "Windows only",
    "nvml": "NVML has no ROCm counterpart here (rocm_smi not packaged)",
    "nvvm": "libNVVM has no ROCm counterpart",
    "cuda_gl_interop": "OpenGL interop: hip_gl_interop.h is not in ROCm 5.2's HIP",
    "cudaEGL": "EGL interop has no HIP counterpart",
    "mma.h": "WMMA (mma.h): rocWMMA is not packaged",
    "cuda/pipeline": "libcu++ (cuda::pipeline): no ROCm 5.2 counterpart",
    "cuda/barrier": "libcu++ (cuda::barrier): no ROCm 5.2 counterpart",
    "roctracer": "NVTX -> roctx: roctracer is not packaged",
    "nvtx3": "NVTX -> roctx: roctracer is not packaged",
    "llvm/": "LLVM development headers (libNVVM samples) are not installed",
    "drm_fourcc": "libdrm headers are not installed",
    "cudnn": "cuDNN -> MIOpen: MIOpen is not packaged",
    "miopen": "MIOpen is not packaged",
    "mpi.h": "MPI headers are not installed",
    "omp.h": "OpenMP headers are not found by hipcc here",
    "cufile": "cuFile (GPUDirect Storage) has no ROCm counterpart",
}


@dataclass(frozen=True)
class Program:
    name: str            # path of the program directory, relative to the samples root
    units: tuple[str, ...]   # its translation units, relative to the samples root


@dataclass(frozen=True)
class Outcome:
    unit: str
    ok: bool
    error: str           # first error, "path:line:col: message" relative to the tree; "" when ok


def programs(samples: Path) -> list[Program]:
    found: dict[Path, list[str]] = collections.defaultdict(list)
    for cu in sorted((samples / "Samples").rglob("*.cu")):
        home = next(d for d in cu.parents if (d / "CMakeLists.txt").is_file()
                    and "project(" in (d / "CMakeLists.txt").read_text(errors="replace"))
        found.setdefault(home, [])
    for home in found:
        found[home] = sorted(str(p.relative_to(samples)) for p in home.rglob("*") if p.suffix in UNITS and p.is_file())
    return [Program(str(h.relative_to(samples)), tuple(u)) for h, u in sorted(found.items())]


def convert_portkit(samples: Path, out: Path) -> None:
    from portkit.api import convert_paths
    shutil.rmtree(out, ignore_errors=True)
    convert_paths([samples], output=out, rocm="5.2", jobs=2)


def convert_perl(samples: Path, out: Path, hipify: Path, jobs: int) -> None:
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(samples, out, symlinks=True)
    files = [p for p in sorted(out.rglob("*")) if p.suffix in SOURCES and p.is_file() and not p.is_symlink()]
    unsafe = [p for p in files if not all(SAFE_NAME.fullmatch(part) for part in p.relative_to(out).parts)]
    if unsafe:
        sys.exit(f"compile_rate: {unsafe[0]}: a name hipify-perl should not be given")
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(lambda p: _perl_one(hipify / "bin" / "hipify-perl", p), files))


def _perl_one(script: Path, path: Path) -> None:
    done = subprocess.run(["perl", str(script), "-quiet-warnings", path.name], cwd=path.parent,
                          capture_output=True, timeout=300, check=False)
    if done.returncode == 0 and done.stdout:
        path.write_bytes(done.stdout)


INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)


def include_dirs(tree: Path, program: Program) -> list[Path]:
    home = tree / program.name
    return [tree / "Common", home] + [d for d in (home / "inc",) if d.is_dir()]


def closure(tree: Path, program: Program, unit: str) -> tuple:
    """The unit and every file of the tree it may include (any #if branch), with their bytes:
    two trees that agree on it give the same compiler verdict, so it is compiled once."""
    dirs, seen, todo = include_dirs(tree, program), {}, [tree / unit]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen[path] = data = path.read_bytes()
        for name in INCLUDE.findall(data):
            rel = name.decode(errors="replace")
            hit = next((d / rel for d in [path.parent, *dirs] if (d / rel).is_file()), None)
            if hit is not None:
                todo.append(hit.resolve())
    return tuple(sorted((str(p.relative_to(tree.resolve()) if p.is_relative_to(tree.resolve()) else p), d)
                        for p, d in seen.items()))


def compile_unit(tree: Path, program: Program, unit: str, hipcc: str) -> Outcome:
    includes = include_dirs(tree, program)
    cmd = [hipcc, "-x", "hip", "--offload-arch=gfx90a", "-fsyntax-only", "-std=c++17", "-w",
           *[f"-I{d}" for d in includes], str(tree / unit)]
    env = dict(os.environ, HIP_PLATFORM="amd")
    try:
        done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, timeout=600, check=False)
    except subprocess.TimeoutExpired:
        return Outcome(unit, False, "timeout")
    text = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    return Outcome(unit, done.returncode == 0, "" if done.returncode == 0 else first_error(text, tree))


def first_error(text: str, tree: Path) -> str:
    for line in text.splitlines():
        m = ERROR.match(line)
        if m:
            where = m.group("where") or "driver"
            if where.startswith(str(tree)):
                where = where[len(str(tree)) + 1:]
            return f"{where}: {m.group('msg') or m.group('drv')}"
    return "no error line: " + (text.strip().splitlines() or ["(no output)"])[-1]


def excluded(outcomes: list[Outcome]) -> str:
    """Why the program cannot compile for AMD here whatever the converter, or ''."""
    for o in outcomes:
        m = MISSING.search(o.error)
        if m:
            for prefix, why in EXCLUDED.items():
                if m.group(1).lower().startswith(prefix.lower()) or f"/{prefix.lower()}" in m.group(1).lower():
                    return f"{why} ({m.group(1)})"
    return ""


def cause(error: str) -> str:
    """The error without its location: names kept, so each group is one cause."""
    return error.split(": ", 1)[1] if ": " in error else error


def run_tool(tree: Path, progs: list[Program], hipcc: str, jobs: int, seen: dict) -> dict[str, list[Outcome]]:
    """Compiles every unit; seen (closure -> Outcome, in memory only) spares a second compile
    of a unit whose bytes and includes the other tool wrote identically."""
    jobs_list = [(p, u) for p in progs for u in p.units]
    keys = [(p.name, closure(tree.resolve(), p, u)) for p, u in jobs_list]
    todo = {k: pu for k, pu in zip(keys, jobs_list) if k not in seen}
    print(f"{tree.name}: {len(todo)} of {len(keys)} units to compile", file=sys.stderr, flush=True)
    with ThreadPoolExecutor(jobs) as pool:
        fresh = dict(zip(todo, pool.map(lambda pu: compile_unit(tree, pu[0], pu[1], hipcc), todo.values())))
    seen.update(fresh)
    done = [seen[k] for k in keys]
    by_program: dict[str, list[Outcome]] = collections.defaultdict(list)
    for (p, _), o in zip(jobs_list, done):
        by_program[p.name].append(o)
    return by_program


def summarize(progs: list[Program], results: dict[str, dict[str, list[Outcome]]], out) -> list[str]:
    """Writes the per-program list to out; returns the summary lines."""
    tools = list(results)
    excl = {p.name: next((w for t in tools if (w := excluded(results[t][p.name]))), "") for p in progs}
    counted = [p for p in progs if not excl[p.name]]
    lines = [f"programs: {len(progs)}, excluded: {len(progs) - len(counted)}, counted: {len(counted)}"]
    for t in tools:
        ok = sum(all(o.ok for o in results[t][p.name]) for p in counted)
        units = [o for p in counted for o in results[t][p.name]]
        lines.append(f"{t}: {ok}/{len(counted)} programs compile ({100 * ok / max(len(counted), 1):.1f}%), "
                     f"{sum(o.ok for o in units)}/{len(units)} units")
    for t in tools:
        groups = collections.Counter(cause(next(o.error for o in results[t][p.name] if not o.ok))
                                     for p in counted if not all(o.ok for o in results[t][p.name]))
        lines.append(f"{t}: failing programs by first error")
        lines += [f"  {n:4d}  {msg}" for msg, n in groups.most_common()]
    reasons = collections.Counter(re.sub(r" \([^()]*\)$", "", w) for w in excl.values() if w)
    lines.append("excluded programs by reason")
    lines += [f"  {n:4d}  {why}" for why, n in reasons.most_common()]
    for p in progs:
        status = " ".join(f"{t}={'ok' if all(o.ok for o in results[t][p.name]) else 'FAIL'}" for t in tools)
        out.write(f"{p.name}: {status}" + (f"  EXCLUDED: {excl[p.name]}" if excl[p.name] else "") + "\n")
        for t in tools:
            for o in results[t][p.name]:
                if not o.ok:
                    out.write(f"  {t}: {o.error}\n")
    return lines


def read_list(path: Path, progs: list[Program]) -> dict[str, dict[str, list[Outcome]]]:
    """The outcomes back from a list this script wrote (to re-summarize after EXCLUDED changes):
    the failing units' first errors are listed, the program's other units compiled."""
    failed: dict[str, dict[str, list[str]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    tools: list[str] = []
    name = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("  "):
            name = line.split(": ", 1)[0]
            tools = tools or [kv.split("=")[0] for kv in line.split(": ", 1)[1].split("  ")[0].split()]
        else:
            tool, error = line.strip().split(": ", 1)
            failed[tool][name].append(error)
    results = {}
    for tool in tools:
        results[tool] = {p.name: [Outcome(u, i >= len(failed[tool][p.name]), e)
                                  for i, (u, e) in enumerate(zip(p.units, failed[tool][p.name] + [""] * len(p.units)))]
                         for p in progs}
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, default=Path("/tmp/real/NVIDIA+cuda-samples"))
    parser.add_argument("--hipify", type=Path, default=Path("/tmp/pk/hipify"))
    parser.add_argument("--work", type=Path, help="keep the converted trees here (default: a temporary directory)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "compile_rate.txt")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--tools", default="portkit,hipify-perl")
    parser.add_argument("--only", default="", help="only programs whose path contains this")
    parser.add_argument("--hipcc", default=shutil.which("hipcc") or "hipcc")
    parser.add_argument("--from-list", type=Path, help="re-summarize a list written before; compile nothing")
    parser.add_argument("--reuse", type=Path, help="take the tools not in --tools from a list written before")
    args = parser.parse_args()
    progs = [p for p in programs(args.samples) if args.only in p.name]
    if args.from_list:
        results = read_list(args.from_list, progs)
        with args.out.open("w", encoding="utf-8") as out:
            print("\n".join(summarize(progs, results, out)))
        return 0
    # read before --out (often the same file) is overwritten
    kept = read_list(args.reuse, progs) if args.reuse else {}
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        results, seen = {}, {}
        for tool in args.tools.split(","):
            tree = work / tool
            if tool == "portkit":
                convert_portkit(args.samples, tree)
            else:
                convert_perl(args.samples, tree, args.hipify, args.jobs)
            results[tool] = run_tool(tree, progs, args.hipcc, args.jobs, seen)
        results.update({t: r for t, r in kept.items() if t not in results})
        with args.out.open("w", encoding="utf-8") as out:
            lines = summarize(progs, results, out)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
