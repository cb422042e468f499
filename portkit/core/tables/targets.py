"""AMD GPU targets and the facts rules read about them (mappings/targets.toml): LDS, wavefront sizes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .mappings import tables_dir
from .records import table


@dataclass(frozen=True)
class Target:
    """One --offload-arch target."""

    name: str
    arch: str
    lds_bytes: int                 # the local data share one workgroup can address
    wavefront: tuple[int, ...]     # the wavefront sizes it runs


@lru_cache(maxsize=1)
def targets() -> dict[str, Target]:
    return {t.name: t for t in table(tables_dir() / "targets.toml", "target", Target, ("name",))}


def target(name: str) -> Target | None:
    """The record of an --offload-arch name (`gfx90a:xnack+` is gfx90a), or None when not listed."""
    return targets().get(name.split(":", 1)[0])


@lru_cache(maxsize=32)
def lds_bytes(names: tuple[str, ...]) -> int:
    """The LDS a workgroup can count on for every target in `names`: the smallest; a target the
    table does not list counts as the smallest the table has."""
    floor = min(t.lds_bytes for t in targets().values())
    return min((t.lds_bytes if (t := target(n)) is not None else floor for n in names), default=floor)
