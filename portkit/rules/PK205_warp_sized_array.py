"""A shared array of 32 indexed by lane or warp.

What it finds:
    `__shared__` arrays declared with 32 elements, a warp-size constant or a block size in
    32-lane warps (`partial[kBlock / 32]`) that the same function indexes with a lane or warp
    index (`shared[lane]`, `partial[warp_id]`). An array sized by a warp-size name is reported
    only where the same file defines that name as 32 (the fix of the #define fixes the array).

Why it matters on AMD GPUs:
    With 64-lane wavefronts, a lane index runs to 63 and overruns a 32-element array; the
    per-warp partial-sum layout (one slot per warp, read back by "lane < 32") no longer matches
    the number of wavefronts in the block. Widened to the wavefront, an array written by warp
    index and read back at every lane (`v = s[lane_id]; v = warp_reduce_sum(v);`, ggml's norm.cu)
    has 1024 / 64 = 16 partials written and 64 read: 48 reads of shared memory nobody wrote.

Example:
    __shared__ float partial[32];
    if (lane == 0) partial[warp_id] = sum;
    sum = (threadIdx.x < blockDim.x / 32) ? partial[lane] : 0;

Instead:
    Size the array for the smallest wavefront count and the largest lane count you support
    (`partial[1024 / 32]` read by `lane < blockDim.x / warpSize`), with the warp size from
    `warpSize`; a read after per-warp writes takes only the partials written
    (`lane < (blockDim.x + W - 1) / W ? s[lane] : 0.0f`, the identity of the reduction that follows).

Effort:
    One to two hours per kernel, with validation.
"""

import re

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..core.edits import Edit
from ..engine import syntax
from ..engine.rule import define
from . import warpfix
from ._warppartials import unguarded_reads
from ._warpfix_model import CONSTANT, WarpFix, attached

RULE = define(__doc__, code="PK205", name="warp-sized-array", severity="medium", category="warp", gpu_only=True)
NODES = ("array_declarator",)
KEYWORDS = (b"__shared__",)   # checks and fixes read __shared__ arrays only
_ARITH_32 = re.compile(rb"/\s*32\b|%\s*32\b|&\s*31\b|>>\s*5\b")
_INDEX = re.compile(rb"\[\s*([^\]]*)\]")
_LANE_OR_WARP = re.compile(rb"\b(?:lane\w*|Lane\w*|warp\w*|Warp\w*|wid|lid)\b|>>\s*5\b|/\s*32\b|%\s*32\b|&\s*31\b")


def check(ctx: ScanContext, view: View, node: Node) -> None:
    size = node.child_by_field_name("size")
    if size is None or not (size.text.strip() == b"32" or syntax.warpish_name(size.text) or _warps_per_block(size)):
        return
    if syntax.warpish_name(size.text) and warp_size_definition(view.data, size.text.strip()) is None:
        return   # defined elsewhere (reported there, PK201) or per target (--fix warp): right once that is
    declaration = syntax.enclosing(node, "declaration")
    if declaration is None or b"__shared__" not in syntax.declaration_type(declaration):
        return
    name = syntax.declared_name(node)
    scope = syntax.enclosing(node, "function_definition")
    if not name or scope is None:
        return
    if _warps_per_block(size) and not _ARITH_32.search(scope.text.replace(size.text, b"")):
        return   # kBlock / 32 slots are enough for any wavefront of 32 lanes or more once the reads use warpSize
    if _indexed_by_lane_or_warp(scope, name):
        ctx.flag(RULE, view.start(node), view.end(node),
                 f"__shared__ {name.decode(errors='replace')}[{size.text.decode(errors='replace')}] is "
                 "indexed by lane or warp: sized for 32-lane warps, an AMD wavefront has 64 lanes"
                 + _by_hand(scope, name, declaration),
                 subject=name.decode(errors="replace"), fixed_by=attached(ctx, view, node, RULE.code, view.start(node)))


def _by_hand(scope: Node, name: bytes, declaration: Node) -> str:
    """What to write where --fix warp will not guard a read of the partials (its reduction unknown)."""
    reads = [r for r in unguarded_reads(scope, name, _element(declaration)) if r.identity is None or r.width is None]
    if not reads:
        return ""
    return ("; written by warp and read at every lane, a wider array reads partials no wavefront wrote: "
            f"--fix warp leaves it, write `{reads[0].guard(name).decode(errors='replace')}` by hand "
            "(IDENTITY: the reduction's, 0 for a sum, -INFINITY for a max)")


