"""The rewrite-blocker catalogue (mappings/rewrites.toml): CUDA-only libraries and programming
models with no drop-in on AMD, their alternative, the kind of work and its cost per use.

Entries that name an ecosystem library are detected by that record's headers, namespaces and
link names (one place per library); this module only adds what ecosystem.toml has no field for.
Rule PK402 looks names up here; effort prices its findings from `Entry.hours`.
"""

from __future__ import annotations

import re

import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from . import ecosystem
from .records import per_object
from ..errors import PortkitError
from . import toml_cache

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Range = tuple[float, float, float]
WORK = ("rewrite", "different-library", "no-equivalent")
PER = ("kernel", "api", "line")
REQUIRED = {"id", "alternative", "rocm_since", "work", "per", "hours", "source"}
FIELDS = REQUIRED | {"library", "name", "packages", "namespaces", "prefixes", "calls", "cmake", "related", "decision"}
LISTS = ("packages", "namespaces", "prefixes", "calls", "cmake", "related")


@dataclass(frozen=True)
class Entry:
    id: str
    name: str
    library: str
    alternative: str
    rocm_since: str
    work: str
    per: str
    hours: Range
    source: str
    packages: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    cmake: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    decision: str = ""        # the decision it is part of (cute: "cutlass", one rewrite); "" = its own id

    @property
    def decides(self) -> str:
        return self.decision or self.id

    @property
    def instead(self) -> str:
        since = f" (ROCm {self.rocm_since}+)" if self.rocm_since else ""
        return f"{self.alternative}{since}"


@dataclass(frozen=True)
class Catalogue:
    entries: tuple[Entry, ...]
    mention: Range

    def by_library(self, library_id: str) -> Entry | None:
        return _index(self)[0].get(library_id)

    def by_package(self, name: str) -> Entry | None:
        return _index(self)[1].get(name)

    def by_namespace(self, name: str) -> Entry | None:
        """An entry detected by a namespace: its own, or its ecosystem library's."""
        return _index(self)[2].get(name)

    def by_id(self, entry_id: str) -> Entry | None:
        return _index(self)[6].get(entry_id)

    def by_cmake(self, name: str) -> Entry | None:
        return _index(self)[3].get(name.lower())

    def by_call(self, name: str) -> Entry | None:
        return _index(self)[4].first(name)

    def call_prefixes(self) -> tuple[str, ...]:
        """Every prefix by_call knows: a file holding none of them calls no blocked API."""
        return _index(self)[4].prefixes

    def by_prefix(self, name: str) -> Entry | None:
        """An entry named by a name prefix (cute::SM90_TMA_LOAD is the Hopper model, not CuTe)."""
        return _index(self)[5].first(name)

    def hours(self, entry_id: str, unit: str) -> Range:
        """The cost of one finding: the entry's `hours` for its unit, `mention` for other uses."""
        entry = _index(self)[6].get(entry_id)
        return entry.hours if entry is not None and unit == entry.per else self.mention


