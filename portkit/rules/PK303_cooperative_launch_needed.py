"""Grid-wide cooperative groups, which need a cooperative launch.

What it finds:
    `this_grid()` / `grid_group` (grid-wide synchronisation) and `this_multi_grid()` /
    `multi_grid_group` (multi-device synchronisation); and a `<<<...>>>` launch of a kernel of the
    same file that uses a grid group, itself or through a device function of the file it calls,
    which needs a cooperative launch on either vendor.
    Cooperative-group features HIP lacks
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
    ...
    two_phase<<<blocks, threads>>>(data);   // grid.sync() without a cooperative launch

Instead:
    Launch with `hipLaunchCooperativeKernel`, size the grid from
    `hipOccupancyMaxActiveBlocksPerMultiprocessor` times the CU count, and check
    `hipDeviceAttributeCooperativeLaunch`; or split the kernel at the grid barrier.

Effort:
    A few hours per kernel, with validation.
"""

import re

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine import syntax
from ..engine.rule import define

RULE = define(__doc__, code="PK303", name="cooperative-launch-needed", severity="medium",
              category="kernel")
NAMES = (b"this_grid", b"grid_group", b"this_multi_grid", b"multi_grid_group")
NODES = ("kernel_call_syntax",)
REFINES = ("PK101",)
_CALL_DEPTH = 4   # device helpers calling helpers: deeper chains than this are not written


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


def check(ctx: ScanContext, view: View, node: Node) -> None:
    """`k<<<g, b>>>(...)` where kernel k (defined in this file) uses a grid group: grid.sync() is
    defined only under a cooperative launch, on NVIDIA as on AMD (issue 31: reported only at the
    group, never at the launch that must change)."""
    call = node.parent
    callee = call.child_by_field_name("function") if call is not None else None
    name = syntax.callee_name(call) if call is not None and callee is not None else None
    if not name or name not in ctx.derived(grid_kernels):
        return
    kernel = name.decode(errors="replace")
    ctx.flag(RULE, view.start(callee), view.end(node),
             f"{kernel} uses a grid group (grid-wide sync) but is launched with <<<...>>>: grid.sync() needs "
             f"a cooperative launch on either vendor (hipLaunchCooperativeKernel, a grid that fits the GPU at once)",
             subject=f"launch:{kernel}", severity="high")


def grid_kernels(ctx: ScanContext) -> frozenset[bytes]:
    """The names of the file's __global__ functions that use a grid group, in their own body or
    through a function of the file they call (`__device__ void barrier_all() { cg::this_grid().sync(); }`):
    the launch needs a cooperative launch either way."""
    root = ctx.root
    if root is None or not any(n in ctx.source.data for n in (b"this_grid", b"grid_group")):
        return frozenset()
    functions: dict[bytes, tuple[bool, bytes]] = {}   # name -> (a kernel?, its body)
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            body, declarator = node.child_by_field_name("body"), node.child_by_field_name("declarator")
            name = syntax.declared_name(declarator) if declarator is not None else b""
            if body is not None and name:
                head = ctx.source.parse_bytes[node.start_byte:body.start_byte]
                functions[name] = (b"__global__" in head, body.text)
            continue
        stack.extend(node.children)
    users = {name for name, (_, text) in functions.items()
             if (b"this_grid" in text or b"grid_group" in text) and b"sync" in text}
    for _ in range(_CALL_DEPTH):   # callers of a grid user use the grid too
        calls = re.compile(rb"\b(?:" + b"|".join(re.escape(n) for n in sorted(users)) + rb")\s*\(") if users else None
        grown = users | {name for name, (_, text) in functions.items() if calls is not None and calls.search(text)}
        if grown == users:
            break
        users = grown
    return frozenset(name for name in users if functions[name][0])
