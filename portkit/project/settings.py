"""The one place a run's scan settings (`Options`) are built from what the user gave.

Every command builds its settings once, with `resolve`: a flag (an API argument) wins over the
project's configuration ([tool.portkit], portkit.toml: project/config.py), which wins over the
default, written here alone. `scan_options` (the public API's builder, called by `resolve` only)
validates the values (a bad one is a PortkitError: one line, exit 2). The settings keep the release
the user named (`rocm`, None: none) and carry the concrete target (`Options.target`, the newest
release the tables know when none was named), resolved there once.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from ..engine.options import Options
from ..core.errors import PortkitError
from ..core.tables.mappings import Version
from ..core.tables.project_tables import ProjectTable, merged
from . import mapping_files
from .config import Config, rocm_release

# the estimate's port styles ("": the tree's default: both vendors for a tree with its own build)
PORT_STYLES = ("", "one-way", "both-vendors")
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
    if settings.get("port_style", "") not in PORT_STYLES:
        raise PortkitError(f"--port-style must be 'one-way' or 'both-vendors', not {settings['port_style']!r}")
    options = Options(launch_syntax=launch_syntax, rocm=rocm_release(rocm), prefer_roc=prefer_roc,
                      offload_arch=offload_archs(offload_arch), build_files=build_files, builtins=builtins)
    options = replace(options, **settings) if settings else options
    if options.mappings:   # the project's mapping files are checked before any source is read
        merged(options.mappings)
    return options


def resolve(cfg: Config | None = None, *, rocm: str | Version | None = None, mappings: Sequence[Path] = (),
            tables: tuple[ProjectTable, ...] | None = None, port_style: str | None = None, **values) -> Options:
    """A command's settings, once: the flag-over-configuration merge of every command and of the API.
    `rocm` (--rocm) over the configuration's; the project's mapping files are the configuration's then
    `mappings` (--mappings), read before any other value is checked, unless `tables` gives them already
    read (check: the compared version's policy); `values`: scan_options' further values (audit=True,
    launch_syntax, polyfills ...); `port_style` (--port-style) over the configuration's `port-style`."""
    cfg = cfg or Config()
    if tables is None:
        tables = mapping_files.read(cfg, mappings)
    return scan_options(rocm=rocm or cfg.rocm, mappings=tables, port_style=port_style or cfg.port_style, **values)
