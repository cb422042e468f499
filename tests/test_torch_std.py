"""A torch unit whose build names a C++ older than torch's headers accept (issue 53's port column).

torch's headers refuse C++14 from 2.1 on (`C++17 or later compatible compiler is required to use
PyTorch.`). pytorch_scatter's root CMakeLists.txt, its C++ API build beside the setup.py whose
CUDAExtension torch compiles at C++17, sets CMAKE_CXX_STANDARD 14, and verify compiled the
extension's units with it: all 4 units of its human port (9a651d9) stopped at that #error, their
code never seen. They are compiled at C++17 now, and the report's torch line says which -std the
build named and that it was written for an older torch.

The tree is fixtures/verify_real/torch_extension_cxx14/ (README.md there): the binding unit of
fixtures/verify_real/torch_extension and pytorch_scatter's CMakeLists.txt, reduced.
"""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest

from conftest import REPO, clang19
from portkit.cli.app import main
from portkit.commands.verify import torch_pack

ARCHIVE = REPO / "fixtures" / "rocm-headers" / "torch-2.5.1-headers.tar.xz"
CASE = REPO / "fixtures" / "verify_real" / "torch_extension_cxx14" / "input"


def test_a_std_older_than_cxx17_is_raised_and_named():
    cmd = ["clang++", "-std=c++17", "-DX", "-std=gnu++14", "-x", "hip", "-std=c++11", "a.cu"]
    assert torch_pack.lift_std(cmd) == (["clang++", "-std=c++17", "-DX", "-std=c++17", "-x", "hip",
                                         "-std=c++17", "a.cu"], "-std=c++11")
    for kept in (["c++", "-std=c++17"], ["c++", "-std=c++20", "-std=gnu++1z"], ["c++", "-std=c++2a"]):
        assert torch_pack.lift_std(kept) == (kept, "")


@pytest.fixture(scope="module")
def torch25(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("torchpack")
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(root, filter="data")
    return root / "torch-2.5.1-headers"


@pytest.mark.compile
def test_a_cmake_cxx14_torch_unit_compiles_at_cxx17_and_the_line_says_so(pack62: Path, torch25: Path,
                                                                          tmp_path: Path, capsys):
    clang19()
    if torch_pack.python_include() is None:
        pytest.skip("no Python.h (apt-get install python3-dev)")
    out = tmp_path / "out"
    assert main(["convert", str(CASE), "-o", str(out), "--rocm", "6.2", "-q"]) in (0, 1)
    capsys.readouterr()
    main(["verify", str(out), "--source", str(CASE), "--rocm", "6.2", "--rocm-headers", str(pack62),
          "--torch-headers", str(torch25), "--no-cache", "--timeout", "1800"])
    lines = [re.sub(r" in \d+\.\d s$", "", line) for line in capsys.readouterr().out.splitlines()]
    assert lines[1:] == [
        f"torch's headers for 1 unit that include them: torch 2.5.1 header pack at {torch25} "
        f"(from torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl; pinned); 1 of them built with -std=c++14, "
        "which torch 2.5.1's headers refuse (C++17 or later): compiled at -std=c++17, the build was written "
        "for an older torch",
        "configuration of 1 unit: CMake (CMakeLists.txt): -std=c++14, 0 include directories, 0 definitions",
        "",
        "1 translation unit: 1 compiled, 0 failed (0 explained by findings, 0 unexplained, 0 not reached)"]
