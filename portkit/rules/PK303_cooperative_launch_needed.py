"""Grid-wide cooperative groups, which need a cooperative launch.

What it finds:
    `this_grid()` / `grid_group` (grid-wide synchronisation) and `this_multi_grid()` /
    `multi_grid_group` (multi-device synchronisation). Cooperative-group features HIP lacks
    altogether (`memcpy_async`, `wait`, `cluster_group`, `labeled_partition`) are reported as
    PK001 from the mapping tables, with the alternative in the message.

Why it matters on AMD GPUs:
    HIP supports grid synchronisation only for kernels started with
    `hipLaunchCooperativeKernel` whose whole grid fits on the GPU at once; the grid size that
    fits differs from NVIDIA's (other CU counts, 64-lane wavefronts, other occupancy). Multi-grid
    groups are deprecated in HIP and removed from CUDA 12.

Example:
    cg::grid_group grid = cg::this_grid();
    grid.sync();

Instead:
    Launch with `hipLaunchCooperativeKernel`, size the grid from
    `hipOccupancyMaxActiveBlocksPerMultiprocessor` times the CU count, and check
    `hipDeviceAttributeCooperativeLaunch`; or split the kernel at the grid barrier.

Effort:
    A few hours per kernel, with validation.
"""

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ._rule import define

RULE = define(__doc__, code="PK303", name="cooperative-launch-needed", severity="medium",
              category="kernel")
NAMES = (b"this_grid", b"grid_group", b"this_multi_grid", b"multi_grid_group")
REFINES = ("PK101",)


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    name = node.text.decode()
    multi = "multi" in name
    if name == "this_grid" and (node.parent is None or node.parent.type not in ("call_expression",
                                                                                 "qualified_identifier")):
        return
    if name == "grid_group" and node.type != "type_identifier":
        return
    # one subject per kind: `cg::grid_group g = cg::this_grid();` is one finding
    ctx.flag(RULE, view.start(node), view.end(node),
             f"{name}: multi-device cooperative groups are deprecated in HIP and removed from CUDA 13"
             if multi else
             f"{name}: grid-wide sync needs hipLaunchCooperativeKernel and a grid that fits the GPU at once",
             subject="multi-grid" if multi else "grid", severity="high" if multi else None)
