"""nvcc and its flags in build files.

What it finds:
    nvcc invocations and nvcc-only flags (`-arch=sm_XX`, `-gencode`, `--generate-code`,
    `-Xptxas`, `-Xcompiler`, `--use_fast_math`, `-rdc=true`, `--expt-relaxed-constexpr`,
    `--expt-extended-lambda`, `-maxrregcount`, `-lineinfo`) in Makefiles, CMake and Python
    builds (`extra_compile_args`).

Why it matters on AMD GPUs:
    hipcc (clang) rejects or ignores nvcc's flags. Each has a clang spelling or none:
    `--offload-arch=gfx90a`, `-ffast-math`, `-fgpu-rdc`, `-Xcompiler` dropped, `-Xptxas` and
    `-maxrregcount` without counterpart (launch bounds instead).

Example:
    NVCCFLAGS = -O3 -arch=sm_80 --use_fast_math -Xptxas -v

Instead:
    `HIPFLAGS = -O3 --offload-arch=gfx90a -ffast-math`; PyTorch extensions: keep the `nvcc` key
    (PyTorch for ROCm passes it to hipcc) but remove nvcc-only flags.

Effort:
    Minutes per line (counted with the build-system cost).
"""

import re

from ..engine.context import ScanContext
from ..engine.rule import define
from ..engine.textmatch import flag_matches

RULE = define(__doc__, code="PK505", name="nvcc-flags", severity="medium", category="build",
              build_file=True)
FILE_KINDS = ("cmake", "make", "python", "shell")
NVCC_WORD = r"(?<![\w/.-])nvcc(?![\w.-]|['\"]\s*:)"
FLAGS = (r"-arch[= ]+(?:sm|compute)_\d+\w*|--gpu-architecture[= ]\S+|-gencode\b|--generate-code\b|-Xptxas\b|"
         r"--ptxas-options\b|-Xcompiler\b|--compiler-options\b|-?-use_fast_math\b|-rdc[= ]true|"
         r"--relocatable-device-code\b|--expt-relaxed-constexpr\b|--expt-extended-lambda\b|-maxrregcount\b|"
         r"(?<![\w-])-lineinfo\b")
PATTERN = re.compile(f"{NVCC_WORD}|{FLAGS}")
# In Python only the flags count: the word nvcc there is usually PyTorch's extra_compile_args key
# or prose in a string.
FLAGS_ONLY = re.compile(FLAGS)


def check_text(ctx: ScanContext) -> None:
    pattern = FLAGS_ONLY if ctx.metrics.kind == "python" else PATTERN
    flag_matches(ctx, RULE, pattern, "nvcc-only: {}; hipcc (clang) spells these differently or not at all")
