"""CMake: CUDA as a language (or FindCUDA) to CMake's native HIP language.

The result is what current ROCm documents: `project(... HIP)` / `enable_language(HIP)` (CMake
3.21+), `.cu` sources marked `LANGUAGE HIP`, `CMAKE_HIP_*` variables and `HIP_*` target
properties, GPU targets from --offload-arch, and ROCm's CMake packages (`find_package(hip)`,
`find_package(hipblas)` ...) with their imported targets for `CUDA::*`. What has no
counterpart is left in place and reported (PK508); each choice made for the user is a note
(PK509). See docs/build.md for building the result on Debian/Ubuntu's packaged ROCm.

This module is the entry point: `migrate` walks the commands (cmake_lexer.py) and hands each
to its handler in `_HANDLERS`. It handles the language, find_package and the variable-setting
commands itself; the rest lives beside it:

- cmake_file.py      the per-file state (`CMakeFile`) and the edit helpers;
- cmake_names.py     CUDA names inside any argument (CMAKE_CUDA_*, CUDA::*, generator expressions);
- cmake_flags.py     nvcc options in flags variables, option commands and custom build steps;
- cmake_targets.py   targets, their sources and properties, libraries, GPU architectures;
- cmake_findcuda.py  FindCUDA's cuda_add_* commands and CUDA_NVCC_FLAGS;
- cmake_probes.py    what the project learns of CUDA at configure time: its own architecture
                     detection, its CUDA version checks before a FATAL_ERROR.
"""

from __future__ import annotations

import re

from ..engine.context import ScanContext
from .cmake_file import CMakeFile, delete_arg, edit, insert_after, insert_before, is_on, replace_command, value_end
from . import cmake_packages as packages
from . import cmake_probes as probes
from .cmake_findcuda import findcuda_library, nvcc_flags_variable
from .cmake_flags import compile_options, custom_command, flags_in_strings, loose_flags
from .cmake_lexer import Command, commands
from .cmake_names import rewrite_names
from .cmake_vendor import nvidia_ranges
from .cmake_targets import (SOURCE_SUFFIX, add_target, aux_source_directory, link_libraries, marked_hip, mixed_glob,
                            replace_architectures,
                            set_property, set_source_files_properties, set_target_properties, target_sources)
from .table import BuildTable
from .words import note
from ..engine.codes import Code
from ..engine.platform.regions import PORTED, RegionMap
from ..core.edits import EditKind

HIP_LANGUAGE_MIN = (3, 21)
_VERSION = re.compile(r"\A([0-9]{1,9})\.([0-9]{1,9})(?:\.[0-9]+)*((?:\.\.\.)[0-9.]+)?\Z")


def migrate(ctx: ScanContext, table: BuildTable) -> None:
    text = ctx.source.data.decode("latin-1")
    # A command with no `)` runs to the end of the file: CMake rejects it, and a line inserted
    # after it would land inside it (a second run would insert it again). Leave it as written.
    f = CMakeFile(ctx, table, text, [c for c in commands(text) if c.close < len(text)])
    f.marked = marked_hip(f.cmds)
    ported = nvidia_ranges(f.cmds)
    if ported:      # its findings become info "already ported", as an #if's NVIDIA branch's do
        ctx.regions = RegionMap(ranges=[(start, end, PORTED) for start, end in ported])
    edits_before = len(ctx.edits)
    own = {c.args[0].value.lower() for c in f.cmds if c.lower in ("function", "macro") and c.args}
    for cmd in f.cmds:
        handler = _HANDLERS.get(cmd.lower)
        if handler is not None:
            handler(f, cmd)
        elif cmd.lower in own and probes.names_cuda_architectures(cmd):
            probes.detected_architectures(f, cmd)
        elif cmd.lower.startswith("cuda_") and cmd.lower not in table.cmake.findcuda_commands:
            note(ctx, Code.BUILD_STEP_NOT_MIGRATED, cmd.start, cmd.close + 1, f"`{cmd.name}` (FindCUDA) has no HIP counterpart; "
                 "rewrite it with add_executable/add_library and LANGUAGE HIP sources", cmd.name)
        for arg in cmd.args:
            if arg.start not in f.done:
                rewrite_names(f, cmd, arg)
    if ported:
        _leave_ported(f, ported, edits_before)
    _insert_packages(f)
    _bump_minimum(f)
    for offset, texts in f.inserts.items():   # several insertions at one place are one edit
        ctx.edit(offset, offset, "".join(texts).encode("latin-1"), "build", kind=EditKind.BUILD)


