"""A HIP name the target release lacks, written by the project's own shim, not by portkit.

LightGBM's include/LightGBM/cuda/cuda_rocm_interop.h is its own AMD port: under
`#if defined(__HIP_PLATFORM_AMD__)` it defines CUDA names as HIP names
(`#define cudaHostAllocPortable hipHostAllocPortable`), and its code keeps the CUDA names, which
convert leaves to that shim. hipHostAllocPortable is newer than ROCm 6.2 (whose name for the flag is
hipHostMallocPortable), so a unit stops at `use of undeclared identifier 'hipHostAllocPortable'`, at a
line where no finding is and no table knows the HIP name: verify called it unexplained. clang says
where the name came from ("expanded from macro 'cudaHostAllocPortable'" at the #define), and the
tables know what the CUDA name is at the target: the project's AMD build expects a newer ROCm than
the one verified, or its #define can name the release's own spelling (PK002, needs a newer ROCm).
"""

from __future__ import annotations

import re
from pathlib import Path

from ...core.tables.mappings import MappingDB, Version, format_version
from ...engine.codes import Code
from .diagnostics import Located, shown

_EXPANDED = re.compile(r"expanded from macro '(\w+)'")


def shim_name(error: Located, subject: str, db: MappingDB, target: Version, root: Path) -> tuple[str, str, str] | None:
    """(code, subject, message) for an undeclared HIP name that a project #define wrote, else None."""
    if not subject.startswith("hip") or "undeclared identifier" not in error.diagnostic.message:
        return None
    for path, line, _column, text in error.diagnostic.notes:
        expanded = _EXPANDED.search(text)
        if expanded is None or expanded.group(1) == subject:
            continue
        macro = expanded.group(1)
        where = f"{shown(path, root, root)}:{line}"
        record = db.names.get(macro)
        release = format_version(target)
        here = record.hip if record is not None and record.hip and record.hip != subject and \
            (record.hip_since is None or record.hip_since <= target) else None
        instead = (f"ROCm {release}'s name for {macro} is {here}: write that in the #define, or build with the "
                   f"newer ROCm the project's AMD build expects" if here else
                   "build with the newer ROCm the project's AMD build expects")
        return (Code.NEEDS_NEWER_ROCM, subject,
                f"{subject} is the project's own #define of {macro} ({where}), its AMD port's name, which ROCm "
                f"{release} does not declare: {instead}")
    return None
