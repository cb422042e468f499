"""`convert --fix warp`: 32-lane warp idioms rewritten into wavefront-size-generic HIP.

Off by default: these edits change what the code computes on purpose (on a 64-lane wavefront
the original computes the wrong thing). Each fix is a set of byte-range edits tied to the audit
finding it resolves (PK201-PK205, reported at the same byte), so audit can offer the very same
edits as suggestions. Where the meaning is not certain there is no edit; the finding stays.

Run-time contexts use HIP's `warpSize`; contexts that need a compile-time constant (a #define,
a constexpr, an array size) use PORTKIT_WAVEFRONT_SIZE, defined once per file from
`__AMDGCN_WAVEFRONT_SIZE`: ROCm 7 made `warpSize` a run-time value (docs/warp-fix.md).
"""

from __future__ import annotations

from dataclasses import replace

from tree_sitter import Node

from ..context import ScanContext, View
from ..edits import Edit
from ..findings import Finding
from ..regions import PROTECTED
from ..source import SourceFile
from ..rules import _tree, get
from ..rules.PK201_hardcoded_warp_size import warp_arithmetic, warp_constant_literal, warp_size_define
from ..rules.PK205_warp_sized_array import warp_size_definition
from ..rules.PK202_shuffle_offset_from_16 import SHUFFLES, starts_shuffle_loop
from . import warpfix_lanes
from .warpfix_model import CONSTANT, LARGEST_WAVEFRONT, WarpFix, newline_of

# Device passes know their wavefront size; the host pass does not (it assumes CDNA's 64).
HELPER = (b"#ifndef PORTKIT_WAVEFRONT_SIZE",
          b"#if defined(__AMDGCN_WAVEFRONT_SIZE)",
          b"#define PORTKIT_WAVEFRONT_SIZE __AMDGCN_WAVEFRONT_SIZE",
          b"#else",
          b"#define PORTKIT_WAVEFRONT_SIZE 64",
          b"#endif",
          b"#endif")
_NARROW = (b"unsigned", b"unsigned int", b"uint32_t", b"int", b"unsigned int const", b"const unsigned",
           b"const unsigned int", b"const uint32_t")
WARP_FIX_CHOICE = get("PK008")
CONSTANT_NOTE = ("a compile-time warp size: PORTKIT_WAVEFRONT_SIZE, __AMDGCN_WAVEFRONT_SIZE on each device pass "
                 "(64 on gfx9, 32 or 64 on RDNA) and 64 on the host pass; not warpSize, which ROCm 7 made a "
                 "run-time value")
_HALVING = (b"/= 2", b">>= 1", b"/=2", b">>=1")
PORTED_NOTE = ("--fix warp left this: the tree has its own CUDA-to-HIP shim header, so it already builds for AMD, "
               "where its 32-lane idioms may be deliberate (logical 32-lane warps: width-32 shuffles); check it "
               "against the AMD build before changing it")
UNCERTAIN_NOTE = ("--fix warp left this: `{name}` is not computed from threadIdx in this function (a parameter, or "
                  "a value from elsewhere), so it is not certainly a thread, lane or warp index; if it is, use "
                  "warpSize here")
ASSERTION_NOTE = ("--fix warp left this: a static_assert states what the code needs of the warp size; on a 64-lane "
                  "wavefront it fails, as it should, until the code it guards is ported")


def collect(view: View, root: Node) -> list[WarpFix]:
    """Every certain fix in the tree, in source order."""
    if not any(word in view.data for word in (b"32", b"16", b"31", b">> 5", b">>5", b"__ballot")):
        return []
    found: list[WarpFix] = []
    for node in _tree.walk(root):
        handler = _HANDLERS.get(node.type)
        if handler is not None:
            fix = handler(view, node)
            if fix is not None:
                found.append(fix)
    return _with_helper(view, found)


def _number(view: View, node: Node) -> WarpFix | None:
    value = _tree.int_value(node)
    if value == 16:
        return _offset_16(view, node)
    if value == 32:
        return _width_32(view, node) or warpfix_lanes.scan_bound(view, node) or _arithmetic(view, node) \
            or warpfix_lanes.host_warps(view, node) or _constant(view, node)
    if value == 31:
        return _arithmetic(view, node) or warpfix_lanes.last_lane(view, node)
    if value == 5:
        return _arithmetic(view, node)
    return None


def _offset_16(view: View, node: Node) -> WarpFix | None:
    """PK202: a halving shuffle loop from 16 starts at warpSize / 2; an unrolled 16, 8, ... sequence
    gets a 32 step, taken only on 64-lane wavefronts."""
    parent = _tree.up(node)
    if parent is None:
        return None
    if parent.type in ("init_declarator", "assignment_expression"):
        loop = _tree.enclosing(node, "for_statement", "compound_statement")
        if not starts_shuffle_loop(parent) or not _halving(parent, loop):
            return None
        return WarpFix("PK202", view.start(node), (Edit(view.start(node), view.end(node), b"warpSize / 2", "warp"),))
    found = _tree.call_of_argument(node)
    if found is None or found[1] != _offset_index(_tree.callee_name(found[0])):
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
    following, before = statement.next_named_sibling, statement.prev_named_sibling
    if following is None or not _shuffles_with(following, 8):
        return None   # a lone 16: not the start of a sequence
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
    stack = [statement]
    while stack:
        node = stack.pop()
        if node.type == "call_expression":
            index = _offset_index(_tree.callee_name(node))
            args = node.child_by_field_name("arguments")
            named = [a for a in args.named_children if a.type != "comment"] if args is not None else []
            if 0 <= index < len(named) and _tree.int_value(_tree.unparen(named[index])) == offset:
                return True
        stack.extend(node.children)
    return False


