"""The ecosystem table (mappings/ecosystem.toml): CUDA-only libraries and Python packages.

Each record says what a dependency is on ROCm: `drop-in` (a counterpart with the same API
shape), `different-api` (a counterpart, but the code is rewritten against it), `partial` (a
ROCm build that lacks features) or `none` (no counterpart: a blocker). Rules look names up
here; no list of libraries lives in Python.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..errors import PortkitError
from . import toml_cache
from .records import per_object

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

STATUSES = ("drop-in", "different-api", "partial", "none")
SEVERITY = {"none": "high", "different-api": "high", "partial": "medium", "drop-in": "info"}
PHRASE = {"none": "has no ROCm counterpart", "different-api": "has a ROCm counterpart with a different API",
          "partial": "is only partly supported on ROCm", "drop-in": "has a drop-in ROCm counterpart"}
LIBRARY_FIELDS = {"id", "name", "status", "rocm", "headers", "namespaces", "link", "python", "note", "source",
                  "blocker", "copy"}
COPY_FIELDS = {"marker", "needs_cuda", "names_needing_cuda"}
PACKAGE_FIELDS = {"name", "match", "imports", "status", "rocm", "note", "source", "blocker"}


class _Status:
    """What a library's or package's ROCm status means for a finding."""

    status: str
    blocker: bool

    @property
    def severity(self) -> str:
        return "blocker" if self.blocker else SEVERITY[self.status]

    @property
    def phrase(self) -> str:
        return PHRASE[self.status]

    @property
    def cost_status(self) -> str:
        """The key of its adoption cost in effort.toml: `blocker` for records marked so, else the status."""
        return "blocker" if self.blocker else self.status


@dataclass(frozen=True)
class Copy:
    """How a tree carries a vendor-neutral library as source (NVTX3: header-only C and C++ that
    hipcc compiles as it is): the file that marks a copy (`nvtx3/nvToolsExt.h`: the copy is the
    directory `.../nvtx3`), the copy's headers that still include CUDA's (naming CUDA objects),
    and the pattern of the library's names that belong to those headers."""

    marker: str
    needs_cuda: tuple[str, ...] = ()
    names_needing_cuda: str = ""

    def keeps(self, name: str) -> bool:
        """Whether a carried copy provides `name` for an AMD build (not one naming CUDA objects)."""
        return not (self.names_needing_cuda and re.search(self.names_needing_cuda, name))

    def keeps_header(self, include: str) -> bool:
        return include.rsplit("/", 1)[-1] not in self.needs_cuda


@dataclass(frozen=True)
class Library(_Status):
    id: str
    name: str
    status: str
    rocm: str
    headers: tuple[str, ...]
    namespaces: tuple[str, ...]
    link: tuple[str, ...]
    python: tuple[str, ...]
    note: str
    source: str
    blocker: bool = False
    copy: Copy | None = None   # a vendor-neutral library a tree may carry (project/carried.py)


@dataclass(frozen=True)
class Package(_Status):
    name: str
    match: str
    imports: tuple[str, ...]
    status: str
    rocm: str
    note: str
    source: str
    blocker: bool = False


