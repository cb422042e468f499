"""The build-migration table (mappings/build.toml): nvcc flags, CUDA libraries, CMake names, loaded once.

No flag, library or CMake name is hard-coded in the migrators: they ask this table.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from pathlib import Path

from ..core.errors import MappingError, PortkitError
from ..core.tables import toml_cache
from ..core.tables.mappings import Version, parse_version, tables_dir
from ..core.tables.records import check_keys, record, shown

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ACTIONS = {"translate", "drop", "report", "arch", "split", "keep"}
KEYS = ("schema", "flag", "library", "cmake")
FLAG_KEYS = ("names", "value", "action", "hip", "why", "when_value")
LIBRARY_KEYS = ("id", "link", "cmake", "findcuda", "hip_link", "hip_package", "hip_target", "why", "older")
OLDER_KEYS = ("before", "hip_link", "hip_package", "hip_target")


@dataclass(frozen=True)
class Flag:
    names: tuple[str, ...]
    action: str
    why: str
    value: bool = False
    hip: tuple[str, ...] = ()
    when_value: str | None = None


@dataclass(frozen=True)
class Library:
    id: str
    link: tuple[str, ...]
    cmake: tuple[str, ...]
    findcuda: tuple[str, ...]
    hip_link: str = ""
    hip_package: str = ""
    hip_target: str = ""
    why: str = ""
    older: tuple[str, str, str, str] | None = None   # (before, link, package, target)

    def for_rocm(self, target: Version | None) -> "Library":
        """This library as a build for ROCm `target` names it (None: the newest)."""
        if self.older is None or target is None or target >= parse_version(self.older[0]):
            return self
        before, link, package, imported = self.older
        return replace(self, hip_link=link, hip_package=package, hip_target=imported, older=None)


@dataclass(frozen=True)
class CMakeNames:
    """[cmake]: CMake's CUDA variables, properties and FindCUDA commands, and what they become."""

    hip_variables: tuple[str, ...]          # CMAKE_CUDA_<X> -> CMAKE_HIP_<X>
    dropped_variables: dict[str, str]       # CMAKE_CUDA_<X> HIP has no use for -> why
    toolkit_variables: dict[str, str]       # CUDAToolkit_INCLUDE_DIRS -> hip_INCLUDE_DIRS
    findcuda_results: tuple[str, ...]       # patterns of what FindCUDAToolkit / FindCUDA define
    hip_properties: tuple[str, ...]         # CUDA_<X> target properties -> HIP_<X>
    dropped_properties: dict[str, str]      # CUDA_<X> target properties HIP has no use for -> why
    findcuda_commands: dict[str, str]       # cuda_add_executable -> add_executable
    findcuda_libraries: dict[str, str]      # cuda_add_cublas_to_target -> the [[library]] link name
    packages: dict[str, str]                # find_package(CCCL) -> "rocthrust hipcub" ("": none)
    package_targets: dict[str, str]         # CCCL::CCCL -> "roc::rocthrust hip::hipcub" ("": none)
    package_variables: dict[str, str]       # NCCL_LIBRARIES -> roc::rccl
    cuda_only_subdirectories: dict[str, str]   # add_subdirectory(.../cutlass) -> the ROCm alternative
    results: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pattern = re.compile("|".join(f"(?:{p})" for p in self.findcuda_results))
        object.__setattr__(self, "results", pattern)


@dataclass(frozen=True)
class BuildTable:
    flags: dict[str, Flag]            # every spelling -> its flag
    libraries: tuple[Library, ...]
    by_link: dict[str, Library]       # cublas -> ..., also the CMake target and FindCUDA names
    by_target: dict[str, Library]
    by_findcuda: dict[str, Library]
    cmake: CMakeNames

    def takes_value(self, word: str) -> bool:
        """`-ccbin`: an option whose value is the next word (not `-ccbin=x`)."""
        flag = self.flags.get(word)
        return flag is not None and flag.value

    def for_rocm(self, target: Version | None) -> "BuildTable":
        """The table with each library resolved for the target ROCm release."""
        if not any(lib.older for lib in self.libraries):
            return self
        return _index(self.flags, tuple(lib.for_rocm(target) for lib in self.libraries), self.cmake)


def load(path: Path) -> BuildTable:
    try:
        data = toml_cache.load(path)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PortkitError(f"{path}: cannot read the build table ({exc})") from exc
    check_keys(shown(path), data, ("schema", "cmake"), KEYS)
    flags: dict[str, Flag] = {}
    for n, record in enumerate(data.get("flag", []), start=1):
        check_keys(f"{shown(path)}: flag {n}", record, ("names", "action", "why"), FLAG_KEYS)
        if record["action"] not in ACTIONS:
            raise PortkitError(f"{path}: flag {record['names'][0]}: unknown action {record['action']!r}")
        flag = Flag(tuple(record["names"]), record["action"], record["why"], bool(record.get("value", False)),
                    tuple(record.get("hip", ())), record.get("when_value"))
        for name in flag.names:
            if name in flags:
                raise PortkitError(f"{path}: flag {name} is listed twice")
            flags[name] = flag
    for n, r in enumerate(data.get("library", []), start=1):
        check_keys(f"{shown(path)}: library {n}", r, ("id", "link", "cmake", "findcuda"), LIBRARY_KEYS)
        if "older" in r:
            check_keys(f"{shown(path)}: library {n}: older", r["older"], OLDER_KEYS)
    libraries = tuple(
        Library(r["id"], tuple(r["link"]), tuple(r["cmake"]), tuple(r["findcuda"]), r.get("hip_link", ""),
                r.get("hip_package", ""), r.get("hip_target", ""), r.get("why", ""),
                (r["older"]["before"], r["older"]["hip_link"], r["older"]["hip_package"], r["older"]["hip_target"])
                if "older" in r else None)
        for r in data.get("library", []))
    return _index(flags, libraries, _cmake(path, data["cmake"], {n for lib in libraries for n in lib.link}))


def _cmake(path: Path, raw: object, links: set[str]) -> CMakeNames:
    where = f"{shown(path)}: [cmake]"
    check_keys(where, raw, [f.name for f in fields(CMakeNames) if f.init])
    names = record(CMakeNames, where, raw, **{
        key: _names(f"{where}.{key}", raw[key])
        for key in ("dropped_variables", "toolkit_variables", "dropped_properties", "findcuda_commands",
                    "findcuda_libraries", "packages", "package_targets", "package_variables",
                    "cuda_only_subdirectories")})
    for command, link in names.findcuda_libraries.items():
        if link not in links:
            raise MappingError(f"{where}.findcuda_libraries: {command}: {link!r} is no [[library]] link name")
    try:
        re.compile("|".join(names.findcuda_results))
    except re.error as exc:
        raise MappingError(f"{where}.findcuda_results: {exc}") from None
    return names


def _names(where: str, raw: object) -> dict[str, str]:
    """A table of names to names (or reasons)."""
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise MappingError(f"{where}: expected a table of strings")
    return dict(raw)


def _index(flags: dict[str, Flag], libraries: tuple[Library, ...], cmake: CMakeNames) -> BuildTable:
    return BuildTable(
        flags, libraries,
        {name: lib for lib in libraries for name in lib.link},
        {name: lib for lib in libraries for name in lib.cmake},
        {name: lib for lib in libraries for name in lib.findcuda},
        cmake,
    )


@lru_cache(maxsize=1)
def default_table() -> BuildTable:
    return load(tables_dir() / "build.toml")


@lru_cache(maxsize=16)
def table_for(target: Version | None) -> BuildTable:
    return default_table().for_rocm(target)