def _step_text(view: View, statement: Node, call: Node, literal: Node) -> bytes | None:
    """The statement with its shuffle as HIP writes it (no mask) at offset 32, or None when
    anything else in it would need the converter too."""
    name = _tree.callee_name(call)
    args = [a for a in call.child_by_field_name("arguments").named_children if a.type != "comment"]
    if name.endswith(b"_sync"):
        name, args = name[:-len(b"_sync")], args[1:]
    parts = [b"32" if a.id == _tree.unparen(literal).id or a.id == literal.id else _width(view, a, i)
             for i, a in enumerate(args)]
    head = view.data[view.start(statement):view.start(call)]
    tail = view.data[view.end(call):view.end(statement)]
    if any(w in head + tail + b"".join(parts) for w in (b"__", b"cuda", b"/*", b"//")):
        return None
    return head + name + b"(" + b", ".join(parts) + b")" + tail


def _width(view: View, arg: Node, index: int) -> bytes:
    if index == 2 and _tree.int_value(_tree.unparen(arg)) == 32:
        return b"warpSize"
    return view.text(arg)


def _width_32(view: View, node: Node) -> WarpFix | None:
    """`__shfl_xor_sync(m, v, o, 32)`: the width of the whole warp is warpSize."""
    found = _tree.call_of_argument(node)
    if found is None:
        return None
    name = _tree.callee_name(found[0])
    if not name.startswith((b"__shfl",)) or found[1] != (3 if name.endswith(b"_sync") else 2):
        return None
    return WarpFix("", view.start(node), (Edit(view.start(node), view.end(node), b"warpSize", "warp"),))


def _arithmetic(view: View, node: Node) -> WarpFix | None:
    """PK201: `lane & 31`, `tid % 32`, `tid >> 5`, `blockDim.x / 32`, `warp * 32` in device code."""
    match = warp_arithmetic(node)
    if match is None or not _tree.in_device_code(node):
        return None
    binary, op, other = match
    anchor = view.start(binary)
    if _tree.enclosing(binary, "static_assert_declaration") is not None:
        return WarpFix("", anchor, (), note=ASSERTION_NOTE)
    uncertain = warpfix_lanes.uncertain_index(other) if not _tree.block_size_name(other.text) else None
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
    text = b"warpSize" if _tree.int_value(node) == 32 else b"(warpSize - 1)"
    if op == b"&" and other.type in ("identifier", "field_expression", "parenthesized_expression"):
        return WarpFix("PK201", anchor, (Edit(view.end(other), view.end(binary), b" % warpSize", "warp"),))
    return WarpFix("PK201", anchor, (Edit(view.start(node), view.end(node), text, "warp"),))


def _constant_context(node: Node) -> bool:
    """An array size, a template argument or a constexpr: `warpSize` is not a constant in ROCm 7."""
    declaration = _tree.enclosing(node, "declaration", "array_declarator", "template_argument_list")
    if declaration is None:
        return False
    return declaration.type != "declaration" or b"constexpr" in _tree.declaration_type(declaration)


def _constant(view: View, node: Node) -> WarpFix | None:
    """PK201: `constexpr int kWarpSize = 32` (and const/enumerator forms) gets the per-target value."""
    if not warp_constant_literal(node):
        return None
    return WarpFix("PK201", view.start(node), (Edit(view.start(node), view.end(node), CONSTANT, "warp"),), True)


def _define(view: View, node: Node) -> WarpFix | None:
    """PK201 `#define WARP_SIZE 32` gets the per-target value; PK203 `#define FULL_MASK 0xffffffff`
    the 64-bit full mask."""
    value = warp_size_define(node)
    if value is not None:
        end = view.start(value) + len(value.text.split()[0])
        return WarpFix("PK201", view.start(value), (Edit(view.start(value), end, CONSTANT, "warp"),), True)
    return None


def _shared_array(view: View, node: Node) -> WarpFix | None:
    """PK205: `__shared__ T s[32]` indexed by lane or warp is sized for the largest wavefront."""
    size = node.child_by_field_name("size")
    declaration = _tree.enclosing(node, "declaration")
    if size is None or declaration is None or b"__shared__" not in _tree.declaration_type(declaration):
        return None
    define = warp_size_definition(view.data, size.text.strip()) if _tree.warpish_name(size.text) else None
    if define is not None:   # the #define's fix (PK201) resolves it: shown here, applied there
        return WarpFix("PK205", view.start(node), (Edit(define.start(1), define.end(1), CONSTANT, "warp"),),
                       suggest_only=True)
    if size.text.strip() != b"32":
        return None
    return WarpFix("PK205", view.start(node), (Edit(view.start(size), view.end(size), LARGEST_WAVEFRONT, "warp"),),
                   note="sized for the largest wavefront, 64 slots: twice the shared memory of the "
                        "original")


