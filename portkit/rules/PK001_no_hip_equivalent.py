"""A CUDA name that HIP has no counterpart for.

Reported by the converter (portkit/rewrite/), from the mapping tables.

What it finds:
    A CUDA function, type, enum, macro or header that the mapping tables (mappings/*.toml) mark
    as having no HIP equivalent. The converter leaves it as it is.

Why it matters on AMD GPUs:
    The file will not compile for AMD until the use is rewritten: HIP simply does not declare the
    name.

Example:
    cudaStreamBeginCaptureToGraph(stream, graph, nullptr, nullptr, 0, mode);  // CUDA 12.3

Instead:
    Rewrite the call with what HIP offers (the note in the mapping table says what), or guard it
    with #ifdef __HIP_PLATFORM_AMD__ and keep a fallback.

Effort:
    From an hour for a call with a close HIP alternative to days for a feature HIP lacks; see
    mappings/effort.toml.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK001", name="no-hip-equivalent", severity="high", category="api",
              breaks_build=True, outcome="left")
