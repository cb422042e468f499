"""A ballot or active-lane mask kept in 32 bits.

What it finds:
    The result of `__ballot_sync`, `__ballot` or `__activemask` stored in a 32-bit variable
    (`unsigned`, `int`, `uint32_t`) or counted and searched with the 32-bit bit intrinsics
    (`__popc`, `__ffs`, `__clz`, `__brev`), and lane bits made in 32 bits (`1u << lane`, the
    lanemask_lt of a ballot rank).

Why it matters on AMD GPUs:
    HIP's `__ballot` returns a 64-bit mask, one bit per lane of a 64-lane wavefront. Kept in 32
    bits, lanes 32-63 vanish: vote counts are halved and leader election skips half the lanes.

Example:
    unsigned int votes = __ballot_sync(0xffffffff, x > 0);
    int n = __popc(votes);

Instead:
    Keep masks in `unsigned long long` (or `uint64_t`) and use `__popcll`, `__ffsll`, `__clzll`.

Effort:
    Under an hour per site.
"""

import re

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..core.edits import Edit
from ..engine import syntax
from . import _warplanes
from ..engine.rule import define
from . import warpfix
from ._warpfix_model import WarpFix, attached

RULE = define(__doc__, code="PK204", name="ballot-in-32-bits", severity="high", category="warp", gpu_only=True)
NAMES = (b"__ballot_sync", b"__ballot", b"__activemask")
NODES = ("number_literal",)
LITERALS = (1,)
_LANE = re.compile(rb"(?i)\blane|\bthreadIdx\.x\s*(?:%|&)")
# a 1 (any base, no l/L suffix) shifted left: lane_bit's literal
_ONE_SHIFTED = re.compile(rb"\b(?:0[xX]0*1|0[bB]0*1|0*1)[uU]?\s*\)*\s*<<")


def _may_find(text) -> bool:
    """`1 << lane` (check): a 1 shifted left, and a lane index somewhere (engine/keywords.FileText)."""
    data = text.data
    return b"<<" in data and (b"lane" in text.words.lower() or b"threadIdx" in text.tokens) \
        and _ONE_SHIFTED.search(data) is not None and _LANE.search(data) is not None


KEYWORDS = (_may_find, frozenset(NAMES))   # or a ballot (check_name, FIX_GATES)
NARROW_BIT_OPS = (b"__popc", b"__ffs", b"__clz", b"__brev")
_WIDE = (b"long long", b"uint64_t", b"int64_t", b"size_t", b"unsigned long", b"auto", b"lanemask")
_NARROW = (b"unsigned", b"unsigned int", b"uint32_t", b"int", b"unsigned int const", b"const unsigned",
           b"const unsigned int", b"const uint32_t")


def check(ctx: ScanContext, view: View, node: Node) -> None:
    shift = lane_bit(node)
    if shift is not None:
        ctx.flag(RULE, view.start(shift), view.end(shift),
                 f"`{view.text(shift).decode(errors='replace')}` is a 32-bit lane bit: undefined for lanes 32-63 "
                 "of an AMD wavefront (use 1ull and a 64-bit mask)", subject="lane-bit")


def lane_bit(node: Node) -> Node | None:
    """The shift of `1u << lane` (a 32-bit one shifted by a lane index), or None."""
    if syntax.int_value(node) != 1 or b"l" in node.text.lower():
        return None
    parent = syntax.up(node)
    if parent is None or parent.type != "binary_expression" or syntax.operator(parent) != b"<<":
        return None
    left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
    if left is None or syntax.unparen(left).id != node.id or right is None:
        return None
    return parent if _LANE.search(right.text) else None


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    call = node.parent
    if call is None or call.type != "call_expression" or call.child_by_field_name("function") != node:
        return
    name = node.text.decode()
    operand = call   # `__popc(__ballot_sync(m, p) & below)`: the ballot inside the count's argument
    while operand.parent is not None and operand.parent.type in ("binary_expression", "parenthesized_expression",
                                                                 "cast_expression"):
        operand = operand.parent
    outer = syntax.call_of_argument(operand)
    if outer is not None and syntax.callee_name(outer[0]) in NARROW_BIT_OPS:
        op = syntax.callee_name(outer[0]).decode()
        ctx.flag(RULE, view.start(outer[0]), view.end(outer[0]),
                 f"{op}({name}(...)) counts 32 lanes; the mask has 64 bits on AMD (use {op}ll)",
                 subject=f"{op}({name})")
        return
    parent = syntax.up(call)
    if parent is not None and parent.type == "init_declarator":
        declaration = parent.parent
        if declaration is None or declaration.type != "declaration":
            return
        type_text = syntax.declaration_type(declaration)
        if type_text and not any(w in type_text for w in _WIDE):
            var = syntax.declared_name(parent.child_by_field_name("declarator")).decode(errors="replace")
            ctx.flag(RULE, view.start(parent), view.end(parent),
                     f"{name} result stored in `{type_text.decode(errors='replace')} {var}`: "
                     "32 bits, the AMD mask has 64", subject=f"{name}:{var}",
                     fixed_by=attached(ctx, view, parent, RULE.code, view.start(parent)))


