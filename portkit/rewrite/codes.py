"""The converter's own findings (PK0xx): what it could not convert, or converted with a caveat.

Codes are stable forever; `portkit explain PK001` prints these texts.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Code:
    code: str
    name: str
    severity: str
    category: str
    summary: str
    fix: str


NO_HIP_EQUIVALENT = Code(
    "PK001", "no-hip-equivalent", "high", "api",
    "A CUDA name (function, type, enum, macro or header) that HIP has no counterpart for; it is "
    "left as it is, so the file will not compile for AMD until it is rewritten.",
    "rewrite the call with what HIP offers (the note in the mapping table says what), or guard "
    "it with #ifdef __HIP_PLATFORM_AMD__")
NEEDS_NEWER_ROCM = Code(
    "PK002", "needs-newer-rocm", "high", "api",
    "HIP has this name, but only from a newer ROCm release than the target (--rocm); it is left "
    "as it is.",
    "raise the target ROCm release, or rewrite the call with an API the target release has")
REMOVED_IN_ROCM = Code(
    "PK003", "removed-in-rocm", "high", "api",
    "HIP had this name but removed it at or before the target ROCm release; it is left as it is.",
    "use the replacement the ROCm release notes name")
PARTIAL_CONVERSION = Code(
    "PK004", "partial-conversion", "medium", "api",
    "Converted to a HIP name that behaves differently (for example a warp-sync intrinsic whose "
    "mask argument was dropped); the code compiles but must be reviewed.",
    "check the converted call against the note; on AMD GPUs a wavefront has 64 lanes")
PARTIALLY_PARSED = Code(
    "PK005", "partially-parsed", "info", "parsing",
    "tree-sitter could not parse a region (an #if branch that cuts a construct, unusual macros); "
    "names inside it were converted, larger constructs may be missed.",
    "review the region after conversion; deep mode (libclang) sees one configuration")
LAUNCH_NOT_CONVERTED = Code(
    "PK006", "launch-not-converted", "low", "launch",
    "A <<<...>>> launch that --launch-syntax hip could not rewrite (unusual configuration or an "
    "unparsed region); it is kept as <<<...>>>, which HIP compiles.",
    "rewrite it as hipLaunchKernelGGL(kernel, grid, block, shmem, stream, args...) by hand if needed")

ALL = (NO_HIP_EQUIVALENT, NEEDS_NEWER_ROCM, REMOVED_IN_ROCM, PARTIAL_CONVERSION, PARTIALLY_PARSED,
       LAUNCH_NOT_CONVERTED)
BY_CODE = {c.code: c for c in ALL}
