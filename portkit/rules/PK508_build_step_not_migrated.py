"""A build step the conversion could not migrate.

Reported by the build-file migration (portkit/buildfiles/), from mappings/build.toml.

What it finds:
    Parts of CMake files, Makefiles and PyTorch extension builds that `portkit convert` left as
    they were: nvcc options with no hipcc counterpart (`-Xptxas`, `-maxrregcount`, `-dlink`),
    options it does not know, CUDA libraries without a ROCm library (`CUDA::cupti`, NVML,
    NPP), FindCUDA commands and CUDA toolkit variables, `TORCH_CUDA_ARCH_LIST`.

Why it matters on AMD GPUs:
    hipcc is clang: it rejects options it does not know, and a library or toolkit path that
    does not exist on a ROCm machine fails the build or the link.

Example:
    NVCCFLAGS += -Xptxas -v -maxrregcount=64

Instead:
    Remove the option or use clang's way of doing the same thing (`__launch_bounds__` for
    register limits, `-Rpass-analysis=kernel-resource-usage` for register reports); replace the
    library, or keep that part on NVIDIA hardware.

Effort:
    Minutes to an hour per line.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK508", name="build-step-not-migrated", severity="medium", category="build",
              build_file=True, build_left=True)
