"""A compile error inside the headers of a library that has no drop-in on AMD (issue 48).

With its git submodules supplied, tiny-cuda-nn's CUTLASS units no longer stop at a missing
`cutlass/cutlass.h` (PK402 at include/tiny-cuda-nn/cutlass_matmul.h:39, the CUTLASS decision): they
reach CUTLASS itself, dependencies/cutlass/include/cutlass/complex.h:780 `unknown type name
'cuFloatComplex'` and cute/arch/copy_sm90.hpp's `__brkpt`, code written for NVIDIA GPUs only. No
finding is on those lines (convert converts a submodule like the rest of the tree, and the library's
own code is not the port's work: it is replaced), so they stayed unexplained. An error in a file
whose path ends in a header of such a library (mappings/ecosystem.toml's headers and prefixes, a
library mappings/rewrites.toml catalogues) is explained by that decision, PK402, naming the file.
"""

from __future__ import annotations

from ...core.tables import blockers, ecosystem
from ...engine.codes import Code
from .diagnostics import Located


def inside_blocked_library(error: Located) -> tuple[str, str, str] | None:
    """(code, subject, message) for an error in a rewrite-blocker library's own header, else None."""
    if error.rel is None:
        return None
    parts = error.rel.split("/")
    eco, catalogue = ecosystem.default(), blockers.default()
    for start in range(len(parts) - 1):     # a header path of two parts at least: `cutlass/complex.h`
        library = eco.header("/".join(parts[start:]))
        entry = catalogue.by_library(library.id) if library is not None else None
        if entry is not None:
            return Code.REWRITE_BLOCKER, library.name, (
                f"an error inside {library.name}'s own headers ({error.rel}): {entry.name} has no drop-in on AMD, "
                f"the code built on it moves to {entry.alternative} (the decision PK402 names where the project "
                f"includes it)")
    return None
