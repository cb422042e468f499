"""What the user asked for (Options): its own module, apart from the scan's per-file types in
context.py, so that what only builds settings (project/settings.py: the commit gate on a change with
no source to scan) does not load tree-sitter, the platform model and the finding store with them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..core.tables.mappings import Version
from ..core.tables.project_tables import ProjectTable


@dataclass(frozen=True)
class Options:
    """What the user asked for; the same options drive convert, audit, check and verify. What the
    project pipeline learns from the tree is apart, in ProjectFacts (project/facts.py)."""

    launch_syntax: str = "cuda"          # "cuda" keeps <<<>>>, "hip" writes hipLaunchKernelGGL
    rocm: Version | None = None          # the ROCm release the user named; None: none (`target` is concrete)
    prefer_roc: bool = False             # prefer rocBLAS-style names where the tables have them
    audit: bool = False                  # also run the audit rules (portkit/rules/), not only the converter
    offload_arch: tuple[str, ...] = ("gfx90a",)   # AMD GPU targets for build files (never from sm_XX)
    build_files: bool = True             # migrate CMake/Make/setup.py files (portkit/buildfiles/)
    builtins: str = "cuda"               # "cuda" keeps threadIdx.x, "hip" writes hipThreadIdx_x
    file_timeout: float = 60.0           # seconds one file may take (--file-timeout; 0: no limit)
    platform_model: bool = True          # False (--no-platform-model): every byte is CUDA for every build
    # verify's stand-in for a build-time hipify (commands/verify/build_hipify.py): the project's AMD
    # branches are converted too, as hipify-perl, blind to the preprocessor, converts every line
    hipify_amd_branches: bool = False
    defines: tuple[tuple[str, int | None], ...] = ()   # -D NAME[=VALUE] (None: a value we cannot read)
    undefines: tuple[str, ...] = ()      # -U NAME: with -D, branches false under them are left out
    rewrite_guards: bool = False         # --rewrite-guards: CUDA version guards get the AMD selector (rewrite/guards.py)
    polyfills: bool = False              # names the target lacks become polyfills (polyfills.py): convert, audit
    polyfill_header: str = "portkit_polyfills.h"    # where the header is, relative to the root
    fixes: frozenset[str] = frozenset()  # --fix FAMILY[,FAMILY]: the fix families applied (engine/fix.py; `warp`, `build`)
    active_only: bool = False            # --active-only: branches false under -D/-U are not converted
    finding_cap: int = 0                 # audit: findings of one rule kept per file (findingstore.py); 0: all
    port_style: str = ""                 # audit: one-way or both-vendors (settings.PORT_STYLES); "": by the tree
    # False: every source is parsed, even one that holds none of the passes' and rules' keywords
    # (commands/scan/prefilter.py); tests compare the two, users have no reason to turn it off
    prefilter: bool = True
    # the project's own mapping files, as read (core/tables/project_tables.py: db_for merges them)
    mappings: tuple[ProjectTable, ...] = ()

    @cached_property
    def target(self) -> Version:
        """The ROCm release the run targets, never None: `rocm`, or the newest the tables know. The one
        place "newest" is resolved (every scan, header and explanation reads this), once per settings;
        on first read, so that settings built for a change with no source to scan load no tables."""
        from ..core.tables.mappings import target_release
        return target_release(self.rocm)
