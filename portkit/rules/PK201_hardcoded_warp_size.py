"""A literal warp size of 32 in lane or warp arithmetic.

What it finds:
    32, 31 and shifts by 5 used with thread, lane or warp indices: `threadIdx.x % 32`,
    `tid & 31`, `threadIdx.x >> 5`, `blockDim.x / 32`, `warp_id * 32`, `if (tid < 32)`, a
    block-size constant divided into warps (`kBlock / 32`, `BLOCK_SIZE / 32`), and
    the last lane read as lane 31 (`__shfl_sync(m, v, 31)`), and
    constants that name a warp size (`#define WARP_SIZE 32`, `constexpr int kWarpSize = 32`).
    Thirty-twos with nothing to do with warps (`dim3 block(32, 8)`, `char buf[32]`, `n * 32`)
    are not reported. In a kernel that does nothing at warp level (no shuffle, vote, __syncwarp,
    warp-level CUB, cooperative groups, WMMA or asm, and calls nothing that does), 32-thread groups
    only split the block: the finding is info, with no fix (rules/_warpgroups.py).

Why it matters on AMD GPUs:
    CDNA GPUs (MI100 to MI355) run 64-lane wavefronts. Lane ids computed modulo 32 repeat
    inside a wavefront, warp counts double, and "the first warp" (tid < 32) is half a
    wavefront: results are silently wrong, nothing fails to compile.

Example:
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;

Instead:
    Use the built-in `warpSize` (a run-time value on HIP) or a constant chosen per target
    (`#if defined(__HIP_PLATFORM_AMD__)` 64), and review the algorithm for 64 lanes.

Effort:
    An hour or two per site; more where shared-memory layouts depend on the warp count.
"""

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..core.edits import Edit
from ..engine import syntax
from . import _warpgroups, _warplanes, _warpwidth
from ..engine.rule import define
from . import warpfix
from ._warpfix_model import CONSTANT, WarpFix, attached

RULE = define(__doc__, code="PK201", name="hardcoded-warp-size", severity="high", category="warp", gpu_only=True)
NODES = ("number_literal", "preproc_def")
KEYWORDS = (syntax.may_hold_warp_size,)   # what its checks and fixes read
LITERALS = (5, 31, 32)   # check() returns at once on any other literal
RUNTIME_WARP_SIZE = (b"warpSize",)   # `warpSize == 32` asks the hardware: portable

# operator -> literal values that mean "warp size" next to a thread/lane/warp index
_ARITHMETIC = {
    b"%": (32,), b"/": (32,), b"*": (32,), b"&": (31,), b">>": (5,), b"<<": (5,),
    b"<": (32,), b"<=": (31,), b">=": (32,), b">": (31,), b"==": (32, 31), b"!=": (32, 31),
}
UNCERTAIN_NOTE = ("--fix warp left this: `{name}` is not computed from threadIdx in this function (a parameter, or "
                  "a value from elsewhere), so it is not certainly a thread, lane or warp index; if it is, use "
                  "warpSize here")
ASSERTION_NOTE = ("--fix warp left this: a static_assert states what the code needs of the warp size; on a 64-lane "
                  "wavefront it fails, as it should, until the code it guards is ported")
HOST_NOTE = ("host code: PORTKIT_WAVEFRONT_SIZE is 64 on the AMD host pass (CDNA), 32 through HIP's NVIDIA backend; "
             "a binary that also "
             "targets wave32 GPUs must use the device's warp size (hipDeviceProp_t::warpSize)")


