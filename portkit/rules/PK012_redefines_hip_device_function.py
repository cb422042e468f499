"""A __device__ function that HIP's headers already define with the same parameter types.

Reported by the converter (portkit/rewrite/strictness.py), from mappings/hip_device_functions.toml.

What it finds:
    A user-written definition of a device function HIP provides: `atomicAdd(double*, double)`
    written for GPUs before sm_60, `atomicMax(double*, double)` and `atomicMin(float*, float)`
    (CUDA has none, HIP has), shuffle wrappers named `__shfl_down`, `make_float4` helpers.

Why it matters on AMD GPUs:
    hip_runtime.h defines these functions inline, so hip-clang stops with "redefinition of
    'atomicMax'", where nvcc compiled the user's version. HIP's versions do the same job, in
    hardware where the GPU can.

Example:
    __device__ double atomicMax(double* address, double val) { /* atomicCAS loop */ }

Instead:
    Keep the definition for nvcc only: `#if !defined(__HIP_PLATFORM_AMD__)` ... `#endif`
    around it (the converter adds the guard where the definition has lines of its own at file
    or extern "C" level). Check that HIP's version has the semantics the callers expect.

Effort:
    Minutes per function to check that HIP's version behaves alike.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK012", name="redefines-hip-device-function", severity="high", category="language",
              breaks_build=True, gpu_only=True)
