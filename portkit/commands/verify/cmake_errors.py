"""CMake's configure output, read: the first error, placed at the project's file:line, and why.

CMake prints `CMake Error at FILE:LINE (COMMAND):`, an indented message and, for an error inside
a module, a `Call Stack (most recent call first):` whose frames lead back to the project. The
place reported is the first frame inside the tree: `Could NOT find BLAS` is raised in
FindPackageHandleStandardArgs.cmake, but the line a maintainer reads is their find_package().

Why it stopped, in the order that tells the user most (`classify`):
- the CMake is too old (`CMake 3.28 or higher is required`): a newer one is a pip install away;
- a package is missing: a ROCm library's is named with the ROCm (and Debian) package that
  provides it (packs.PROVIDERS), any other as the system's;
- a git submodule the tree lacks (.gitmodules names it, or the project's own message says so);
- the network: the error comes from FetchContent, ExternalProject or CPM, says a clone or a
  download failed, or is a file missing just after a download command of the same file
  (cuCollections' file(DOWNLOAD ... RAPIDS.cmake), whose failure CMake does not report);
- anything else: the message itself. None of the first four is portkit's failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ...buildfiles.cmake_lexer import commands
from . import packs

_HEADER = re.compile(r"^CMake Error(?: (?:at|in) (.+?)(?::(\d+))?(?: \((\w+)\))?)?:\s*(.*)$")
_FRAME = re.compile(r"^\s+(.+?):(\d+)(?::EVAL:\d+)? \((\w+)\)\s*$")
_STACK = "Call Stack (most recent call first):"   # CMake prints it unindented, inside the error
_TOO_OLD = re.compile(r"CMake (\d+(?:\.\d+)+) or higher is required")
_PACKAGE = (re.compile(r'Could not find a package configuration file provided by "([\w.+-]+)"'),
            re.compile(r'By not providing "Find([\w.+-]+)\.cmake"'),
            re.compile(r"Could NOT find ([\w.+-]+)"),
            re.compile(r'Could not find a configuration file for package "([\w.+-]+)"'))
_NETWORK = re.compile(r"(?i)fail(?:ed|ure)? to (?:clone|download|fetch)|could(?: not|n't) resolve|"
                      r"unable to access '?https?:|error downloading|download (?:failed|error)|"
                      r"transport '\w+' not allowed")
_FETCHERS = re.compile(r"(?i)(?:^|/)(?:FetchContent|ExternalProject|CPM|GitCheckout)[\w.-]*\.cmake$|-subbuild/")
_MISSING_FILE = re.compile(r"(?i)could not find requested file|not an existing directory|does not exist|"
                           r"cannot find source file|no such file")
_DOWNLOADS = re.compile(r"(?i)^(?:FetchContent_\w+|ExternalProject_Add|CPMAddPackage|CPMFindPackage|rapids_cpm_\w+)$")
_URL = re.compile(r"(?:https?|git|ssh)://[^\s'\")]+")
# CMake packages whose name is not their header folder's (packs.PROVIDERS), and ROCm's own runtime
_PACKAGE_KEYS = {"rocthrust": "thrust", "miopen-hip": "miopen"}
_RUNTIME = {"hip": ("HIP", "hip-runtime-amd", "libamdhip64-dev"), "hip-lang": ("HIP", "hip-runtime-amd", "libamdhip64-dev"),
            "amd_comgr": ("amd_comgr", "comgr", "libamd-comgr-dev"),
            "hsa-runtime64": ("HSA runtime", "hsa-rocr-dev", "libhsa-runtime-dev"),
            "amddevicelibs": ("the device libraries", "rocm-device-libs", "rocm-device-libs")}


@dataclass
class Block:
    """One `CMake Error` and its indented message."""
    path: str | None
    line: int | None
    command: str | None
    message: str
    frames: list[tuple[str, int, str]] = field(default_factory=list)

    def places(self) -> list[tuple[str, int, str]]:
        here = [(self.path, self.line, self.command or "")] if self.path and self.line else []
        return here + self.frames


@dataclass
class Stop:
    """Why the configure stopped, as the report says it."""
    kind: str                      # needs_cmake, missing_package, needs_submodule, needs_network, failed
    path: str | None               # the project's file (tree-relative) and line, when one is known
    line: int | None
    command: str | None
    message: str                   # CMake's own message, whitespace collapsed
    package: str | None = None     # missing_package: the name find_package looked for
    provider: tuple[str, str, str] | None = None   # (library, ROCm package, Debian package or "")
    needs: str = ""                # the version, the submodules, the URL: what it wanted


def blocks(output: str) -> list[Block]:
    found: list[Block] = []
    lines = output.splitlines()
    i = 0
    while i < len(lines):
        head = _HEADER.match(lines[i])
        i += 1
        if head is None:
            continue
        body, frames, in_stack = [head[4]] if head[4] else [], [], False
        while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t")) or lines[i] == _STACK):
            text = lines[i]
            i += 1
            frame = _FRAME.match(text) if in_stack else None
            if frame:
                frames.append((frame[1], int(frame[2]), frame[3]))
            elif text.strip() == _STACK:
                in_stack = True
            elif not in_stack:
                body.append(text.strip())
        found.append(Block(head[1], int(head[2]) if head[2] else None, head[3], " ".join(" ".join(body).split()),
                           frames))
    return found


def _in_tree(path: str, tree: Path) -> str | None:
    candidate = Path(path) if Path(path).is_absolute() else tree / path
    try:
        rel = candidate.resolve().relative_to(tree.resolve())
    except (OSError, ValueError):
        return None
    return rel.as_posix() if candidate.is_file() else None


def _place(block: Block, tree: Path) -> tuple[str | None, int | None, str | None]:
    for path, line, command in block.places():
        rel = _in_tree(path, tree)
        if rel is not None:
            return rel, line, command or None
    return None, None, None


def first_stop(output: str, tree: Path, submodules: dict[str, bool]) -> Stop:
    """The first error of a failed configure, classified; `submodules`: .gitmodules path -> present."""
    found = blocks(output)
    if not found:
        tail = [line.strip() for line in output.splitlines() if line.strip()]
        return Stop("failed", None, None, None, (tail[-1] if tail else "CMake failed without a message")[:300])
    first = found[0]
    path, line, command = _place(first, tree)
    fetching = any(_FETCHERS.search(p) for p, _l, _c in first.places())
    if path is None and len(found) > 1 and fetching:   # a download's sub-build: the next error places it
        path, line, command = _place(found[1], tree)
        fetching = True
    stop = Stop("failed", path, line, command, first.message)
    return _classify(stop, tree, submodules, fetching or any(_FETCHERS.search(p) for p, _l, _c in first.frames))


def _classify(stop: Stop, tree: Path, submodules: dict[str, bool], fetching: bool) -> Stop:
    message = stop.message
    if (old := _TOO_OLD.search(message)) is not None:
        stop.kind, stop.needs = "needs_cmake", old[1]
        return stop
    for pattern in _PACKAGE:
        if (name := pattern.search(message)) is not None:
            stop.kind, stop.package, stop.provider = "missing_package", name[1], provider(name[1])
            return stop
    missing = [p for p, present in sorted(submodules.items()) if not present]
    named = [p for p in missing if p in message]
    if named or (missing and "submodule" in message.lower()):
        stop.kind, stop.needs = "needs_submodule", ", ".join(named or missing)
        return stop
    if "submodule" in message.lower():
        stop.kind = "needs_submodule"
        return stop
    download = _download_before(tree, stop) if _MISSING_FILE.search(message) else None
    if fetching or _NETWORK.search(message) or download is not None:
        url = _URL.search(message)
        stop.kind, stop.needs = "needs_network", url[0] if url else (download or "")
        return stop
    return stop


def provider(package: str) -> tuple[str, str, str] | None:
    """(library, ROCm package, Debian package or "") of a ROCm CMake package name, else None."""
    key = package.lower()
    if key in _RUNTIME:
        return _RUNTIME[key]
    return packs.PROVIDERS.get(_PACKAGE_KEYS.get(key, key))


def _download_before(tree: Path, stop: Stop) -> str | None:
    """`FILE:LINE command URL` of the last download command above the error in its file, if any."""
    if stop.path is None or stop.line is None:
        return None
    try:
        text = (tree / stop.path).read_bytes()[:1 << 20].decode("latin-1")
    except OSError:
        return None
    last = None
    for cmd in commands(text):
        line = text.count("\n", 0, cmd.start) + 1
        if line >= stop.line:
            break
        values = cmd.values()
        if _DOWNLOADS.match(cmd.name) or (cmd.lower == "file" and values[:1] == ["DOWNLOAD"]):
            url = next((m[0] for v in values if (m := _URL.search(v))), "")
            name = f"{cmd.name}(DOWNLOAD)" if cmd.lower == "file" else cmd.name
            last = f"{stop.path}:{line} {name}{' ' + url if url else ''}"
    return last
