"""CUDA_VISIBLE_DEVICES selects GPUs.

What it finds:
    `CUDA_VISIBLE_DEVICES` in Python, shell scripts, Makefiles and CMake.

Why it matters on AMD GPUs:
    The HIP runtime honours CUDA_VISIBLE_DEVICES for compatibility, but ROCm's own variables
    are `HIP_VISIBLE_DEVICES` and `ROCR_VISIBLE_DEVICES` (the latter applies below HIP, to every
    ROCm runtime). Schedulers and containers on AMD clusters set those; scripts that only set
    the CUDA one can select the wrong GPUs or all of them.

Example:
    export CUDA_VISIBLE_DEVICES=0

Instead:
    Set `HIP_VISIBLE_DEVICES` (or `ROCR_VISIBLE_DEVICES`) on AMD machines, or both.

Effort:
    Minutes.
"""

import re

from ..engine.context import ScanContext
from ..engine.rule import define
from ..engine.textmatch import flag_matches

RULE = define(__doc__, code="PK507", name="cuda-visible-devices", severity="low", category="environment")
FILE_KINDS = ("python", "shell", "make", "cmake")
PATTERN = re.compile(r"\bCUDA_VISIBLE_DEVICES\b")


def check_text(ctx: ScanContext) -> None:
    flag_matches(ctx, RULE, PATTERN, "{}: ROCm uses HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES")
