"""The values a build file may give verify, and the checks that keep only plain ones.

Shared by the CMake reader (buildconfig_cmake.py) and the Makefile reader (buildconfig.py): a
standard is `c++NN` / `gnu++NN`, an include directory an existing directory that is not the
CUDA toolkit's, a definition `NAME` or `NAME=VALUE` of letters, digits and `_.+-:/,`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .compdb import is_cuda_toolkit_dir

# \A...\Z, not ^...$: `$` takes a trailing newline ("NAME\n" would be a line of clang's predefines)
STD = re.compile(r"\A(?:c|gnu)\+\+(?:98|03|11|14|17|20|23|26|0x|1y|1z|2a|2b|2c)\Z")
_DEFINE = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*(?:=[A-Za-z0-9_.+\-:/,]*)?\Z")
HIP_CONDITION = re.compile(r"HIP|ROCM|AMD", re.I)
# What the HIP build's imported targets give the targets that link them: ROCm's hip-config.cmake
# sets INTERFACE_COMPILE_DEFINITIONS "__HIP_PLATFORM_HCC__=1;__HIP_PLATFORM_AMD__=1" on hip::host,
# and hip::device links hip::host. clang defines neither before a HIP header is included, so a
# project header that tests __HIP_PLATFORM_AMD__ first (LightGBM's cuda_rocm_interop.h, which
# #defines the CUDA names it uses to HIP's) sees it only through them.
_HIP_HOST = ("__HIP_PLATFORM_HCC__=1", "__HIP_PLATFORM_AMD__=1")
IMPORTED_DEFINES = {"hip::host": _HIP_HOST, "hip::device": _HIP_HOST}
_YEARS = {"0x": 11, "1y": 14, "1z": 17, "2a": 20, "2b": 23, "2c": 26, "03": 3, "98": 0}


@dataclass
class FileConfig:
    """What one build file asks for."""

    std: str | None = None
    includes: list[str] = field(default_factory=list)     # absolute, existing directories
    defines: list[str] = field(default_factory=list)
    target_defines: dict[str, list[str]] = field(default_factory=dict)   # CMake: per target
    target_sources: dict[str, list[str]] = field(default_factory=dict)   # CMake: absolute, where literal
    # CMake: a target with a source the reader could not read (`${COLL}.cu` in a foreach loop): its
    # settings may be those of a unit in its directory that no target names
    partial_sources: set[str] = field(default_factory=set)
    target_exports: dict[str, list[str]] = field(default_factory=dict)   # CMake: INTERFACE and PUBLIC ones
    # CMake: target_link_libraries, each library with whether it passes on to the target's users
    target_links: dict[str, list[tuple[str, bool]]] = field(default_factory=dict)
    hip_left_out: dict[str, int] = field(default_factory=dict)   # CMake: absolute file -> the line that removes it
    # CMake: absolute folder -> (line, folder as written, why) of an add_subdirectory the HIP build
    # never reaches, or reaches only with an option that is OFF by default
    left_out_dirs: dict[str, tuple[int, str, str]] = field(default_factory=dict)
    # CMake: absolute file -> (line, why) of a file no default build compiles as it is: a template the
    # build reads, a source only an option OFF by default adds (cmake_unbuilt.py)
    unbuilt: dict[str, tuple[int, str]] = field(default_factory=dict)
    # CMake: option() defaults in the HIP build after this file (False: OFF; None: unknown)
    options: dict[str, bool | None] = field(default_factory=dict)
    # CMake: function and macro names (lower case) -> (parameters, body), this file's and those above it
    functions: dict[str, tuple[list[str], str]] = field(default_factory=dict)
    # CMake: the values a settled if() read (cmake_settle.py: `NAME=VALUE (FILE:LINE's default)`)
    assumed: list[str] = field(default_factory=list)

    def add_std(self, value: str) -> None:
        if STD.match(value) and (self.std is None or std_rank(value) > std_rank(self.std)):
            self.std = value

    def add_include(self, path: str | None) -> None:
        if path is not None and path not in self.includes:
            self.includes.append(path)

    def add_define(self, value: str, target: str | None = None, exported: bool = False) -> None:
        into = self.defines if target is None else self.target_defines.setdefault(target, [])
        if not _DEFINE.match(value):
            return
        if value not in into:
            into.append(value)
        if target is not None and exported and value not in (out := self.target_exports.setdefault(target, [])):
            out.append(value)

    def add_link(self, target: str, library: str, exported: bool) -> None:
        links = self.target_links.setdefault(target, [])
        if (library, exported) not in links:
            links.append((library, exported))


def std_rank(value: str) -> int:
    """c++17 -> 17, gnu++2a -> 20: to keep the newest standard a build asks for."""
    year = value.split("++", 1)[1]
    return _YEARS.get(year, int(year) if year.isdigit() else 0)


def plain_dir(value: str, base: Path) -> str | None:
    """An include directory as an absolute path, or None when it is not plain or not there."""
    if not value or "$" in value or "\0" in value or value.startswith("-"):
        return None
    path = Path(value) if os.path.isabs(value) else base / value
    path = Path(os.path.normpath(path))
    try:
        if not path.is_dir() or is_cuda_toolkit_dir(path):
            return None
    except OSError:
        return None
    return str(path)


def read_options(words: list[str], directory: Path, config: FileConfig, defines: bool = True) -> None:
    """The -std=, -I and -D of a list of compiler arguments (values are never interpreted)."""
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word.startswith(("-std=", "--std=")):
            config.add_std(word.split("=", 1)[1])
        elif word in ("-I", "-D", "-isystem") and i < len(words):
            value, i = words[i], i + 1
            _option(word, value, directory, config, defines)
        elif word.startswith(("-I", "-D")) and len(word) > 2:
            _option(word[:2], word[2:], directory, config, defines)


def _option(option: str, value: str, directory: Path, config: FileConfig, defines: bool) -> None:
    if option == "-D":
        if defines:
            config.add_define(value)
    else:
        config.add_include(plain_dir(value, directory))
