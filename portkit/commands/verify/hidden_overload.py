"""`no matching function for call to 'f'` where the overload the call needs is behind an nvcc-only guard.

tiny-cuda-nn's vec.h defines `atomic_add_gmem(__half*, const tvec<__half, N, A>&)` only under
`#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 600` (vec.h:327): hip-clang defines no
`__CUDA_ARCH__`, so encodings/grid.h:256's call on `__half` finds only the float overload. PK103
reports that guard in vec.h, a file neither the unit nor the error's; the error names the call.
The notes list the candidates clang saw (`candidate function template not viable` at vec.h:320):
a file among them whose `#if`/`#elif` branch on CUDA's version or architecture macros (PK103's,
engine/platform/ppguards.py) holds a definition of the same name explains the error, by that
guard.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .diagnostics import Located

_NO_MATCH = re.compile(r"no matching function for call to '(\w+)'")
_CANDIDATE = re.compile(r"candidate (?:function|template)")
_GUARD = re.compile(rb"^[ \t]*#[ \t]*(?:if|elif)\b[^\n]*\b(?:__CUDA_ARCH__|__CUDA_ARCH_LIST__|CUDA_VERSION|CUDART_VERSION"
                    rb"|__CUDACC_VER_\w+__)\b")
_OPEN, _CLOSE, _ELSE = re.compile(rb"^[ \t]*#[ \t]*if"), re.compile(rb"^[ \t]*#[ \t]*endif\b"), \
    re.compile(rb"^[ \t]*#[ \t]*(?:else|elif)\b")


def hidden_overload(error: Located, facts) -> tuple[str, int, str] | None:
    """(file, line, guard text) of the guard hiding an overload the call could have taken, else None
    (`facts`: explain.Facts, the converted tree's root and files)."""
    match = _NO_MATCH.match(error.diagnostic.message)
    if match is None:
        return None
    root = facts.root
    name = re.compile(rb"\b" + re.escape(match.group(1).encode()) + rb"\s*\(")
    seen = []
    for path, _, _, text in error.diagnostic.notes:
        rel = _inside(path, root)
        if rel is not None and _CANDIDATE.search(text) and rel not in seen:
            seen.append(rel)
    for rel in seen:
        lines = facts.of(rel).lines
        for number, line in enumerate(lines, 1):
            if _GUARD.match(line) and any(name.search(l) for l in _branch(lines, number)):
                return rel, number, line.decode("utf-8", "replace").strip()
    return None


def _branch(lines: list[bytes], start: int) -> list[bytes]:
    """The lines of the branch the directive at `start` (1-based) opens, up to its #else/#elif/#endif."""
    depth, body = 0, []
    for line in lines[start:]:
        if _OPEN.match(line):
            depth += 1
        elif _CLOSE.match(line) or (_ELSE.match(line) and depth == 0):
            if depth == 0:
                break
            depth -= 1
        body.append(line)
    return body


def _inside(path: str, root: Path) -> str | None:
    try:
        return Path(os.path.realpath(path)).relative_to(os.path.realpath(root)).as_posix()
    except ValueError:
        return None
