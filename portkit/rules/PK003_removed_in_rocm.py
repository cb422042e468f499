"""HIP had this name but removed it at or before the target ROCm release.

Reported by the converter (portkit/rewrite/), from the mapping tables.

What it finds:
    A CUDA name whose HIP counterpart was removed from ROCm at or before the --rocm target.

Why it matters on AMD GPUs:
    HIP no longer declares the name, so the converted code does not compile.

Example:
    cudaBindTexture(0, tex, d_data, bytes);   // texture references: removed from HIP

Instead:
    Use the replacement named in the ROCm release notes (for texture references: texture objects).

Effort:
    Hours per call site; a redesign when a whole feature (texture references) is gone.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK003", name="removed-in-rocm", severity="high", category="api",
              breaks_build=True, outcome="left")
