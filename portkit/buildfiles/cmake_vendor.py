"""The NVIDIA side of a CMake vendor switch whose other side builds HIP: already ported, left as written.

gunrock's root CMakeLists.txt builds both: `if(${ESSENTIALS_NVIDIA_BACKEND}) ... else() ...
__HIP_PLATFORM_AMD__ ... endif()`. Migrating the NVIDIA branch (`SM_TARGET=${CMAKE_CUDA_ARCHITECTURES}`
to HIP's, nvcc's `--expt-*` options dropped) broke the NVIDIA build and gave the HIP build nothing:
it never takes that branch. As the platform model leaves the NVIDIA branch of an `#if` with an AMD
branch in sources ("ported"), convert leaves such a branch byte for byte, and a set() whose variable
only such branches read (gunrock's `set(CUDA_RELEASE_FLAGS --expt-extended-lambda ...)`, read in
the NVIDIA branch's target_compile_options).

A branch is the NVIDIA side when its condition names NVIDIA or NVCC, or names CUDA, and is not
negated, and another branch of the same chain is HIP's: a condition that names HIP, ROCm or AMD,
or an else() whose commands do (messages aside). The reading is project/cmake_branches.py's
(`vendor_out`), repeated here because project/ reads build files through this package.
"""

from __future__ import annotations

import re

from .cmake_lexer import Command

_OPEN = {"if", "foreach", "while", "function", "macro", "block"}
_CLOSE = {"endif", "endforeach", "endwhile", "endfunction", "endmacro", "endblock"}
_HIP = re.compile(r"HIP|ROCM|AMD", re.I)              # project/buildvalues.py's HIP_CONDITION
_VENDOR = re.compile(r"NVIDIA|NVCC|CUDA", re.I)
_REFERENCE = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


def nvidia_ranges(cmds: list[Command]) -> list[tuple[int, int]]:
    """Sorted, non-overlapping byte ranges of the NVIDIA branches and the set()s only they read."""
    spans: list[tuple[int, int]] = []
    for at, cmd in enumerate(cmds):
        if cmd.lower == "if" and not any(s <= cmd.start < e for s, e in spans):
            spans += _chain_spans(cmds, at)
    spans += _only_read_there(cmds, spans)
    return _union(spans)


def _chain_spans(cmds: list[Command], at: int) -> list[tuple[int, int]]:
    """The NVIDIA branches of the if() chain that `cmds[at]` opens, when the chain has a HIP branch."""
    heads, end = _branches(cmds, at)
    if end == len(cmds):
        return []       # no endif(): CMake rejects the file; nothing is left as a branch
    bounds = heads + [end]
    hip, nvidia = [], []
    for k, head in enumerate(heads):
        cmd = cmds[head]
        values = [a.value for a in cmd.args if a.kind != "paren"]
        if cmd.lower == "else":
            hip.append(_names_hip(cmds[head + 1:bounds[k + 1]]))
            nvidia.append(False)
            continue
        negated = any(v.upper() == "NOT" for v in values)
        named_hip = not negated and any(_HIP.search(v) for v in values)
        hip.append(named_hip)
        nvidia.append(not negated and not named_hip and any(_VENDOR.search(v) for v in values))
    if not any(hip):
        return []
    return [(cmds[head].start, cmds[bounds[k + 1]].start) for k, head in enumerate(heads) if nvidia[k]]


def _branches(cmds: list[Command], at: int) -> tuple[list[int], int]:
    """The indices of the chain's if/elseif/else commands, and of its endif (len(cmds) if none)."""
    heads, depth = [at], 0
    for j in range(at + 1, len(cmds)):
        name = cmds[j].lower
        if name in _OPEN:
            depth += 1
        elif name in _CLOSE:
            if depth == 0:
                return heads, j
            depth -= 1
        elif depth == 0 and name in ("elseif", "else"):
            heads.append(j)
    return heads, len(cmds)


def _names_hip(body: list[Command]) -> bool:
    return any(c.lower != "message" and any(_HIP.search(a.value) for a in c.args) for c in body)


def _only_read_there(cmds: list[Command], spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The set()/list(APPEND) commands outside `spans` whose variable is read inside them only."""
    inside = lambda cmd: any(s <= cmd.start < e for s, e in spans)
    read_in: set[str] = set()
    read_out: set[str] = set()
    for cmd in cmds:
        names = {m.group(1) for a in cmd.args for m in _REFERENCE.finditer(a.text)}
        (read_in if inside(cmd) else read_out).update(names)
    out = []
    for cmd in cmds:
        var = _assigned(cmd)
        if var and var in read_in and var not in read_out and not inside(cmd):
            out.append((cmd.start, cmd.close + 1))
    return out


def _assigned(cmd: Command) -> str | None:
    values = [a.value for a in cmd.args if a.kind != "paren"]
    if cmd.lower == "set" and values:
        return values[0]
    if cmd.lower == "list" and len(values) > 1 and values[0] == "APPEND":
        return values[1]
    return None


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
