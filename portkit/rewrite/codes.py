"""The converter's own findings (PK0xx), as rules: their texts live in portkit/rules/PK00x_*.py."""

from __future__ import annotations

from ..rules import get

NO_HIP_EQUIVALENT = get("PK001")
NEEDS_NEWER_ROCM = get("PK002")
REMOVED_IN_ROCM = get("PK003")
PARTIAL_CONVERSION = get("PK004")
PARTIALLY_PARSED = get("PK005")
LAUNCH_NOT_CONVERTED = get("PK006")
NAME_NOT_SEEN_WHOLE = get("PK007")
DEPRECATED_CUDA_API = get("PK101")
EXPERIMENTAL_HIP_API = get("PK102")

# A name the target ROCm cannot take, by the reason the tables give (mappings.problem()).
PROBLEM_CODES = {
    "missing": NO_HIP_EQUIVALENT,
    "newer": NEEDS_NEWER_ROCM,
    "removed": REMOVED_IN_ROCM,
}
