"""A choice the build migration made for you.

Reported by the build-file migration (portkit/buildfiles/), from mappings/build.toml.

What it finds:
    Each place where `portkit convert` changed a build file by a decision rather than a
    one-to-one rename: GPU architectures replaced by the targets given with `--offload-arch`
    (there is no mapping from sm_XX to an AMD chip), nvcc options dropped because clang does not
    need them (`--expt-relaxed-constexpr`, `-ccbin`), a CUDA version requirement dropped, the
    minimum CMake raised to 3.21 for the HIP language, CUDA toolkit paths removed.

Why it matters on AMD GPUs:
    The build works, but these lines deserve one look: the GPU targets decide which AMD GPUs
    the binary runs on (gfx90a is MI200, gfx942 MI300, gfx950 MI350/MI355).

Example:
    set(CMAKE_CUDA_ARCHITECTURES 80 90)   ->   set(CMAKE_HIP_ARCHITECTURES gfx90a)

Instead:
    Nothing to change if the choice is right; otherwise convert again with `--offload-arch`.

Effort:
    Minutes per build file.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK509", name="build-migration-choice", severity="info", category="build",
              build_file=True)