def normalize(name: str) -> str:
    """PEP 503: `Flash_Attn` and `flash-attn` are one distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Ecosystem:
    libraries: tuple[Library, ...]
    packages: tuple[Package, ...]

    @property
    def by_id(self) -> dict[str, Library]:
        return _index(self)[0]

    def header(self, include: str) -> Library | None:
        headers, prefixes = _index(self)[1:3]
        found = headers.get(include)
        if found is None:
            for prefix, library in prefixes:
                if include.startswith(prefix):
                    return library
        return found

    def header_keywords(self) -> tuple[frozenset[bytes], tuple[bytes, ...]]:
        """(every header name, every folder prefix) `header` knows, as bytes: an include it finds a
        library for is one of the names or starts with one of the prefixes (engine/keywords.py)."""
        index = _index(self)
        return frozenset(name.encode() for name in index[1]), tuple(p.encode() for p in index[8])

    def claims(self, *includes: str) -> bool:
        """Whether `header(include) is not None` for one of `includes`, asked of every tail of every
        tree path (own_headers.py): a lookup and one startswith over all prefixes, not a loop."""
        index = _index(self)
        headers, prefixes = index[1], index[8]
        return any(include in headers or include.startswith(prefixes) for include in includes)

    def link(self, name: str) -> Library | None:
        return _index(self)[3].get(name)

    def namespace(self, name: str) -> Library | None:
        """The library whose C++ namespace `name` is (`cuda`: libcu++)."""
        return _index(self)[7].get(name)

    def package(self, distribution: str) -> Package | None:
        exact, prefixes = _index(self)[4:6]
        key = normalize(distribution)
        found = exact.get(key)
        if found is None:
            for prefix, package in prefixes:
                if key.startswith(prefix):
                    return package
        return found

    def module(self, top_level: str) -> Package | None:
        return _index(self)[6].get(top_level)


@per_object
def _index(eco: Ecosystem):
    by_id = {lib.id: lib for lib in eco.libraries}
    headers, prefixes, links = {}, [], {}
    for lib in eco.libraries:
        for h in lib.headers:
            if h.endswith("/"):
                prefixes.append((h, lib))
            else:
                headers[h] = lib
        for name in lib.link:
            links[name] = lib
    prefixes.sort(key=lambda p: -len(p[0]))
    exact, pkg_prefixes, modules = {}, [], {}
    for pkg in eco.packages:
        if pkg.match == "prefix":
            pkg_prefixes.append((normalize(pkg.name), pkg))
        else:
            exact[normalize(pkg.name)] = pkg
        for m in pkg.imports:
            modules.setdefault(m, pkg)
    pkg_prefixes.sort(key=lambda p: -len(p[0]))
    namespaces = {ns: lib for lib in eco.libraries for ns in lib.namespaces}
    return by_id, headers, prefixes, links, exact, pkg_prefixes, modules, namespaces, tuple(p for p, _ in prefixes)


def load(path: Path) -> Ecosystem:
    """Read and validate the table: unknown fields, bad statuses and duplicates are errors."""
    try:
        data = toml_cache.load(path)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PortkitError(f"{path}: cannot read the ecosystem table: {exc}") from None
    libraries, packages = [], []
    for record in data.get("library", []):
        _check(path, record, LIBRARY_FIELDS, "id")
        libraries.append(Library(
            id=record["id"], name=record["name"], status=record["status"], rocm=record.get("rocm", ""),
            headers=tuple(record.get("headers", ())), namespaces=tuple(record.get("namespaces", ())),
            link=tuple(record.get("link", ())), python=tuple(record.get("python", ())),
            note=record.get("note", ""), source=record.get("source", ""),
            blocker=bool(record.get("blocker", False)), copy=_copy(path, record)))
    for record in data.get("package", []):
        _check(path, record, PACKAGE_FIELDS, "name")
        if record.get("match", "exact") not in ("exact", "prefix"):
            raise PortkitError(f"{path}: package {record['name']}: match must be exact or prefix")
        packages.append(Package(
            name=record["name"], match=record.get("match", "exact"), imports=tuple(record.get("imports", ())),
            status=record["status"], rocm=record.get("rocm", ""), note=record.get("note", ""),
            source=record.get("source", ""), blocker=bool(record.get("blocker", False))))
    for kind, keys in (("library", [l.id for l in libraries]), ("package", [p.name for p in packages])):
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            raise PortkitError(f"{path}: duplicate {kind} {', '.join(dupes)}")
    return Ecosystem(tuple(libraries), tuple(packages))


def _copy(path: Path, record: dict) -> Copy | None:
    copy = record.get("copy")
    if copy is None:
        return None
    if not isinstance(copy, dict) or set(copy) - COPY_FIELDS or not isinstance(copy.get("marker"), str) \
            or "/" not in copy["marker"]:
        raise PortkitError(f"{path}: {record['id']}: copy must be a table with a `marker` (a header under the "
                           f"library's own directory) and optionally {', '.join(sorted(COPY_FIELDS - {'marker'}))}")
    try:
        re.compile(copy.get("names_needing_cuda", ""))
    except re.error as exc:
        raise PortkitError(f"{path}: {record['id']}: copy.names_needing_cuda: {exc}") from None
    return Copy(copy["marker"], tuple(copy.get("needs_cuda", ())), copy.get("names_needing_cuda", ""))


def _check(path: Path, record: dict, allowed: set[str], key: str) -> None:
    unknown = set(record) - allowed
    if key not in record or "status" not in record:
        raise PortkitError(f"{path}: a record lacks `{key}` or `status`: {record}")
    if unknown:
        raise PortkitError(f"{path}: {record[key]}: unknown fields {sorted(unknown)}")
    if record["status"] not in STATUSES:
        raise PortkitError(f"{path}: {record[key]}: status must be one of {', '.join(STATUSES)}")


@lru_cache(maxsize=1)
def default() -> Ecosystem:
    from .mappings import tables_dir
    return load(tables_dir() / "ecosystem.toml")
