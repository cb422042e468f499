"""Dynamic parallelism: kernels launched from device code.

What it finds:
    `<<<...>>>` launches inside `__global__`/`__device__` functions, and the device-side runtime
    calls that go with them (`cudaDeviceSynchronize`, `cudaGetParameterBuffer`,
    `cudaLaunchDevice`, `cudaStreamCreateWithFlags` in device code).

Why it matters on AMD GPUs:
    HIP has no dynamic parallelism: a kernel cannot launch kernels. There is no flag to turn on;
    the control flow must move to the host or into the kernel.

Example:
    __global__ void parent(int* d) { child<<<1, 32>>>(d); }

Instead:
    Launch the child kernels from the host (in a stream, or a HIP graph), flatten the recursion
    into a loop over a work queue, or use a persistent kernel.

Effort:
    Days per algorithm; it is a redesign, hence a blocker.
"""

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine import syntax
from ..engine.rule import define

RULE = define(__doc__, code="PK302", name="dynamic-parallelism", severity="blocker", category="kernel",
              breaks_build=True, gpu_only=True)
NODES = ("kernel_call_syntax",)
NAMES = (b"cudaDeviceSynchronize", b"cudaGetParameterBuffer", b"cudaLaunchDevice",
         b"cudaStreamCreateWithFlags", b"cudaStreamFireAndForget", b"cudaStreamTailLaunch")
KEYWORDS = (b"<<<", frozenset(NAMES))
REFINES = ("PK001", "PK003", "PK101")


def check(ctx: ScanContext, view: View, node: Node) -> None:
    if not syntax.in_device_code(node):
        return
    call = node.parent
    callee = call.child_by_field_name("function") if call is not None else None
    name = callee.text.decode(errors="replace") if callee is not None else "kernel"
    ctx.flag(RULE, view.start(node), view.end(node),
             f"kernel {name} launched from device code: HIP has no dynamic parallelism", subject=name)


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    if node.parent is None or node.parent.type != "call_expression" or not syntax.in_device_code(node):
        return
    name = node.text.decode()
    ctx.flag(RULE, view.start(node), view.end(node),
             f"{name} in device code (dynamic parallelism): HIP has no device-side runtime", subject=name)
