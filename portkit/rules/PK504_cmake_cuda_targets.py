"""CMake targets, commands and properties that only exist for CUDA.

What it finds:
    `CUDA::` imported targets (`CUDA::cudart`, `CUDA::cublas` ...), `cuda_add_executable` /
    `cuda_add_library`, `CUDA_SEPARABLE_COMPILATION`, `CUDA_RESOLVE_DEVICE_SYMBOLS`,
    `$<COMPILE_LANGUAGE:CUDA>`, `CUDA_NVCC_FLAGS`, `CMAKE_CUDA_FLAGS`, `CMAKE_CUDA_STANDARD`.

Why it matters on AMD GPUs:
    None of these exist for HIP; each has a HIP-side spelling (`hip::device`, `roc::hipblas`,
    `-fgpu-rdc`, `$<COMPILE_LANGUAGE:HIP>`, `CMAKE_HIP_FLAGS`) that must be written in.

Example:
    target_link_libraries(app PRIVATE CUDA::cudart CUDA::cublas)

Instead:
    `target_link_libraries(app PRIVATE hip::device roc::hipblas)`; `-fgpu-rdc` for separable
    compilation; `CMAKE_HIP_FLAGS` / `CMAKE_HIP_STANDARD`.

Effort:
    Minutes per occurrence (counted with the build-system cost).
"""

import re

from ..engine.context import ScanContext
from ..engine.rule import define
from ..engine.textmatch import flag_matches

RULE = define(__doc__, code="PK504", name="cmake-cuda-targets", severity="medium", category="build",
              build_file=True)
FILE_KINDS = ("cmake",)
PATTERN = re.compile(r"\bCUDA::\w+|\bcuda_add_(?:executable|library)\b|\bCUDA_SEPARABLE_COMPILATION\b|"
                     r"\bCUDA_RESOLVE_DEVICE_SYMBOLS\b|\$<COMPILE_LANGUAGE:CUDA>|\bCUDA_NVCC_FLAGS\b|"
                     r"\bCMAKE_CUDA_(?:FLAGS|STANDARD|COMPILER|HOST_COMPILER)\w*", re.I)


def check_text(ctx: ScanContext) -> None:
    flag_matches(ctx, RULE, PATTERN, "{}: CUDA-only CMake; HIP has its own targets and flags")
