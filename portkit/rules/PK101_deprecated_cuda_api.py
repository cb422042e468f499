"""A CUDA API that NVIDIA has deprecated or removed.

Reported by the converter in audit mode, from the `cuda_deprecated`/`cuda_removed` fields of the
mapping tables.

What it finds:
    Uses of CUDA functions, types and enums that the CUDA toolkit deprecates or has removed
    (texture references, cudaThreadSynchronize, the legacy cuSPARSE API ...).

Why it matters on AMD GPUs:
    HIP mirrors these old APIs late or not at all, and often marks them deprecated too; a port is
    the cheapest moment to move to the current API on both vendors.

Example:
    cudaThreadSynchronize();   // deprecated since CUDA 10

Instead:
    Move to the API NVIDIA names as the replacement (cudaDeviceSynchronize, texture objects, the
    generic cuSPARSE API), then convert.

Effort:
    Usually under an hour per call site.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK101", name="deprecated-cuda-api", severity="low", category="api")
