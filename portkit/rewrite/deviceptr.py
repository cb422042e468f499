"""CUdeviceptr arithmetic rewritten so that it compiles with hipDeviceptr_t, a void* (issue 48).

`cuMemMap(m_base_address + m_size, ...)` on a `CUdeviceptr m_base_address` (tiny-cuda-nn's
gpu_memory.h) becomes `hipMemMap((hipDeviceptr_t)((unsigned long long)m_base_address + m_size), ...)`:
CUDA's own integer arithmetic, back to a device pointer where one is expected. Which expressions,
and why each keeps its meaning, is engine/deviceptr_plan.py's `plan`, which PK014 reads too: the audit
reports exactly the uses left, and counts each one rewritten as converted.
"""

from __future__ import annotations

from tree_sitter import Node

from ..core.edits import EditKind
from ..engine import deviceptr_plan
from ..engine.context import ScanContext, View
from ..engine.passes import Pass


def check(ctx: ScanContext, view: View, name: Node) -> None:
    """On the file's first CUdeviceptr name: every rewrite of the file's plan."""
    if view.base or not ctx.first(check):
        return
    found = deviceptr_plan.of_file(ctx, view)
    for start, end, text in found.edits:
        ctx.edit(start, end, text, what="CUdeviceptr arithmetic", kind=EditKind.CAST)
    ctx.metrics.refs_found += found.expressions
    ctx.metrics.refs_converted += found.expressions


# after the other name passes (its edits are insertions around operands, which no other pass edits)
PASSES = (Pass("deviceptr", "walk", check, capture="name", names=lambda ctx: (deviceptr_plan.CUDA_NAMES,),
               after=("device_printf",)),)
