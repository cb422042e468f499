"""NVIDIA GPU architectures fixed in the build (`sm_XX` lists).

What it finds:
    `CMAKE_CUDA_ARCHITECTURES`, `CUDA_ARCHITECTURES`, `TORCH_CUDA_ARCH_LIST` and `CUDA_ARCH_LIST`
    in CMake, Makefiles, Python builds and shell scripts.

Why it matters on AMD GPUs:
    AMD targets are gfx names (gfx90a for MI200, gfx942 for MI300, gfx950 for MI350/MI355); no
    sm_XX number maps to one. The list must be chosen for the GPUs the team deploys.

Example:
    set(CMAKE_CUDA_ARCHITECTURES 80 90)

Instead:
    `set(CMAKE_HIP_ARCHITECTURES gfx90a gfx942)` (or `--offload-arch=` flags, `PYTORCH_ROCM_ARCH`
    for PyTorch extensions).

Effort:
    Minutes per occurrence.
"""

import re

from ..engine.context import ScanContext
from ..engine.rule import define
from ..engine.textmatch import flag_matches

RULE = define(__doc__, code="PK502", name="cuda-architectures", severity="medium", category="build",
              build_file=True)
FILE_KINDS = ("cmake", "make", "python", "shell")
PATTERN = re.compile(r"\b(?:CMAKE_CUDA_ARCHITECTURES|CUDA_ARCHITECTURES|TORCH_CUDA_ARCH_LIST|CUDA_ARCH_LIST)\b")


def check_text(ctx: ScanContext) -> None:
    flag_matches(ctx, RULE, PATTERN, "{} names NVIDIA architectures; AMD targets are gfx names (gfx90a, gfx942)")
