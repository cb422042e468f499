"""Grid-wide cooperative groups, which need a cooperative launch.

What it finds:
    `this_grid()` / `grid_group` (grid-wide synchronisation) and `this_multi_grid()` /
    `multi_grid_group` (multi-device synchronisation) in a function from which a grid-wide barrier
    is reachable (`grid.sync()`, `cg::this_grid().sync()`, `cg::sync(grid)`, in its body or a
    function of the file it calls); and a `<<<...>>>` launch of a kernel of the same file that
    reaches such a barrier, which needs a cooperative launch on either vendor. A grid group read
    only for its rank or size (`cg::this_grid().thread_rank()`) needs no cooperative launch: no
    finding.
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
              category="kernel", gpu_only=True)
NAMES = (b"this_grid", b"grid_group", b"this_multi_grid", b"multi_grid_group")
NODES = ("kernel_call_syntax",)
KEYWORDS = (b"<<<", frozenset(NAMES))
REFINES = ("PK101",)
_CALL_DEPTH = 4   # device helpers calling helpers: deeper chains than this are not written


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    if not _reaches_barrier(ctx, node):
        return   # rank and size of the grid are plain arithmetic on either vendor (issue 53)
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
    """The names of the file's __global__ functions from which a grid-wide barrier is reachable:
    the launch needs a cooperative launch either way."""
    functions, barriers = ctx.derived(_barrier_functions)
    return frozenset(name for name in barriers if functions[name])


def _reaches_barrier(ctx: ScanContext, node: Node) -> bool:
    """The grid group at `node` is used by a function that reaches a grid-wide barrier (outside
    any function: the file has one)."""
    functions, barriers = ctx.derived(_barrier_functions)
    function = syntax.enclosing(node, "function_definition")
    while function is not None:   # a lambda's barrier is its kernel's
        declarator = function.child_by_field_name("declarator")
        name = syntax.declared_name(declarator) if declarator is not None else b""
        if name in barriers:
            return True
        function = syntax.enclosing(function, "function_definition")
    return bool(barriers) and syntax.enclosing(node, "function_definition") is None


# a grid group's variable or parameter: `cg::grid_group g`, `auto g = cg::this_grid()`, `const grid_group& g`
_GRID_VARIABLE = re.compile(rb"\b(?:(?:multi_)?grid_group|auto)\s*(?:const\s*)?&?\s*(\w+)\s*"
                            rb"(?:=\s*(?:\w+::)*this_(?:multi_)?grid\s*\(|[,)])")
_GRID_CALL = rb"(?:\w+::)*this_(?:multi_)?grid\s*\(\s*\)"


def _barrier(text: bytes) -> bool:
    """The body syncs a grid: `grid.sync()`, `cg::this_grid().sync()`, `cg::sync(grid)`."""
    names = [re.escape(m.group(1)) for m in _GRID_VARIABLE.finditer(text)
             if m.group(1) not in (b"const", b"this_grid", b"this_multi_grid")]
    group = rb"(?:" + b"|".join([_GRID_CALL, *names]) + rb")"
    return re.search(group + rb"\s*\.\s*sync\s*\(|\bsync\s*\(\s*" + group + rb"\s*\)", text) is not None


def _barrier_functions(ctx: ScanContext) -> tuple[dict[bytes, bool], frozenset[bytes]]:
    """The file's functions (name -> a kernel?) and those that reach a grid-wide barrier, in their
    own body or through a function of the file they call (`__device__ void barrier_all() {
    cg::this_grid().sync(); }`)."""
    root = ctx.root
    if root is None or not any(n in ctx.source.data for n in (b"this_grid", b"grid_group", b"this_multi_grid")):
        return {}, frozenset()
    functions: dict[bytes, tuple[bool, bytes]] = {}   # name -> (a kernel?, its text)
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            body, declarator = node.child_by_field_name("body"), node.child_by_field_name("declarator")
            name = syntax.declared_name(declarator) if declarator is not None else b""
            if body is not None and name:
                head = ctx.source.parse_bytes[node.start_byte:body.start_byte]
                functions[name] = (b"__global__" in head, node.text)
            continue
        stack.extend(node.children)
    users = {name for name, (_, text) in functions.items() if _barrier(text)}
    for _ in range(_CALL_DEPTH):   # callers of a function with a barrier reach it too
        calls = re.compile(rb"\b(?:" + b"|".join(re.escape(n) for n in sorted(users)) + rb")\s*\(") if users else None
        grown = users | {name for name, (_, text) in functions.items() if calls is not None and calls.search(text)}
        if grown == users:
            break
        users = grown
    return {name: kernel for name, (kernel, _) in functions.items()}, frozenset(users)