def _element(declaration: Node) -> bytes:
    found = declaration.child_by_field_name("type")
    return found.text if found is not None else b""


def _indexed_by_lane_or_warp(scope: Node, name: bytes) -> bool:
    """The function indexes array `name` with a lane or warp index (`s[lane]`, `s[warp_id]`,
    `s[threadIdx.x % 32]`), not as a tile or a table (`tile[threadIdx.y][threadIdx.x]`, `taps[k]`)."""
    uses = re.finditer(rb"\b" + re.escape(name) + rb"\s*\[\s*([^\]]*)\]", scope.text)
    return any(_LANE_OR_WARP.search(m.group(1)) for m in uses)


def warp_size_definition(data: bytes, name: bytes) -> re.Match | None:
    """`#define NAME 32` in this file (group 1: the value), which `--fix warp` makes per target."""
    return re.search(rb"#[ \t]*define[ \t]+" + re.escape(name) + rb"[ \t]+(32[uU]?)\b", data)


def _warps_per_block(size: Node) -> bool:
    """`kBlock / 32`: one slot per 32-lane warp of the block."""
    size = syntax.unparen(size)
    if size.type != "binary_expression" or syntax.operator(size) != b"/":
        return False
    left, right = size.child_by_field_name("left"), size.child_by_field_name("right")
    return left is not None and right is not None and syntax.int_value(syntax.unparen(right)) == 32 \
        and syntax.block_size_name(left.text)


def fix_shared_array(view: View, node: Node) -> WarpFix | None:
    """--fix warp (FIX_NODES): `__shared__ T s[32]` indexed by lane or warp is sized for
    the target's wavefront."""
    size = node.child_by_field_name("size")
    declaration = syntax.enclosing(node, "declaration")
    if size is None or declaration is None or b"__shared__" not in syntax.declaration_type(declaration):
        return None
    define = warp_size_definition(view.data, size.text.strip()) if syntax.warpish_name(size.text) else None
    name, scope = syntax.declared_name(node), syntax.enclosing(node, "function_definition")
    reads = unguarded_reads(scope, name, _element(declaration)) if name and scope is not None else []
    if any(r.identity is None or r.width is None for r in reads):
        return None   # refused: the finding says what to write by hand
    guards = tuple(e for r in reads for e in (Edit(r.start, r.start, b"(%s < (blockDim.x + %s - 1) / %s ? "
                                                   % (r.lane, r.width, r.width), "warp"),
                                              Edit(r.end, r.end, b" : %s)" % r.identity, "warp")))
    if define is not None and guards:   # the #define's fix (PK201) widens it; the reads are this one's
        return WarpFix("PK205", view.start(node), guards, note=_GUARD_NOTE)
    if define is not None:   # the #define's fix (PK201) resolves it: shown here, applied there
        return WarpFix("PK205", view.start(node), (Edit(define.start(1), define.end(1), CONSTANT, "warp"),),
                       suggest_only=True)
    if size.text.strip() != b"32":
        return None
    if not name or scope is None or not _indexed_by_lane_or_warp(scope, name):
        return None   # a tile or a table of 32 (the rule reports none): its size is not the warp's
    # per target, not the largest (64) everywhere: a fixed 64 doubles the array on NVIDIA too, and
    # llm.c's [128][32] tiles, when this fixer still widened them, made 64 KiB of static shared
    # memory there, which NVIDIA's 48 KiB refuses (benchmarks/results/gpu_llmc_check.txt; tiles are
    # no longer touched, the lane test above); slots per warp need no more than 32
    return WarpFix("PK205", view.start(node), (Edit(view.start(size), view.end(size), CONSTANT, "warp"),) + guards,
                   constant=True,
                   note="sized per target, PORTKIT_WAVEFRONT_SIZE slots: 64 on gfx9 (twice the original's shared "
                        "memory), 32 on RDNA and through HIP's NVIDIA backend (as the original)"
                        + ("; " + _GUARD_NOTE if guards else ""))


_GUARD_NOTE = ("its reads at every lane take only the partials the block's warps wrote (the rest: the identity of "
               "the reduction that follows), or a 64-lane wavefront reads shared memory nobody wrote")


FIX_FAMILY = warpfix.FAMILY
FIX_NODES = {"array_declarator": (fix_shared_array,)}
