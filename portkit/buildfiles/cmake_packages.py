"""CUDA libraries found as CMake packages (CCCL, Thrust, CUB, NCCL) and built in the tree.

`find_package(CCCL|Thrust|CUB|NCCL ...)` becomes ROCm's packages (rocThrust, hipCUB, RCCL:
mappings/build.toml [cmake] packages), their imported targets ROCm's (`Thrust::Thrust` ->
`roc::rocthrust`), `thrust_create_target(T)` an interface target `T` linking rocThrust, and the
variables a FindNCCL module defines (`${NCCL_LIBRARIES}`) RCCL's target. Before, all of these
stayed, and the converted CMake stopped at the first `find_package(CCCL REQUIRED)` (issue 48).
`add_subdirectory` of a CUDA-only library the project carries (cutlass, cub, thrust, nvbench) is
reported (PK510): it would build CUDA code, or nothing, inside a HIP build.
"""

from __future__ import annotations

import re

from .cmake_file import CMakeFile, need, replace_command
from .cmake_lexer import Arg, Command
from .words import note
from ..engine.codes import Code
from ..core.edits import EditKind
from ..core.tables import ecosystem

# find_package options that mean the same for ROCm's config packages; the others (a version,
# EXACT, COMPONENTS of the CUDA package, its PATHS and HINTS) describe the CUDA package only.
_KEPT = ("REQUIRED", "QUIET", "CONFIG", "NO_MODULE", "GLOBAL")
_VAR = re.compile(r"\$\{([A-Za-z0-9_]+)\}|\b([A-Za-z0-9]+_FOUND)\b")


def find_package(f: CMakeFile, cmd: Command) -> bool:
    """find_package of a CUDA library's package: ROCm's, one line per package. True if handled."""
    name = cmd.args[0].value
    rocm = f.table.cmake.packages.get(name)
    if rocm is None:
        return False
    library = ecosystem.default().by_id.get(name.lower())
    if library is not None:   # the estimate prices the library the build finds (NCCL -> RCCL: estimate/build_decisions.py)
        f.ctx.metrics.libraries.add(library.id)
    if not rocm:
        note(f.ctx, Code.BUILD_STEP_NOT_MIGRATED, cmd.args[0].start, cmd.args[0].end,
             f"`{name}` has no ROCm package: {f.table.cmake.cuda_only_subdirectories.get(name.lower(), 'none')}", name)
        f.done.update(a.start for a in cmd.args)
        return True
    values = cmd.values()
    if len(values) > 1 and re.fullmatch(r"\d+(\.\d+)*", values[1]):
        note(f.ctx, Code.BUILD_MIGRATION_CHOICE, cmd.args[1].start, cmd.args[1].end, f"{name} version requirement "
             f"{values[1]} dropped: the ROCm packages are versioned by their own releases", values[1])
    kept = [v for v in values[1:] if v in _KEPT]
    packages = [p for p in rocm.split() if p not in f.found]   # find_package(CCCL) and (Thrust): once
    replace_command(f, cmd, [f"find_package({' '.join([p] + kept)})" for p in packages])
    f.found.update(packages)
    return True


def thrust_create_target(f: CMakeFile, cmd: Command) -> None:
    """thrust_create_target(T [HOST X] [DEVICE CUDA]): the target T, linking rocThrust."""
    if not cmd.args:
        return
    target = cmd.args[0].text
    replace_command(f, cmd, [f"add_library({target} INTERFACE)",
                             f"target_link_libraries({target} INTERFACE roc::rocthrust)"])
    need(f, "rocthrust", cmd.start)


def add_subdirectory(f: CMakeFile, cmd: Command) -> None:
    """add_subdirectory(third_party/cutlass): a CUDA-only library built in the tree (PK510)."""
    if not cmd.args:
        return
    folder = cmd.args[0].value.rstrip("/").rsplit("/", 1)[-1].lower()
    instead = f.table.cmake.cuda_only_subdirectories.get(folder)
    if instead is not None:
        note(f.ctx, Code.CUDA_ONLY_SUBDIRECTORY, cmd.args[0].start, cmd.args[0].end,
             f"`{cmd.args[0].value}` builds {folder}, a CUDA-only library; on ROCm: {instead}", folder)


def package_names(f: CMakeFile, arg: Arg) -> None:
    """Imported targets and variables of CUDA libraries' packages inside one argument."""
    names = f.table.cmake
    for target, rocm in names.package_targets.items():
        for m in re.finditer(rf"(?<![\w:]){re.escape(target)}(?![\w:])", arg.text):
            start, end = arg.start + m.start(), arg.start + m.end()
            if not rocm:
                note(f.ctx, Code.BUILD_STEP_NOT_MIGRATED, start, end, f"`{target}`: libcu++ has no ROCm counterpart", target)
                continue
            f.ctx.edit(start, end, rocm.encode(), "build", kind=EditKind.BUILD)
            for t in rocm.split():
                need(f, t.split("::")[-1], start)
    for m in _VAR.finditer(arg.text):
        new = names.package_variables.get(m.group(1) or m.group(2) or "")
        if new is None:
            continue
        f.ctx.edit(arg.start + m.start(), arg.start + m.end(), new.encode(), "build", kind=EditKind.BUILD)
        if "::" in new:
            need(f, new.split("::")[-1], arg.start + m.start())
