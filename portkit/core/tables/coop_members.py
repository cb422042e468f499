"""Members of the cooperative-groups types and the ROCm release that has each (mappings/coop_members.toml)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..errors import MappingError
from .mappings import Version, parse_version, tables_dir
from .records import table

GROUPS = ("thread_block", "grid_group", "thread_block_tile", "coalesced_group")


@dataclass(frozen=True)
class Member:
    """`name` of each group in `groups`, in HIP from `hip_since` ("" when no release has it)."""

    name: str
    groups: tuple[str, ...]
    hip_since: str
    instead: str

    @property
    def since(self) -> Version | None:
        return parse_version(self.hip_since) if self.hip_since else None


@lru_cache(maxsize=1)
def members() -> tuple[Member, ...]:
    rows = table(tables_dir() / "coop_members.toml", "member", Member, ("name", "groups"))
    for row in rows:
        unknown = set(row.groups) - set(GROUPS)
        if unknown or not row.groups:
            raise MappingError(f"mappings/coop_members.toml: {row.name}: groups must be some of {', '.join(GROUPS)}")
        if row.hip_since:
            try:
                parse_version(row.hip_since)
            except ValueError as exc:
                raise MappingError(f"mappings/coop_members.toml: {row.name}: hip_since: {exc}") from None
    return rows


def member(name: str, group: str) -> Member | None:
    """The record of `group.name()`, or None when the table does not list it."""
    return _by_key().get((name, group))


@lru_cache(maxsize=1)
def _by_key() -> dict[tuple[str, str], Member]:
    return {(m.name, g): m for m in members() for g in m.groups}


def names() -> tuple[str, ...]:
    """The member names some release lacks for some group: the ones a rule must look at."""
    return tuple(sorted({m.name for m in members() if m.since is None or m.since > (4, 5, 0)}))
