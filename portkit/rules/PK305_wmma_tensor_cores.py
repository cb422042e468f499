"""Warp matrix functions (WMMA, `mma.h`): tensor cores through nvcuda::wmma.

What it finds:
    Uses of the `nvcuda::wmma` API (fragments, load_matrix_sync, mma_sync), once per function.

Why it matters on AMD GPUs:
    HIP has no `nvcuda::wmma`. AMD's matrix cores are reached through rocWMMA, whose API is
    close to WMMA but differs in fragment shapes, types and layouts supported per GPU (and runs
    on 64-lane wavefronts), or through composable_kernel and hipBLASLt for whole GEMMs.

Example:
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::mma_sync(acc, a, b, acc);

Instead:
    Port to rocWMMA (`rocwmma::fragment`, `rocwmma::mma_sync`), checking the shapes the target
    GPU supports, or call hipBLASLt/composable_kernel for the whole operation.

Effort:
    One to three days per kernel, including performance tuning.
"""

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine import syntax
from ..engine.rule import define

RULE = define(__doc__, code="PK305", name="wmma-tensor-cores", severity="high", category="kernel",
              breaks_build=True, gpu_only=True)
NAMES = (b"wmma",)
REFINES = ("PK001",)


# The calls that do the tensor-core work, each a line the rocWMMA port rewrites (issue 31: only
# the function's first `wmma::` was reported, so the gate missed a new mma_sync in a reported kernel).
CALLS = {b"mma_sync", b"load_matrix_sync", b"store_matrix_sync", b"fill_fragment"}


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    if node.type != "namespace_identifier":
        return
    qualified = node.parent
    name = qualified.child_by_field_name("name") if qualified is not None and \
        qualified.type == "qualified_identifier" else None
    if name is not None and name.text in CALLS and qualified.parent is not None and \
            qualified.parent.type == "call_expression":
        call = name.text.decode()
        ctx.flag(RULE, view.start(node), view.end(qualified),
                 f"wmma::{call}: rocwmma::{call} is the port, with rocWMMA's fragment shapes for the target GPU",
                 subject="wmma")   # one decision with the fragments: the rocWMMA port
    scope = syntax.enclosing(node, "function_definition")
    if not ctx.first(("PK305", scope.start_byte if scope is not None else -1)):
        return
    ctx.flag(RULE, view.start(node), view.end(node),
             "nvcuda::wmma (tensor cores): HIP has no WMMA; port to rocWMMA", subject="wmma")
