"""`__nanosleep` in device code.

What it finds:
    Calls to `__nanosleep(ns)`, usually in spin-wait and back-off loops.

Why it matters on AMD GPUs:
    HIP has no `__nanosleep`. AMD GPUs offer `__builtin_amdgcn_s_sleep(n)`, which sleeps for
    about 64 clock cycles per unit rather than for a time: back-off timings must be re-tuned.

Example:
    while (atomicCAS(lock, 0, 1) != 0) __nanosleep(100);

Instead:
    `__builtin_amdgcn_s_sleep(2)` (a constant from 1 to 127), behind `#if defined(__HIP_PLATFORM_AMD__)`.

Effort:
    Under an hour per site.
"""

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.rule import define

RULE = define(__doc__, code="PK308", name="nanosleep", severity="low", category="kernel", gpu_only=True)
NAMES = (b"__nanosleep",)
REFINES = ("PK001", "PK002")


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    ctx.flag(RULE, view.start(node), view.end(node),
             "__nanosleep: HIP has none; use __builtin_amdgcn_s_sleep and re-tune the back-off",
             subject="__nanosleep")
