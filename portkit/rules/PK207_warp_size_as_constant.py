"""`warpSize` used where C++ needs a compile-time constant.

What it finds:
    `warpSize` in an array size, a `static_assert`, a `case` label, an enumerator, a template
    argument or a `constexpr` variable. Only deep mode (`--engine clang`) reports it: it takes
    the compiler's view of the expression to know that a constant is required there.

Why it matters on AMD GPUs:
    The warp size is 32 or 64 depending on the AMD GPU, so from ROCm 7.0 HIP's `warpSize` is a
    run-time value and no longer `constexpr`: code that sized arrays or templates with it stops
    compiling. clang's CUDA headers (and HIP before 7.0) declared it a constant, so such code
    compiled there.

Example:
    __shared__ float partial[warpSize];

Instead:
    Size by the largest warp (`64`, or the number of warps of the largest block) and index with
    the run-time `warpSize`, or pass the warp size as a template parameter chosen per target
    (`__AMDGCN_WAVEFRONT_SIZE` is deprecated in ROCm 7 as well).

Effort:
    Under an hour per site when a bound suffices; a day when a template must be instantiated for
    both warp sizes.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK207", name="warp-size-as-constant", severity="high", category="warp",
              breaks_build=True, deep_only=True, gpu_only=True)
