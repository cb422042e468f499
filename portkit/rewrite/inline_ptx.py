"""Inline PTX that HIP has exactly: the block becomes its HIP form (issue 48).

`asm volatile("mov.u32 %0, %laneid;" : "=r"(ret))` (tiny-cuda-nn's lane_id()) becomes
`ret = __lane_id()`, and nccl-tests' `asm volatile("red.global.add.u64 [%0],%1;" :: "l"(bad_elt_n),
"l"(bad) : "memory")` becomes `atomicAdd((unsigned long long*)(bad_elt_n), (unsigned long long)(bad))`.
Which blocks qualify, and why each form is exact, is engine/ptx.py's, which rule PK301 reads too:
a block rewritten here is a converted site (refs_converted), not a finding. Only the bytes around
the operands change, so the names inside them are converted as anywhere else. The platform model
keeps AMD-only and already ported code from this pass, as from every other (commands/scan/walk.py).
"""

from __future__ import annotations

from tree_sitter import Node

from ..core.edits import EditKind
from ..engine import ptx
from ..engine.context import ScanContext, View
from ..engine.passes import Pass


def handle(ctx: ScanContext, view: View, node: Node) -> None:
    """A `gnu_asm_expression`: its HIP form where it has an exact one (engine/ptx.equivalent)."""
    found = ptx.equivalent(view, node)
    if found is None:
        return
    ctx.metrics.refs_found += 1
    ctx.metrics.refs_converted += 1
    for start, end, text in found.pieces:
        ctx.edit(start, end, text, what=f"inline PTX -> {found.hip}", kind=EditKind.INLINE_PTX)


PASSES = (Pass("inline_ptx", "walk", handle, capture="node", kinds=("gnu_asm_expression",)),)
