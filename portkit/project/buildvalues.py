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
_YEARS = {"0x": 11, "1y": 14, "1z": 17, "2a": 20, "2b": 23, "2c": 26, "03": 3, "98": 0}


@dataclass
class FileConfig:
    """What one build file asks for."""

    std: str | None = None
    includes: list[str] = field(default_factory=list)     # absolute, existing directories
    defines: list[str] = field(default_factory=list)
    target_defines: dict[str, list[str]] = field(default_factory=dict)   # CMake: per target
    target_sources: dict[str, list[str]] = field(default_factory=dict)   # CMake: absolute, where literal

    def add_std(self, value: str) -> None:
        if STD.match(value) and (self.std is None or std_rank(value) > std_rank(self.std)):
            self.std = value

    def add_include(self, path: str | None) -> None:
        if path is not None and path not in self.includes:
            self.includes.append(path)

    def add_define(self, value: str, target: str | None = None) -> None:
        into = self.defines if target is None else self.target_defines.setdefault(target, [])
        if _DEFINE.match(value) and value not in into:
            into.append(value)


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
