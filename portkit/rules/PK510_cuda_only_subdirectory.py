"""A CUDA-only library the project builds inside its own tree.

Reported by the build-file migration (portkit/buildfiles/cmake_packages.py), from
mappings/build.toml [cmake] cuda_only_subdirectories.

What it finds:
    `add_subdirectory()` of a folder that holds a CUDA-only library the project carries, as a
    copy or a git submodule: CUTLASS, CUB, Thrust, CCCL, libcu++, NVBench.

Why it matters on AMD GPUs:
    The converted CMake enables HIP, not CUDA: that subdirectory either stops the configure
    (it enables CUDA itself) or builds CUDA code nothing can compile. `portkit convert` does not
    convert a library the project does not own; its ROCm counterpart is a package to find.

Example:
    add_subdirectory(third_party/cutlass)

Instead:
    Use the ROCm library named in the finding (hipCUB, rocThrust: `find_package(hipcub)`,
    `find_package(rocthrust)`), or, for CUTLASS and NVBench, which have no ROCm port, rewrite
    the code that uses them (composable_kernel or hipBLASLt for GEMMs) and build the folder
    only for NVIDIA.

Effort:
    Hours to days: a library swap, or a rewrite where ROCm has none.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK510", name="cuda-only-subdirectory", severity="high", category="build",
              build_file=True)   # not build_left: its decision item prices the swap (effort.toml [decision])
