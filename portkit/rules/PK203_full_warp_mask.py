"""A full 32-bit lane mask (0xffffffff).

What it finds:
    0xffffffff passed as the mask of a `*_sync` warp intrinsic, compared with the result of
    `__ballot_sync`/`__activemask`, or defined as a named mask constant (`#define FULL_MASK
    0xffffffff`).

Why it matters on AMD GPUs:
    A wavefront has 64 lanes, so a full mask is 64 bits wide. A 32-bit "all lanes" mask names
    only lanes 0-31: comparisons with it fail when all 64 lanes are active, and HIP's
    `*_sync` intrinsics (ROCm 6.2+) given it leave half the wavefront out.

Example:
    if (__ballot_sync(0xffffffff, pred) == 0xffffffff) { ... }

Instead:
    Compare with the active mask of the wavefront (`__ballot(1)` in HIP, a 64-bit value), use
    `__all`/`__any` for "every lane"/"some lane", and drop masks HIP does not need.

Effort:
    Under an hour per site.
"""

import re

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine import syntax
from ..engine.rule import define

RULE = define(__doc__, code="PK203", name="full-warp-mask", severity="medium", category="warp", gpu_only=True)
NODES = ("number_literal", "preproc_def")
# 0xFFFFFFFF as C++ may spell it (any case, leading zeros, digit separators, suffixes; decimal,
# octal, binary): the literal its checks read (LITERALS, and #define values)
_FULL_MASK = re.compile(rb"(?i)0x[0']*(?:f'?){7}f|4'?294'?967'?295|0b[01']{32}|\b0[0-7']{11}")


def _may_find(text) -> bool:
    """The literal among the file's tokens, by what every spelling of it holds (a digit separator
    splits one: then over the bytes)."""
    words = text.words
    return b"ffffffff" in words.lower() or b"4294967295" in words or b"37777777777" in words \
        or b"1" * 32 in words or (
        _SEPARATED.search(text.data) is not None and _FULL_MASK.search(text.data) is not None)


_SEPARATED = re.compile(rb"[0-9a-fA-F]'[0-9a-fA-F]")   # a digit separator


KEYWORDS = (_may_find,)
LITERALS = (0xFFFFFFFF,)
REFINES = ("PK004",)
FULL = 0xFFFFFFFF


def check(ctx: ScanContext, view: View, node: Node) -> None:
    if node.type == "preproc_def":
        name = node.child_by_field_name("name")
        text, value = syntax.define_value(node)
        if name is not None and value is not None and _lane_mask_name(name.text) \
                and text.lower().rstrip(b"u") == b"0xffffffff":
            ctx.flag(RULE, view.start(value), view.start(value) + len(value.text.split()[0]),
                     f"{name.text.decode(errors='replace')} is a 32-lane mask; an AMD wavefront has 64 lanes"
                     + _unused(ctx, view, name.text), subject=name.text.decode(errors="replace"),
                     severity=None if _used(ctx, view, name.text) else "info")
        return
    if syntax.int_value(node) != FULL or not node.text.lower().startswith(b"0x"):
        return
    found = syntax.call_of_argument(node)
    if found is not None:
        call, index = found
        name = syntax.callee_name(call)
        if index == 0 and name.startswith(b"__") and name.endswith(b"_sync"):
            # reported at the call, where it replaces the converter's "mask dropped" note (PK004)
            function = call.child_by_field_name("function")
            ctx.flag(RULE, view.start(function), view.end(call),
                     f"{name.decode()} with mask 0xffffffff names 32 lanes; an AMD wavefront has 64 "
                     "(the converter drops the mask: check that every lane takes part)",
                     subject=name.decode())
        return
    parent = syntax.up(node)
    if parent is None:
        return
    if parent.type == "binary_expression" and syntax.operator(parent) in (b"==", b"!="):
        other = syntax.other_operand(parent, node)
        if other is not None and (b"ballot" in other.text.lower() or b"activemask" in other.text.lower()
                                  or b"mask" in other.text.lower()):
            ctx.flag(RULE, view.start(parent), view.end(parent),
                     "comparing a lane mask with 0xffffffff assumes 32 lanes; an AMD wavefront has 64",
                     subject="compare")
        return
    if parent.type == "init_declarator":
        name = parent.child_by_field_name("declarator")
        declaration = parent.parent
        if name is not None and _lane_mask_name(syntax.declared_name(name)) and declaration is not None \
                and b"const" in syntax.declaration_type(declaration):
            declared = syntax.declared_name(name)
            ctx.flag(RULE, view.start(node), view.end(node),
                     f"{declared.decode(errors='replace')} is a 32-lane mask; an AMD wavefront has 64 lanes"
                     + _unused(ctx, view, declared), subject=name.text.decode(errors="replace"),
                     severity=None if _used(ctx, view, declared) else "info")


def _used(ctx: ScanContext, view: View, name: bytes) -> bool:
    """The constant may still matter: a header (its users are elsewhere), a file with `*_sync`
    calls left, or a use after the definition. Once the converter dropped every mask (HIP's
    mask-less forms) an unused full mask is harmless."""
    if ctx.source.rel.endswith((".h", ".cuh", ".hpp", ".hxx", ".inl")) or b"_sync(" in view.data:
        return True
    return len(re.findall(rb"\b" + re.escape(name) + rb"\b", view.data)) > 1


def _unused(ctx: ScanContext, view: View, name: bytes) -> str:
    return "" if _used(ctx, view, name) else " (unused, no *_sync call left in this file: harmless)"


def _lane_mask_name(name: bytes) -> bool:
    """FULL_MASK, kFullWarpMask, ALL_LANES, LANE_MASK: a lane mask (TAG_MASK is data)."""
    lower = name.lower()
    if b"lanes" in lower and (b"all" in lower or b"full" in lower):
        return True   # ALL_LANES, kFullLanes
    return b"mask" in lower and any(w in lower for w in (b"full", b"warp", b"lane", b"all", b"active"))
