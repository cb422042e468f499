"""The converter's own findings (PK0xx), by code: their texts live in portkit/rules/PK00x_*.py, and
`ctx.flag` finds a code's rule in the registry the scan installs (ScanContext.rules)."""

from __future__ import annotations

from ..engine.codes import Code

NO_HIP_EQUIVALENT = Code.NO_HIP_EQUIVALENT
NEEDS_NEWER_ROCM = Code.NEEDS_NEWER_ROCM
REMOVED_IN_ROCM = Code.REMOVED_IN_ROCM
PARTIAL_CONVERSION = Code.PARTIAL_CONVERSION
PARTIALLY_PARSED = Code.PARTIALLY_PARSED
LAUNCH_NOT_CONVERTED = Code.LAUNCH_NOT_CONVERTED
NAME_NOT_SEEN_WHOLE = Code.NAME_BUILT_BY_PREPROCESSOR
DEPRECATED_CUDA_API = Code.DEPRECATED_CUDA_API
EXPERIMENTAL_HIP_API = Code.EXPERIMENTAL_HIP_API

# A name the target ROCm cannot take, by the reason the tables give (mappings.problem()).
PROBLEM_CODES = {
    "missing": NO_HIP_EQUIVALENT,
    "newer": NEEDS_NEWER_ROCM,
    "removed": REMOVED_IN_ROCM,
}
