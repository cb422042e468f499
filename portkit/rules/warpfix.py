"""The warp family (`convert --fix warp`): what its rules' fixes (PK201, PK202, PK204, PK205) share
beyond each fix alone: the per-target wavefront-size helper, defined once per file, and how the
family's fixes are applied (a PK008 note for a deliberate choice, none in a tree that already
builds for AMD).

Off by default: these edits change what the code computes on purpose (on a 64-lane wavefront
the original computes the wrong thing; their applicability is "unsafe"). Each rule owns its fix,
beside its check in its module (`FIX_NODES`, `FIX_LITERALS`, `FIX_FAMILY = FAMILY`), and its
finding carries it (engine/fix.py), so audit offers the very same edits as suggestions. Where the
meaning is not certain there is no edit; the finding stays.

Run-time contexts use HIP's `warpSize`; contexts that need a compile-time constant (a #define,
a constexpr, an array size) use PORTKIT_WAVEFRONT_SIZE, defined once per file from the GPU
family: ROCm 7 made `warpSize` a run-time value (docs/warp-fix.md).
"""

from __future__ import annotations

from dataclasses import replace

from ..engine.context import ScanContext
from ..core.edits import Edit, EditKind
from ..engine.fix import Family, overlaps
from ..engine.platform.regions import PROTECTED
from .PK008_warp_fix_choice import RULE as WARP_FIX_CHOICE
from ._warpdispatch import QUERY_GUARD
from ._warpfix_model import CONSTANT, WarpFix, newline_of

# HIP's NVIDIA backend (nvcc) has 32-lane warps on every pass; an AMD device pass knows its GPU
# family: RDNA (gfx10-gfx12) runs wave32 in HIP's default mode, GCN/CDNA (gfx9) wave64; the AMD
# host pass does not know (it assumes CDNA's 64). Without the NVIDIA branch a fixed kernel built
# through HIP's NVIDIA backend treated a 32-lane warp as 64 lanes (issue 31: wrong results on an
# H100 in 3 of 20 warp fixtures). The family macros, not __AMDGCN_WAVEFRONT_SIZE: ROCm 7's clang
# marks that macro deprecated (a warning at every use, an error under -Werror), as AMD's own ports
# did (ROCm/apex: `__GFX9__` 64, else 32). A wave64 RDNA build (-mwavefrontsize64) defines
# PORTKIT_WAVEFRONT_SIZE=64 on its command line: the helper only fills it in.
HELPER = (b"#ifndef PORTKIT_WAVEFRONT_SIZE",
          b"#if defined(__HIP_PLATFORM_NVIDIA__) || defined(__HIP_PLATFORM_NVCC__) || "
          b"(defined(__NVCC__) && !defined(__HIP__))",
          b"#define PORTKIT_WAVEFRONT_SIZE 32",
          b"#elif defined(__GFX10__) || defined(__GFX11__) || defined(__GFX12__)",
          b"#define PORTKIT_WAVEFRONT_SIZE 32",
          b"#else",
          b"#define PORTKIT_WAVEFRONT_SIZE 64",
          b"#endif",
          b"#endif")
CONSTANT_NOTE = ("a compile-time warp size: PORTKIT_WAVEFRONT_SIZE, by GPU family on each device pass (64 on gfx9, "
                 "32 on RDNA; -DPORTKIT_WAVEFRONT_SIZE=64 for a wave64 RDNA build), 32 through HIP's NVIDIA backend and 64 "
                 "on the AMD host pass; not warpSize, which ROCm 7 made a run-time value")
PORTED_NOTE = ("--fix warp left this: the tree has its own CUDA-to-HIP shim header, so it already builds for AMD, "
               "where its 32-lane idioms may be deliberate (logical 32-lane warps: width-32 shuffles); check it "
               "against the AMD build before changing it")
# a file holding none of these has no warp idiom any rule's fix reads (the literals 32, 16, 31, a
# shift by 5, a ballot): no fixer runs there
WORDS = (b"32", b"16", b"31", b">> 5", b">>5", b"__ballot")


