"""The build-migration table (mappings/build.toml): nvcc flags and CUDA libraries, loaded once.

No flag or library name is hard-coded in the migrators: they ask this table.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from ..errors import PortkitError
from ..mappings import Version, parse_version, tables_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ACTIONS = {"translate", "drop", "report", "arch", "split", "keep"}


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
class BuildTable:
    flags: dict[str, Flag]            # every spelling -> its flag
    libraries: tuple[Library, ...]
    by_link: dict[str, Library]       # cublas -> ..., also the CMake target and FindCUDA names
    by_target: dict[str, Library]
    by_findcuda: dict[str, Library]

    def for_rocm(self, target: Version | None) -> "BuildTable":
        """The table with each library resolved for the target ROCm release."""
        if not any(lib.older for lib in self.libraries):
            return self
        return _index(self.flags, tuple(lib.for_rocm(target) for lib in self.libraries))


def load(path: Path) -> BuildTable:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PortkitError(f"{path}: cannot read the build table ({exc})") from exc
    flags: dict[str, Flag] = {}
    for record in data.get("flag", []):
        if record["action"] not in ACTIONS:
            raise PortkitError(f"{path}: flag {record['names'][0]}: unknown action {record['action']!r}")
        flag = Flag(tuple(record["names"]), record["action"], record["why"], bool(record.get("value", False)),
                    tuple(record.get("hip", ())), record.get("when_value"))
        for name in flag.names:
            if name in flags:
                raise PortkitError(f"{path}: flag {name} is listed twice")
            flags[name] = flag
    libraries = tuple(
        Library(r["id"], tuple(r["link"]), tuple(r["cmake"]), tuple(r["findcuda"]), r.get("hip_link", ""),
                r.get("hip_package", ""), r.get("hip_target", ""), r.get("why", ""),
                (r["older"]["before"], r["older"]["hip_link"], r["older"]["hip_package"], r["older"]["hip_target"])
                if "older" in r else None)
        for r in data.get("library", []))
    return _index(flags, libraries)


def _index(flags: dict[str, Flag], libraries: tuple[Library, ...]) -> BuildTable:
    return BuildTable(
        flags, libraries,
        {name: lib for lib in libraries for name in lib.link},
        {name: lib for lib in libraries for name in lib.cmake},
        {name: lib for lib in libraries for name in lib.findcuda},
    )


@lru_cache(maxsize=1)
def default_table() -> BuildTable:
    return load(tables_dir() / "build.toml")


@lru_cache(maxsize=16)
def table_for(target: Version | None) -> BuildTable:
    return default_table().for_rocm(target)
