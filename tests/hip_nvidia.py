"""Compiling HIP code for NVIDIA through HIP's own NVIDIA backend, as a HIP user on NVIDIA would.

HIP is single-source: `-D__HIP_PLATFORM_NVIDIA__` makes hip_runtime.h a thin layer over CUDA
(hip/nvidia_detail/*), built by nvcc. portkit's outputs must build there too. Debian's HIP headers
are ROCm 5.2's, older than this machine's CUDA 13, so the tests compile against a patched copy
made once per session (tests/hip_nvidia_patches.py lists the patches and why each is needed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterable

from conftest import NVCC, require_dir, require_tool
from hip_nvidia_patches import PATCHES, Patch

HIP_HEADERS = Path(os.environ.get("HIP_NVIDIA_HEADERS", "/usr/include/hip"))
ARCH = "sm_90"


class PatchError(AssertionError):
    """A header differs from the one the patches were written for: fix the patch, never skip it."""


def apply_patches(hip_dir: Path, patches: Iterable[Patch] = PATCHES) -> None:
    """Apply each patch in place; its old text must occur exactly once in its file."""
    for patch in patches:
        path = hip_dir / patch.file
        text = path.read_text(encoding="utf-8")
        count = text.count(patch.old)
        if count != 1:
            raise PatchError(f"{path}: the text to patch ({patch.why}) occurs {count} times, expected once:\n"
                             f"{patch.old}")
        path.write_text(text.replace(patch.old, patch.new), encoding="utf-8")


def require_hip_nvidia_headers() -> Path:
    """HIP's headers with their NVIDIA backend; skip (or fail under PORTKIT_REQUIRE_TOOLS=1) without."""
    require_dir(HIP_HEADERS / "nvidia_detail", "HIP's NVIDIA backend headers (apt-get install libamdhip64-dev)")
    return HIP_HEADERS


def patched_include_dir(root: Path) -> Path:
    """A folder holding hip/, a copy of HIP's headers patched for CUDA 13, to pass with -I."""
    include = root / "include"
    shutil.copytree(require_hip_nvidia_headers(), include / "hip", symlinks=True)  # nvcc_detail -> nvidia_detail
    apply_patches(include / "hip")
    return include


def compile_for_nvidia(path: Path, include_dirs: Iterable[Path]) -> subprocess.CompletedProcess:
    """nvcc -x cu -D__HIP_PLATFORM_NVIDIA__ -arch=sm_90 -I... -c FILE -o /dev/null (no shell).

    The first of `include_dirs` should be patched_include_dir(): it shadows /usr/include/hip."""
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    require_hip_nvidia_headers()
    includes = [arg for d in include_dirs for arg in ("-I", str(d))]
    cmd = [nvcc, "-x", "cu", "-D__HIP_PLATFORM_NVIDIA__", f"-arch={ARCH}", *includes, "-c", str(path),
           "-o", os.devnull]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)
