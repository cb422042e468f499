"""FindCUDA, CMake's old CUDA module: `cuda_add_*` commands and the CUDA_NVCC_FLAGS list.

`cuda_add_executable` / `cuda_add_library` become add_executable / add_library (their sources
are marked in cmake_targets.py) with their `OPTIONS` moved to target_compile_options;
`cuda_add_cublas_to_target` / `cuda_add_cufft_to_target` become a link to the ROCm library;
CUDA_NVCC_FLAGS becomes words appended to CMAKE_HIP_FLAGS. Other `cuda_*` commands have no
counterpart and are reported by cmake.py.
"""

from __future__ import annotations

from .cmake_file import CMakeFile, insert_after, need, replace_command
from .cmake_flags import list_items
from .cmake_lexer import Arg, Command
from .cmake_names import names_in
from .nvcc import Word, translate
from .words import rewritten
from ..core.edits import EditKind

# The commands and what they become are data: mappings/build.toml [cmake] (findcuda_commands,
# findcuda_libraries).


def findcuda_options(f: CMakeFile, cmd: Command) -> None:
    """cuda_add_*(... OPTIONS flags): the flags become target_compile_options after the call."""
    names = [a.value for a in cmd.args]
    if "OPTIONS" not in names:
        return
    at = names.index("OPTIONS")
    words = [Word(a.value, a.start, a.end) for a in cmd.args[at + 1:]]
    new = [names_in(f, cmd, w) for w in rewritten(f.ctx, words, translate(words, f.table, f.targets))]
    start = cmd.args[at - 1].end
    f.ctx.edit(start, cmd.args[-1].end, b"", "build", covers=True, kind=EditKind.BUILD)
    f.done.update(a.start for a in cmd.args[at:])
    if new:
        target = cmd.args[0].text
        insert_after(f, cmd, f"target_compile_options({target} PRIVATE "
                              f"\"$<$<COMPILE_LANGUAGE:HIP>:{';'.join(new)}>\")")


def findcuda_library(f: CMakeFile, cmd: Command) -> None:
    lib = f.table.by_link.get(f.table.cmake.findcuda_libraries[cmd.lower])
    if not cmd.args or lib is None or not lib.hip_target:
        return
    replace_command(f, cmd, [f"target_link_libraries({cmd.args[0].text} {lib.hip_target})"])
    need(f, lib.hip_package, cmd.start)
    f.done.update(a.start for a in cmd.args)


def nvcc_flags_variable(f: CMakeFile, cmd: Command, args: list[Arg]) -> None:
    """FindCUDA's CUDA_NVCC_FLAGS (a list) becomes words appended to CMAKE_HIP_FLAGS (a string)."""
    words = [w for a in args if a.value != "${CUDA_NVCC_FLAGS}" for w in list_items(a.value, a.start)]
    new = [names_in(f, cmd, w) for w in rewritten(f.ctx, words, translate(words, f.table, f.targets))]
    replace_command(f, cmd, [f'string(APPEND CMAKE_HIP_FLAGS " {" ".join(new)}")'] if new else [])
