"""A CUDA API whose HIP counterpart is experimental.

Reported by the converter in audit mode, from the `experimental` status of the mapping tables.

What it finds:
    Names the converter rewrites to a HIP API that ROCm documents as experimental (for example
    parts of the graph and memory-pool APIs in some releases).

Why it matters on AMD GPUs:
    Experimental HIP APIs may change signature or behaviour between ROCm releases and are less
    tested; code that depends on them needs a test on every ROCm upgrade.

Example:
    cudaGraphInstantiateWithParams(&exec, graph, &params);

Instead:
    Keep the call but cover it with a test, or use a stable API with the same effect.

Effort:
    An hour or two per call site to test.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK102", name="experimental-hip-api", severity="low", category="api")
