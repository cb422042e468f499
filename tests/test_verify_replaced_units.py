"""A CUDA file beside the AMD copy that replaces it is no unit of the AMD build (issue 53's port column).

bitsandbytes' human ROCm port compiles csrc/ops.hip and csrc/kernels.hip (its Makefile's hip target)
in place of csrc/ops.cu and csrc/kernels.cu, which stay CUDA for the NVIDIA build. verify compiled
the .cu files as AMD units, and both stopped at 'cuda_runtime_api.h': 2 failing units of a port
audit rightly calls "already builds for AMD". They are skipped and said so; the copies compile.
The tree is fixtures/verify_real/amd_copy_beside_cuda/ (README.md there).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO, clang19
from portkit.cli.app import main

CASE = REPO / "fixtures" / "verify_real" / "amd_copy_beside_cuda" / "input"


@pytest.mark.compile
def test_the_cuda_file_an_amd_copy_replaces_is_skipped_and_said_so(pack62: Path, tmp_path: Path, capsys):
    clang19()
    out = tmp_path / "out"
    assert main(["convert", str(CASE), "-o", str(out), "--rocm", "6.2", "-q"]) == 0
    assert (out / "csrc" / "ops.cu").read_bytes() == (CASE / "csrc" / "ops.cu").read_bytes()   # left CUDA
    capsys.readouterr()
    code = main(["verify", str(out), "--source", str(CASE), "--rocm", "6.2", "--rocm-headers", str(pack62),
                 "--no-cache"])
    lines = [re.sub(r" in \d+\.\d s$", "", line) for line in capsys.readouterr().out.splitlines()]
    assert lines[1:] == [
        "configuration of 1 unit: Makefile (Makefile): -std=c++14, 0 include directories, 1 definition (NO_HIPBLASLT)",
        "skipped: csrc/ops.cu: not compiled: the project's AMD build compiles csrc/ops.hip in its place",
        "",
        "1 translation unit: 1 compiled, 0 failed (0 explained by findings, 0 unexplained, 0 not reached)"]
    assert code == 0
