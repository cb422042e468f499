"""A saved audit JSON read back as the typed records of report/audit_model.py (`portkit report`).

The records' own type hints say how each field reads, so this module names no field: a record
added to the model loads with no change here.
"""

from __future__ import annotations

import functools
import types
import typing
from dataclasses import MISSING, fields, is_dataclass

from .audit_model import Audit, JsonObject


def load(document: JsonObject) -> Audit:
    """A saved audit document as typed results. report/shape.py has checked what the HTML report
    reads; a field it does not check that is missing (a document saved by an older portkit) or
    of another container type reads as empty, as the renderers' defaults always did."""
    return load_record(Audit, document)


def load_record(cls: type, data: object) -> typing.Any:
    data = data if isinstance(data, dict) else {}
    values = {}
    for name, hint, required in _fields_of(cls):
        if name in data:
            values[name] = _value(hint, data[name])
        elif required:
            values[name] = _empty(hint)
    return cls(**values)


@functools.lru_cache(maxsize=None)
def _fields_of(cls: type) -> tuple[tuple[str, typing.Any, bool], ...]:
    """(name, type, required) of a record's fields, resolved once per class: get_type_hints for
    every finding of a 50,000-finding audit made `portkit report` 7.7 times slower."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name], f.default is MISSING) for f in fields(cls))


def _value(hint: typing.Any, data: object) -> typing.Any:
    """`data` read as `hint`: records and sequences rebuilt, everything else as the JSON has it."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = next(a for a in args if a is not type(None))   # an empty record ({}) is no record
        return None if data is None or (is_dataclass(inner) and not data) else _value(inner, data)
    if is_dataclass(hint):
        return load_record(hint, data)
    if origin is tuple:
        return tuple(_value(args[0], v) for v in data) if isinstance(data, list) else ()
    if origin is dict:
        return dict(data) if isinstance(data, dict) else {}
    return data


def _empty(hint: typing.Any) -> typing.Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return None
    if is_dataclass(hint):
        return load_record(hint, {})
    return {tuple: (), dict: {}}.get(origin, {str: "", int: 0, float: 0.0, bool: False}.get(hint))

