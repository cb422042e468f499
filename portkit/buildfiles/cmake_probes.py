"""What a CMake project learns of CUDA at configure time, which a HIP configure cannot learn.

Two forms stopped tiny-cuda-nn's converted CMake (NVlabs/tiny-cuda-nn, CMakeLists.txt) before any
target, with its submodules supplied:

- a function of the project's own that fills `CMAKE_CUDA_ARCHITECTURES` with the compute
  capabilities of the GPUs it finds, by try_run of a CUDA program it writes
  (`TCNN_AUTODETECT_CUDA_ARCHITECTURES(CMAKE_CUDA_ARCHITECTURES)`): the `.cu` probe cannot compile in a
  HIP-only configure ("Unknown extension .cu"), and compute capabilities are never HIP
  architectures. The call becomes the --offload-arch list, as the project's own
  `set(CMAKE_CUDA_ARCHITECTURES ...)` do (cmake_targets.replace_architectures);
- `if (CUDA_VERSION VERSION_LESS 10.2)` whose block stops with `message(FATAL_ERROR ...)`: the
  project sets CUDA_VERSION from nvcc's version only, so in the HIP build it is empty, the test
  holds, and the configure stops. The test becomes `CUDA_VERSION AND CUDA_VERSION VERSION_LESS 10.2`:
  the same wherever a CUDA version is known, skipped where none is.
Each is a PK509 note (a choice convert made). Only those exact shapes: a condition of three words
(`VAR OP VALUE`), so no NOT/AND/OR precedence changes what it means.
"""

from __future__ import annotations

from ..engine.codes import Code
from ..core.edits import EditKind
from .cmake_file import CMakeFile, replace_command
from .cmake_lexer import Command
from .cmake_targets import hip_architectures
from .words import note

ARCHITECTURES = "CMAKE_CUDA_ARCHITECTURES"
# the CUDA toolkit's version as projects hold it (FindCUDA's, FindCUDAToolkit's, a project's own)
VERSION_VARIABLES = frozenset({"CUDA_VERSION", "CUDA_VERSION_STRING", "CUDAToolkit_VERSION"})
LOWER = frozenset({"VERSION_LESS", "VERSION_LESS_EQUAL", "LESS", "LESS_EQUAL"})


def names_cuda_architectures(cmd: Command) -> bool:
    """The call passes the variable's name (an out argument), not its value."""
    return any(a.kind == "unquoted" and a.value == ARCHITECTURES for a in cmd.args)


def detected_architectures(f: CMakeFile, cmd: Command) -> None:
    """A call of the project's own function or macro with CMAKE_CUDA_ARCHITECTURES as an argument:
    the --offload-arch list instead."""
    note(f.ctx, Code.BUILD_MIGRATION_CHOICE, cmd.start, cmd.close + 1,
         f"`{cmd.name}({ARCHITECTURES})` detects NVIDIA compute capabilities into the variable: replaced by "
         f"{', '.join(f.targets)} (--offload-arch); AMD chips do not correspond to sm_XX", cmd.name)
    replace_command(f, cmd, [f"set(CMAKE_HIP_ARCHITECTURES {hip_architectures(f)})"])


def version_check(f: CMakeFile, cmd: Command) -> None:
    """`if (CUDA_VERSION VERSION_LESS X)` before a FATAL_ERROR: tested only where a version is known."""
    words = [a for a in cmd.args if a.kind != "paren"]
    if len(words) != 3 or len(cmd.args) != 3 or words[0].kind != "unquoted" or words[1].value not in LOWER:
        return
    name = words[0].value
    if name.startswith("${") and name.endswith("}"):
        name = name[2:-1]
    if name not in VERSION_VARIABLES or not _stops(f, cmd):
        return
    f.ctx.edit(words[0].start, words[0].start, f"{name} AND ".encode(), "build", kind=EditKind.BUILD)
    note(f.ctx, Code.BUILD_MIGRATION_CHOICE, words[0].start, words[-1].end,
         f"`{name} {words[1].value} {words[2].value}` before a FATAL_ERROR: the HIP build has no CUDA version "
         f"({name} is empty, so the test holds and the configure stopped); now `{name} AND ...`, tested only "
         f"where a CUDA version is known", name)


def _stops(f: CMakeFile, cmd: Command) -> bool:
    """Whether the block the condition opens (up to its else/elseif/endif) calls message(FATAL_ERROR)."""
    at = next(i for i, c in enumerate(f.cmds) if c is cmd)
    depth = 0
    for c in f.cmds[at + 1:]:
        if c.lower == "if":
            depth += 1
        elif c.lower == "endif":
            if depth == 0:
                return False
            depth -= 1
        elif depth == 0 and c.lower in ("else", "elseif"):
            return False
        elif depth == 0 and c.lower == "message" and c.args and c.args[0].value == "FATAL_ERROR":
            return True
    return False
