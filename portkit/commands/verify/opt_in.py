"""HIP names a ROCm release declares only when the build defines a macro for them, read off a
compile error: the release has the name, the build did not ask for it.

ROCm 6.2 brought the `*_sync` warp functions (`__shfl_sync`, `__ballot_sync`, ...) and
`__activemask` with 64-bit masks as a preview: hip/amd_detail/amd_warp_sync_functions.h and
amd_warp_functions.h declare them only under `#ifdef HIP_ENABLE_WARP_SYNC_BUILTINS` (the 6.2 pack,
fixtures/rocm-headers). HIP 7.0 (ROCm 7.0, ROCm/clr CHANGELOG.md) declares them by default and
takes HIP_DISABLE_WARP_SYNC_BUILTINS to hide them. A project whose own AMD code calls them
(gunrock's queue.hxx under `#if defined(__HIP_PLATFORM_AMD__)`, written for ROCm 7) stops at
`use of undeclared identifier '__shfl_sync'` at 6.2; that is a release the project does not target
plus a define, not a name HIP lacks, so it is PK002 naming both ways out.

convert agrees: at any --rocm it writes the mask-less HIP name the tables give (`__shfl_sync` ->
`__shfl`, `drop_args = [1]`), which every release declares without the define.

HIP 7.0 also adds warp primitives no earlier release has at all, with or without a define:
`__syncwarp` and the `__reduce_*_sync` intrinsics (ROCm/clr CHANGELOG.md, "Added warp level
primitives"). A project's own AMD code calling them (gunrock's `__syncwarp(mask64)` under
`#if defined(__HIP_PLATFORM_AMD__)`, CTranslate2's helpers.h) was written for ROCm 7: PK002 naming
the release. Both are read before the findings on the error's line (explain.py): those are about
the CUDA construct (PK206's warp-synchronous code), while the build stops on the release.
"""

from __future__ import annotations

from ...core.tables.mappings import format_version

# declared under HIP_ENABLE_WARP_SYNC_BUILTINS in the 6.2 headers (amd_warp_sync_functions.h, and
# __activemask in amd_warp_functions.h); __syncwarp is absent from 6.2 altogether (HIP 7.0 adds it)
WARP_SYNC_NAMES = frozenset({"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
                             "__ballot_sync", "__all_sync", "__any_sync", "__match_any_sync",
                             "__match_all_sync", "__activemask"})
WARP_SYNC_DEFINE = "HIP_ENABLE_WARP_SYNC_BUILTINS"
WARP_SYNC_SINCE = (6, 2, 0)        # the first release that has them at all, behind the define
WARP_SYNC_DEFAULT = (7, 0, 0)      # the first release that declares them without it
# added by HIP 7.0 itself (no earlier release declares them, whatever the build defines), with what
# convert writes for the CUDA name at an older target instead
ADDED_IN_7 = {"__syncwarp": "portkit_syncwarp (the polyfill convert writes for it)",
              **{f"__reduce_{op}_sync": "" for op in ("add", "min", "max", "and", "or", "xor")}}

WARP_PRIMITIVES = WARP_SYNC_NAMES | frozenset(ADDED_IN_7)   # the names release_of may explain


def release_of(subject: str, message: str, target: tuple[int, ...], hip_name: str | None) -> str | None:
    """PK002's message for an undeclared name that a newer release, or this one with a define,
    declares (None for any other error)."""
    opt_in = behind_define(subject, message, target, hip_name)
    if opt_in is not None or subject not in ADDED_IN_7 or tuple(target) >= WARP_SYNC_DEFAULT \
            or not message.startswith("use of undeclared identifier"):
        return opt_in
    release, added = format_version(tuple(target)), format_version(WARP_SYNC_DEFAULT)
    instead = f", or call {ADDED_IN_7[subject]}" if ADDED_IN_7[subject] else ""
    return (f"{subject} needs ROCm {added} (HIP {added} adds it, with 64-bit masks), the compiler is ROCm "
            f"{release}: build with ROCm {added} or newer{instead}")


def behind_define(subject: str, message: str, target: tuple[int, ...], hip_name: str | None) -> str | None:
    """PK002's message for an undeclared name the target release declares only with a define, or
    None. `hip_name`: what convert writes for the name (the tables' HIP name), if anything."""
    if subject not in WARP_SYNC_NAMES or not message.startswith("use of undeclared identifier"):
        return None
    if not WARP_SYNC_SINCE <= tuple(target) < WARP_SYNC_DEFAULT:
        return None
    release, default = format_version(tuple(target)), format_version(WARP_SYNC_DEFAULT)
    instead = f", call {hip_name} without the mask (what convert writes at --rocm {release})" if hip_name else ""
    return (f"{subject} is declared at ROCm {release} only with -D{WARP_SYNC_DEFINE} (the *_sync warp functions, "
            f"64-bit masks; declared by default from ROCm {default}): define it for the build{instead}, "
            f"or build with ROCm {default} or newer")
