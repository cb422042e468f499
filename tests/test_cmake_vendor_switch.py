"""convert leaves the NVIDIA side of a dual-vendor CMake as written (issue 48, gunrock): in
`if(${ESSENTIALS_NVIDIA_BACKEND}) ... else() ... HIP ... endif()` the first branch is the NVIDIA
build's, which the HIP build never takes; migrating it (`SM_TARGET=${CMAKE_CUDA_ARCHITECTURES}` to
HIP's, nvcc's `--expt-*` options dropped) broke the NVIDIA build. The case is
fixtures/build/cmake_vendor_switch (golden bytes in tests/test_build_files.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from portkit import api
from portkit.buildfiles.cmake_lexer import commands

from conftest import REPO

CASE = REPO / "fixtures" / "build" / "cmake_vendor_switch"
TREES = Path(os.environ.get("PORTKIT_TREES", "/tmp/trees"))


def convert(text: str) -> tuple[str, list[tuple[int, str, str, str]]]:
    out = api.convert_text(text, filename="CMakeLists.txt", rocm="6.2")
    return out.output.decode(), [(f.line, f.code, f.severity, f.message) for f in out.findings]


def test_the_nvidia_branch_and_what_only_it_reads_stay_byte_for_byte():
    source = (CASE / "input" / "CMakeLists.txt").read_text()
    expected = (CASE / "expected" / "CMakeLists.txt").read_text()
    added = "add_executable(bfs bfs.cu)\nset_source_files_properties(bfs.cu PROPERTIES LANGUAGE HIP)\n"
    assert expected == source.replace("add_executable(bfs bfs.cu)\n", added)
    out, findings = convert(source)
    assert out == expected
    assert findings == [(77, "PK508", "info", "already ported (this #if has an AMD branch; nvcc alone compiles "
                                              "this one): `--diag-suppress=177` has no hipcc counterpart: "
                                              "nvcc diagnostics are numbered; clang names them: use -Wno-<name>")]


@pytest.mark.parametrize("text,left", [
    ("if(${USE_NVIDIA})\n  set(CMAKE_CUDA_ARCHITECTURES 75)\nelse()\n  add_definitions(-D__HIP_PLATFORM_AMD__)\nendif()\n",
     "if(${USE_NVIDIA})\n  set(CMAKE_CUDA_ARCHITECTURES 75)\n"),
    ("if(GGML_CUDA)\n  set(X --expt-relaxed-constexpr)\nelseif(GGML_HIP)\n  set(X -O3)\nendif()\n",
     "if(GGML_CUDA)\n  set(X --expt-relaxed-constexpr)\n"),
    ("if(USE_ROCM)\n  set(X -O3)\nelseif(USE_CUDA)\n  set(Y --expt-relaxed-constexpr)\nendif()\n",
     "elseif(USE_CUDA)\n  set(Y --expt-relaxed-constexpr)\n"),
    # a plain else() of a CUDA switch can be the CPU build, and a CUDA switch alone is what convert ports
    ("if(WITH_CUDA)\n  set(X --expt-relaxed-constexpr)\nelse()\n  add_definitions(-DCPU_ONLY)\nendif()\n", ""),
    ("if(WITH_CUDA)\n  set(X --expt-relaxed-constexpr)\nendif()\n", ""),
    ("if(NOT USE_NVIDIA)\n  set(X -O3)\nelse()\n  add_definitions(-DUSE_HIP)\nendif()\n", ""),
])
def test_which_branch_is_the_nvidia_side(text: str, left: str):
    from portkit.buildfiles.cmake_vendor import nvidia_ranges
    assert "".join(text[s:e] for s, e in nvidia_ranges(commands(text))) == left


def test_a_variable_read_on_both_sides_is_migrated():
    text = ("set(FLAGS --use_fast_math)\nif(${USE_NVIDIA})\n  add_compile_options(${FLAGS})\nelse()\n"
            "  add_compile_options(${FLAGS} -D__HIP_PLATFORM_AMD__)\nendif()\n")
    out, _ = convert(text)
    assert out.startswith("set(FLAGS -ffast-math)\n")


def test_gunrocks_root_cmake_is_left_as_it_is():
    """gunrock builds for AMD itself: convert changes nothing in its root CMakeLists.txt (20 lines
    of its NVIDIA branches before)."""
    path = TREES / "gunrock" / "CMakeLists.txt"
    if not path.is_file():
        pytest.skip("gunrock is not cloned under /tmp/trees")
    text = path.read_text()
    assert convert(text)[0] == text