def check(ctx: ScanContext, view: View, node: Node) -> None:
    """Each finding carries the node's fix where it has one (rules/warpfix.py: `--fix warp`)."""
    if node.type == "preproc_def":
        value = warp_size_define(node)
        if value is not None:
            name = node.child_by_field_name("name").text.decode(errors="replace")
            ctx.flag(RULE, view.start(value), view.start(value) + len(value.text.split()[0]),
                     f"#define {name} 32 fixes the warp size; an AMD wavefront has 64 lanes" + _header_uses(ctx, node),
                     subject=name,
                     fixed_by=attached(ctx, view, node, RULE.code, view.start(value)))
        return
    match = warp_arithmetic(node)
    if match is not None and _warpgroups.split_only(node):
        parent = match[0]
        ctx.flag(RULE, view.start(parent), view.end(parent),
                 f"`{_squash(view.text(parent))}` makes 32-thread groups, but this kernel does nothing at warp level "
                 "(no shuffle, vote, __syncwarp, warp-level CUB, cooperative groups, WMMA or asm, and it calls nothing "
                 "that does): the groups only split the block, and a 64-lane wavefront holds two of them with the "
                 "same results", subject=_squash(view.text(parent)), severity="info")
        return
    if match is not None:
        parent = match[0]
        ctx.flag(RULE, view.start(parent), view.end(parent),
                 f"`{_squash(view.text(parent))}` assumes 32-lane warps; an AMD wavefront has 64 lanes",
                 subject=_squash(view.text(parent)), fixed_by=attached(ctx, view, node, RULE.code, view.start(parent)))
        return
    fixed_by = attached(ctx, view, node, RULE.code, view.start(node))
    if last_lane_literal(node):
        name = syntax.callee_name(syntax.call_of_argument(node)[0]).decode()
        ctx.flag(RULE, view.start(node), view.end(node),
                 f"{name} reads lane 31, the last of a 32-lane warp; an AMD wavefront's last lane is 63",
                 subject=f"{name}:31", fixed_by=fixed_by)
        return
    if warp_constant_literal(node):
        name = _constant_name(node.parent)
        ctx.flag(RULE, view.start(node), view.end(node),
                 f"{name.text.decode(errors='replace')} = 32 fixes the warp size; an AMD wavefront has 64 lanes"
                 + _header_uses(ctx, node),
                 subject=name.text.decode(errors="replace"), fixed_by=fixed_by)


def _header_uses(ctx: ScanContext, node: Node) -> str:
    """A header's constant that makes a kernel's block one warp in the files that include it
    (project/warp_constants.py): its uses there, listed once at the definition."""
    if not ctx.facts.warp_constants:
        return ""
    definition = node if node.type == "preproc_def" else syntax.enclosing(node, "init_declarator", "enumerator")
    name = definition.child_by_field_name("declarator" if definition.type == "init_declarator" else "name") \
        if definition is not None else None
    fact = ctx.facts.warp_constant(ctx.source.rel, name.text) if name is not None else None
    if fact is None or fact[1] != ctx.source.rel or fact[2] != node.start_point[0] + 1:
        return ""
    return f"; the block of a kernel that relies on it being one warp. Uses: {_warpwidth.listed_uses(fact[4])}"


def warp_arithmetic(node: Node) -> tuple[Node, bytes, Node] | None:
    """(binary expression, operator, other operand) when the literal `node` is a warp size, lane
    mask or warp shift next to a thread, lane or warp index (also used by `--fix warp`)."""
    value = syntax.int_value(node)
    parent = syntax.up(node) if value in (5, 31, 32) else None
    if parent is None or parent.type != "binary_expression":
        return None
    op = syntax.operator(parent)
    other = syntax.other_operand(parent, node)
    if other is None or value not in _ARITHMETIC.get(op, ()):
        return None
    if op in (b">>", b"<<") and parent.child_by_field_name("right").id != _outer(node, parent).id:
        return None  # `5 >> x` is not a shift by five
    index = syntax.lane_or_warp_index(other.text) if op == b"*" else syntax.index_expression(other)
    if op == b"/" and syntax.block_size_name(other.text) and not _array_size(parent):
        index = True   # `kBlock / 32`: warps per block (an array's size is PK205's)
    return (parent, op, other) if index and other.text not in RUNTIME_WARP_SIZE else None


