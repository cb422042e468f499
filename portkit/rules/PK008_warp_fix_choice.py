"""A choice `convert --fix warp` made for you.

Reported by the warp family's fixes (portkit/rules/warpfix.py) when `--fix warp` is given.

What it finds:
    Each place where `--fix warp` picked a wavefront size or changed what the code computes on
    purpose: PORTKIT_WAVEFRONT_SIZE defined from the GPU family (64 on gfx9, 32 on RDNA and through
    HIP's NVIDIA backend, 64 on the AMD host pass)
    where C++ needs a constant, host launch arithmetic (`block_size / 32` warps per block) that
    now uses that host value, shared arrays grown to 64 slots, a ballot compared with the full
    mask turned into `__all`, a loop or lane that meant "the last lane" now following warpSize.

Why it matters on AMD GPUs:
    `warpSize` is a run-time value since ROCm 7, so it cannot size an array or be a constexpr;
    the per-target macro can, but each device pass (gfx90a: 64, gfx1100: 32) and the host pass
    see their own value. Host code built for several targets must read the device's warp size
    (`hipDeviceProp_t::warpSize`) where one binary serves wave32 and wave64 GPUs.

Example:
    #define WARP_SIZE 32   ->   #define WARP_SIZE PORTKIT_WAVEFRONT_SIZE

Instead:
    Nothing to change for a build that targets CDNA (wave64) only; for RDNA (wave32) targets as
    well, replace host uses of the constant by the device's value. See docs/warp-fix.md.

Effort:
    Minutes per site: a review.
"""

from ..engine.rule import define

RULE = define(__doc__, code="PK008", name="warp-fix-choice", severity="info", category="conversion")
