"""A shuffle reduction that starts at offset 16.

What it finds:
    Shuffle loops and unrolled shuffle sequences whose first offset is 16, the half of a
    32-lane warp: `for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(m, v, offset);`
    and `__shfl_xor_sync(m, v, 16)`; and the scan loops that mirror them, `for (d = 1; d < 32;
    d <<= 1) ... __shfl_up_sync(m, x, d)`, which end at 32 lanes.

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
    if scan_loop_bound(node):
        ctx.flag(RULE, view.start(node), view.end(node),
                 "shuffle scan loop runs to 32: it scans 32 lanes, an AMD wavefront has 64", subject="scan-to-32")
        return
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


def scan_loop_bound(node: Node) -> bool:
    """The 32 of `for (d = 1; d < 32; d <<= 1) ... __shfl_up(x, d)`: a scan over 32 lanes."""
    parent = _tree.up(node) if _tree.int_value(node) == 32 else None
    if parent is None or parent.type != "binary_expression" or _tree.operator(parent) != b"<":
        return False
    loop, left = parent.parent, parent.child_by_field_name("left")
    if loop is None or loop.type != "for_statement" or left is None or left.type != "identifier":
        return False
    condition, body = loop.child_by_field_name("condition"), loop.child_by_field_name("body")
    update = loop.child_by_field_name("update")
    if condition is None or condition.id != parent.id or body is None or update is None \
            or not any(u in update.text.replace(b" ", b"") for u in (b"<<=1", b"*=2")):
        return False
    return _shuffles_up_by(body, left.text)


def _shuffles_up_by(body: Node, name: bytes) -> bool:
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type == "call_expression" and _tree.callee_name(node).startswith(b"__shfl_up"):
            args = node.child_by_field_name("arguments")
            named = [a for a in args.named_children if a.type != "comment"] if args is not None else []
            index = 2 if _tree.callee_name(node).endswith(b"_sync") else 1
            if index < len(named) and named[index].text == name:
                return True
        stack.extend(node.children)
    return False


def _initializes(loop: Node, part: Node) -> bool:
    init = loop.child_by_field_name("initializer")
    return init is not None and init.start_byte <= part.start_byte < init.end_byte
