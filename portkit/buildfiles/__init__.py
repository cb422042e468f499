"""Build-file migration: CMake, Makefiles and PyTorch extension builds, for `portkit convert`.

Each format has its own module (cmake.py, make.py, setup_py.py) that reads the file, finds
what reaches nvcc or names CUDA, and records byte edits and findings on the same ScanContext
as the source rewriters: PK508 for what it could not migrate, PK509 for each choice it made
for the user (GPU targets, dropped options). The nvcc flag translation (nvcc.py) and the table
behind it (mappings/build.toml, table.py) are shared by all three.
"""

from __future__ import annotations

from ..engine.context import ScanContext

FORMATS = ("cmake", "make", "python")


def migrate(ctx: ScanContext, kind: str) -> None:
    """Record the edits that port one build file of `kind` (one of FORMATS) to ROCm."""
    from . import cmake, make, setup_py
    from .table import table_for   # here: a scan of sources alone (the commit gate) never reads the build table
    module = {"cmake": cmake, "make": make, "python": setup_py}[kind]
    module.migrate(ctx, table_for(ctx.options.rocm))
