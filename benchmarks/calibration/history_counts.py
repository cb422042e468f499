"""Counts from the port histories that price items of mappings/effort.toml (issue 50: price what
the data says, not a guess).

    python benchmarks/calibration/history_counts.py [--mirrors /work/.mirror]

- Triton kernels: for each port of histories.toml whose upstream has Triton kernels at the port's
  net base (a .py file with `@triton.jit`, outside vendored copies), how many of those files the
  port's commits changed, and by how many lines (added + deleted, the net diff base..release, as
  histories.py counts manual lines): unit.validate_triton_kernel.
- PyTorch extension builds: for each port whose upstream builds a `CUDAExtension` at the base and
  whose history keeps its days (not squashed), the commit days on which every port commit touched
  only build, packaging or CI files (setup.py, pyproject.toml, CMake, Makefiles, requirements,
  Dockerfiles, CI folders, shell scripts), of its commit days; for a squashed one, its lines in
  those files (net, as histories.py counts manual lines) at the squashed ports' rate, the median
  manual lines per commit day of the unsquashed ports (estimate/calibration.py lines_per_day):
  fixed.torch_extension_build. Printed with the median each port's leave-one-out would see.
- Both-vendors guards: for each port, the source lines it added (net, base..release, as histories.py
  counts manual lines, generated files left out) on or inside an `#if` whose condition names ROCm or
  HIP (USE_ROCM, __HIP_PLATFORM_*, __HIPCC__, BUILD_AMD ...), the files holding them, and those lines at
  the squashed ports' rate: what keeping the NVIDIA build beside the AMD one cost in the sources (an
  extension's shim and guards, which no dual-vendor item prices; docs/estimate.md).
Reads the git mirrors only: nothing is fetched or run.
"""

from __future__ import annotations

import argparse
import re
from statistics import median
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import histories  # noqa: E402  (the same pairing of port and upstream mirrors, the same commits)

sys.path.insert(0, str(HERE.parents[1]))
from portkit.estimate.calibration import lines_per_day  # noqa: E402

JIT = re.compile(r"^\s*@triton\.(?:jit|autotune|heuristics)\b", re.M)
GUARD = re.compile(r"USE_ROCM|__HIP_PLATFORM|__HIPCC__|__HIP__|HIP_PLATFORM|IS_HIP|__HIP_DEVICE_COMPILE__|"
                   r"BUILD_AMD|USE_HIP|ROCM")
SOURCE = re.compile(r"\.(cu|cuh|h|hpp|cpp|cc|cxx|inl)$")
BUILD = re.compile(r"(^|/)(setup\.py|pyproject\.toml|CMakeLists\.txt|Makefile|requirements[^/]*\.txt|Dockerfile[^/]*)$"
                   r"|\.cmake$|^\.github/|^\.ci|(^|/)ci/|\.sh$")


def triton_files(pair: histories.Pair, commit: str) -> list[str]:
    """The .py files with a Triton kernel at COMMIT."""
    names = [n for n in pair.git("ls-tree", "-r", "--name-only", commit).splitlines()
             if n.endswith(".py") and not histories.VENDORED.search(n)]
    return [n for n in names if JIT.search(pair.git("show", f"{commit}:{n}"))]


def port(pair: histories.Pair, project: dict) -> tuple[str, str, list[str]]:
    """(net base, release, port commits), as histories.py finds them."""
    if project["kind"] == "range":
        release, upstream_at = pair.rev(project["release"]), pair.rev(project["base"])
        commits = list(dict.fromkeys(c for spec in project["commits"] for c in
                                     pair.git("rev-list", "--no-merges", spec).split()))
    else:
        ref = project["release"]
        release = pair.rev(ref if re.fullmatch(r"[0-9a-f]{7,40}", ref) else f"refs/port/{ref}")
        when = pair.git("log", "-1", "--format=%cI", release).strip()
        upstream_at = histories.branch_at(pair, project["upstream_branch"], when)
        commits = histories.fork_commits(pair, release, upstream_at)
    return pair.git("merge-base", release, upstream_at).strip(), release, commits


def edits(pair: histories.Pair, base: str, release: str, commits: list[str]) -> tuple[list[str], dict[str, int]]:
    """(Triton files at the net base, {file: lines the port changed}) for one port."""
    files = triton_files(pair, base)
    if not files:
        return [], {}
    touched = set(pair.git("show", "--no-renames", "--format=", "--name-only", *commits).split("\n"))
    changed = {}
    for row in pair.git("diff", "--no-renames", "--numstat", base, release, "--", *files).splitlines():
        added, deleted, path = row.split("\t", 2)
        if path in touched and added != "-":
            changed[path] = int(added) + int(deleted)
    return files, changed


def extension(pair: histories.Pair, base: str) -> bool:
    """The upstream builds a PyTorch CUDA extension at the port's base (the name, also when bound to
    another: pytorch_scatter's `Extension = CUDAExtension`, as PK506 reads it)."""
    return "CUDAExtension" in "".join(pair.git("show", f"{base}:{n}") for n in
                                       pair.git("ls-tree", "-r", "--name-only", base).splitlines()
                                       if n.endswith("setup.py"))


