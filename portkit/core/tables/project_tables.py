"""A project's own mapping files (`[tool.portkit] mappings`, `--mappings FILE`) merged over the shipped tables.

Teams wrap CUDA in their own names (`MY_CUDA_CHECK`, `myCudaAlloc`) and decide some conversions
themselves (`cudaMalloc` -> their allocator). Their files have the shipped format and are
checked by the same code (mappings.parse_table), so an error names their file and entry.

The files travel inside `Options.mappings` as their text, never as paths or global state: a
worker process of `convert -j N` gets the same records from the options it is handed, and
`db_for` caches one merged MappingDB per distinct content. The shipped tables' on-disk cache
(datacache.py) holds the shipped records only; a project's records are merged in memory on
every run, so no cached result can outlive a change to the project's file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Protocol

from ..errors import MappingError
from .mappings import Family, Mapping, MappingDB, default_db, parse_table


@dataclass(frozen=True)
class ProjectTable:
    """One project mapping file as read: its name in messages and listings, and its text."""

    shown: str        # as the configuration or the command line names it (team/mappings.toml)
    text: str
    given: bool = False   # given with --mappings (not named by the configuration)


class WithMappings(Protocol):
    """What db_for reads of a scan's Options (engine/options.py, which imports this module)."""

    @property
    def mappings(self) -> tuple[ProjectTable, ...]: ...


def db_for(options: WithMappings) -> MappingDB:
    """The tables a scan with `options` uses: the shipped ones, with the project's files over them."""
    return merged(options.mappings) if options.mappings else default_db()


@lru_cache(maxsize=8)
def merged(tables: tuple[ProjectTable, ...]) -> MappingDB:
    """The shipped tables with the records of `tables` (in order) added or put in place of the
    shipped record of the same CUDA name. Within the project's files a CUDA name may appear once,
    and a family name once; a family may not take a shipped family's name (its records would mix
    with NVIDIA's API in `portkit mappings`)."""
    base = default_db()
    names, headers = dict(base.names), dict(base.headers)
    shipped = {f.name for f in base.families}
    seen: dict[tuple[bool, str], str] = {}    # (header?, CUDA name) -> where the project has it
    families: list[Family] = []
    for table in tables:
        family, entries = parse_table(table.shown, table.text)
        _check_family(table.shown, family.name, shipped, families)
        families.append(replace(family, project=True))
        for index, m in enumerate(entries, start=1):
            where = f"{table.shown}: entry {index} ({m.cuda})"
            key = (m.kind == "header", m.cuda)
            if key in seen:
                raise MappingError(f"{where}: duplicate CUDA name {m.cuda!r} (also in {seen[key]})")
            seen[key] = where.split(" (", 1)[0]
            (headers if m.kind == "header" else names)[m.cuda] = replace(m, origin=table.shown)
    for m in names.values():
        for _, alias in m.arity_alias if m.origin else ():
            if alias not in names:
                raise MappingError(f"{m.origin}: {m.cuda}: arity_alias names {alias!r}, which no table has")
    db = MappingDB(names, headers, [*base.families, *families])
    db.newest = base.newest   # the default target is a ROCm release, never a project's hip_since
    return db


def _check_family(shown: str, name: str, shipped: set[str], earlier: list[Family]) -> None:
    if name in shipped:
        raise MappingError(f"{shown}: family {name!r} is a shipped family's name; give the project's "
                           f"records a family of their own (e.g. 'team')")
    for other in earlier:
        if other.name == name:
            raise MappingError(f"{shown}: family {name!r} is also the family of {other.path}")


def project_records(db: MappingDB) -> list[Mapping]:
    """The records that come from project mapping files, in file then name order."""
    return sorted((m for m in (*db.names.values(), *db.headers.values()) if m.origin),
                  key=lambda m: (m.origin, m.cuda))


def changed_names(old: str, new: str, shown: str) -> list[str]:
    """The CUDA names whose records differ between two texts of one mapping file, sorted (empty
    when either does not read: the change is reported without names)."""
    try:
        before = {m.cuda: m for m in parse_table(shown, old)[1]}
        after = {m.cuda: m for m in parse_table(shown, new)[1]}
    except MappingError:
        return []
    return sorted(n for n in before.keys() | after.keys() if before.get(n) != after.get(n))
