"""The one place a run's scan settings (`Options`) are built from what the user gave.

Flags, configuration values and API arguments all come through `scan_options`, which validates
them (a bad value is a PortkitError: one line, exit 2) and resolves nothing the tables decide
later: `rocm=None` stays "the newest release the tables know" (mappings.target_release).
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..engine.options import Options
from ..core.errors import PortkitError
from ..tables.mappings import Version, parse_version
from ..tables.project_tables import merged

# An AMD GPU target as clang's --offload-arch takes it: gfx90a, gfx942:xnack-, gfx1100, gfx9-generic.
OFFLOAD_ARCH = re.compile(r"gfx[0-9a-f]{3,4}(?::(?:sramecc|xnack)[+-])*|gfx[0-9]+(?:-[0-9]+)*-generic")


def offload_archs(value: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """GPU targets from "gfx90a,gfx942" (or a list of such strings); bad names raise PortkitError."""
    if value is None:
        return Options().offload_arch
    items = [value] if isinstance(value, str) else list(value)
    archs = [a.strip() for item in items for a in item.replace(";", ",").split(",") if a.strip()]
    for arch in archs:
        if not OFFLOAD_ARCH.fullmatch(arch):
            raise PortkitError(f"--offload-arch: {arch!r} is not an AMD GPU target (e.g. gfx90a for MI200, "
                               "gfx942 for MI300, gfx950 for MI350/MI355, gfx1100 for Radeon RX 7900)")
    if not archs:
        raise PortkitError("--offload-arch: give at least one AMD GPU target, e.g. gfx90a")
    return tuple(dict.fromkeys(archs))


# The oldest release a port can target: ROCm before 5.0 is out of AMD's support, and the tables'
# records before it are history (when a name appeared), not a target anyone builds for.
OLDEST_TARGET = (5, 0)


def known_releases() -> list[tuple[int, int]]:
    """The ROCm minor releases --rocm accepts: from OLDEST_TARGET to the newest the tables know,
    as the tables name them (every release a HIP name first appeared in; 5.0 ... 7.2 today)."""
    from ..tables.mappings import default_db
    db = default_db()
    seen = {m.hip_since[:2] for m in (*db.names.values(), *db.headers.values()) if m.hip_since}
    return sorted(v for v in seen if v >= OLDEST_TARGET)


def rocm_release(rocm: str | Version | None, given: str = "--rocm") -> Version | None:
    """--rocm X.Y (or a release already parsed); None: the newest the tables know. A release the
    tables do not know (3.0, 6.9, 99.1) is refused with the list of those they do: targeting one
    would silently convert for a release nobody ships. A later release of the newest major (7.3
    when the tables end at 7.2) is accepted: ROCm ships them more often than portkit's tables.
    `given` names where the value comes from in messages (the configuration: "FILE: `rocm`")."""
    if rocm is None or isinstance(rocm, tuple):
        return rocm
    try:
        version = parse_version(rocm) if rocm else None
    except ValueError as exc:
        raise PortkitError(f"{given}: {exc}") from None
    if version is not None:
        known = known_releases()
        newest = known[-1]
        # a newer release of the newest major is one the tables predate: converted as of the newest
        if version[:2] not in known and not (version[0] == newest[0] and version[:2] > newest):
            raise PortkitError(f"{given} {rocm}: not a ROCm release portkit knows (known: "
                               f"{', '.join(f'{a}.{b}' for a, b in known)}, or a {newest[0]}.x after "
                               f"{newest[0]}.{newest[1]})")
    return version


def scan_options(launch_syntax: str = "cuda", rocm: str | Version | None = None, prefer_roc: bool = False,
                 offload_arch: str | list[str] | None = None, build_files: bool = True,
                 builtins: str = "cuda", **settings) -> Options:
    """Options from user-level values (flags, configuration, API arguments); bad values raise
    PortkitError. `settings` are further Options fields given as they are (audit=True, polyfills ...,
    mappings: the project's mapping files as project/mapping_files.py reads them)."""
    if launch_syntax not in ("cuda", "hip"):
        raise PortkitError(f"--launch-syntax must be 'cuda' or 'hip', not {launch_syntax!r}")
    if builtins not in ("cuda", "hip"):
        raise PortkitError(f"--builtins must be 'cuda' or 'hip', not {builtins!r}")
    options = Options(launch_syntax=launch_syntax, rocm=rocm_release(rocm), prefer_roc=prefer_roc,
                      offload_arch=offload_archs(offload_arch), build_files=build_files, builtins=builtins)
    options = replace(options, **settings) if settings else options
    if options.mappings:   # the project's mapping files are checked before any source is read
        merged(options.mappings)
    return options