def build_lines(pair: histories.Pair, base: str, release: str, commits: list[str]) -> int:
    """Lines a squashed port changed in build, packaging or CI files (net, base..release)."""
    touched = set(pair.git("show", "--no-renames", "--format=", "--name-only", *commits).split("\n"))
    out = 0
    for row in pair.git("diff", "--no-renames", "--numstat", base, release).splitlines():
        added, deleted, path = row.split("\t", 2)
        if path in touched and added != "-" and BUILD.search(path) and not histories.VENDORED.search(path):
            out += int(added) + int(deleted)
    return out


def build_days(pair: histories.Pair, base: str, commits: list[str]) -> tuple[int, int] | None:
    """(commit days whose commits touch only build files, commit days) of a PyTorch extension port."""
    if not extension(pair, base):
        return None
    days: dict[str, bool] = {}
    for commit in commits:
        day = pair.git("show", "-s", "--format=%ad", "--date=short", commit).strip()
        files = [f for f in pair.git("show", "--no-renames", "--format=", "--name-only", commit).split("\n") if f]
        days[day] = days.get(day, True) and bool(files) and all(BUILD.search(f) for f in files)
    return sum(days.values()), len(days)


def guarded_lines(text: str) -> set[int]:
    """The lines of TEXT on or inside an #if whose condition, or an enclosing one's, names ROCm or HIP."""
    out: set[int] = set()
    stack: list[bool] = []
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", line)
        if not m:
            if any(stack):
                out.add(n)
            continue
        kind, cond = m.groups()
        if kind in ("if", "ifdef", "ifndef"):
            stack.append(bool(GUARD.search(cond)))
        elif kind == "elif" and stack:
            stack[-1] = stack[-1] or bool(GUARD.search(cond))
        if any(stack) or GUARD.search(cond):
            out.add(n)
        if kind == "endif" and stack:
            stack.pop()
    return out


def guards(pair: histories.Pair, base: str, release: str, commits: list[str]) -> tuple[int, int]:
    """(lines the port added under a ROCm/HIP guard, files holding them), net base..release."""
    touched = set(pair.git("show", "--no-renames", "--format=", "--name-only", *commits).split("\n"))
    lines = files = 0
    for row in pair.git("diff", "--no-renames", "--numstat", base, release).splitlines():
        added, _, path = row.split("\t", 2)
        if added == "-" or path not in touched or not SOURCE.search(path) or histories.VENDORED.search(path) \
                or histories.generated(pair, release, path):
            continue
        inside, n, count = guarded_lines(pair.git("show", f"{release}:{path}")), 0, 0
        for line in pair.git("diff", "-U0", base, release, "--", path).split("\n"):
            hunk = re.match(r"@@ -\S+ \+(\d+)", line)
            if hunk:
                n = int(hunk.group(1))
            elif line.startswith("+") and not line.startswith("+++"):
                count += n in inside
                n += 1
        lines, files = lines + count, files + bool(count)
    return lines, files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = ap.parse_args(argv)
    triton, builds, guarded = [], [], []
    every = histories.tomllib.loads((HERE / "histories.toml").read_text())["project"]
    rate = lines_per_day(every)[0]
    for project in every:
        with tempfile.TemporaryDirectory() as tmp:
            pair = histories.Pair(args.mirrors, project["port"], project["upstream"], Path(tmp))
            base, release, commits = port(pair, project)
            files, changed = edits(pair, base, release, commits)
            if not project.get("squashed"):
                build = build_days(pair, base, commits)
            elif extension(pair, base):   # squashed: its build lines at the squashed ports' rate
                lines = build_lines(pair, base, release, commits)
                build = (round(lines / rate, 2), f"squashed: {lines} build lines at {rate:g} a day")
            else:
                build = None
            lines, files_guarded = guards(pair, base, release, commits)
            guarded.append(f"| {project['name']} | {project.get('port_style', '')} | "
                           f"{'yes' if extension(pair, base) else 'no'} | {lines} | {files_guarded} | "
                           f"{lines / rate:.2f} |")
        if files:
            detail = ", ".join(f"{p} {n}" for p, n in sorted(changed.items()))
            triton.append(f"| {project['name']} | {len(files)} | {len(changed)} | {detail or '-'} |")
        if build:
            builds.append((project["name"], *build))
    print("| port | Triton files at the base | changed by the port | lines changed |\n|---|---|---|---|")
    print("\n".join(triton))
    print("\n| PyTorch extension port | build-only commit days | commit days |\n|---|---|---|")
    print("\n".join(f"| {name} | {b:g} | {d} |" for name, b, d in builds))
    only = sorted(b for _, b, _ in builds)
    if only:
        print(f"\nbuild-only commit days: min {only[0]:g}, median {median(only):g}, max {only[-1]:g}")
        held = [median(only[:i] + only[i + 1:]) for i in range(len(only))]
        print(f"leave-one-out medians: {min(held):g}-{max(held):g}")
    print("\n| port | style | PyTorch extension | lines added under a ROCm/HIP guard | files | days at "
          f"{rate:g} lines a day |\n|---|---|---|---|---|---|")
    print("\n".join(guarded))
    return 0


if __name__ == "__main__":
    sys.exit(main())
