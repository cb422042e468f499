"""The warp family's shared fix helpers (rules/warpfix.py): lanes and masks ("every lane agrees"
ballots, counts of a widened mask), what makes an index certainly a thread, lane or warp index,
the host side's block shapes of one warp per layer, and the bound of a shuffle scan loop (PK202's,
which PK201's lane arithmetic leaves to it).

Each fix returns a WarpFix or None, like the rules' own fix functions; the notes say why a fix
changes what the code computes (PK008, docs/warp-fix.md).
"""

from __future__ import annotations

from tree_sitter import Node

from ..engine.context import View
from ..core.edits import Edit
from ..engine import syntax
from ._warpfix_model import WarpFix

FULL_MASKS = (b"0xffffffff", b"0xffffffffu", b"0xFFFFFFFF", b"0xFFFFFFFFu", b"0xffffffffU", b"0xFFFFFFFFU")
_WIDE_BIT_OPS = {b"__popc": b"__popcll", b"__ffs": b"__ffsll"}


def in_dim3(node: Node) -> bool:
    declaration = syntax.enclosing(node, "declaration")
    return declaration is not None and syntax.declaration_type(declaration) == b"dim3"


def block_shape(view: View, node: Node) -> WarpFix | None:
    """`dim3 block = {4, 8, block_size / WARP_SIZE}`: x * y lanes are one warp and z counts warps;
    y becomes `WARP_SIZE / 4` so that a layer stays one wavefront. Only where z divides by a
    warp-size name that the fix makes per-target (a literal 32 is left: the kernel's own
    `32 / bdx` would have to change with it)."""
    if node.type == "argument_list" and (node.parent is None or node.parent.type != "init_declarator"):
        return None
    if node.named_child_count < 3:   # every call's arguments come here: the cheap tests first
        return None
    items = [c for c in node.named_children if c.type != "comment"]
    if len(items) != 3 or None in (syntax.int_value(items[0]), syntax.int_value(items[1])):
        return None
    declaration = syntax.enclosing(node, "declaration")
    if declaration is None or syntax.declaration_type(declaration) != b"dim3":
        return None
    x, y = syntax.int_value(items[0]), syntax.int_value(items[1])
    warp = _divisor_name(items[2])
    if x * y == 32 and x > 0 and warp is None and _divides_by_32(items[2]):
        return WarpFix("", view.start(items[2]), (), note=(
            f"block shape {{{x}, {y}, n / 32}} left as it is: {x} x {y} threads are one 32-lane warp per layer, "
            f"and the kernel's own `32 / blockDim.x` (or `32 / {x}`) must change with it; by hand, make both "
            f"follow the warp size (y = WARP_SIZE / {x}, z = n / WARP_SIZE, bdy = WARP_SIZE / bdx)"))
    if x * y != 32 or warp is None or x <= 0:
        return None
    return WarpFix("PK201", view.start(items[1]),
                   (Edit(view.start(items[1]), view.end(items[1]), warp + b" / " + items[0].text, "warp"),),
                   note=f"block shape {{{x}, {y}, ...}}: {x} x {y} threads were one 32-lane warp per layer; "
                        f"y follows {warp.decode()} so that a layer stays one wavefront")


def _divides_by_32(node: Node) -> bool:
    node = syntax.unparen(node)
    return node.type == "binary_expression" and syntax.operator(node) == b"/" and \
        syntax.int_value(syntax.unparen(node.child_by_field_name("right"))) == 32


def _divisor_name(node: Node) -> bytes | None:
    node = syntax.unparen(node)
    if node.type != "binary_expression" or syntax.operator(node) != b"/":
        return None
    right = syntax.unparen(node.child_by_field_name("right"))
    return right.text if right.type == "identifier" and syntax.warpish_name(right.text) else None


