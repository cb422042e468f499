"""HIP has this name only in a newer ROCm release than the target.

Reported by the converter (portkit/rewrite/), from the mapping tables; and by the audit for the
member functions the tables cannot hold (`tile.meta_group_rank()`: a member of HIP's
thread_block_tile from ROCm 5.7).

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

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..core.tables.mappings import format_version
from ..engine.rule import define

RULE = define(__doc__, code="PK002", name="needs-newer-rocm", severity="high", category="api",
              breaks_build=True, outcome="left")
# Cooperative-groups members HIP added later than the names around them (checked in the HIP
# headers by tag: amd_hip_cooperative_groups.h has no meta_group_* at rocm-5.6, has them at 5.7).
MEMBERS = {b"meta_group_rank": (5, 7, 0), b"meta_group_size": (5, 7, 0)}
NAMES = tuple(MEMBERS)


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    """`warp.meta_group_rank()`: a call of the member, at a target release that lacks it."""
    since = MEMBERS[node.text]
    parent = node.parent
    if ctx.target >= since or node.type != "field_identifier" or parent is None or parent.type != "field_expression" \
            or parent.parent is None or parent.parent.type != "call_expression":
        return
    name = node.text.decode()
    ctx.flag(RULE, view.start(node), view.end(node),
             f"thread_block_tile::{name}() needs ROCm {format_version(since)} (HIP's cooperative groups have it from "
             f"there), the target is {format_version(ctx.target)}: raise --rocm, or compute it "
             f"({'threadIdx.x / tile.size()' if name == 'meta_group_rank' else 'blockDim.x / tile.size()'} "
             f"in a 1-D block)", subject=name)
