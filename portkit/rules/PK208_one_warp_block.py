"""A kernel whose block is one 32-lane warp, and whose warp primitive takes its width from the hardware.

What it finds:
    A `cub::WarpReduce<T>`, `WarpScan<T>`, `WarpExchange`, `WarpLoad`, `WarpStore` or
    `WarpMergeSort` without its LOGICAL_WARP_THREADS argument, in a kernel launched in the same
    file with a block of 32 threads (`<<<grid, kBlockThreads>>>`, `dim3 block(32)`) or that asserts
    its block size is 32 (`static_assert(kBlockSize == 32)`). Where the block size comes from a
    constant of the file (`uint32_t constexpr kBlockThreads = 32;`, `#define`, an enumerator, or
    derived: `kWarps * 32`), the constant's definition is reported, once, with every use that
    depends on it listed (the launch, template arguments, static_asserts, shuffle widths, loop
    bounds, array extents, and the width-less primitives of the kernels it launches). A constant
    a header defines is followed into the files that include it (project/warp_constants.py): it
    is reported once, in the header, with its uses in those files. A constant whose name says
    warp (`WARP_SIZE`) is PK201's, which lists the same uses.

Why it matters on AMD GPUs:
    A warp primitive without a width spans the hardware warp: 32 lanes under CUB, the wavefront
    under hipCUB, 64 lanes on CDNA (MI100 to MI355). A block of 32 threads fills half of it, so the
    reduction or scan combines 32 real lanes with 32 that do not exist: wrong sums, and nothing
    fails to compile (the `static_assert(kBlockSize == 32)` still holds).

Example:
    uint32_t constexpr kBlockThreads = 32;
    using WarpReduceT = cub::WarpReduce<float>;
    evaluate<<<grid, kBlockThreads>>>(...);

Instead:
    Make the block the wavefront: the constant per target (`--fix warp` writes
    PORTKIT_WAVEFRONT_SIZE, and the static_assert follows it), or query
    `hipDeviceAttributeWarpSize` at run time and dispatch the launch to a 32- or 64-thread
    instantiation; or give the primitive an explicit logical width of 32 and keep the block.

Effort:
    One to four hours per constant: the constant, its assertion and the launch change together,
    then the kernel is validated on both widths.
"""

from tree_sitter import Node

from ..core.edits import Edit
from ..engine import syntax
from ..engine.context import ScanContext, View
from ..engine.rule import define
from . import _warpdispatch, _warpwidth, warpfix
from ._warpfix_model import CONSTANT, WarpFix, attached

RULE = define(__doc__, code="PK208", name="one-warp-block", severity="high", category="warp", gpu_only=True)
NAMES = tuple(_warpwidth.PRIMITIVES)
FACT_NAMES = "warp_constant_names"   # the walk hands check_name the names of the tree's header constants too
NOTE = ("one-warp blocks: {name} is PORTKIT_WAVEFRONT_SIZE, so each block is one wavefront and {what} spans it "
        "(64 lanes on gfx9, 32 through HIP's NVIDIA backend); the host pass takes 64, so a binary that also "
        "targets wave32 GPUs must query hipDeviceAttributeWarpSize and launch a 32- or 64-thread instantiation")
ASSERT_NOTE = "the static_assert that the block is one warp now asserts it is one wavefront (PORTKIT_WAVEFRONT_SIZE)"


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    """A width-less warp primitive: reported at the constant that makes its kernel's block one
    warp (once, whichever primitive finds it first), else at the primitive itself. A constant a
    header defines is reported there, at its definition (`_flag_header_constant`)."""
    if node.text not in _warpwidth.PRIMITIVES:
        _flag_header_constant(ctx, view, node)
        return
    template = _warpwidth.widthless(node) if not view.base else None
    kernel = _warpwidth.kernel_of(template) if template is not None else None
    warp = _warpwidth.one_warp(_root(node), kernel, _external(view)) if kernel is not None else None
    if warp is None:
        return
    at_primitive = not warp.launches
    for launch in warp.launches:
        constant = launch.constant
        if constant is None:
            at_primitive = True
        elif not syntax.warpish_name(constant.name) and not constant.header:   # a WARP_SIZE is PK201's
            _flag_constant(ctx, view, constant)
    if at_primitive:
        why = (f"launched with one-warp blocks (line {warp.launches[0].call.start_point[0] + 1})" if warp.launches
               else f"asserted to run in one-warp blocks (line {warp.asserts[0].start_point[0] + 1})")
        text = _warpwidth._squash(template.parent.text)
        ctx.flag(RULE, view.start(template), view.end(template),
                 f"{text} has no logical width and {_warpwidth.function_name(kernel).decode(errors='replace')} is {why}: "
                 "its width is the hardware warp, 32 lanes under CUB and 64 under hipCUB on an AMD wavefront",
                 subject=text)


