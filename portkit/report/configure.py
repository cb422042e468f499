"""`portkit verify --configure` output: one line for people, one JSON document for scripts.

The line says whether the converted CMake configured for HIP and, if not, the first error at
the project's file:line and what it wants: a newer CMake, a ROCm package (with the package that
provides it), a git submodule, the network. It always names the CMake used and how it reached
ROCm: the same tree configures with one CMake and not another.
"""

from __future__ import annotations

import json
from typing import TextIO

from ..commands.results import ConfigureResult
from .audit_model import JsonObject

SCHEMA_VERSION = 1


def line(result: ConfigureResult) -> str:
    """The whole report in one line."""
    used = f"{result.cmake.describe()}; {result.rocm}"
    if result.ok:
        return f"{result.root}: configures for HIP ({used}; {result.seconds:.1f} s)"
    if result.status == "configured_without_hip":
        hint = (f"; its GPU options, off: {', '.join(result.hip_options)} (--cmake-define NAME=ON)"
                if result.hip_options else "")
        return (f"{result.root}: configures, but not for HIP: no enable_language(HIP) or find_package(hip) was "
                f"reached{hint} ({used})")
    return f"{result.root}: does not configure for HIP: {_why(result)} ({used})"


def _why(result: ConfigureResult) -> str:
    stop = result.stop
    if stop is None:
        return "CMake did not finish in the time limit (--timeout)"
    where = f"{stop.path}:{stop.line}: " if stop.path else ""
    call = f"{stop.command}: " if stop.command else ""
    if stop.kind == "needs_cmake":
        return (f"{where}{call}needs CMake {stop.needs}, the newest found is {result.cmake.version_text}: "
                f"pip install 'cmake>={stop.needs}' (or --cmake PATH)")
    if stop.kind == "missing_package":
        return where + _package(stop)
    if stop.kind == "needs_submodule":
        what = f"the git submodule {stop.needs}" if stop.needs else "a git submodule"
        return (f"{where}{call}needs {what}, which the tree lacks (git submodule update --init in the CUDA tree, "
                f"then convert again); not a portkit failure")
    if stop.kind == "needs_network":
        what = f" ({stop.needs})" if stop.needs else ""
        how = "which --offline blocks" if result.offline else "which failed: the network was not reached"
        return f"{where}{call}downloads at configure time{what}, {how}; not a portkit failure"
    return f"{where}{call}{stop.message}"


def _package(stop) -> str:
    call = f"find_package({stop.package})"
    if stop.provider is None:
        return f"{call}: {stop.message}: a package of this machine, not ROCm's"
    library, rocm, debian = stop.provider
    install = f"apt-get install {debian} or the ROCm package {rocm}" if debian else \
        f"the ROCm package {rocm} (Debian has none)"
    return f"{call}: {library}'s CMake package is not installed: {install}"


def document(result: ConfigureResult) -> JsonObject:
    stop = result.stop
    error = None
    if stop is not None:
        library, rocm, debian = stop.provider or (None, None, None)
        error = {"path": stop.path, "line": stop.line, "command": stop.command, "message": stop.message,
                 "package": stop.package, "library": library, "rocm_package": rocm, "debian_package": debian or None,
                 "needs": stop.needs or None}
    return {
        "version": SCHEMA_VERSION,
        "tool": "portkit verify --configure",
        "root": str(result.root),
        "status": result.status,
        "configured": result.ok,
        "hip": result.hip,
        "hip_options": list(result.hip_options),
        "line": line(result),
        "cmake": {"path": result.cmake.path, "version": result.cmake.version_text, "others": list(result.cmake.others)},
        "rocm": result.rocm,
        "offline": result.offline,
        "command": list(result.command),
        "error": error,
        "seconds": round(result.seconds, 2),
    }


def render_json(result: ConfigureResult, stream: TextIO) -> None:
    json.dump(document(result), stream, indent=2)
    stream.write("\n")