def last_lane_literal(node: Node) -> bool:
    """The 31 of `__shfl_sync(mask, v, 31)` (no width, or width 32): the warp's last lane."""
    found = syntax.call_of_argument(node) if syntax.int_value(node) == 31 else None
    if found is None or syntax.callee_name(found[0]) not in (b"__shfl", b"__shfl_sync"):
        return False
    call, index = found
    lane = 2 if syntax.callee_name(call).endswith(b"_sync") else 1
    args = [a for a in call.child_by_field_name("arguments").named_children if a.type != "comment"]
    width = args[lane + 1] if len(args) > lane + 1 else None
    return index == lane and (width is None or syntax.int_value(syntax.unparen(width)) == 32)


def warp_constant_literal(node: Node) -> bool:
    """The 32 of `constexpr int kWarpSize = 32`, an enumerator or a default template value."""
    parent = syntax.up(node) if syntax.int_value(node) == 32 else None
    if parent is None or parent.type not in ("init_declarator", "enumerator", "optional_parameter_declaration",
                                             "assignment_expression", "field_declaration"):
        return False
    name = _constant_name(parent)
    return name is not None and syntax.warpish_name(name.text) and _is_constant_declaration(parent)


def _constant_name(parent: Node) -> Node | None:
    return parent.child_by_field_name("declarator") or parent.child_by_field_name("name") \
        or parent.child_by_field_name("left")


def warp_size_define(node: Node) -> Node | None:
    """The value node of `#define WARP_SIZE 32` (a warp-ish name defined as 32); never portkit's own
    PORTKIT_WAVEFRONT_SIZE helper, whose 32 is the NVIDIA branch's (rules/warpfix.py)."""
    name = node.child_by_field_name("name")
    text, value = syntax.define_value(node)
    if name is None or value is None or not syntax.warpish_name(name.text) or text.rstrip(b"uU") != b"32" \
            or name.text == b"PORTKIT_WAVEFRONT_SIZE":
        return None
    return value


def _is_constant_declaration(parent: Node) -> bool:
    """`const int kWarp = 32`, an enumerator or a default template/parameter value: a constant."""
    if parent.type in ("enumerator", "optional_parameter_declaration"):
        return True
    if parent.type == "assignment_expression":
        return False
    if parent.type == "field_declaration":   # `static constexpr int kWarpSize = 32;` in a class
        return b"const" in syntax.declaration_type(parent)
    declaration = parent.parent
    return declaration is not None and (b"const" in syntax.declaration_type(declaration)
                                        or b"constexpr" in syntax.declaration_type(declaration))


def _array_size(binary: Node) -> bool:
    """The expression is an array declarator's size (`float s[kBlock / 32]`)."""
    outer = binary
    while outer.parent is not None and outer.parent.type == "parenthesized_expression":
        outer = outer.parent
    parent = outer.parent
    return parent is not None and parent.type == "array_declarator" and \
        (size := parent.child_by_field_name("size")) is not None and size.id == outer.id


def _outer(node: Node, binary: Node) -> Node:
    while node.parent is not None and node.parent.id != binary.id:
        node = node.parent
    return node


def _squash(text: bytes) -> str:
    return " ".join(text.decode("utf-8", "replace").split())


# --fix warp: the fixes of its nodes (FIX_NODES, FIX_LITERALS, in that order), each the node's WarpFix or None