def _flag_constant(ctx: ScanContext, view: View, constant: _warpwidth.Constant) -> None:
    root = _root(constant.value)
    kernels = [w for w in one_warp_kernels(root) if any(l.constant and l.constant.name == constant.name for l in w.launches)]
    name = constant.name.decode(errors="replace")
    names = ", ".join(sorted({_warpwidth.function_name(w.kernel).decode(errors="replace") for w in kernels}))
    listed = _warpwidth.listed([f"line {line} {what}" for line, what in _warpwidth.uses(root, constant, kernels)])
    start = view.start(constant.value)
    end = start + len(constant.value.text.split()[0]) if constant.value.type == "preproc_arg" else view.end(constant.value)
    ctx.flag(RULE, start, end,
             f"{name} = 32 makes each block of {names} one 32-lane warp, and the kernel relies on it (a warp "
             f"primitive without a logical width spans the hardware warp: 64 lanes on an AMD wavefront). Uses: {listed}",
             subject=name, fixed_by=attached(ctx, view, constant.value if constant.value.type != "preproc_arg"
                                             else constant.value.parent, RULE.code, start))


def _flag_header_constant(ctx: ScanContext, view: View, node: Node) -> None:
    """The definition, in its header, of a constant that makes a kernel's block one warp in the
    files that include the header: reported once, with every use in those files listed."""
    fact = ctx.facts.warp_constant(ctx.source.rel, node.text) if not view.base else None
    if fact is None or fact[1] != ctx.source.rel or syntax.warpish_name(node.text) or not _warpwidth._defines(node):
        return
    value = _warpwidth.defined_value(node)
    if value is None or value.start_point[0] + 1 != fact[2]:
        return   # another definition of the name (an #if branch the fact did not take)
    name, uses = node.text.decode(errors="replace"), fact[4]
    start = view.start(value)
    end = start + len(value.text.split()[0]) if value.type == "preproc_arg" else view.end(value)
    ctx.flag(RULE, start, end,
             f"{name} = 32 makes each block of {_launched(uses)} one 32-lane warp in the files that include "
             f"{fact[1]}, and the kernel relies on it (a warp primitive without a logical width "
             f"spans the hardware warp: 64 lanes on an AMD wavefront). Uses: {_warpwidth.listed_uses(uses)}",
             subject=name, fixed_by=attached(ctx, view, value if value.type != "preproc_arg" else value.parent,
                                             RULE.code, start))


def _launched(uses: tuple) -> str:
    prefix = "block size of the launch of "
    return ", ".join(sorted({what[len(prefix):] for _, _, what in uses if what.startswith(prefix)})) or "its kernels"


def _external(view: View) -> dict[bytes, _warpwidth.Constant] | None:
    """The constants of 32 the file's headers define that make a kernel's block one warp here."""
    facts = view.facts
    if facts is None or not facts.warp_constants or view.base:
        return None
    return {name.encode("latin-1"): _warpwidth.Constant(name.encode("latin-1"), None, literal, header)
            for name, header, _line, literal, uses in facts.warp_constants
            if header != view.rel and any(u[0] == view.rel for u in uses)} or None


def one_warp_kernels(root: Node, extra: dict[bytes, _warpwidth.Constant] | None = None) -> list[_warpwidth.OneWarp]:
    """Every kernel of the file that relies on one-warp blocks (each once)."""
    seen, found = set(), []
    for node in syntax.walk(root):
        if node.type == "type_identifier" and node.text in _warpwidth.PRIMITIVES:
            kernel = _warpwidth.kernel_of(node)
            if kernel is not None and kernel.id not in seen:
                seen.add(kernel.id)
                warp = _warpwidth.one_warp(root, kernel, extra)
                if warp is not None:
                    found.append(warp)
    return found


def _root(node: Node) -> Node:
    while node.parent is not None:
        node = node.parent
    return node


# --fix warp: the constant becomes the wavefront, and the assertion that the block is one warp follows it

def _block_constant(view: View, node: Node, name: bytes) -> bool:
    """`name` is the block size of a one-warp kernel's launch in this file, or in the files that
    include this header (a name saying warp is PK201's)."""
    if not syntax.warpish_name(name) and view.facts is not None and view.facts.warp_constants \
            and _header_fact(view, node, name) is not None:
        return True
    if syntax.warpish_name(name) or b"<<<" not in view.data or not any(p in view.data for p in _warpwidth.PRIMITIVES):
        return False
    return any(l.constant is not None and l.constant.name == name for w in one_warp_kernels(_root(node))
               for l in w.launches)


