"""A <<<...>>> launch that --launch-syntax hip could not rewrite.

Reported by the converter (portkit/rewrite/), from the mapping tables.

What it finds:
    With --launch-syntax hip, a kernel launch whose configuration or callee the converter could
    not rewrite into hipLaunchKernelGGL (an unusual configuration, an unparsed region).

Why it matters on AMD GPUs:
    None on correctness: HIP compiles <<<...>>> launches; only the requested style is not met.

Example:
    KERNEL_TABLE[i]<<<grid, block>>>(args);

Instead:
    Rewrite it as hipLaunchKernelGGL(kernel, grid, block, shmem, stream, args...) by hand if the
    style matters.

Effort:
    Minutes.
"""

from ._rule import define

RULE = define(__doc__, code="PK006", name="launch-not-converted", severity="low", category="launch")