def all_lanes(view: View, declarator: Node, name: bytes, kind: Node, scope: Node) -> WarpFix | None:
    """PK204: `unsigned m = __ballot_sync(FULL, p)` used only as `m == 0xffffffff` asks whether
    every lane agrees: `int m = __all(p)`, and the comparison is `m` (`!m` for `!=`)."""
    call = declarator.child_by_field_name("value")
    if call is None or syntax.callee_name(call) not in (b"__ballot_sync", b"__ballot"):
        return None
    args = [a for a in call.child_by_field_name("arguments").named_children if a.type != "comment"]
    sync = syntax.callee_name(call) == b"__ballot_sync"
    if len(args) != (2 if sync else 1) or (sync and args[0].text not in FULL_MASKS):
        return None
    compares = _full_compares(scope, name, declarator)
    if compares is None:
        return None
    function = call.child_by_field_name("function")
    edits = [Edit(view.start(kind), view.end(kind), b"int", "warp"),
             Edit(view.start(function), view.end(function), b"__all", "warp")]
    if sync:
        edits.append(Edit(view.start(args[0]), view.start(args[1]), b"", "warp"))
    for compare, negated in compares:
        edits.append(Edit(view.start(compare), view.end(compare), (b"!" if negated else b"") + name, "warp"))
    return WarpFix("PK204", view.start(declarator), tuple(sorted(edits)), supersedes=True,
                   note=f"`{name.decode(errors='replace')}` compared a ballot with the 32-lane full mask: "
                        "now __all (true when every active lane of the wavefront agrees)")


def _full_compares(scope: Node, name: bytes, declarator: Node) -> list[tuple[Node, bool]] | None:
    """Every use of `name` as `name == 0xffffffff` / `!= 0xffffffff`, or None if any other use."""
    found, stack = [], [scope]
    while stack:
        node = stack.pop()
        if node.type == "identifier" and node.text == name and not _inside(node, declarator):
            compare = node.parent
            if compare is None or compare.type != "binary_expression" or \
                    syntax.operator(compare) not in (b"==", b"!=") or \
                    (other := syntax.other_operand(compare, node)) is None or other.text not in FULL_MASKS:
                return None
            found.append((compare, syntax.operator(compare) == b"!="))
        stack.extend(node.children)
    return found or None


def _inside(node: Node, outer: Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def wide_counts(view: View, scope: Node, name: bytes) -> list[Edit]:
    """`__popc(m)` / `__ffs(m)` of a mask made 64-bit: `__popcll(m)` / `__ffsll(m)`."""
    edits, stack = [], [scope]
    while stack:
        node = stack.pop()
        if node.type == "call_expression" and syntax.callee_name(node) in _WIDE_BIT_OPS:
            args = node.child_by_field_name("arguments")
            if args is not None and len(args.named_children) == 1 and args.named_children[0].text == name:
                function = node.child_by_field_name("function")
                edits.append(Edit(view.start(function), view.end(function), _WIDE_BIT_OPS[function.text], "warp"))
        stack.extend(node.children)
    return sorted(edits)


# What makes a value certainly a thread, lane or warp index: computed from these.
_THREAD_SOURCES = (b"threadIdx", b"blockDim", b"__lane_id", b"portkit_lane_id", b"thread_rank", b"__lanemask")


def uncertain_index(node: Node, depth: int = 0) -> bytes | None:
    """The first name in the index expression `node` that is not computed from threadIdx (or
    blockDim, a lane id, a group's thread_rank()) in its function, following local initialisers
    (`int tid = threadIdx.x; int lane = tid % 32;`); None when every name is. A parameter named
    `tid` (ggml's dequantize_q2_K, a quant-block layout index) is not certain."""
    node = syntax.unparen(node)
    if any(word in node.text for word in _THREAD_SOURCES):
        return None
    if node.type == "identifier":
        init = _initializer(node) if depth < 4 else None
        if init is None:
            return node.text
        return node.text if uncertain_index(init, depth + 1) is not None else None
    if node.type in ("number_literal", "sizeof_expression"):
        return None
    for child in node.named_children:
        found = uncertain_index(child, depth)
        if found is not None:
            return found
    return None


def _initializer(name: Node) -> Node | None:
    """The initialiser the nearest declaration of `name` gives it (syntax.declarations' search:
    enclosing blocks, loops, then parameters, which have none)."""
    for declaration, _kind in syntax.declarations(name):
        for child in declaration.named_children:
            target = child.child_by_field_name("declarator") if child.type == "init_declarator" else child
            if target is not None and target.type == "identifier" and target.text == name.text:
                return child.child_by_field_name("value") if child.type == "init_declarator" else None
    return None
