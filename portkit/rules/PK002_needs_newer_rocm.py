"""HIP has this name only in a newer ROCm release than the target.

Reported by the converter (portkit/rewrite/), from the mapping tables.

What it finds:
    A CUDA name whose HIP counterpart first appears in a ROCm release later than the one given
    with --rocm (default: the newest release the tables know). It is left as it is.

Why it matters on AMD GPUs:
    The converted file would not compile against the ROCm release the team actually deploys.

Example:
    cudaMallocAsync(&p, bytes, stream);   // hipMallocAsync needs ROCm 5.3, target is 5.2

Instead:
    Raise the target ROCm release, or rewrite the call with an API the target release has.

Effort:
    An hour or two per call site when an older API does the same job.
"""

from ._rule import define

RULE = define(__doc__, code="PK002", name="needs-newer-rocm", severity="high", category="api",
              breaks_build=True)