def _leave_ported(f: CMakeFile, ported: list[tuple[int, int]], first: int) -> None:
    """Drop what the handlers wrote inside the NVIDIA side of a vendor switch (cmake_vendor.py):
    its edits, its insertions and the ROCm packages only it asked for."""
    def inside(offset: int) -> bool:
        return any(start <= offset < end for start, end in ported)
    f.ctx.edits[first:] = [e for e in f.ctx.edits[first:] if not inside(e.start)]
    for offset in [o for o in f.inserts if inside(o) or any(o == end for _, end in ported)]:
        del f.inserts[offset]
    for package in [p for p, at in f.packages.items() if inside(at)]:
        del f.packages[package]


def _project(f: CMakeFile, cmd: Command) -> None:
    for arg in cmd.args[1:]:
        if arg.kind == "unquoted" and arg.text == "CUDA":
            edit(f, arg, "HIP")
            f.hip_language = True


def _enable_language(f: CMakeFile, cmd: Command) -> None:
    for arg in cmd.args:
        if arg.kind == "unquoted" and arg.text == "CUDA":
            edit(f, arg, "HIP")
            f.hip_language = True


def _find_package(f: CMakeFile, cmd: Command) -> None:
    if not cmd.args:
        return
    if cmd.args[0].value not in ("CUDAToolkit", "CUDA"):
        if not packages.find_package(f, cmd):   # a CUDA library's package (CCCL, NCCL ...), or another
            f.found.add(cmd.args[0].value)
        return
    legacy = cmd.args[0].value == "CUDA"
    edit(f, cmd.args[0], "hip")
    if len(cmd.args) > 1 and re.fullmatch(r"\d+(\.\d+)*", cmd.args[1].value):
        version = cmd.args[1]
        delete_arg(f, cmd, 1)
        note(f.ctx, Code.BUILD_MIGRATION_CHOICE, version.start, version.end, f"CUDA version requirement {version.value} dropped: "
             "hip's version is the ROCm release, not comparable", version.value)
    if legacy and not f.hip_language and not any(c.lower in ("project", "enable_language") and
                                                 any(a.text == "CUDA" for a in c.args) for c in f.cmds):
        insert_before(f, cmd, "enable_language(HIP)")
        f.hip_language = True
    if f.find_at is None:
        f.find_at = cmd.close + 1


def _set(f: CMakeFile, cmd: Command) -> None:
    values = cmd.values()
    if not values:
        return
    var = values[0]
    cu = [a.text for a in cmd.args[1:] if a.value.endswith(SOURCE_SUFFIX)]
    if cu:
        f.cu_vars[var] = f.cu_vars.get(var, []) + cu
    if var == "CMAKE_CUDA_ARCHITECTURES" and len(cmd.args) > 1:
        replace_architectures(f, cmd, cmd.args[1:value_end(cmd.args, 1)])
    elif var == "CMAKE_CUDA_SEPARABLE_COMPILATION":
        if is_on(values[1:2]):
            replace_command(f, cmd, ['string(APPEND CMAKE_HIP_FLAGS " -fgpu-rdc")',
                                      'add_link_options("$<$<LINK_LANGUAGE:HIP>:-fgpu-rdc;--hip-link>")'])
        else:
            replace_command(f, cmd, [])
    elif var == "CUDA_NVCC_FLAGS":
        nvcc_flags_variable(f, cmd, cmd.args[1:value_end(cmd.args, 1)])
    elif var in ("CMAKE_CUDA_FLAGS",) or var.startswith("CMAKE_CUDA_FLAGS_"):
        flags_in_strings(f, cmd.args[1:], cmd)
    else:
        loose_flags(f, cmd.args[1:])


def _list(f: CMakeFile, cmd: Command) -> None:
    values = cmd.values()
    if len(values) >= 2 and values[0] == "APPEND":
        var = values[1]
        cu = [a.text for a in cmd.args[2:] if a.value.endswith(SOURCE_SUFFIX)]
        if cu:
            f.cu_vars[var] = f.cu_vars.get(var, []) + cu
        if var == "CUDA_NVCC_FLAGS":
            nvcc_flags_variable(f, cmd, cmd.args[2:])
        elif var == "CMAKE_CUDA_ARCHITECTURES" and len(cmd.args) > 2:
            _appended_architectures(f, cmd)
        else:
            loose_flags(f, cmd.args[2:])