def _ballot_store(view: View, node: Node) -> WarpFix | None:
    """PK204: `unsigned m = __ballot_sync(...)` keeps 64 bits, and the counts of `m` use the ll forms."""
    if node.type != "init_declarator":
        return None
    value = node.child_by_field_name("value")
    if value is None or not _tree.is_call_to(value, (b"__ballot_sync", b"__ballot", b"__activemask")):
        return None
    declaration = node.parent
    if declaration is None or declaration.type != "declaration" or \
            len([c for c in declaration.named_children if c.type == "init_declarator"]) != 1:
        return None
    kinds = [c for c in declaration.children if c.type in ("primitive_type", "sized_type_specifier", "type_identifier")]
    if len(kinds) != 1 or kinds[0].text not in _NARROW + (b"unsigned int",):
        return None
    name = _tree.declared_name(node.child_by_field_name("declarator"))
    scope = _tree.enclosing(node, "compound_statement")
    if scope is None or not name:
        return None
    every_lane = warpfix_lanes.all_lanes(view, node, name, kinds[0], scope)
    if every_lane is not None:
        return every_lane
    edits = [Edit(view.start(kinds[0]), view.end(kinds[0]), b"unsigned long long", "warp")]
    edits += warpfix_lanes.wide_counts(view, scope, name) + warpfix_lanes.derived_masks(view, scope, name, _NARROW)
    return WarpFix("PK204", view.start(node), tuple(sorted(edits)))


def _with_helper(view: View, fixes: list[WarpFix]) -> list[WarpFix]:
    """PORTKIT_WAVEFRONT_SIZE is defined at the start of the line of its first use."""
    first = next((f for f in sorted(fixes, key=lambda f: f.anchor) if f.constant), None)
    if first is None or CONSTANT + b" __AMDGCN" in view.data:
        return fixes
    at = view.data.rfind(b"\n", 0, first.anchor) + 1
    newline = newline_of(view.data)
    helper = Edit(at, at, newline.join(HELPER) + newline, "warp")
    noted = [replace(f, note=f.note or CONSTANT_NOTE) if f.constant else f for f in fixes]
    return [replace(f, edits=f.edits + (helper,)) if f.anchor == first.anchor and f.constant else f for f in noted]


_HANDLERS = {
    "number_literal": _number,
    "preproc_def": _define,
    "array_declarator": _shared_array,
    "init_declarator": _ballot_store,
    "initializer_list": warpfix_lanes.block_shape,
    "argument_list": warpfix_lanes.block_shape,
}


def apply(ctx: ScanContext, fixes: list[WarpFix]) -> None:
    """Add the fixes' edits to the conversion, each fix whole or not at all (never over the
    converter's, unless the fix renames a call whole), with a PK008 note for a deliberate choice."""
    for fix in fixes:
        if fix.suggest_only or ctx.regions.ranges and ctx.regions.kind_at(fix.anchor) in PROTECTED:
            continue   # AMD-only code, or NVIDIA code with an AMD branch: not this build's code
        if ctx.facts.amd_shim and fix.edits:   # ggml: its AMD build runs this code as it is
            fix = replace(fix, edits=(), note=PORTED_NOTE)
        taken = sorted((e.start, e.end) for e in ctx.edits)
        if fix.supersedes:
            ctx.edits[:] = [e for e in ctx.edits if e.what == "warp" or not _overlaps(e, [(f.start, f.end) for f in fix.edits])]
        elif any(_overlaps(e, taken) for e in fix.edits):
            continue
        for e in fix.edits:
            ctx.edit(e.start, e.end, e.text, what="warp")
        if fix.edits:
            ctx.metrics.warp_fixes += 1   # a note alone (a shape left by design) fixes nothing
        if fix.note:
            end = ctx.source.data.find(b"\n", fix.anchor)
            ctx.flag(WARP_FIX_CHOICE, fix.anchor, fix.anchor if end < 0 else min(end, fix.anchor + 1),
                     fix.note, subject=fix.note[:40])


def _overlaps(edit: Edit, taken: list[tuple[int, int]]) -> bool:
    return any(s < edit.end and edit.start < e or (s == e == edit.start == edit.end) for s, e in taken)


def suggest(findings: list[Finding], fixes: list[WarpFix], source: SourceFile) -> list[Finding]:
    """The audit's findings, those a fix resolves carrying its edits (JSON `autofix`, SARIF `fixes`)."""
    by_anchor = {(f.code, *source.position(f.anchor)): f for f in fixes if f.code}
    out = []
    for finding in findings:
        fix = by_anchor.get((finding.code, finding.line, finding.column))
        if fix is not None:
            finding = replace(finding, autofix=tuple(
                (*source.position(e.start), *source.position(e.end), e.text.decode("utf-8", "replace"))
                for e in sorted(fix.edits)))
        out.append(finding)
    return out
