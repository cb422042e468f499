"""HIP's mask-less warp votes, made to build through HIP's NVIDIA backend too (issue 31).

The conversion writes `__ballot_sync(mask, p)` as HIP's `__ballot(p)` (and `__any_sync`,
`__all_sync` as `__any`, `__all`; `--fix warp` writes `__all` for a ballot compared with the full
mask): on AMD that is the vote of the wavefront's active lanes, and ROCm's own `_sync` forms take
64-bit masks that CUDA's 32-bit ones do not fit. Through HIP's NVIDIA backend the same source is
compiled by nvcc, where `__ballot(p)` is CUDA's pre-Volta vote, which ptxas refuses for sm_70 and
later ("vote without .sync"). HIP's NVIDIA header maps the mask-less shuffles to their `_sync`
forms (`#define __shfl(...) __shfl_sync(0xffffffff, ...)`), but not the votes, in 5.2 and since.

So a file where the conversion wrote a mask-less vote gets a small helper after its HIP runtime
header, active only on HIP's NVIDIA platform: each vote it uses is the `_sync` form over
`__activemask()`, the lanes active at the call, which is what the mask-less form means on AMD.
It includes HIP's runtime header first, so CUDA's own declarations of the mask-less intrinsics are
read before the macros exist, wherever the helper lands (a header with no includes of its own).
"""

from __future__ import annotations

import re

from ..core.edits import Edit, EditKind
from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from .includes import RUNTIME_HEADER, insertion_point
from .polyfills import line_end

VOTES = {b"__ballot": b"__ballot_sync", b"__any": b"__any_sync", b"__all": b"__all_sync"}
MARK = b"// HIP's mask-less votes through HIP's NVIDIA backend"
PLATFORM = b"#if defined(__HIP_PLATFORM_NVIDIA__) || defined(__HIP_PLATFORM_NVCC__)"


def helper(names: list[bytes], newline: bytes, include: bool) -> bytes:
    """The helper block for the votes named (each defined once per translation unit); `include`
    where it does not follow HIP's runtime header already."""
    lines = [PLATFORM,
             MARK + b" (sm_70+ has only the _sync forms): the lanes active here vote, as on AMD"]
    if include:
        lines.append(b"#include <hip/hip_runtime.h>")
    for name in names:
        lines += [b"#ifndef " + name,
                  b"#define " + name + b"(p) " + VOTES[name] + b"(__activemask(), (p))",
                  b"#endif"]
    lines.append(b"#endif")
    return newline.join(lines) + newline


_END = re.compile(rb"#endif\s*#endif")


def keep(ctx: ScanContext) -> None:
    """A re-run over converted code leaves the helper as it is. The platform model already reads it
    as HIP's NVIDIA branch (ported code); this also holds where it cannot read the lines (a file
    with old Mac line ends, where no directive starts a line of its own)."""
    keep_block(ctx, MARK, _END)


def keep_block(ctx: ScanContext, mark: bytes, end: re.Pattern[bytes]) -> None:
    """Drop this run's edits inside the PLATFORM block an earlier run wrote around `mark`, which
    ends with the first match of `end` after it."""
    data = ctx.source.data
    at = data.find(mark)
    if at < 0:
        return
    start, last = data.rfind(PLATFORM, 0, at), end.search(data, at)
    if start < 0 or last is None:
        return
    ctx.edits[:] = [e for e in ctx.edits if not (start <= e.start < last.end())]


def written(ctx: ScanContext) -> list[bytes]:
    """The mask-less votes this conversion writes in place of another name (the file's own
    mask-less calls, pre-Volta CUDA, are the code's own and stay as they are)."""
    data = ctx.source.data
    return sorted({e.text for e in ctx.edits
                   if e.text in VOTES and e.kind in (EditKind.NAME, EditKind.WARP) and data[e.start:e.end] != e.text})


def add(ctx: ScanContext, names: list[bytes], fallback: int) -> None:
    """After the scan: the helper for `names` (written()), after the HIP runtime header."""
    if MARK in ctx.source.data:
        return
    after_runtime_header(ctx, fallback, lambda include: helper(names, ctx.source.newline, include),
                         "nvidia votes", EditKind.NVIDIA_VOTES)


def after_runtime_header(ctx: ScanContext, fallback: int, block, what: str, kind: str) -> None:
    """Insert `block(include)`, whole lines, at the HIP runtime header the converter adds (the same
    insertion, ordered by edits.BLOCKS), else after the file's own, else at `fallback` (after the
    leading comments and include guard), where `include` is true: the block includes it itself."""
    added = [e for e in ctx.edits if e.kind == EditKind.HIP_RUNTIME_HEADER]
    runtime = [s for s in ctx.includes if s.header == RUNTIME_HEADER]
    if added:
        at = added[0].start
    elif runtime:
        at = line_end(ctx.source.data, min(s.node_end for s in runtime))
    else:
        at = fallback
    text = block(not (added or runtime))
    before = added[0].text if added else ctx.source.data[:at]
    if at > 0 and before[-1:] not in (b"\n", b"\r"):
        text = ctx.source.newline + text[:-len(ctx.source.newline)]   # at the end of a line, before its newline
    ctx.edits.append(Edit(at, at, text, what, kind=kind))


def _finish_pass(ctx: ScanContext, view: View, root) -> None:
    """A re-run leaves the helper an earlier run wrote; mask-less votes build through HIP's NVIDIA
    backend too."""
    keep(ctx)
    votes = written(ctx)
    if votes:
        add(ctx, votes, insertion_point(ctx, root)[0])


# after the runtime header it goes below (includes) and the finish passes' edits it keeps or drops
PASSES = (Pass("nvidia_votes", "finish", _finish_pass, after=("transitive",), keywords=()),)   # reads the vote edits
