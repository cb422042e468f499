"""The one place a run's scan settings (`Options`) are built from what the user gave.

Flags, configuration values and API arguments all come through `scan_options`, which validates
them (a bad value is a PortkitError: one line, exit 2) and resolves nothing the tables decide
later: `rocm=None` stays "the newest release the tables know" (mappings.target_release).
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..engine.context import Options
from ..core.errors import PortkitError
from ..tables.mappings import Version, parse_version

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


def rocm_release(rocm: str | Version | None) -> Version | None:
    """--rocm X.Y (or a release already parsed); None: the newest the tables know."""
    if rocm is None or isinstance(rocm, tuple):
        return rocm
    try:
        return parse_version(rocm) if rocm else None
    except ValueError as exc:
        raise PortkitError(f"--rocm: {exc}") from None


def scan_options(launch_syntax: str = "cuda", rocm: str | Version | None = None, prefer_roc: bool = False,
                 offload_arch: str | list[str] | None = None, build_files: bool = True,
                 builtins: str = "cuda", **settings) -> Options:
    """Options from user-level values (flags, configuration, API arguments); bad values raise
    PortkitError. `settings` are further Options fields given as they are (audit=True, polyfills ...)."""
    if launch_syntax not in ("cuda", "hip"):
        raise PortkitError(f"--launch-syntax must be 'cuda' or 'hip', not {launch_syntax!r}")
    if builtins not in ("cuda", "hip"):
        raise PortkitError(f"--builtins must be 'cuda' or 'hip', not {builtins!r}")
    options = Options(launch_syntax=launch_syntax, rocm=rocm_release(rocm), prefer_roc=prefer_roc,
                      offload_arch=offload_archs(offload_arch), build_files=build_files, builtins=builtins)
    return replace(options, **settings) if settings else options