class _Prefixes:
    """Entries by name prefix: the longest prefix a name starts with wins (the first listed of equal
    ones). One regular expression instead of a loop over every prefix: audit asks for each call."""

    def __init__(self, pairs: list[tuple[str, Entry]]):
        ordered = sorted(pairs, key=lambda p: -len(p[0]))
        self._entries: dict[str, Entry] = {}
        for prefix, entry in ordered:
            self._entries.setdefault(prefix, entry)
        self._pattern = re.compile("|".join(re.escape(p) for p in self._entries)) if self._entries else None

    @property
    def prefixes(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def first(self, name: str) -> Entry | None:
        found = self._pattern.match(name) if self._pattern is not None else None
        return self._entries[found.group()] if found is not None else None


@per_object
def _index(cat: Catalogue):
    eco = ecosystem.default()
    libraries = {e.library: e for e in cat.entries if e.library}
    packages = {p: e for e in cat.entries for p in e.packages}
    namespaces = {ns: e for e in cat.entries for ns in e.namespaces}
    for e in cat.entries:
        if e.library:
            for ns in eco.by_id[e.library].namespaces:
                namespaces.setdefault(ns, e)
    cmake = {c.lower(): e for e in cat.entries for c in e.cmake}
    calls = _Prefixes([(c, e) for e in cat.entries for c in e.calls])
    prefixes = _Prefixes([(p, e) for e in cat.entries for p in e.prefixes])
    return libraries, packages, namespaces, cmake, calls, prefixes, {e.id: e for e in cat.entries}


def load(path: Path, eco: ecosystem.Ecosystem) -> Catalogue:
    """Read and validate the catalogue; every error is one line naming the entry."""
    try:
        data = toml_cache.load(path)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PortkitError(f"{path}: cannot read the rewrite catalogue: {exc}") from None
    unknown = set(data) - {"schema", "mention", "rewrite"}
    if unknown:
        raise PortkitError(f"{path}: unknown top-level keys {sorted(unknown)}")
    mention = _range(path, "mention", data.get("mention"))
    entries, claimed = [], {}
    for record in data.get("rewrite", []):
        entry = _entry(path, record, eco)
        for key in ([f"entry {entry.id}", f"library {entry.library}" if entry.library else ""]
                    + [f"package {p}" for p in entry.packages]):
            if key and key in claimed:
                raise PortkitError(f"{path}: {entry.id}: {key} is already in entry {claimed[key]}")
            claimed[key] = entry.id
        entries.append(entry)
    ids = {e.id for e in entries}
    for entry in entries:
        if entry.decision and entry.decision not in ids:
            raise PortkitError(f"{path}: {entry.id}: decision {entry.decision} is not an entry")
    return Catalogue(tuple(entries), mention)


def _entry(path: Path, record: dict, eco: ecosystem.Ecosystem) -> Entry:
    name = record.get("id", "?")
    where = f"{path}: {name}"
    missing, unknown = REQUIRED - set(record), set(record) - FIELDS
    if missing or unknown:
        raise PortkitError(f"{where}: " + (f"missing {sorted(missing)}" if missing else f"unknown fields {sorted(unknown)}"))
    if record["work"] not in WORK or record["per"] not in PER:
        raise PortkitError(f"{where}: work must be one of {', '.join(WORK)} and per one of {', '.join(PER)}")
    library = record.get("library", "")
    if library:
        lib = eco.by_id.get(library)
        if lib is None:
            raise PortkitError(f"{where}: library {library} is not in ecosystem.toml")
        if lib.status == "drop-in":
            raise PortkitError(f"{where}: {lib.name} is drop-in on ROCm ({lib.rocm}), not a rewrite")
    elif "name" not in record:
        raise PortkitError(f"{where}: an entry without `library` needs a `name`")
    for package in record.get("packages", ()):
        if eco.package(package) is None or eco.package(package).name != package:
            raise PortkitError(f"{where}: package {package} is not in ecosystem.toml")
    for key in LISTS:
        value = record.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise PortkitError(f"{where}: {key} must be a list of names")
    return Entry(
        id=name, name=record.get("name") or eco.by_id[library].name, library=library,
        alternative=record["alternative"], rocm_since=str(record["rocm_since"]), work=record["work"],
        per=record["per"], hours=_range(path, f"{name}: hours", record["hours"]), source=record["source"],
        decision=str(record.get("decision", "")), **{key: tuple(record.get(key, ())) for key in LISTS})


def _range(path: Path, what: str, value) -> Range:
    if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, (int, float)) for v in value)
            and 0 <= value[0] <= value[1] <= value[2]):
        raise PortkitError(f"{path}: {what} must be [low, likely, high] hours, ascending")
    return (float(value[0]), float(value[1]), float(value[2]))


@lru_cache(maxsize=1)
def default() -> Catalogue:
    from .mappings import tables_dir
    return load(tables_dir() / "rewrites.toml", ecosystem.default())
