"""Whether a project's CMake build reaches a folder's CMakeLists.txt at all (issue 48).

A git submodule often brings a whole project with it: tiny-cuda-nn's dependencies/cutlass holds
696 CUDA sources (CUTLASS's tests, examples and tools, each under its own CMakeLists.txt), and
tiny-cuda-nn's build uses only its include/ folders: no add_subdirectory names the folder.
LightGBM uses external_libs/fmt's headers, so fmt's test/cuda-test/cuda-cpp14.cu is no unit of
its build either. verify compiled all of them as units of the project (stopping at CUTLASS's
`cuda.h` and the like), hours of compiles that no AMD build would run.

A CMakeLists.txt below the top, in a git submodule (.gitmodules), is part of the build only when
a CMakeLists.txt above it names its folder in add_subdirectory, directly or through a file it
include()s (or an ExternalProject/FetchContent SOURCE_DIR), or lists the unit itself. Read as text, never run:
`${CMAKE_CURRENT_SOURCE_DIR}` and `${CMAKE_CURRENT_LIST_DIR}` are the file's folder, and the top
file's `${PROJECT_SOURCE_DIR}`/`${CMAKE_SOURCE_DIR}` the tree's; any other variable in an
add_subdirectory or include() path, a function or macro that calls add_subdirectory, and
FetchContent/ExternalProject/CPM count as reaching every folder, so a build read incompletely is
never cut short.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from ..core.files import read_regular

_COMMENT = re.compile(r"#(?!\[=*\[)[^\n]*")
_CALL = re.compile(r"\b(add_subdirectory|include)\s*\(\s*(\"[^\"]*\"|[^\s)]+)", re.I)
# a function or macro that calls add_subdirectory with its arguments: any folder
_ANYWHERE = re.compile(r"\b(?:function|macro)\s*\([^)]*\)(?:(?!\bend(?:function|macro)\b).)*\badd_subdirectory\b",
                       re.I | re.S)
# a folder another build builds: FetchContent/ExternalProject/CPM's SOURCE_DIR
_EXTERNAL = re.compile(r"\b(?:FetchContent_Declare|ExternalProject_Add|CPMAddPackage)\s*\(([^)]*)\)", re.I)
_SOURCE_DIR = re.compile(r"\bSOURCE_DIR\s+(\"[^\"]*\"|[^\s)]+)")
_GLOB = re.compile(r"\bfile\s*\(\s*(GLOB(?:_RECURSE)?)\b([^)]*)\)", re.I)
_VARIABLE = re.compile(r"\$\{(\w+)\}")
_GITMODULE_PATH = re.compile(r"^\s*path\s*=\s*(\S+)", re.M)
EVERY = None   # what a file reaches when it cannot be read whole


def unreached(chain: list[Path], root: Path, unit: Path) -> tuple[Path, Path] | None:
    """(the first CMakeLists.txt of `chain`, the top's down to the unit's folder, that no file above
    it adds, the nearest file above it); None when every one is reached, or when a file above
    lists the unit itself (tiny-cuda-nn's top CMakeLists.txt names src/common_host.cu, and its
    src/CMakeLists.txt is a leftover no file adds) or a file(GLOB) there may."""
    for i in range(1, len(chain)):
        folder = str(chain[i].parent)
        above = chain[:i]
        if any(r is EVERY or folder in r for r in (_added(str(c), str(c.parent), str(root), j == 0)
                                                   for j, c in enumerate(above))):
            continue
        if any(_lists(c, unit) for c in above) or not _in_submodule(folder, str(root)):
            return None
        return chain[i], chain[i - 1]
    return None


def _in_submodule(folder: str, root: str) -> bool:
    """Whether the folder is in a git submodule of the tree: a dependency's own project. A folder of
    the tree's own that no add_subdirectory names is often another build's top (gunrock's python/,
    built by its pyproject.toml), so it stays a unit as before."""
    return any(folder == s or folder.startswith(s + os.sep) for s in _submodules(root))


@lru_cache(maxsize=64)
def _submodules(root: str) -> tuple[str, ...]:
    text = _text(os.path.join(root, ".gitmodules"))
    return tuple(os.path.normpath(os.path.join(root, p)) for p in _GITMODULE_PATH.findall(text))


def _lists(build_file: Path, unit: Path) -> bool:
    """Whether the file names the unit by its path, or has a file(GLOB) that may match it."""
    text = _text(str(build_file))
    here = build_file.parent
    if os.path.relpath(unit, here).replace(os.sep, "/") in text:
        return True
    for kind, arguments in _GLOB.findall(text):
        for pattern in arguments.split()[1:]:
            pattern = pattern.strip('"')
            if _VARIABLE.sub("", pattern.replace("${CMAKE_CURRENT_SOURCE_DIR}", "")) != \
                    pattern.replace("${CMAKE_CURRENT_SOURCE_DIR}", ""):
                continue    # a folder a variable names: the toolkit's (tiny-cuda-nn's ${CUDA_INCLUDE}), the build's
            full = os.path.normpath(os.path.join(here, pattern.replace("${CMAKE_CURRENT_SOURCE_DIR}", ".")))
            base = os.path.dirname(full)
            if str(unit).startswith(base + os.sep) and (kind.upper() == "GLOB_RECURSE" or
                                                        os.path.dirname(unit) == base):
                return True
    return False


@lru_cache(maxsize=1024)
def _text(path: str) -> str:
    try:
        return _COMMENT.sub("", read_regular(Path(path), follow=True).decode("latin-1"))
    except OSError:
        return ""


@lru_cache(maxsize=1024)
def _added(path: str, source: str, root: str, top: bool, depth: int = 0) -> frozenset[str] | None:
    """The folders a build file adds with add_subdirectory (its include()d files' too, which run in
    the including file's folder, `source`); EVERY when it may add folders its text does not spell."""
    text = _text(path)
    if _ANYWHERE.search(text):
        return EVERY
    known = {"CMAKE_CURRENT_SOURCE_DIR": source, "CMAKE_CURRENT_LIST_DIR": os.path.dirname(path)}
    if top:
        known.update(PROJECT_SOURCE_DIR=root, CMAKE_SOURCE_DIR=root)
    added: set[str] = set()
    external = [("add_subdirectory", m.group(1)) for call in _EXTERNAL.findall(text) if (m := _SOURCE_DIR.search(call))]
    for command, argument in _CALL.findall(text) + external:
        value = argument.strip('"')
        if any(name not in known for name in _VARIABLE.findall(value)):
            if command.lower() == "add_subdirectory" and (command, argument) not in external:
                return EVERY
            continue    # an include() or a download folder of the build's own: not the tree's
        value = os.path.normpath(os.path.join(source, _VARIABLE.sub(lambda m: known[m.group(1)], value)))
        if command.lower() == "add_subdirectory":
            added.add(value)
        elif value.endswith(".cmake") and depth < 4:
            more = _added(value, source, root, top, depth + 1)
            if more is EVERY:
                return EVERY
            added |= more
    return frozenset(added)
