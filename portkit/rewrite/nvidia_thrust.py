"""rocThrust's names, made to build through HIP's NVIDIA backend too.

The conversion writes Thrust's CUDA backend as rocThrust's (`thrust::cuda::par` becomes
`thrust::hip::par`, `<thrust/system/cuda/...>` becomes `<thrust/system/hip/...>`): on AMD that is
rocThrust. Through HIP's NVIDIA backend the same source is compiled by nvcc with CUDA's own
Thrust (CCCL), which has neither `thrust::hip` ("name followed by "::" must be a class or
namespace name") nor the `thrust/system/hip/` headers.

So a file where the conversion wrote `thrust::hip` gets a block after its HIP runtime header,
active only on HIP's NVIDIA platform, that names CUDA's backend `thrust::hip` (a namespace alias:
`namespace thrust { namespace hip = cuda; }`, which in CCCL finds `thrust::cuda` inside Thrust's
inline ABI namespace; an alias may be declared again for the same namespace, so two converted
headers in one translation unit are fine). And each converted `thrust/system/cuda/` include is
written for both platforms: CUDA's header on the NVIDIA platform, rocThrust's otherwise.

The conversion also writes rocThrust's `thrust::system::hip::` (CUDA Thrust's
`thrust::system::cuda::errc`) and `thrust::[system::]hip_category()` (`cuda_category()`), which
CUDA's Thrust lacks too: the block then adds `thrust::system::hip` as an alias of
`thrust::system::cuda` (thrust/system/cuda/error.h declares both it and `cuda_category`) and
`hip_category` as a function returning `cuda_category()`, in `thrust::system` with
`using system::hip_category;` in `thrust` as rocThrust declares it. A function may be defined
only once per translation unit, so that definition sits under an #ifndef of its own.
"""

from __future__ import annotations

import re

from ..core.edits import Edit, EditKind
from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from .includes import insertion_point
from .nvidia_votes import PLATFORM, after_runtime_header, keep_block

MARK = b"// rocThrust's thrust::hip through HIP's NVIDIA backend"
_QUALIFIER = re.compile(rb"\bthrust\s*::\s*$")
_SYSTEM = re.compile(rb"\bthrust\s*::\s*system\s*::\s*$")
_BACKEND = b"thrust/system/cuda/"
_END = re.compile(rb"#endif(?:\s*#endif)?")   # the block's #endif (after the category's own, if any)
CATEGORY_GUARD = b"PORTKIT_THRUST_HIP_CATEGORY"


def helper(newline: bytes, include: bool, system: bool = False, category: bool = False) -> bytes:
    """The block; `system`: the conversion wrote thrust::system::hip, `category`: hip_category."""
    lines = [PLATFORM, MARK + b", which builds with CUDA's Thrust: its CUDA backend under rocThrust's name"]
    if include:
        lines.append(b"#include <hip/hip_runtime.h>")
    lines += [b"#include <thrust/system/cuda/execution_policy.h>"]
    if system or category:
        lines.append(b"#include <thrust/system/cuda/error.h>")
    lines.append(b"namespace thrust { namespace hip = cuda; }")
    if system:
        lines.append(b"namespace thrust { namespace system { namespace hip = cuda; } }")
    if category:
        lines += [b"#ifndef " + CATEGORY_GUARD, b"#define " + CATEGORY_GUARD,
                  b"namespace thrust { namespace system { inline const error_category& hip_category() "
                  b"{ return cuda_category(); } } using system::hip_category; }",
                  b"#endif"]
    lines.append(b"#endif")
    return newline.join(lines) + newline


def keep(ctx: ScanContext) -> None:
    """A re-run over converted code leaves the block as it is (its `cuda` names are CUDA's Thrust's
    on the NVIDIA platform), as nvidia_votes.keep does for its helper."""
    keep_block(ctx, MARK, _END)


def written(ctx: ScanContext) -> tuple[bool, bool, bool]:
    """Which of rocThrust's names CUDA's Thrust lacks this conversion wrote: (any, `thrust::system::hip`
    in place of `thrust::system::cuda`, `hip_category`); `thrust::hip` for `thrust::cuda` is the first's."""
    data = ctx.source.data
    renamed = [e.start for e in ctx.edits if e.kind == EditKind.NAME and e.text == b"hip" and data[e.start:e.end] == b"cuda"]
    policy = any(_QUALIFIER.search(data, max(0, start - 40), start) for start in renamed)
    system = any(_SYSTEM.search(data, max(0, start - 60), start) for start in renamed)
    category = any(e.kind == EditKind.NAME and e.text == b"hip_category" for e in ctx.edits)
    return policy or system or category, system, category


def add(ctx: ScanContext, fallback) -> None:
    """After the scan: the alias block, if the conversion wrote thrust::hip; each converted
    thrust/system/cuda/ include guarded by platform. `fallback()`: where a file without the HIP
    runtime header gets the block (includes.insertion_point), worked out only if needed."""
    data, newline = ctx.source.data, ctx.source.newline
    for e in [e for e in ctx.edits if e.kind == EditKind.INCLUDE and _BACKEND in data[e.start:e.end]]:
        line_start = data.rfind(b"\n", 0, e.start) + 1
        line_end = data.find(b"\n", e.end)
        line_end = len(data) if line_end < 0 else line_end
        if data[line_end - 1:line_end] == b"\r":
            line_end -= 1
        if line_start == line_end or data[line_start:line_end].lstrip()[:1] != b"#":
            continue   # not a directive line of its own
        original = data[line_start:line_end]
        ctx.edits.append(Edit(line_start, line_start, PLATFORM + newline + original + newline + b"#else" + newline,
                              "nvidia thrust", kind=EditKind.PLATFORM_INCLUDE))
        ctx.edits.append(Edit(line_end, line_end, newline + b"#endif", "nvidia thrust",
                              kind=EditKind.PLATFORM_INCLUDE))
    if MARK in data:
        return
    wanted, system, category = written(ctx)
    if wanted:
        after_runtime_header(ctx, fallback(), lambda include: helper(newline, include, system, category),
                             "nvidia thrust", EditKind.NVIDIA_THRUST)


def _finish_pass(ctx: ScanContext, view: View, root) -> None:
    """rocThrust's names build with CUDA's Thrust on HIP's NVIDIA platform too."""
    keep(ctx)
    add(ctx, lambda: insertion_point(ctx, root)[0])


def _wanted(ctx: ScanContext, view: View) -> bool:
    return ctx.edits_read and b"thrust" in view.data


# after nvidia_votes: both insert after the runtime header, the votes' helper first
PASSES = (Pass("nvidia_thrust", "finish", _finish_pass, after=("nvidia_votes",), when=_wanted, keywords=(b"thrust",)),)