def _appended_architectures(f: CMakeFile, cmd: Command) -> None:
    """`list(APPEND CMAKE_CUDA_ARCHITECTURES 120a-real)` (ggml, under a CUDAToolkit_VERSION test):
    CUDA architectures are never HIP ones; the HIP list comes from --offload-arch where the
    project sets it, so the appended values go, with the command (issue 31: `120a-real` was
    written into CMAKE_HIP_ARCHITECTURES)."""
    old = " ".join(a.value for a in cmd.args[2:])
    note(f.ctx, Code.BUILD_MIGRATION_CHOICE, cmd.args[2].start, cmd.args[-1].end,
         f"CUDA architectures {old} appended: dropped, AMD chips do not correspond to sm_XX (the HIP list is "
         f"{', '.join(f.targets)}, from --offload-arch)", old)
    f.done.update(a.start for a in cmd.args)
    replace_command(f, cmd, [])


def _string(f: CMakeFile, cmd: Command) -> None:
    values = cmd.values()
    if len(values) >= 2 and values[0] == "APPEND" and values[1].startswith("CMAKE_CUDA_FLAGS"):
        flags_in_strings(f, cmd.args[2:], cmd)


def _file(f: CMakeFile, cmd: Command) -> None:
    values = cmd.values()
    if len(values) >= 3 and values[0] in ("GLOB", "GLOB_RECURSE"):
        patterns = [v for k, v in enumerate(values[2:], start=2)
                    if v not in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS", "LIST_DIRECTORIES", "RELATIVE")
                    and values[k - 1] not in ("LIST_DIRECTORIES", "RELATIVE")]
        if patterns and all(p.endswith("*" + SOURCE_SUFFIX) for p in patterns):
            f.whole_vars.add(values[1])
        elif any(p.endswith("*" + SOURCE_SUFFIX) for p in patterns):
            mixed_glob(f, cmd)


_HANDLERS = {
    "project": _project, "enable_language": _enable_language, "check_language": _enable_language,
    "find_package": _find_package, "set": _set, "if": probes.version_check, "elseif": probes.version_check, "list": _list, "string": _string, "file": _file,
    "add_executable": add_target, "add_library": add_target, "cuda_add_executable": add_target,
    "cuda_add_library": add_target, "target_sources": target_sources,
    "set_target_properties": set_target_properties, "set_property": set_property,
    "set_source_files_properties": set_source_files_properties,
    "target_link_libraries": link_libraries, "link_libraries": link_libraries,
    "target_compile_options": compile_options, "add_compile_options": compile_options,
    "target_link_options": compile_options, "add_link_options": compile_options,
    "cuda_add_cublas_to_target": findcuda_library, "cuda_add_cufft_to_target": findcuda_library,
    "aux_source_directory": aux_source_directory, "thrust_create_target": packages.thrust_create_target, "add_subdirectory": packages.add_subdirectory,
    "add_custom_command": custom_command, "add_custom_target": custom_command, "execute_process": custom_command,
}


def _insert_packages(f: CMakeFile) -> None:
    """find_package for each ROCm library used: after find_package(hip), else before first use."""
    libs = sorted(p for p in f.packages if p != "hip" and p not in f.found)
    if not libs:
        return
    if f.find_at is not None:
        cmd = next(c for c in f.cmds if c.close + 1 == f.find_at)
        for package in libs:
            insert_after(f, cmd, f"find_package({package} REQUIRED)")
        return
    for package in libs:
        at = f.packages[package]
        cmd = next(c for c in f.cmds if c.start <= at <= c.close)
        insert_before(f, cmd, f"find_package({package} REQUIRED)")


def _bump_minimum(f: CMakeFile) -> None:
    if not f.hip_language:
        return
    for cmd in f.cmds:
        if cmd.lower != "cmake_minimum_required":
            continue
        values = cmd.values()
        if "VERSION" not in values or values.index("VERSION") + 1 >= len(values):
            return
        arg = cmd.args[values.index("VERSION") + 1]
        m = _VERSION.match(arg.value)
        if m and (int(m.group(1)), int(m.group(2))) < HIP_LANGUAGE_MIN:
            new = "%d.%d" % HIP_LANGUAGE_MIN + (m.group(3) or "")
            edit(f, arg, new)
            note(f.ctx, Code.BUILD_MIGRATION_CHOICE, arg.start, arg.end, f"minimum CMake raised from {arg.value} to {new}: "
                 "CMake's HIP language needs 3.21", arg.value)
        return
