"""Which CMake branches the project's own HIP build on Linux takes, read from the conditions alone.

A branch is the HIP build's when its condition names HIP (`if(FAISS_ENABLE_ROCM)`), when it is
the Linux branch of an OS test (`if(UNIX)`, `CMAKE_SYSTEM_NAME STREQUAL "Linux"`, the else() of
`if(WIN32)`), or when it is the else() of a condition that names the NVIDIA build and itself names
HIP (gunrock: `if(${ESSENTIALS_NVIDIA_BACKEND}) ... else() ... __HIP_PLATFORM_AMD__ ... endif()`:
a plain else() of a CUDA switch can be a CPU-only build, so the branch has to say HIP). A branch is
known to be left out of that build when it is another OS's, the NVIDIA build's (its condition
names NVIDIA, or CUDA in a chain that has a HIP branch), or a branch after a HIP one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .buildvalues import HIP_CONDITION
from ..buildfiles.cmake_lexer import Command

OPEN = {"if", "foreach", "while", "function", "macro", "block"}
CLOSE = {"endif", "endforeach", "endwhile", "endfunction", "endmacro", "endblock"}
_RUN = {"foreach", "block"}      # blocks whose body runs where the code around them does
_LINUX = {"UNIX", "LINUX", "CMAKE_HOST_UNIX", "CMAKE_HOST_LINUX"}
_NOT_LINUX = {"WIN32", "MSVC", "APPLE", "MINGW", "CYGWIN", "MSYS", "IOS", "ANDROID", "CMAKE_HOST_WIN32",
              "CMAKE_HOST_APPLE"}
_SYSTEM_NAMES = {"CMAKE_SYSTEM_NAME", "CMAKE_HOST_SYSTEM_NAME"}
_NVIDIA = re.compile(r"NVIDIA|NVCC", re.I)
_CUDA = re.compile(r"CUDA", re.I)


@dataclass(frozen=True)
class Branch:
    """One open block as the HIP build on Linux sees it."""

    taken: bool = False       # that build takes it
    hip: bool = False         # its condition (or, for a vendor switch's else(), its body) names HIP
    out: bool = False         # that build never takes it: another OS's, the NVIDIA build's, after a HIP branch
    linux_out: bool = False   # it and every branch before it in the chain never run on Linux
    vendor: bool = False      # every condition of the chain so far names the NVIDIA/CUDA build
    hip_seen: bool = False    # a branch of the chain so far is the HIP build's
    function: bool = False    # a function() or macro() body: it runs where it is called
    # a first configure runs it for sure (True) or never (False), its condition settled from values
    # verify knows (cmake_settle.py); None: not settled so
    settled: bool | None = None
    chain: bool | None = None  # True once a branch of the chain was settled taken; False: none yet, all settled


def opened(cmds: list[Command], at: int) -> Branch:
    """The block `cmds[at]` opens."""
    cmd = cmds[at]
    if cmd.lower != "if":
        function = cmd.lower in ("function", "macro")
        return Branch(taken=cmd.lower in _RUN, out=function, function=function)
    return _condition(cmds, at, Branch(linux_out=True, vendor=True))


def switched(cmds: list[Command], at: int, before: Branch) -> Branch:
    """The branch an elseif() or else() at `cmds[at]` starts, after the chain's `before`."""
    if cmds[at].lower == "elseif":
        return _condition(cmds, at, before)
    hip = before.vendor and not before.hip_seen and _body_names_hip(cmds, at)
    return Branch(taken=before.linux_out or hip, hip=hip, out=before.hip_seen, vendor=False,
                  hip_seen=before.hip_seen or hip)


def counts(blocks: list[Branch]) -> bool:
    """Whether a command inside `blocks` runs in the HIP build: every block is taken (or settled
    taken: cmake_settle.py), or the innermost condition names HIP and no block around it is known to be left out (faiss's
    `-DUSE_AMD_ROCM` under `if(FAISS_ENABLE_GPU)` then `if(FAISS_ENABLE_ROCM)`)."""
    return all(b.taken or b.settled is True for b in blocks) or \
        (blocks[-1].hip and not any(b.out or b.settled is False for b in blocks))


def _condition(cmds: list[Command], at: int, before: Branch) -> Branch:
    cmd = cmds[at]
    linux, hip = on_linux(cmd), names_hip(cmd)
    values = values_of(cmd)
    negated = any(v.upper() == "NOT" for v in values)
    nvidia = not hip and not negated and any(_NVIDIA.search(v) for v in values)
    cuda = not hip and not negated and any(_CUDA.search(v) for v in values)
    vendor_out = nvidia or (cuda and _chain_has_hip(cmds, at))
    return Branch(taken=hip or (before.linux_out and linux is True), hip=hip,
                  out=before.hip_seen or linux is False or vendor_out,
                  linux_out=before.linux_out and linux is False,
                  vendor=before.vendor and (nvidia or cuda), hip_seen=before.hip_seen or hip)


def _chain_has_hip(cmds: list[Command], at: int) -> bool:
    """Whether a later branch of the chain `cmds[at]` is in names HIP (an elseif() that names it,
    or an else() whose body does)."""
    depth = 0
    for i in range(at + 1, len(cmds)):
        name = cmds[i].lower
        if name in OPEN:
            depth += 1
        elif name in CLOSE:
            if depth == 0:
                return False
            depth -= 1
        elif depth == 0 and name == "elseif" and names_hip(cmds[i]):
            return True
        elif depth == 0 and name == "else":
            return _body_names_hip(cmds, i)
    return False


def _body_names_hip(cmds: list[Command], at: int) -> bool:
    """Whether a command of the branch that starts after `cmds[at]` names HIP (its messages aside)."""
    depth = 0
    for cmd in cmds[at + 1:]:
        name = cmd.lower
        if depth == 0 and (name in CLOSE or name in ("else", "elseif")):
            return False
        if name in CLOSE:
            depth -= 1
            continue
        depth += name in OPEN
        if name != "message" and any(HIP_CONDITION.search(v) for v in values_of(cmd)):
            return True
    return False


def on_linux(cmd: Command) -> bool | None:
    """Whether a condition holds on Linux: True, False, or None when it asks about anything else."""
    values, negate = values_of(cmd), False
    while values and values[0].upper() == "NOT":
        values, negate = values[1:], not negate
    if len(values) == 1 and values[0] in _LINUX | _NOT_LINUX:
        known = values[0] in _LINUX
    elif len(values) == 3 and values[0].strip("${}") in _SYSTEM_NAMES and values[1] in ("STREQUAL", "MATCHES"):
        try:
            known = values[2] == "Linux" or (values[1] == "MATCHES" and re.search(values[2], "Linux") is not None)
        except re.error:
            return None
    else:
        return None
    return known != negate


def names_hip(cmd: Command) -> bool:
    """A condition that holds in the HIP build: `if(GGML_HIP)`, `if(FAISS_ENABLE_ROCM)`; not `if(NOT ...)`."""
    values = values_of(cmd)
    return any(HIP_CONDITION.search(v) for v in values) and not any(v.upper() == "NOT" for v in values)


def values_of(cmd: Command) -> list[str]:
    """The arguments, an unquoted one and a quoted one that touch (`A="${B}"`) joined as CMake does."""
    out: list[str] = []
    end = -1
    for arg in cmd.args:
        if arg.kind == "paren":
            end = -1
            continue
        if arg.start == end and out:
            out[-1] += arg.text
        else:
            out.append(arg.value)
        end = arg.end
    return out
