"""verify's stand-in for a build-time hipify converts the project's own AMD branches too (issue 48).

faiss's AMD build runs faiss/gpu/hipify.sh (hipify-perl, blind to the preprocessor) over its CUDA
tree, so `#include <device_functions.h>` under `#ifdef USE_AMD_ROCM` (utils/PtxUtils.cuh) becomes
`<hip/device_functions.h>` there. portkit's conversion leaves a project's AMD branches as the
maintainers wrote them, right for `portkit convert`; the stand-in kept that policy and 43 of faiss's
76 units stopped at `'device_functions.h' file not found`. The case is
fixtures/verify_real/hipify_amd_branches (faiss, reduced; fixtures/verify_real/README.md).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import NVCC, REPO, clang19, require_tool
from portkit.cli.app import main

CASE = REPO / "fixtures" / "verify_real" / "hipify_amd_branches"
FAISS, STANDIN = CASE / "input", CASE / "standin"
SOURCES = ("faiss/gpu/impl/PQCodeUnpack.cu", "faiss/gpu/utils/PtxUtils.cuh")
PTX = "faiss/gpu/utils/PtxUtils.cuh"


def _standin(tmp_path: Path) -> Path:
    from portkit.commands.results import VerifyOptions
    from portkit.commands.verify import build_hipify
    from portkit.core.tables.mappings import parse_version
    opts = VerifyOptions(rocm=parse_version("6.2"), cache=False)
    where = build_hipify.step(FAISS, opts)
    assert where == "CMakeLists.txt:20: execute_process(COMMAND ${PROJECT_SOURCE_DIR}/faiss/gpu/hipify.sh)"
    folder = build_hipify.translated(FAISS, opts, where)
    assert folder is not None
    copy = tmp_path / "standin"
    shutil.move(str(folder), copy)
    return copy


def test_the_standin_converts_the_amd_branch_as_the_builds_hipify_does(tmp_path: Path):
    """The stand-in's sources, byte for byte: the AMD branch's include is HIP's, the NVIDIA branch's
    PTX is left as it is (the AMD build does not compile it)."""
    copy = _standin(tmp_path)
    for rel in SOURCES:
        assert (copy / rel).read_bytes() == (STANDIN / rel).read_bytes(), rel
    lines = (copy / PTX).read_text().splitlines()
    assert lines[9:13] == ["#include <hip/hip_runtime.h>", "#ifdef USE_AMD_ROCM",
                           "#include <hip/device_functions.h>", "#endif"]


def test_convert_still_leaves_the_projects_amd_branch_as_written(tmp_path: Path):
    """`portkit convert` keeps its policy: the tree is AMD-built (left as it is), and converted on
    request it differs from the stand-in only on the AMD branch's line."""
    out = tmp_path / "out"
    assert main(["convert", str(FAISS), "-o", str(out), "--rocm", "6.2", "-q"]) == 0
    for rel in SOURCES:
        assert (out / rel).read_bytes() == (FAISS / rel).read_bytes(), rel
    every = tmp_path / "every"
    assert main(["convert", str(FAISS), "-o", str(every), "--rocm", "6.2", "--convert-amd-built", "-q"]) == 0
    assert (every / PTX).read_bytes() == (STANDIN / PTX).read_bytes().replace(
        b"#include <hip/device_functions.h>", b"#include <device_functions.h>")


@pytest.mark.compile
def test_faiss_unit_compiles_after_the_standin(pack62, capsys):
    """Before: `'device_functions.h' file not found` at faiss/gpu/utils/PtxUtils.cuh:12."""
    clang19()
    capsys.readouterr()
    main(["verify", str(FAISS), "--rocm", "6.2", "--rocm-headers", str(pack62), "--no-cache"])
    lines = [re.sub(r" in \d+\.\d s$", "", line) for line in capsys.readouterr().out.splitlines()]
    # the report's lines on the step and the units (its configuration lines are other tests')
    assert [line for line in lines[1:] if "hipify" in line or "translation unit" in line] == [
        "every unit compiled after the build's own hipify step (CMakeLists.txt:20: execute_process(COMMAND "
        "${PROJECT_SOURCE_DIR}/faiss/gpu/hipify.sh)), portkit's conversion standing in; errors at the tree's own lines",
        "1 translation unit: 1 compiled, 0 failed (0 explained by findings, 0 unexplained, 0 not reached)"]


@pytest.mark.compile
def test_the_standin_compiles_with_hipcc():
    hipcc = require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    proc = subprocess.run([hipcc, "-x", "hip", "--offload-arch=gfx90a", "-std=c++17", "-DUSE_AMD_ROCM", "-I.",
                           "-c", SOURCES[0], "-o", os.devnull], cwd=STANDIN, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, HIP_PLATFORM="amd"))
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.compile
def test_the_cuda_compiles_with_nvcc():
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    proc = subprocess.run([nvcc, "-x", "cu", "-std=c++17", "-I.", "-c", SOURCES[0], "-o", os.devnull], cwd=FAISS,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
