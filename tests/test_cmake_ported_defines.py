"""The -D a CMake CUDA switch adds is given when that switch is the build being ported (issue 50).

LightGBM builds CUDA only under `option(USE_CUDA ... OFF)`, whose block adds
`add_definitions(-DUSE_CUDA)` and the .cu files, and each of those files is wrapped in
`#ifdef USE_CUDA`. optional.py takes the switch that adds the most .cu files, when none is built
without one, as the build being ported (CTranslate2's WITH_CUDA), so its files were default, but
the macro its block defines stayed undefined: the files' `#ifdef USE_CUDA` bodies, the kernels the
port is about, were priced as "porting the optional USE_CUDA code" (138 ranges and 15 headers in
LightGBM). The tree below is LightGBM's shape cut down: the switch, its -D, a globbed .cu.
"""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree
from portkit.api import audit_paths
from portkit.core.files import discover
from portkit.project import optional
from portkit.project.pipeline import optional_inputs

# the .cu compiles with `nvcc -c` with and without -DUSE_CUDA; boosting.cpp with g++
TREE = {
    "CMakeLists.txt": (
        "cmake_minimum_required(VERSION 3.18)\n"
        "project(lgbm LANGUAGES CXX)\n"
        'option(USE_CUDA "Enable CUDA-accelerated training" OFF)\n'
        'option(USE_MPI "Enable MPI-based distributed learning" OFF)\n'
        "file(GLOB SOURCES src/*.cpp)\n"
        "if(USE_CUDA)\n"
        "  enable_language(CUDA)\n"
        "  add_definitions(-DUSE_CUDA)\n"
        "  file(GLOB CUDA_SOURCES src/cuda/*.cu)\n"
        "  list(APPEND SOURCES ${CUDA_SOURCES})\n"
        "endif()\n"
        "if(USE_MPI)\n"
        "  add_definitions(-DUSE_MPI)\n"
        "endif()\n"
        "add_library(lgbm SHARED ${SOURCES})\n"),
    "src/cuda/histogram.cu": (
        "#ifdef USE_CUDA\n"
        "__global__ void histogram(const int *bins, int *counts, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int warp_total = i < n;\n"
        "  for (int offset = 16; offset > 0; offset /= 2)\n"
        "    warp_total += __shfl_down_sync(0xffffffff, warp_total, offset);\n"
        "  if (i < n && threadIdx.x % 32 == 0) atomicAdd(&counts[bins[i]], warp_total);\n"
        "}\n"
        "\n"
        "void launch_histogram(const int *bins, int *counts, int n) {\n"
        "  histogram<<<(n + 255) / 256, 256>>>(bins, counts, n);\n"
        "}\n"
        "#endif  // USE_CUDA\n"),
    "src/boosting.cpp": (
        "#ifdef USE_CUDA\n"
        "void launch_histogram(const int *bins, int *counts, int n);\n"
        "#endif\n"
        "#ifdef USE_MPI\n"
        "void sync_network();\n"
        "#endif\n"
        "\n"
        "int boosting() { return 0; }\n"),
}


def test_the_ported_cuda_switch_s_macro_is_given(tmp_path: Path):
    root = write_tree(tmp_path, TREE)
    _, entries, _ = discover([root])
    found = optional.learn(optional_inputs(entries))
    # USE_MPI, another switch off by default, stays an optional feature, its -D too
    assert found.ranges == {"CMakeLists.txt": [(13, 13, "USE_MPI")], "src/boosting.cpp": [(5, 6, "USE_MPI")]}
    assert found.files == {}


def test_the_kernels_under_the_ported_switch_s_macro_are_in_the_headline(tmp_path: Path):
    doc = audit_paths([write_tree(tmp_path, TREE)])
    items = sorted((i["kind"], i["key"], i["optional"], i["findings"]) for i in doc["estimate"]["items"])
    # the kernel's warp-size findings were "porting the optional USE_CUDA code" (3 items)
    assert [i for i in items if i[0] == "pattern"] == [
        ("pattern", "PK201", "", ["src/cuda/histogram.cu:7"]),
        ("pattern", "PK202", "", ["src/cuda/histogram.cu:5"]),
        ("pattern", "PK203:__shfl_down_sync", "", ["src/cuda/histogram.cu:6"]),
        ("pattern", "PK501", "", ["CMakeLists.txt:7"])]
    assert ("unit", "validate_kernel", "", []) in items
    assert doc["estimate"]["optional"] == []
