"""A PyTorch C++/CUDA extension built with CUDAExtension.

What it finds:
    `CUDAExtension(...)` in setup.py and other Python build scripts (torch.utils.cpp_extension).

Why it matters on AMD GPUs:
    PyTorch for ROCm builds a CUDAExtension by running its own hipify over the sources and
    compiling them with hipcc, so the call itself can stay. What breaks is everything the
    hipify step does not fix: nvcc-only `extra_compile_args` (reported as PK505), inline PTX,
    warp-size assumptions and CUDA-only libraries in the kernels (reported in the sources).

Example:
    CUDAExtension("my_ext._C", ["csrc/ops.cu"], extra_compile_args={"nvcc": ["-arch=sm_80"]})

Instead:
    Keep CUDAExtension, make `extra_compile_args["nvcc"]` portable (no -arch, no -Xptxas), set
    `PYTORCH_ROCM_ARCH` for the AMD targets, and build and test the extension against a ROCm
    PyTorch wheel.

Effort:
    A day or two per extension for the build and its tests (in the effort table).
"""

import re

from ..engine.context import ScanContext
from ..engine.rule import define
from ..engine.textmatch import flag_matches

RULE = define(__doc__, code="PK506", name="torch-cuda-extension", severity="medium", category="build",
              build_file=True)
FILE_KINDS = ("python",)
PATTERN = re.compile(r"\bCUDAExtension\s*\(")


def check_text(ctx: ScanContext) -> None:
    before = len(ctx.findings)
    flag_matches(ctx, RULE, PATTERN, "PyTorch CUDA extension ({}): built by PyTorch's hipify on ROCm; "
                                     "nvcc-only arguments and kernel code need review")
    if len(ctx.findings) > before:
        ctx.metrics.cuda_extension = True