# --fix warp: the fix of an init_declarator (FIX_NODES)

def fix_ballot_store(view: View, node: Node) -> WarpFix | None:
    """`unsigned m = __ballot_sync(...)` keeps 64 bits, and the counts of `m` use the ll forms."""
    if node.type != "init_declarator":
        return None
    value = node.child_by_field_name("value")
    if value is None or not syntax.is_call_to(value, (b"__ballot_sync", b"__ballot", b"__activemask")):
        return None
    declaration = node.parent
    if declaration is None or declaration.type != "declaration" or \
            len([c for c in declaration.named_children if c.type == "init_declarator"]) != 1:
        return None
    kinds = [c for c in declaration.children if c.type in ("primitive_type", "sized_type_specifier", "type_identifier")]
    if len(kinds) != 1 or kinds[0].text not in _NARROW + (b"unsigned int",):
        return None
    name = syntax.declared_name(node.child_by_field_name("declarator"))
    scope = syntax.enclosing(node, "compound_statement")
    if scope is None or not name:
        return None
    every_lane = _warplanes.all_lanes(view, node, name, kinds[0], scope)
    if every_lane is not None:
        return every_lane
    edits = [Edit(view.start(kinds[0]), view.end(kinds[0]), b"unsigned long long", "warp")]
    edits += _warplanes.wide_counts(view, scope, name) + _derived_masks(view, scope, name)
    return WarpFix("PK204", view.start(node), tuple(sorted(edits)))


def _derived_masks(view: View, scope: Node, name: bytes) -> list[Edit]:
    """`unsigned below = votes & ((1u << lane) - 1)` after `votes` went 64-bit: 64 bits too, its
    lane bit `1ull`, and its counts `__popcll`."""
    edits: list[Edit] = []
    stack = [scope]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type != "init_declarator" or (value := node.child_by_field_name("value")) is None:
            continue
        declaration = node.parent
        kinds = [c for c in declaration.children if c.type in ("primitive_type", "sized_type_specifier")] \
            if declaration is not None and declaration.type == "declaration" else []
        if len(kinds) != 1 or kinds[0].text not in _NARROW or not _bitwise_of(value, name):
            continue
        edits.append(Edit(view.start(kinds[0]), view.end(kinds[0]), b"unsigned long long", "warp"))
        edits += _wide_lane_bits(view, value)
        derived = syntax.declared_name(node.child_by_field_name("declarator"))
        edits += _warplanes.wide_counts(view, scope, derived) if derived else []
    return edits


def _bitwise_of(value: Node, name: bytes) -> bool:
    value = syntax.unparen(value)
    if value.type != "binary_expression" or syntax.operator(value) not in (b"&", b"|", b"^"):
        return False
    return any(syntax.unparen(side).type == "identifier" and syntax.unparen(side).text == name
               for side in (value.child_by_field_name("left"), value.child_by_field_name("right")))


def _wide_lane_bits(view: View, value: Node) -> list[Edit]:
    edits, stack = [], [value]
    while stack:
        node = stack.pop()
        if node.type == "number_literal" and lane_bit(node) is not None:
            edits.append(Edit(view.start(node), view.end(node), b"1ull", "warp"))
        stack.extend(node.children)
    return edits


FIX_FAMILY = warpfix.FAMILY
FIX_NODES = {"init_declarator": (fix_ballot_store,)}
FIX_GATES = {"init_declarator": (b"__ballot", b"__activemask")}   # fix_ballot_store reads no other
