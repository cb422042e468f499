"""Headers that CUDA's headers bring in and HIP's do not: added where the code relies on them.

Code often uses what a header it includes includes in turn. Two such chains break in a port
(issue 32, found verifying karpathy/llm.c against ROCm 6.2's headers):
- CUDA's cublas_api.h (so cublas_v2.h, cublas.h, cublasLt.h, cublasXt.h) includes <cuda_fp16.h>
  and <cuda_bf16.h> (CUDA 13, cublas_api.h lines 73-74). hipBLAS and hipBLASLt include the old
  hip_bfloat16.h, not hip_bf16.h: `__hip_bfloat16` is unknown (llm.c's common.h, every unit).
- CUDA's cuda_runtime.h gives host code <math.h> (through crt/math_functions.h); HIP's
  hip_runtime.h declares the device overloads only, so a host `isfinite(x)` has no match.
Where a file includes the CUDA header and uses those names without including what declares
them, the HIP header is added on the line after the converted include. The bf16 chain also runs
through the project's own headers: bitsandbytes' csrc/ops.cuh includes cuBLAS and ops.cu, which
includes ops.cuh, uses `__nv_bfloat16` (`unknown type name '__hip_bfloat16'` after conversion), so
a header that includes cuBLAS gets hip/hip_bf16.h too where any source of the tree names a bf16
type (ProjectFacts.bf16_tree, learned in project/pipeline.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.edits import Edit, EditKind
from ..core.needles import finditer_from
from ..core.source import include_matches
from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from ..engine.platform.regions import PROTECTED
from ..core.tables.mappings import Version


@dataclass(frozen=True)
class Transitive:
    via: tuple[str, ...]          # CUDA headers that include it
    header: str                   # what the HIP side needs included
    since: Version | None         # the first ROCm release that has it
    uses: re.Pattern[bytes]       # the CUDA code's use of what it declares
    starts: tuple[bytes, ...]     # what each match of `uses` starts with (core/needles.finditer_from)
    has: tuple[str, ...]          # includes that already provide it
    host_only: bool = False       # only a use in host code needs it (device code has HIP's overloads)
    tree_wide: bool = False       # a header also gets it when other files of the tree use it (ProjectFacts.bf16_tree)


RULES = (
    Transitive(("cublas_v2.h", "cublas.h", "cublas_api.h", "cublasLt.h", "cublasXt.h"), "hip/hip_bf16.h", (5, 7, 0),
               re.compile(rb"\b(?:__nv_bfloat162?|nv_bfloat162?|__float2bfloat16\w*|__bfloat162float)\b"),
               (b"__nv_bfloat16", b"nv_bfloat16", b"__float2bfloat16", b"__bfloat162float"),
               ("cuda_bf16.h", "hip/hip_bf16.h"), tree_wide=True),
    Transitive(("cuda_runtime.h",), "math.h", None, re.compile(rb"\b(?:isfinite|isnan|isinf)\s*\("),
               (b"isfinite", b"isnan", b"isinf"),
               ("math.h", "cmath"), host_only=True),
)
_VIA = tuple({name.encode() for rule in RULES for name in rule.via})   # a file naming none needs no pass
_HEADERS = (".h", ".cuh", ".hpp", ".hh", ".hxx", ".inl")


def add(ctx: ScanContext) -> None:
    """After the walk: each header a file needs from a chain CUDA's headers gave it."""
    data = ctx.source.data
    if not any(name in data for name in _VIA):
        return
    included = [(m.group(1).decode("utf-8", "replace"), m) for m in include_matches(data)]
    names = {name for name, _ in included}
    for rule in RULES:
        if rule.since is not None and ctx.target < rule.since or names & set(rule.has):
            continue
        via = next((m for name, m in included if name in rule.via), None)
        if via is None or ctx.regions.ranges and ctx.regions.kind_at(via.start()) in PROTECTED:
            continue
        parsed = ctx.source.parse_bytes   # the tree's offsets (a BOM is not part of it)
        if not any(not rule.host_only or _in_host_code(ctx, m.start()) for m in finditer_from(rule.uses, parsed, rule.starts)) \
                and not (rule.tree_wide and ctx.facts.bf16_tree and ctx.source.rel.endswith(_HEADERS)):
            continue
        end = data.find(b"\n", via.end())
        at = len(data) if end < 0 else end + 1
        text = f"#include <{rule.header}>".encode() + ctx.source.newline
        if end < 0:
            text = ctx.source.newline + text
        ctx.edits.append(Edit(at, at, text, f"{rule.header} (CUDA's {via.group(1).decode()} includes it)",
                              kind=EditKind.TRANSITIVE_INCLUDE))


def _in_host_code(ctx: ScanContext, pos: int) -> bool:
    """Inside a function that is not __global__ or __device__-only (a __host__ __device__ one counts)."""
    node = ctx.root.descendant_for_byte_range(pos, pos) if ctx.root is not None else None
    while node is not None and node.type != "function_definition":
        node = node.parent
    if node is None:
        return False
    body = node.child_by_field_name("body")
    head = ctx.source.parse_bytes[node.start_byte:body.start_byte if body is not None else node.end_byte]
    return b"__global__" not in head and (b"__device__" not in head or b"__host__" in head)


def _finish_pass(ctx: ScanContext, view: View, root) -> None:
    add(ctx)


# after the includes it reads and the headers the earlier finish passes add
PASSES = (Pass("transitive", "finish", _finish_pass, after=("polyfills",), keywords=()),)   # reads the converted includes