def fix_arithmetic(view: View, node: Node) -> WarpFix | None:
    """`lane & 31`, `tid % 32`, `tid >> 5`, `blockDim.x / 32`, `warp * 32` in device code."""
    match = warp_arithmetic(node)
    if match is None or not syntax.in_device_code(node):
        return None
    binary, op, other = match
    anchor = view.start(binary)
    if _warpgroups.split_only(node):
        return None   # the groups only split the block: the same results at 64 lanes (the finding says so)
    if syntax.enclosing(binary, "static_assert_declaration") is not None:
        return WarpFix("", anchor, (), note=ASSERTION_NOTE)
    uncertain = _warplanes.uncertain_index(other) if not syntax.block_size_name(other.text) else None
    if uncertain is not None:
        return WarpFix("", anchor, (), note=UNCERTAIN_NOTE.format(name=uncertain.decode("utf-8", "replace")))
    if op in (b">>", b"<<"):
        if other.type not in ("identifier", "field_expression", "parenthesized_expression", "call_expression",
                              "subscript_expression"):
            return None   # `a + b >> 5`: `/` binds tighter than `>>`, the fix would regroup it
        start = view.end(other)
        return WarpFix("PK201", anchor, (Edit(start, view.end(binary),
                                              (b" / " if op == b">>" else b" * ") + b"warpSize", "warp"),))
    if _constant_context(node):
        return None
    text = b"warpSize" if syntax.int_value(node) == 32 else b"(warpSize - 1)"
    if op == b"&" and other.type in ("identifier", "field_expression", "parenthesized_expression"):
        return WarpFix("PK201", anchor, (Edit(view.end(other), view.end(binary), b" % warpSize", "warp"),))
    return WarpFix("PK201", anchor, (Edit(view.start(node), view.end(node), text, "warp"),))


def _constant_context(node: Node) -> bool:
    """An array size, a template argument or a constexpr: `warpSize` is not a constant in ROCm 7."""
    declaration = syntax.enclosing(node, "declaration", "array_declarator", "template_argument_list")
    if declaration is None:
        return False
    return declaration.type != "declaration" or b"constexpr" in syntax.declaration_type(declaration)


def fix_constant(view: View, node: Node) -> WarpFix | None:
    """`constexpr int kWarpSize = 32` (and const/enumerator forms) gets the per-target value."""
    if not warp_constant_literal(node):
        return None
    return WarpFix("PK201", view.start(node), (Edit(view.start(node), view.end(node), CONSTANT, "warp"),), constant=True)


def fix_define(view: View, node: Node) -> WarpFix | None:
    """`#define WARP_SIZE 32` gets the per-target value."""
    value = warp_size_define(node)
    if value is not None:
        end = view.start(value) + len(value.text.split()[0])
        return WarpFix("PK201", view.start(value), (Edit(view.start(value), end, CONSTANT, "warp"),), constant=True)
    return None


def fix_last_lane(view: View, node: Node) -> WarpFix | None:
    """`__shfl(x, 31)` reads the warp's last lane: `warpSize - 1`."""
    if not last_lane_literal(node) or not syntax.in_device_code(node):
        return None
    return WarpFix("PK201", view.start(node), (Edit(view.start(node), view.end(node), b"warpSize - 1", "warp"),),
                   note="lane 31 read as the last lane of the warp: warpSize - 1 (lane 63 on a 64-lane wavefront)")


def fix_host_warps(view: View, node: Node) -> WarpFix | None:
    """In host code: `block_size / 32` warps per block, with the per-target constant (warpSize
    does not exist on the host)."""
    match = warp_arithmetic(node)
    if match is None or syntax.in_device_code(node) or syntax.int_value(node) != 32:
        return None
    binary, op, other = match
    if op != b"/" or not syntax.block_size_name(other.text) or syntax.enclosing(node, "function_definition") is None:
        return None
    if _warplanes.in_dim3(node):
        return None   # a block shape: _warplanes.block_shape() decides
    return WarpFix("PK201", view.start(binary), (Edit(view.start(node), view.end(node), CONSTANT, "warp"),), constant=True,
                   note=f"`{view.text(binary).decode(errors='replace')}` warps per block: " + HOST_NOTE)


FIX_FAMILY = warpfix.FAMILY
FIX_LITERALS = {32: (fix_arithmetic, fix_host_warps, fix_constant), 31: (fix_arithmetic, fix_last_lane),
                5: (fix_arithmetic,)}
# `dim3 b(4, 8, n / WARP_SIZE)`: block_shape reads an argument list only as an init_declarator's
# child, so the query captures only those (a tree has a call's every few tokens)
FIX_NODES = {"preproc_def": (fix_define,), "initializer_list": (_warplanes.block_shape,),
             "(init_declarator (argument_list) @rule)": (_warplanes.block_shape,)}
