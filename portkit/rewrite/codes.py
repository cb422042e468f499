"""The converter's own findings (PK0xx), as rules: their texts live in portkit/rules/PK00x_*.py."""

from __future__ import annotations

from ..rules import get
from ..rules.codes import Code

NO_HIP_EQUIVALENT = get(Code.NO_HIP_EQUIVALENT)
NEEDS_NEWER_ROCM = get(Code.NEEDS_NEWER_ROCM)
REMOVED_IN_ROCM = get(Code.REMOVED_IN_ROCM)
PARTIAL_CONVERSION = get(Code.PARTIAL_CONVERSION)
PARTIALLY_PARSED = get(Code.PARTIALLY_PARSED)
LAUNCH_NOT_CONVERTED = get(Code.LAUNCH_NOT_CONVERTED)
NAME_NOT_SEEN_WHOLE = get(Code.NAME_BUILT_BY_PREPROCESSOR)
DEPRECATED_CUDA_API = get(Code.DEPRECATED_CUDA_API)
EXPERIMENTAL_HIP_API = get(Code.EXPERIMENTAL_HIP_API)

# A name the target ROCm cannot take, by the reason the tables give (mappings.problem()).
PROBLEM_CODES = {
    "missing": NO_HIP_EQUIVALENT,
    "newer": NEEDS_NEWER_ROCM,
    "removed": REMOVED_IN_ROCM,
}
