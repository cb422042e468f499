"""What the mapping tables know: coverage per family, one record as plain data, lookups.

Feeds `portkit mappings` (report/mappings.py renders it) and docs/mappings.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from .mappings import VERSION_FIELDS, Mapping, MappingDB, format_version


@dataclass(frozen=True)
class FamilyCoverage:
    family: str
    title: str
    known: int
    with_hip: int
    with_roc: int
    unsupported: int
    partial: int
    file: str = ""     # the project mapping file of a project's own family ("": shipped)


def _count(family: str, title: str, records: list[Mapping], file: str = "") -> FamilyCoverage:
    return FamilyCoverage(
        family=family, title=title, known=len(records), file=file,
        with_hip=sum(1 for m in records if m.hip),
        with_roc=sum(1 for m in records if m.roc),
        unsupported=sum(1 for m in records if m.status == "unsupported"),
        partial=sum(1 for m in records if m.status == "partial"),
    )


def all_records(db: MappingDB) -> list[Mapping]:
    """Every record, ordered by family then CUDA name (stable for exports and diffs)."""
    return sorted((*db.names.values(), *db.headers.values()), key=lambda m: (m.family, m.cuda))


def by_family(db: MappingDB) -> dict[str, list[Mapping]]:
    """Records grouped by family, families and records in name order."""
    groups: dict[str, list[Mapping]] = {}
    for m in all_records(db):
        groups.setdefault(m.family, []).append(m)
    return groups


def titles(db: MappingDB) -> dict[str, str]:
    return {f.name: f.title for f in db.families}


def coverage(db: MappingDB) -> tuple[list[FamilyCoverage], FamilyCoverage]:
    """Per-family coverage and the total."""
    groups, names = by_family(db), titles(db)
    files = {f.name: f.path for f in db.families if f.project}
    rows = [_count(name, names.get(name, name), records, files.get(name, "")) for name, records in groups.items()]
    return rows, _count("total", "All families", [m for records in groups.values() for m in records])


def record(m: Mapping) -> dict:
    """One record as JSON-ready data; versions as "X.Y[.Z]", absent fields left out."""
    out: dict = {"cuda": m.cuda, "family": m.family}
    if m.origin:   # a project mapping file's record (core/tables/project_tables.py)
        out["file"] = m.origin
    out.update(kind=m.kind, status=m.status)
    if m.hip:
        out["hip"] = m.hip
    if m.roc:
        out["roc"] = m.roc
    for name in VERSION_FIELDS:
        value = getattr(m, name)
        if value is not None:
            out[name] = format_version(value)
    if m.symbol_arg:
        out["symbol_arg"] = m.symbol_arg
    if m.drop_args:
        out["drop_args"] = list(m.drop_args)
    for name in ("cast_args", "arity_alias", "insert_args", "default_args", "replace_args"):
        if getattr(m, name):
            out[name] = {str(k): v for k, v in getattr(m, name)}
    if m.move_args:
        out["move_args"] = [{"from": f, "before": b, "count": c} for f, b, c in m.move_args]
    if m.copy_args:
        out["copy_args"] = [{"from": f, "before": b} for f, b in m.copy_args]
    if m.args_for != "hip":
        out["args_for"] = m.args_for
    if m.note:
        out["note"] = m.note
    return out


def lookup(db: MappingDB, name: str) -> list[Mapping]:
    """Records for a CUDA name or header; failing that, the CUDA names that become `name`."""
    found = db.names.get(name) or db.headers.get(name)
    if found:
        return [found]
    return [m for m in all_records(db) if name in (m.hip, m.roc)]
