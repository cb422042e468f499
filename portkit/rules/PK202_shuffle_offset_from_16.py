"""A shuffle reduction that starts at offset 16.

What it finds:
    Shuffle loops and unrolled shuffle sequences whose first offset is 16, the half of a
    32-lane warp: `for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(m, v, offset);`
    and `__shfl_xor_sync(m, v, 16)`.

Why it matters on AMD GPUs:
    On a 64-lane wavefront such a reduction combines only lanes 0-31 with each other and lanes
    32-63 with each other: the result in lane 0 is the sum of half the wavefront. Nothing fails,
    the numbers are wrong.

Example:
    for (int offset = 16; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xffffffff, sum, offset);

Instead:
    Start at `warpSize / 2` (`for (int offset = warpSize / 2; offset > 0; offset /= 2)`), or use
    hipCUB's WarpReduce, which is written for both widths.

Effort:
    Under an hour per loop, plus validating the kernel's results.
"""

from tree_sitter import Node

from ..context import ScanContext, View
from . import _tree
from ._rule import define

RULE = define(__doc__, code="PK202", name="shuffle-offset-from-16", severity="high", category="warp")
NODES = ("number_literal",)
SHUFFLES = (b"__shfl_down", b"__shfl_xor", b"__shfl_up")


def check(ctx: ScanContext, view: View, node: Node) -> None:
    if _tree.int_value(node) != 16:
        return
    parent = _tree.up(node)
    if parent is None:
        return
    if parent.type in ("init_declarator", "assignment_expression"):
        if starts_shuffle_loop(parent):
            ctx.flag(RULE, view.start(node), view.end(node),
                     "shuffle loop starts at offset 16: it reduces 32 lanes, an AMD wavefront has 64",
                     subject="loop-from-16")
        return
    found = _tree.call_of_argument(node)
    if found is None:
        return
    call, index = found
    name = _tree.callee_name(call)
    if name.startswith(SHUFFLES) and index == (2 if name.endswith(b"_sync") else 1):
        ctx.flag(RULE, view.start(node), view.end(node),
                 f"{name.decode()} with offset 16 covers 32 lanes; an AMD wavefront has 64",
                 subject=name.decode())


def starts_shuffle_loop(part: Node) -> bool:
    """`for (int offset = 16; ...) __shfl...`, or `int offset = 16; while (offset > 0) {__shfl...}`."""
    holder = part.parent
    if holder is not None and holder.type == "declaration":
        if holder.parent is not None and holder.parent.type == "for_statement":
            holder = holder.parent
        else:   # a declaration right before a loop that shuffles with the variable
            loop = holder.next_named_sibling
            while loop is not None and loop.type == "comment":
                loop = loop.next_named_sibling
            name = _tree.declared_name(part.child_by_field_name("declarator")) if part.type == "init_declarator" else b""
            return (loop is not None and loop.type in ("while_statement", "do_statement", "for_statement")
                    and b"__shfl" in loop.text and bool(name) and name in loop.text)
    if holder is None or holder.type != "for_statement" or not _initializes(holder, part):
        return False
    body = holder.child_by_field_name("body")
    return body is not None and b"__shfl" in body.text


def _initializes(loop: Node, part: Node) -> bool:
    init = loop.child_by_field_name("initializer")
    return init is not None and init.start_byte <= part.start_byte < init.end_byte
