"""Fixtures are real code: every input compiles with nvcc, every expected output with hipcc (AMD)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cases import Case, all_cases
from conftest import CUDA_LIB_INCLUDE, NVCC, require_dir, require_tool

CASES = all_cases()
IDS = [c.name for c in CASES]
COMPILED = (".cu", ".cpp", ".cc", ".cuh", ".h", ".hpp")
LIBRARY_HEADERS = (b"cublas", b"curand", b"cufft", b"cusparse", b"cusolver", b"nccl")


def translation_units(case: Case, files: list[Path]) -> list[Path]:
    """Multi-file cases compile their .cu/.cpp files; one-file cases compile their one file."""
    if not case.multi:
        return files
    return [f for f in files if f.suffix in (".cu", ".cpp", ".cc")]


def run(cmd: list[str], env: dict | None = None) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr[-4000:]}"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_input_compiles_with_nvcc(case: Case):
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    includes = []
    if any(h in f.read_bytes() for f in case.input_files() for h in LIBRARY_HEADERS):
        includes = ["-I", str(require_dir(CUDA_LIB_INCLUDE, "CUDA library headers (set CUDA_LIB_INCLUDE)"))]
    base = case.input if case.multi else case.input.parent
    for unit in translation_units(case, case.input_files()):
        run([nvcc, "-x", "cu", "-c", str(unit), "-o", os.devnull, "-I", str(base), *includes, *case.nvcc_flags])


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_expected_compiles_with_hipcc(case: Case):
    if case.hipcc_skip:
        pytest.skip(f"not compiled with hipcc: {case.hipcc_skip}")
    hipcc = require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    env = dict(os.environ, HIP_PLATFORM="amd")
    base = case.expected if case.multi else case.expected.parent
    for unit in translation_units(case, case.expected_files()):
        run([hipcc, "-x", "hip", "--offload-arch=gfx90a", "-c", str(unit), "-o", os.devnull,
             "-I", str(base), *case.hipcc_flags], env=env)
