"""Inline PTX that HIP has exactly: the block becomes its HIP form (issue 48).

`asm volatile("mov.u32 %0, %laneid;" : "=r"(ret))` (tiny-cuda-nn's lane_id()) becomes
`ret = __lane_id()`, and nccl-tests' `asm volatile("red.global.add.u64 [%0],%1;" :: "l"(bad_elt_n),
"l"(bad) : "memory")` becomes `atomicAdd((unsigned long long*)(bad_elt_n), (unsigned long long)(bad))`.
Which blocks qualify, and why each form is exact, is engine/ptx.py's, which rule PK301 reads too:
a block rewritten here is a converted site (refs_converted), not a finding. Only the bytes around
the operands change, so the names inside them are converted as anywhere else. The platform model
keeps AMD-only and already ported code from this pass, as from every other (commands/scan/walk.py).

`__lane_id()` is AMD's alone: HIP's NVIDIA backend declares none, so where polyfills are on the read
becomes `portkit_lane_id()`, which the generated header defines as `__lane_id()` on AMD and as the
very PTX the block held on NVIDIA (mappings/polyfills.toml); with `--no-polyfills` it stays
`__lane_id()`, which builds for AMD only.
"""

from __future__ import annotations

from tree_sitter import Node

from ..core.edits import EditKind
from ..engine import ptx
from ..engine.context import ScanContext, View
from ..engine.keywords import ASM
from ..engine.passes import Pass
from . import polyfills

LANE_ID = "__lane_id()"
LANE_ID_POLYFILL = "portkit_lane_id"


def handle(ctx: ScanContext, view: View, node: Node) -> None:
    """A `gnu_asm_expression`: its HIP form where it has an exact one (engine/ptx.equivalent)."""
    found = ptx.equivalent(view, node)
    if found is None:
        return
    ctx.metrics.refs_found += 1
    ctx.metrics.refs_converted += 1
    hip, pieces = found.hip, found.pieces
    if hip == LANE_ID and _lane_id_polyfill(ctx):
        hip = f"{LANE_ID_POLYFILL}()"
        pieces = tuple((start, end, text.replace(LANE_ID.encode(), hip.encode())) for start, end, text in pieces)
        ctx.metrics.polyfills.add(LANE_ID_POLYFILL)
    for start, end, text in pieces:
        ctx.edit(start, end, text, what=f"inline PTX -> {hip}", kind=EditKind.INLINE_PTX)


def _lane_id_polyfill(ctx: ScanContext) -> bool:
    """Whether the lane read goes through the polyfill (both vendors) rather than `__lane_id()` (AMD
    only): polyfills on, and the project defines no `portkit_lane_id` of its own."""
    record = polyfills.by_name().get(LANE_ID_POLYFILL)
    return ctx.options.polyfills and record is not None and record.serves_release(ctx.target) and \
        LANE_ID_POLYFILL not in ctx.facts.project_defined and not polyfills.defined_here(ctx, (LANE_ID_POLYFILL,))


PASSES = (Pass("inline_ptx", "walk", handle, capture="node", kinds=("gnu_asm_expression",), keywords=(ASM,),
               gpu_only=True),)
