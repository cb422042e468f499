"""The legacy built-in spellings table (mappings/builtins.toml): threadIdx -> hipThreadIdx_.

Read by rewrite/builtins.py (`convert --builtins hip`) and by convert's --help, which says what
the table records about the spellings' future: kept here, away from the scanner, so that building
the command line's parser (every command, `portkit check` at each commit) loads no grammar.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache

from ..errors import MappingError
from . import toml_cache
from .mappings import Version, format_version, parse_version, tables_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


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
        raw = toml_cache.load(path)
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
