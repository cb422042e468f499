"""CUDA names inside any CMake argument, whatever the command: their HIP spellings or a PK508.

`CMAKE_CUDA_*` variables become `CMAKE_HIP_*`, `CUDA::*` imported targets become ROCm's
(`roc::hipblas` ...), CUDA generator expressions (`$<COMPILE_LANGUAGE:CUDA>`) and `cuda_std_NN`
compile features name HIP, and the variables FindCUDAToolkit / FindCUDA define become hip's
where it has them. The per-command handlers call this on every argument they do not rewrite
themselves.
"""

from __future__ import annotations

import re

from .cmake_file import CMakeFile, need
from .cmake_packages import package_names
from .cmake_lexer import Arg, Command
from .words import note
from ..engine.codes import Code
from ..core.edits import EditKind

# The names and what they become are data: mappings/build.toml [cmake] (f.table.cmake).
_CMAKE_CUDA = re.compile(r"\bCMAKE_CUDA_([A-Z_]+)\b")
_TARGET = re.compile(r"\bCUDA::([A-Za-z0-9_]+)")
_GENEX = re.compile(r"\$<(COMPILE_LANGUAGE|LINK_LANGUAGE|COMPILE_LANG_AND_ID|LINK_LANG_AND_ID):CUDA(,NVIDIA)?")
_CUDA_VAR = re.compile(r"\$\{(CUDA(?:Toolkit)?_[A-Za-z0-9_]+)\}|\b(CUDA(?:Toolkit)?_FOUND)\b")
_STD_FEATURE = re.compile(r"\bcuda_std_(\d+)\b")     # target_compile_features(... cuda_std_17)


def rewrite_names(f: CMakeFile, cmd: Command | None, arg: Arg) -> None:
    """CMAKE_CUDA_* variables, CUDA::* targets, CUDA generator expressions, FindCUDA variables."""
    if arg.kind == "paren":
        return
    if "::" in arg.text or "_" in arg.text:
        package_names(f, arg)
    if "CUDA" not in arg.text and "cuda_std_" not in arg.text:
        return
    text = arg.text
    names = f.table.cmake
    for m in _CMAKE_CUDA.finditer(text):
        suffix = m.group(1)
        start = arg.start + m.start()
        if suffix in names.hip_variables:
            f.ctx.edit(start, arg.start + m.end(), f"CMAKE_HIP_{suffix}".encode(), "build", kind=EditKind.BUILD)
        elif suffix in names.dropped_variables or suffix == "SEPARABLE_COMPILATION":
            continue
        else:
            note(f.ctx, Code.BUILD_STEP_NOT_MIGRATED, start, arg.start + m.end(), f"`CMAKE_CUDA_{suffix}` has no HIP counterpart",
                 f"CMAKE_CUDA_{suffix}")
    for m in _TARGET.finditer(text):
        lib = f.table.by_target.get(m.group(0))
        start, end = arg.start + m.start(), arg.start + m.end()
        if lib is not None and lib.hip_target:
            f.ctx.edit(start, end, lib.hip_target.encode(), "build", kind=EditKind.BUILD)
            need(f, lib.hip_package, start)
        else:
            why = lib.why if lib is not None and lib.why else "no ROCm library in portkit's build table"
            note(f.ctx, Code.BUILD_STEP_NOT_MIGRATED, start, end, f"`{m.group(0)}`: {why}", m.group(0))
    for m in _STD_FEATURE.finditer(text):
        f.ctx.edit(arg.start + m.start(), arg.start + m.end(), f"hip_std_{m.group(1)}".encode(), "build", kind=EditKind.BUILD)
    for m in _GENEX.finditer(text):
        new = f"$<{m.group(1)}:HIP" + (",Clang" if m.group(2) else "")
        f.ctx.edit(arg.start + m.start(), arg.start + m.end(), new.encode(), "build", kind=EditKind.BUILD)
    for m in _CUDA_VAR.finditer(text):
        name = m.group(1) or m.group(2)
        start, end = arg.start + m.start(), arg.start + m.end()
        if name in names.toolkit_variables:
            new = names.toolkit_variables[name]
            f.ctx.edit(start, end, (f"${{{new}}}" if m.group(1) else new).encode(), "build", kind=EditKind.BUILD)
        elif name in f.table.by_findcuda and f.table.by_findcuda[name].hip_target:
            lib = f.table.by_findcuda[name]
            f.ctx.edit(start, end, lib.hip_target.encode(), "build", kind=EditKind.BUILD)
            need(f, lib.hip_package, start)
        elif name != "CUDA_NVCC_FLAGS" and names.results.fullmatch(name):
            note(f.ctx, Code.BUILD_STEP_NOT_MIGRATED, start, end, f"`{name}` describes the CUDA toolkit; no HIP counterpart "
                 "(hip_VERSION and ROCM_PATH describe ROCm)", name)


def names_in(f: CMakeFile, cmd: Command, word: str) -> str:
    """`word`, moved into new text (a flag string, target_compile_options), with the names that
    rewrite_names changes in place changed here: the next run sees them as already ported."""
    names = f.table.cmake

    def variable(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        if name in names.toolkit_variables:
            new = names.toolkit_variables[name]
            return f"${{{new}}}" if m.group(1) else new
        lib = f.table.by_findcuda.get(name)
        if lib is not None and lib.hip_target:
            need(f, lib.hip_package, cmd.start)
            return lib.hip_target
        return m.group(0)

    def target(m: re.Match) -> str:
        lib = f.table.by_target.get(m.group(0))
        if lib is None or not lib.hip_target:
            return m.group(0)
        need(f, lib.hip_package, cmd.start)
        return lib.hip_target

    word = _CUDA_VAR.sub(variable, word)
    word = _TARGET.sub(target, word)
    word = _CMAKE_CUDA.sub(lambda m: f"CMAKE_HIP_{m.group(1)}" if m.group(1) in names.hip_variables else m.group(0),
                           word)
    word = _STD_FEATURE.sub(lambda m: f"hip_std_{m.group(1)}", word)
    return _GENEX.sub(lambda m: f"$<{m.group(1)}:HIP" + (",Clang" if m.group(2) else ""), word)
