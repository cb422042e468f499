"""Converted to a HIP name that behaves differently.

Reported by the converter (portkit/rewrite/), from the mapping tables.

What it finds:
    A name the converter rewrote (or kept) whose HIP counterpart differs in behaviour: a warp
    intrinsic whose mask argument was dropped, a result that is 64 bits wide, a flag HIP ignores.

Why it matters on AMD GPUs:
    The code compiles but may compute something else: an AMD wavefront has 64 lanes, so lane
    masks and lane counts double.

Example:
    __shfl_down_sync(mask, v, 1)  ->  __shfl_down(v, 1)

Instead:
    Check the converted call against the note from the mapping table.

Effort:
    Minutes to an hour per call site to review.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK004", name="partial-conversion", severity="medium", category="api",
              breaks_build=True)