def _header_fact(view: View, node: Node, name: bytes):
    """The fact of the header constant `name` when `node` is in its definition, in its header."""
    fact = view.facts.warp_constant(view.rel, name)
    return fact if fact is not None and fact[1] == view.rel and node.start_point[0] + 1 == fact[2] else None


def _fixed(constant: _warpwidth.Constant | None) -> bool:
    """The constant's definition is one `--fix warp` makes the wavefront (this rule's, or PK201's
    for a name saying warp): the literal 32 of a constant, or a #define of 32 (a header's too)."""
    return constant is not None and (constant.literal or constant.value is not None and constant.value.type == "preproc_arg"
                                     and constant.value.text.split()[0].rstrip(b"uU") == b"32")


def fix_constant(view: View, node: Node) -> WarpFix | None:
    """`uint32_t constexpr kBlockThreads = 32;` (a const, constexpr or enumerator)."""
    parent = syntax.up(node)
    if parent is None or parent.type not in ("init_declarator", "enumerator"):
        return None
    target = parent.child_by_field_name("declarator" if parent.type == "init_declarator" else "name")
    if target is None or target.type != "identifier" or not _block_constant(view, node, target.text):
        return None
    return _constant_fix(view, node, view.start(node), view.end(node), target.text, "PK208")


def fix_define(view: View, node: Node) -> WarpFix | None:
    """`#define BLOCK_THREADS 32`."""
    name, (text, value) = node.child_by_field_name("name"), syntax.define_value(node)
    if name is None or value is None or text.rstrip(b"uU") != b"32" or not _block_constant(view, node, name.text):
        return None
    start = view.start(value)
    return _constant_fix(view, node, start, start + len(value.text.split()[0]), name.text, "PK208")


def fix_assertion(view: View, node: Node) -> WarpFix | None:
    """`static_assert(kBlockSize == 32)` in a kernel whose one-warp launch's constant is fixed."""
    assertion = syntax.enclosing(node, "static_assert_declaration")
    kernel = _warpwidth.kernel_of(assertion) if assertion is not None else None
    if kernel is None or _warpwidth._asserted_32(assertion) is None or syntax.up(node).type != "binary_expression":
        return None
    warp = next((w for w in one_warp_kernels(_root(node), _external(view)) if w.kernel.id == kernel.id), None)
    if warp is None or not warp.launches or not all(_fixed(l.constant) for l in warp.launches):
        return None   # a literal 32 at a launch stays 32 threads: so does what asserts it
    return WarpFix("", view.start(node), (Edit(view.start(node), view.end(node), CONSTANT, "warp"),), constant=True,
                   note=ASSERT_NOTE)


def _constant_fix(view: View, node: Node, start: int, end: int, name: bytes, code: str) -> WarpFix:
    kernels = [w for w in one_warp_kernels(_root(node)) if any(l.constant and l.constant.name == name for l in w.launches)]
    what = ", ".join(sorted({_warpwidth._squash(p.text) for w in kernels for p in w.primitives}))
    fact = _header_fact(view, node, name) if view.facts is not None and view.facts.warp_constants else None
    if fact is not None and not what:   # a header's: its kernels are in the files that include it
        what = ", ".join(sorted({w.split(" in ")[0] for _, _, w in fact[4] if w.endswith("with no logical width")}))
    return WarpFix(code, start, (Edit(start, end, CONSTANT, "warp"),), constant=True,
                   note=NOTE.format(name=name.decode(errors="replace"), what=what))


def fix_dispatch(view: View, node: Node) -> WarpFix | None:
    """`k<WARP_SIZE><<<g, block_dims>>>(...)` in host code, the kernel a template on its width that
    asserts nothing of it: a run-time 32/64 dispatch on the device's warp width (_warpdispatch)."""
    if b"<<<" not in view.data:
        return None
    found = _warpdispatch.dispatch(view, node, lambda name, at: _dispatched(view, at, name))
    if found is None:
        return None
    anchor, edits, note = found
    return WarpFix("PK208", anchor, edits, note=note, query=True)


def _dispatched(view: View, node: Node, name: bytes) -> bool:
    """`--fix warp` makes the constant `name` the wavefront: PK201's warp-named one, or this rule's."""
    constant = _warpwidth.file_constants(_root(node)).get(name)
    return _fixed(constant) and (syntax.warpish_name(name) or _block_constant(view, node, name))


FIX_FAMILY = warpfix.FAMILY
FIX_LITERALS = {32: (fix_constant, fix_assertion)}
# a launch's configuration is the converter's capture (@node): the pattern gives it to the fix walk too
FIX_NODES = {"preproc_def": (fix_define,), "(call_expression (kernel_call_syntax) @rule)": (fix_dispatch,)}
KEYWORDS = (b"<<<", frozenset(NAMES))   # and the tree's warp constants (FACT_NAMES)
