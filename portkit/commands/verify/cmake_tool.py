"""Which CMake configures a converted tree, and how that CMake reaches this machine's ROCm.

The newest CMake wins: Debian's 3.25 cannot configure a project that asks for 3.28 (LightGBM),
while `pip install cmake` puts a current one beside the Python that runs portkit, often not
first on PATH. So every `cmake` on PATH and in this Python's scripts folder is asked its version,
never through a shell, and the newest at or above 3.21 (the first with the HIP language) is used.

How CMake finds ROCm: AMD's packages lay ROCm out under /opt/rocm, where CMake's HIP language
looks (`<root>/lib/cmake/hip-lang`). Debian's multiarch layout puts the same package under
/usr/lib/<triplet>/cmake, which CMake 3.25 and 4.x do not look in: the toolchain file shipped
here (debian-rocm.cmake) gives CMake a small ROCm root in the build folder and names hipcc's clang.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import PortkitError

MINIMUM = (3, 21)                  # CMake's HIP language (enable_language(HIP))
TOOLCHAIN = Path(__file__).with_name("debian-rocm.cmake")
_VERSION = re.compile(r"cmake version (\d+)\.(\d+)(?:\.(\d+))?\S*")
_INSTALL = "apt-get install cmake, or pip install cmake"


@dataclass(frozen=True)
class CMakeTool:
    path: str
    version: tuple[int, int, int]
    others: tuple[str, ...] = ()   # "PATH (X.Y.Z)" of every other CMake found, for the report

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version))

    def describe(self) -> str:
        return f"CMake {self.version_text} ({self.path})"


@dataclass(frozen=True)
class RocmAccess:
    how: str                       # "toolchain", "rocm-path" or "cmake": how CMake reaches ROCm
    args: tuple[str, ...]          # what the configure command adds for it
    note: str                      # one phrase for the report


def candidates() -> list[str]:
    """Every cmake on PATH, then in the scripts folder of the Python running portkit (a `pip
    install cmake` in a venv that is not activated), each once."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    dirs += [sysconfig.get_path("scripts") or "", str(Path(sys.executable).parent)]
    found: list[str] = []
    seen: set[str] = set()
    for folder in dirs:
        path = os.path.join(folder, "cmake")
        if not folder or not os.path.isfile(path) or not os.access(path, os.X_OK):
            continue
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            found.append(path)
    return found


def version_of(path: str) -> tuple[int, int, int] | None:
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION.search(proc.stdout)
    return (int(match[1]), int(match[2]), int(match[3] or 0)) if match else None


def select(explicit: str | None = None) -> CMakeTool:
    """The CMake to configure with: `explicit` (--cmake), else the newest usable one found."""
    if explicit is not None:
        path = explicit if os.sep in explicit else _which(explicit)
        version = version_of(path) if path else None
        if version is None:
            raise PortkitError(f"{explicit}: --cmake: not a CMake that runs ({_INSTALL})")
        if version[:2] < MINIMUM:
            raise PortkitError(f"{path}: --cmake: CMake {'.'.join(map(str, version))} has no HIP language "
                               f"(3.21 or newer: {_INSTALL})")
        return CMakeTool(path, version)
    found = [(path, version_of(path)) for path in candidates()]
    usable = [(path, v) for path, v in found if v is not None and v[:2] >= MINIMUM]
    if not usable:
        old = ", ".join(f"{p} ({'.'.join(map(str, v))})" for p, v in found if v is not None)
        raise PortkitError(f"cmake: no CMake 3.21 or newer found{' (only ' + old + ')' if old else ''}: "
                           f"{_INSTALL} (docs/verify.md)")
    best = max(usable, key=lambda item: item[1])   # max keeps the first of equals: PATH order
    others = tuple(f"{p} ({'.'.join(map(str, v))})" for p, v in found if p != best[0] and v is not None)
    return CMakeTool(best[0], best[1], others)


def _which(name: str) -> str | None:
    import shutil
    return shutil.which(name)


def rocm_access(rocm_path: str | None) -> RocmAccess:
    """How the configure reaches ROCm: --rocm-path's root, Debian's layout through the toolchain
    file, or CMake's own search (AMD's /opt/rocm, where hip-lang is where CMake looks)."""
    if rocm_path is not None:
        root = str(Path(rocm_path).absolute())
        return RocmAccess("rocm-path", (f"-DCMAKE_HIP_COMPILER_ROCM_ROOT={root}", f"-DCMAKE_PREFIX_PATH={root}"),
                          f"ROCm at {root} (--rocm-path)")
    amd = os.environ.get("ROCM_PATH", "/opt/rocm")
    if not os.path.isfile(os.path.join(amd, "lib", "cmake", "hip-lang", "hip-lang-config.cmake")) \
            and glob.glob("/usr/lib/*-linux-gnu*/cmake/hip-lang/hip-lang-config.cmake"):
        return RocmAccess("toolchain", (f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN}",),
                          "Debian's ROCm through portkit's toolchain file (debian-rocm.cmake)")
    return RocmAccess("cmake", (), f"ROCm as CMake finds it ({amd})")
