"""Typed records from the small data tables (mappings/*.toml that are not API tables).

Each table's loader names its records as frozen dataclasses; `record` builds one from a TOML table,
and an unknown key, a missing key or a value of the wrong type is a MappingError that names the
file and the entry, as mappings.py does for the API tables.
"""

from __future__ import annotations

import sys
from dataclasses import MISSING, fields
from pathlib import Path

from ..errors import MappingError
from . import toml_cache

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# the field annotations (strings, under `from __future__ import annotations`) this module checks
_SCALARS = {"str": str, "bool": bool, "int": int, "float": (int, float)}


def shown(path: Path) -> str:
    """How messages name a table: mappings/<file>."""
    return f"mappings/{path.name}"


def read(path: Path) -> dict:
    """The TOML document at `path`; an unreadable or malformed file is a MappingError naming it."""
    try:
        return toml_cache.load(path)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MappingError(f"{shown(path)}: {exc}") from None


def check_keys(where: str, raw: object, required=(), optional=()) -> dict:
    """`raw` as a record with exactly these keys: an unknown or missing one is an error at `where`."""
    if not isinstance(raw, dict):
        raise MappingError(f"{where}: not a record")
    unknown = set(raw) - set(required) - set(optional)
    if unknown:
        raise MappingError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    for key in required:
        if key not in raw:
            raise MappingError(f"{where}: missing key {key!r}")
    return raw


def record(cls, where: str, raw: object, **checked):
    """An instance of the dataclass `cls` from the table `raw`: its fields are the keys, those
    without a default are required. Lists become tuples; `checked` holds values the caller has
    validated and converted itself (ranges, versions), which replace the raw ones."""
    known = [f for f in fields(cls) if f.init]
    required = [f.name for f in known if f.default is MISSING and f.default_factory is MISSING]
    check_keys(where, raw, required, [f.name for f in known])
    values = {}
    for f in known:
        if f.name not in raw or f.name in checked:
            continue
        value = raw[f.name]
        expected = _SCALARS.get(f.type) if isinstance(f.type, str) else None
        item = _list_of(f.type)
        if item:
            if not isinstance(value, list) or not all(_is(v, _SCALARS[item]) for v in value):
                raise MappingError(f"{where}: {f.name!r} must be a list of {item} values")
            value = tuple(value)
        elif expected is not None and not _is(value, expected):
            raise MappingError(f"{where}: {f.name!r} must be of type {f.type}")
        values[f.name] = value
    values.update(checked)
    return cls(**values)


def _list_of(annotation: object) -> str:
    """"str" for a `tuple[str, ...]` field (lists in TOML), "" for anything else."""
    if isinstance(annotation, str) and annotation.startswith("tuple[") and annotation.endswith(", ...]"):
        item = annotation[len("tuple["):-len(", ...]")]
        return item if item in _SCALARS else ""
    return ""


def _is(value: object, expected) -> bool:
    """isinstance, except that a TOML boolean is no number."""
    return isinstance(value, expected) and (expected is bool or not isinstance(value, bool))


def table(path: Path, section: str, cls, key: tuple[str, ...]) -> tuple:
    """The `[[section]]` records of a table file (`schema = 1`, an optional `source`), as `cls`;
    two records with the same `key` fields are an error."""
    doc = read(path)
    check_keys(shown(path), doc, ("schema", section), ("source",))
    if doc["schema"] != 1:
        raise MappingError(f"{shown(path)}: unsupported schema {doc['schema']!r} (this portkit reads 1)")
    if not isinstance(doc[section], list):
        raise MappingError(f"{shown(path)}: {section!r} must be a list of records ([[{section}]])")
    out, seen = [], set()
    for n, raw in enumerate(doc[section], start=1):
        name = raw.get(key[0], "?") if isinstance(raw, dict) else "?"
        where = f"{shown(path)}: {section} {n} ({name})"
        entry = record(cls, where, raw)
        ident = tuple(getattr(entry, k) for k in key)
        if ident in seen:
            raise MappingError(f"{where}: duplicate {', '.join(key)}")
        seen.add(ident)
        out.append(entry)
    return tuple(out)


def per_object(build):
    """Cache `build(table)` for a table object by the object itself, as lru_cache would by its hash.
    A frozen dataclass's hash is computed again from every field at each call: through
    lru_cache, the blocker catalogue's index lookups hashed it 3 million times (6.7 s of an audit
    of ggml). The object is kept with its value, so its id names it for as long as it is cached."""
    import functools
    cache: dict[int, tuple[object, object]] = {}

    @functools.wraps(build)
    def wrapper(obj):
        hit = cache.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = build(obj)
        if len(cache) >= 8:
            cache.clear()
        cache[id(obj)] = (obj, value)
        return value
    return wrapper

