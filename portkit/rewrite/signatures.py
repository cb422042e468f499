"""The device functions HIP's headers define, by ROCm release (mappings/hip_device_functions.toml),
and the parameter-type spelling both the table and the scan compare by.

tools/gen_hip_device_functions.py writes the table from the headers with `param_types` below, so
a user's definition and HIP's compare equal exactly when their parameter types are spelt alike
after this normalisation (names, default values and spacing dropped, integer types canonical).
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache

from tree_sitter import Node

from ..core.errors import MappingError
from ..core.tables import toml_cache
from ..core.tables.mappings import Version, parse_version, tables_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TABLE = "hip_device_functions.toml"
# Spellings that do not change a parameter's type (HIP marks shuffle values MAYBE_UNDEF).
_DROPPED = frozenset({"MAYBE_UNDEF", "__restrict__", "__restrict", "restrict", "register"})
_INTEGER_WORDS = frozenset({"unsigned", "signed", "int", "long", "short", "char"})
_TOKEN = re.compile(r"[A-Za-z_]\w*|::|\S")


def param_types(function_declarator: Node) -> tuple[str, ...] | None:
    """('double*', 'double') for `f(double* address, double val)`; None when a parameter is
    variadic or unreadable (an ERROR inside it)."""
    params = function_declarator.child_by_field_name("parameters")
    if params is None:
        return None
    out = []
    for param in params.named_children:
        if param.type == "comment":
            continue
        if param.type not in ("parameter_declaration", "optional_parameter_declaration") or param.has_error:
            return None
        out.append(_spell(param))
    return tuple(t for t in out if t != "void") if out != ["void"] else ()


def _spell(param: Node) -> str:
    """The parameter's type as canonical text: its own text without the declared name and default."""
    data = param.text
    cut = []
    name = _declared_name(param.child_by_field_name("declarator"))
    if name is not None:
        cut.append((name.start_byte, name.end_byte))
    default = param.child_by_field_name("default_value")
    if default is not None:   # `= warpSize`: from the `=` on
        cut.append((default.start_byte - 1, param.end_byte))
    base = param.start_byte
    for start, end in sorted(cut, reverse=True):
        data = data[:start - base] + b" " + data[end - base:]
    text = data.decode("utf-8", "replace").split("=")[0] if default is not None else data.decode("utf-8", "replace")
    return canonical(text)


def _declared_name(node: Node | None) -> Node | None:
    while node is not None and node.type not in ("identifier", "field_identifier"):
        node = node.child_by_field_name("declarator")
    return node


def canonical(text: str) -> str:
    """`unsigned long long int  * p` -> `unsigned long long*`; `unsigned` -> `unsigned int`."""
    tokens = [t for t in _TOKEN.findall(text) if t not in _DROPPED]
    out: list[str] = []
    run: list[str] = []
    for token in tokens + [""]:
        if token in _INTEGER_WORDS:
            run.append(token)
            continue
        if run:
            out.append(_integer(run))
            run = []
        if token:
            out.append(token)
    spelt = ""
    for token in out:   # a space only between two words
        if spelt and (spelt[-1].isalnum() or spelt[-1] == "_") and (token[0].isalnum() or token[0] == "_"):
            spelt += " "
        spelt += token
    return spelt


def _integer(words: list[str]) -> str:
    longs = words.count("long")
    sign = "unsigned " if "unsigned" in words else ("signed " if "signed" in words and "char" in words else "")
    if "char" in words:
        return sign + "char"
    if "short" in words:
        return sign + "short"
    if longs:
        return sign + " ".join(["long"] * longs)
    return sign + "int"


@lru_cache(maxsize=1)
def _load() -> tuple[tuple[Version, ...], dict[str, dict[tuple[str, ...], frozenset[Version]]]]:
    path = tables_dir() / TABLE
    try:
        raw = toml_cache.load(path)
        releases = tuple(sorted(parse_version(r) for r in raw["releases"]))
        table: dict[str, dict[tuple[str, ...], frozenset[Version]]] = {}
        for entry in raw["function"]:
            params = tuple(entry["params"])
            table.setdefault(entry["name"], {})[params] = frozenset(parse_version(r) for r in entry["in"])
        return releases, table
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise MappingError(f"{path}: cannot read the HIP device-function table: {exc}") from None


@lru_cache(maxsize=1)
def names() -> frozenset[bytes]:
    """The names HIP defines device functions under, for the scan's cheap first test."""
    return frozenset(n.encode() for n in _load()[1])


def provided(name: str, params: tuple[str, ...], target: Version) -> Version | None:
    """The ROCm release whose headers define `name(params)` as the target would see them, or None.

    The target reads the newest recorded release at or below it (the oldest when it is older)."""
    releases, table = _load()
    at_or_below = [r for r in releases if r <= target]
    release = at_or_below[-1] if at_or_below else releases[0]
    return release if release in table.get(name, {}).get(params, ()) else None
