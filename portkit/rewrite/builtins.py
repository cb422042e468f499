"""threadIdx.x -> hipThreadIdx_x, for `portkit convert --builtins hip` (mappings/builtins.toml).

Only `NAME.x/.y/.z` where NAME is the bare built-in is rewritten: a member called threadIdx
(`cfg.threadIdx.x`) is a field, not an identifier, and a whole `threadIdx` (`dim3 t = threadIdx`)
has no legacy spelling and stays.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache

from tree_sitter import Node

from ..core.errors import MappingError
from ..tables.mappings import Version, format_version, parse_version, tables_dir
from ..engine.context import ScanContext, View
from ..core.edits import EditKind

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

COMPONENTS = (b"x", b"y", b"z")


@dataclass(frozen=True)
class Builtin:
    cuda: str
    hip: str                              # prefix: hipThreadIdx_ + x
    hip_deprecated: Version | None = None
    hip_removed: Version | None = None


@lru_cache(maxsize=1)
def _load() -> tuple[dict[bytes, Builtin], tuple[str, ...]]:
    path = tables_dir() / "builtins.toml"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        out = {}
        for entry in raw["builtin"]:
            versions = {k: parse_version(entry[k]) for k in ("hip_deprecated", "hip_removed") if entry.get(k)}
            out[entry["cuda"].encode()] = Builtin(entry["cuda"], entry["hip"], **versions)
        return out, tuple(raw.get("checked", ()))
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise MappingError(f"{path}: cannot read the built-in table: {exc}") from None


def table() -> dict[bytes, Builtin]:
    """The built-ins by their CUDA name."""
    return _load()[0]


def help_text() -> str:
    """What --help says about the legacy spellings' future, from the table."""
    builtins = table().values()
    notes = [f"{b.cuda}: deprecated in ROCm {format_version(b.hip_deprecated)}" for b in builtins if b.hip_deprecated]
    notes += [f"{b.cuda}: removed in ROCm {format_version(b.hip_removed)}" for b in builtins if b.hip_removed]
    if notes:
        return "; ".join(notes)
    checked = ", ".join(_load()[1])
    return f"the tables record no ROCm release that deprecates or drops them (checked: ROCm {checked})"


def handle(ctx: ScanContext, view: View, node: Node) -> None:
    """`threadIdx.x` (the identifier node `threadIdx` of a field expression) -> `hipThreadIdx_x`."""
    builtin = table().get(node.text)
    parent = node.parent
    if builtin is None or parent is None or parent.type != "field_expression":
        return
    argument = parent.child_by_field_name("argument")
    field = parent.child_by_field_name("field")
    operator = parent.child_by_field_name("operator")
    if argument is None or argument.id != node.id or field is None or field.text not in COMPONENTS:
        return
    if operator is not None and operator.text != b".":
        return
    ctx.edit(view.start(parent), view.end(parent), f"{builtin.hip}{field.text.decode()}".encode(),
             kind=EditKind.BUILTIN)
