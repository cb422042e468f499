"""The tree's own headers that sit where a CUDA library's would (`csrc/cuda/scatter_cuda.h`).

pytorch_scatter keeps its CUDA declarations in csrc/cuda/ and includes them as
`#include "cuda/scatter_cuda.h"` from csrc/scatter.cpp; libcu++ claims every `cuda/...` header, so
the audit reported the project's own three headers as libcu++ (PK401, issue 53). The same holds
for a folder named `cub/`, `thrust/` or `nvtx3/` of the project's own. A header of the tree that the
include reaches from the including file's folder, or from a folder above it (where a build's -I
usually points: csrc/, the root), is the project's. A library copy the tree vendors keeps its
own layout (third_party/cutlass/include/cutlass/...), which no folder above a project source
holds, so its headers stay the library's (and project/carried.py keeps its own rules for those).
"""

from __future__ import annotations

from ..core.files import Entry
from ..core.tables import ecosystem


def learn(entries: list[Entry]) -> frozenset[str]:
    """The tree's files (paths from the root) whose path ends with a name a CUDA library's headers
    claim (ecosystem.toml): the only files an include of such a name could reach in the tree."""
    eco = ecosystem.default()
    found = set()
    for entry in entries:
        parts = entry.rel.split("/")
        # every tail of the path: `cuda/scatter_cuda.h` of csrc/cuda/scatter_cuda.h
        if eco.claims(*("/".join(parts[i:]) for i in range(len(parts)))):
            found.add(entry.rel)
    return frozenset(found)