def with_helper(data: bytes, fixes: list[WarpFix]) -> list[WarpFix]:
    """A file's warp fixes, finished: PORTKIT_WAVEFRONT_SIZE is defined at the start of the line of
    its first use (the first fix, in source order, that needs it carries the definition)."""
    fixes = _one_query(data, fixes)
    first = next((f for f in sorted(fixes, key=lambda f: f.anchor) if f.constant), None)
    if first is None or b"#ifndef " + CONSTANT in data:   # an earlier run's helper (either form)
        return fixes
    at = data.rfind(b"\n", 0, first.anchor) + 1
    newline = newline_of(data)
    helper = Edit(at, at, newline.join(HELPER) + newline, "warp")
    noted = [replace(f, note=f.note or CONSTANT_NOTE) if f.constant else f for f in fixes]
    return [replace(f, edits=f.edits + (helper,)) if f.anchor == first.anchor and f.constant else f for f in noted]


def _one_query(data: bytes, fixes: list[WarpFix]) -> list[WarpFix]:
    """The run-time dispatches: each carries portkit_device_warp_size's definition (its last edit,
    before its host function: a dispatch applied alone needs it; `apply` writes it once), none
    where an earlier run defined it."""
    return [replace(f, edits=f.edits[:-1]) if f.query and QUERY_GUARD in data else f for f in fixes]


def apply(ctx: ScanContext, fixes: list[WarpFix]) -> None:
    """Add the fixes' edits to the conversion, each fix whole or not at all (never over the
    converter's, unless the fix renames a call whole), with a PK008 note for a deliberate choice.
    PORTKIT_WAVEFRONT_SIZE is defined with the first fix applied that uses it: the first fix that
    uses it (which carries the definition, as audit shows it) may be one left alone."""
    helper = next((e for f in fixes if f.constant for e in f.edits if e.text.startswith(HELPER[0])), None)
    queried = False   # portkit_device_warp_size defined by a dispatch applied: the next ones use it
    for fix in fixes:
        if queried and fix.query and fix.edits and fix.edits[-1].text.startswith(QUERY_GUARD):
            fix = replace(fix, edits=fix.edits[:-1])
        if helper is not None and fix.constant:
            edits = tuple(e for e in fix.edits if e is not helper)
            if edits:   # the definition goes with this fix's edits, if they are applied
                at = ctx.source.parse_bytes.rfind(b"\n", 0, fix.anchor) + 1
                edits += (Edit(at, at, helper.text, helper.what),)
            fix = replace(fix, edits=edits)
        if fix.suggest_only or ctx.regions.ranges and ctx.regions.kind_at(fix.anchor) in PROTECTED:
            continue   # AMD-only code, or NVIDIA code with an AMD branch: not this build's code
        if ctx.facts.amd_shim and fix.edits:   # ggml: its AMD build runs this code as it is
            fix = replace(fix, edits=(), note=PORTED_NOTE)
        taken = sorted((e.start, e.end) for e in ctx.edits)
        if fix.supersedes:
            ctx.edits[:] = [e for e in ctx.edits if e.kind == EditKind.WARP or not overlaps(e, [(f.start, f.end) for f in fix.edits])]
        elif any(overlaps(e, taken) for e in fix.edits):
            continue
        for e in fix.edits:
            ctx.edit(e.start, e.end, e.text, what="warp", kind=EditKind.WARP)
            if e.text.startswith(HELPER[0]):
                helper = None   # defined: later fixes use it
            queried = queried or e.text.startswith(QUERY_GUARD)
        if fix.edits:
            ctx.metrics.warp_fixes += 1   # a note alone (a shape left by design) fixes nothing
        if fix.note:
            end = ctx.source.data.find(b"\n", fix.anchor)
            ctx.flag(WARP_FIX_CHOICE, fix.anchor, fix.anchor if end < 0 else min(end, fix.anchor + 1),
                     fix.note, subject=fix.note[:40])


FAMILY = Family("warp", EditKind.WARP, WORDS, with_helper, apply, first=("PK202",))   # a shuffle's 32 is PK202's
