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

from ..engine.context import ScanContext, View
from ..core.edits import Edit
from ..engine import syntax
from ..engine.rule import define
from . import warpfix
from ._warpfix_model import WarpFix, attached, newline_of

RULE = define(__doc__, code="PK202", name="shuffle-offset-from-16", severity="high", category="warp", gpu_only=True)
NODES = ("number_literal",)
KEYWORDS = (b"__shfl",)   # a loop or call that shuffles
LITERALS = (16, 32)
SHUFFLES = (b"__shfl_down", b"__shfl_xor", b"__shfl_up")
_HALVING = (b"/= 2", b">>= 1", b"/=2", b">>=1")


def check(ctx: ScanContext, view: View, node: Node) -> None:
    """Each finding carries the node's fix where it has one (rules/warpfix.py: `--fix warp`)."""
    value = syntax.int_value(node)
    if value == 32 and scan_loop_bound(node):
        ctx.flag(RULE, view.start(node), view.end(node),
                 "shuffle scan loop runs to 32: it scans 32 lanes, an AMD wavefront has 64", subject="scan-to-32",
                 fixed_by=attached(ctx, view, node, RULE.code, view.start(node)))
        return
    if value != 16:
        return
    parent = syntax.up(node)
    if parent is None:
        return
    if parent.type in ("init_declarator", "assignment_expression"):
        if starts_shuffle_loop(parent):
            ctx.flag(RULE, view.start(node), view.end(node),
                     "shuffle loop starts at offset 16: it reduces 32 lanes, an AMD wavefront has 64",
                     subject="loop-from-16", fixed_by=attached(ctx, view, node, RULE.code, view.start(node)))
        return
    found = syntax.call_of_argument(node)
    if found is None:
        return
    call, index = found
    name = syntax.callee_name(call)
    if name.startswith(SHUFFLES) and index == (2 if name.endswith(b"_sync") else 1):
        ctx.flag(RULE, view.start(node), view.end(node),
                 f"{name.decode()} with offset 16 covers 32 lanes; an AMD wavefront has 64",
                 subject=name.decode(), fixed_by=attached(ctx, view, node, RULE.code, view.start(node)))


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
            name = syntax.declared_name(part.child_by_field_name("declarator")) if part.type == "init_declarator" else b""
            return (loop is not None and loop.type in ("while_statement", "do_statement", "for_statement")
                    and b"__shfl" in loop.text and bool(name) and name in loop.text)
    if holder is None or holder.type != "for_statement" or not _initializes(holder, part):
        return False
    body = holder.child_by_field_name("body")
    return body is not None and b"__shfl" in body.text


def _initializes(loop: Node, part: Node) -> bool:
    init = loop.child_by_field_name("initializer")
    return init is not None and init.start_byte <= part.start_byte < init.end_byte


def scan_loop_bound(node: Node) -> bool:
    """The 32 of `for (d = 1; d < 32; d <<= 1) ... __shfl_up(x, d)`: a scan over 32 lanes."""
    parent = syntax.up(node) if syntax.int_value(node) == 32 else None
    if parent is None or parent.type != "binary_expression" or syntax.operator(parent) != b"<":
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
        if node.type == "call_expression" and syntax.callee_name(node).startswith(b"__shfl_up"):
            args = node.child_by_field_name("arguments")
            named = [a for a in args.named_children if a.type != "comment"] if args is not None else []
            index = 2 if syntax.callee_name(node).endswith(b"_sync") else 1
            if index < len(named) and named[index].text == name:
                return True
        stack.extend(node.children)
    return False


# --fix warp: the fixes of a literal 16 or 32 (FIX_LITERALS), each the node's WarpFix or None

def fix_offset_16(view: View, node: Node) -> WarpFix | None:
    """A halving shuffle loop from 16 starts at warpSize / 2; an unrolled 16, 8, ... sequence
    gets a 32 step, taken only on 64-lane wavefronts."""
    parent = syntax.up(node)
    if parent is None:
        return None
    if parent.type in ("init_declarator", "assignment_expression"):
        loop = syntax.enclosing(node, "for_statement", "compound_statement")
        if not starts_shuffle_loop(parent) or not _halving(parent, loop):
            return None
        return WarpFix("PK202", view.start(node), (Edit(view.start(node), view.end(node), b"warpSize / 2", "warp"),))
    found = syntax.call_of_argument(node)
    if found is None or found[1] != _offset_index(syntax.callee_name(found[0])):
        return None
    return _unrolled_step(view, node, found[0])


