"""CMake looks for the CUDA toolkit.

What it finds:
    `find_package(CUDA)` (the deprecated FindCUDA module), `find_package(CUDAToolkit)` and
    `include(FindCUDA)`.

Why it matters on AMD GPUs:
    There is no CUDA toolkit on a ROCm machine: configuration fails, or silently drops the GPU
    code when the package is optional.

Example:
    find_package(CUDAToolkit REQUIRED)

Instead:
    `find_package(hip REQUIRED)` plus the ROCm library packages the code uses
    (`find_package(hipblas)`, `find_package(rocthrust)`, `find_package(hipcub)` ...).

Effort:
    An hour per CMake project (counted with the build-system cost).
"""

import re

from ..engine.context import ScanContext
from ..engine.rule import define
from ..engine.textmatch import flag_matches

RULE = define(__doc__, code="PK503", name="find-package-cuda", severity="medium", category="build",
              build_file=True)
FILE_KINDS = ("cmake",)
PATTERN = re.compile(r"\bfind_package\s*\(\s*(?:CUDA|CUDAToolkit)\b|\binclude\s*\(\s*FindCUDA\b", re.I)


def check_text(ctx: ScanContext) -> None:
    flag_matches(ctx, RULE, PATTERN, "{} needs the CUDA toolkit; use find_package(hip) and the ROCm libraries")
