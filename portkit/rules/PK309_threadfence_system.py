"""`__threadfence_system`: ordering with the host or other GPUs.

What it finds:
    Calls to `__threadfence_system()`, which order a kernel's writes for the host and peer GPUs
    (flags in mapped pinned memory, producer/consumer queues across devices).

Why it matters on AMD GPUs:
    HIP provides the fence, but system-scope visibility on AMD GPUs also depends on the memory:
    host memory must be fine-grained/coherent (`hipHostMallocCoherent`, or
    `hipExtMallocWithFlags(..., hipDeviceMallocFinegrained)` for device memory). With the default
    coarse-grained allocations the host may never see the flag.

Example:
    data[i] = v; __threadfence_system(); flag[0] = 1;   // host polls flag

Instead:
    Allocate the shared buffers coherent (hipHostMalloc with hipHostMallocCoherent), and test the
    protocol on the target GPU.

Effort:
    An hour or two per protocol, with a test.
"""

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.rule import define

RULE = define(__doc__, code="PK309", name="threadfence-system", severity="low", category="kernel", gpu_only=True)
NAMES = (b"__threadfence_system",)


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    ctx.flag(RULE, view.start(node), view.end(node),
             "__threadfence_system: system-scope ordering on AMD needs fine-grained (coherent) memory",
             subject="__threadfence_system")