def _halving(part: Node, loop: Node | None) -> bool:
    """The loop halves the offset (`offset /= 2`, `offset >>= 1`): it is a reduction from the top."""
    if loop is None:
        return False
    if loop.type == "for_statement":
        update = loop.child_by_field_name("update")
        return update is not None and any(h in update.text for h in _HALVING)
    holder = part.parent
    after = holder.next_named_sibling if holder is not None else None
    return after is not None and any(h in after.text for h in _HALVING)


def _offset_index(name: bytes) -> int:
    if not name.startswith(SHUFFLES) or name.startswith(b"__shfl_up"):
        return -1   # a scan (shfl_up) ends at 16 rather than starting there
    return 2 if name.endswith(b"_sync") else 1


def _unrolled_step(view: View, literal: Node, call: Node) -> WarpFix | None:
    statement = call.parent
    while statement is not None and statement.type in ("assignment_expression", "binary_expression",
                                                      "parenthesized_expression"):
        statement = statement.parent
    if statement is None or statement.type != "expression_statement":
        return None
    following = statement.next_named_sibling
    if following is None or not _shuffles_with(following, 8):
        return None   # a lone 16: not the start of a sequence
    before = statement.prev_named_sibling
    if before is not None and before.type == "if_statement" and _shuffles_with(before, 32):
        return None   # fixed already
    line_start = view.data.rfind(b"\n", 0, view.start(statement)) + 1
    indent = view.data[line_start:view.start(statement)]
    if indent.strip():
        return None
    wide = _step_text(view, statement, call, literal)
    if wide is None:
        return None
    newline = newline_of(view.data)
    text = b"if (warpSize > 32) " + wide + newline + indent
    return WarpFix("PK202", view.start(literal), (Edit(view.start(statement), view.start(statement), text, "warp"),))


def _shuffles_with(statement: Node, offset: int) -> bool:
    if b"__shfl" not in statement.text:   # every SHUFFLES name holds it: no walk of a statement without one
        return False
    stack = [statement]
    while stack:
        node = stack.pop()
        if node.type == "call_expression":
            index = _offset_index(syntax.callee_name(node))
            args = node.child_by_field_name("arguments")
            named = [a for a in args.named_children if a.type != "comment"] if args is not None else []
            if 0 <= index < len(named) and syntax.int_value(syntax.unparen(named[index])) == offset:
                return True
        stack.extend(node.children)
    return False


def _step_text(view: View, statement: Node, call: Node, literal: Node) -> bytes | None:
    """The statement with its shuffle as HIP writes it (no mask) at offset 32, or None when
    anything else in it would need the converter too."""
    name = syntax.callee_name(call)
    args = [a for a in call.child_by_field_name("arguments").named_children if a.type != "comment"]
    if name.endswith(b"_sync"):
        name, args = name[:-len(b"_sync")], args[1:]
    parts = [b"32" if a.id == syntax.unparen(literal).id or a.id == literal.id else _width(view, a, i)
             for i, a in enumerate(args)]
    head = view.data[view.start(statement):view.start(call)]
    tail = view.data[view.end(call):view.end(statement)]
    if any(w in head + tail + b"".join(parts) for w in (b"__", b"cuda", b"/*", b"//")):
        return None
    return head + name + b"(" + b", ".join(parts) + b")" + tail


def _width(view: View, arg: Node, index: int) -> bytes:
    if index == 2 and syntax.int_value(syntax.unparen(arg)) == 32:
        return b"warpSize"
    return view.text(arg)


def fix_width_32(view: View, node: Node) -> WarpFix | None:
    """`__shfl_xor_sync(m, v, o, 32)`: the width of the whole warp is warpSize (no finding of
    this rule carries it)."""
    found = syntax.call_of_argument(node)
    if found is None:
        return None
    name = syntax.callee_name(found[0])
    if not name.startswith((b"__shfl",)) or found[1] != (3 if name.endswith(b"_sync") else 2):
        return None
    return WarpFix("", view.start(node), (Edit(view.start(node), view.end(node), b"warpSize", "warp"),))


def fix_scan_bound(view: View, node: Node) -> WarpFix | None:
    """`for (d = 1; d < 32; d <<= 1) ... __shfl_up(x, d)` scans the whole wavefront."""
    if not scan_loop_bound(node):
        return None
    return WarpFix("PK202", view.start(node), (Edit(view.start(node), view.end(node), b"warpSize", "warp"),))


FIX_FAMILY = warpfix.FAMILY
FIX_LITERALS = {16: (fix_offset_16,), 32: (fix_width_32, fix_scan_bound)}
