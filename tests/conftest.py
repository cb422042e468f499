"""Shared test helpers: the fixture corpus, and tools that may be missing on a developer machine.

A missing compiler skips the compile checks on a developer machine, but CI sets
PORTKIT_REQUIRE_TOOLS=1 and then a missing tool fails the run instead of hiding it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NVCC = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
CUDA_LIB_INCLUDE = Path(os.environ.get("CUDA_LIB_INCLUDE", REPO / ".ci" / "cache" / "cuda-libs" / "include"))


def require_tool(path_or_name: str, what: str) -> str:
    """The tool's path; skip the test when it is missing, or fail when CI requires every tool."""
    found = shutil.which(path_or_name) or (path_or_name if Path(path_or_name).is_file() else None)
    if found:
        return found
    message = f"{what} not found ({path_or_name})"
    if os.environ.get("PORTKIT_REQUIRE_TOOLS") == "1":
        pytest.fail(message + " and PORTKIT_REQUIRE_TOOLS=1")
    pytest.skip(message)


def require_dir(path: Path, what: str) -> Path:
    if path.is_dir():
        return path
    message = f"{what} not found ({path})"
    if os.environ.get("PORTKIT_REQUIRE_TOOLS") == "1":
        pytest.fail(message + " and PORTKIT_REQUIRE_TOOLS=1")
    pytest.skip(message)
