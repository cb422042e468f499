"""The units a parallel AMD implementation replaces: no units of the project's AMD build.

A tree that carries its own AMD copy of a CUDA file or folder (bitsandbytes' csrc/ops.hip beside
csrc/ops.cu, which its Makefile's hip target compiles; flash-attention's csrc/flash_attn_ck beside
csrc/flash_attn: project/amd_paths.py) builds the copy for AMD, and convert leaves the CUDA one as
it is. Compiled as HIP, such a unit stopped at 'cuda_runtime_api.h' and counted as a failing unit
of a port that builds (issue 53: "already builds for AMD" beside failing units). verify skips it
and says so, as it does a unit the project's CMake HIP branch leaves out.
"""

from __future__ import annotations

from ...project import amd_paths
from ...core.files import Skipped


def not_replaced(units: list, entries, skipped: list[Skipped]) -> list:
    """`units` but those a parallel AMD implementation replaces, each of which `skipped` learns."""
    amd = amd_paths.learn(entries)
    kept = []
    for unit in units:
        by = amd.replaced_by(unit.rel)
        if by:
            skipped.append(Skipped(unit.rel, f"not compiled: the project's AMD build compiles {by} in its place",
                                   False))
        else:
            kept.append(unit)
    return kept
