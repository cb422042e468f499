"""Code that relies on warp-level synchronisation (`__syncwarp`).

What it finds:
    Calls to `__syncwarp`, which mark code written for independent thread scheduling (Volta
    and later): lanes of a warp that diverge and meet again at the barrier.

Why it matters on AMD GPUs:
    AMD wavefronts execute in lockstep and ROCm releases before 6.2 have no `__syncwarp`; the
    masks such code passes are 32 bits wide. The synchronisation usually becomes unnecessary,
    but the code around it (partial masks, lane-divergent loops) must be reviewed for 64 lanes.

Example:
    v += __shfl_down_sync(mask, v, 1);
    __syncwarp(mask);

Instead:
    Remove the call where the wavefront runs in lockstep, or use `__builtin_amdgcn_wave_barrier()`;
    on ROCm 6.2+ `__syncwarp` exists with a 64-bit mask.

Effort:
    Under an hour per site to review.
"""

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.rule import define

RULE = define(__doc__, code="PK206", name="warp-synchronous-code", severity="medium", category="warp", gpu_only=True)
NAMES = (b"__syncwarp",)
REFINES = ("PK001", "PK002")


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    ctx.flag(RULE, view.start(node), view.end(node),
             "__syncwarp: warp-level synchronisation written for 32-lane independent thread scheduling",
             subject="__syncwarp")
