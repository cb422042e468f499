"""verify on a tree with two builds, and the CMake values a first configure settles (issue 48, tiny-cuda-nn).

- A build's own hipify step is for the units that build compiles: tiny-cuda-nn's setup.py builds
  its bindings with src/*.cu (torch hipifies them on ROCm), and its root CMakeLists.txt builds
  src/*.cu, samples/ and benchmarks/ as HIP without any hipify. verify took torch's map for the whole
  tree, and the CMake units stopped at `include/tiny-cuda-nn/vec.h:307 use of undeclared identifier
  'atomicAdd'` (a header torch's map turns to `__HIPCC__` without a runtime include): now only the
  units no CMake target lists are compiled after torch's stand-in, the others after portkit's
  conversion (commands/verify/hipify_scope.py).
- TCNN_HALF_PRECISION is defined only through an option whose default is a variable an if() on
  MIN_GPU_ARCH sets: verify settles what a first configure gives, where it knows every value read,
  and says what it assumed (project/cmake_settle.py); what it cannot know stays unsettled.

The case is fixtures/verify_real/tcnn_two_builds (tiny-cuda-nn, reduced; fixtures/verify_real/README.md).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import NVCC, REPO, clang19, require_tool
from portkit.cli.app import main
from portkit.project.buildconfig import TreeConfig
from portkit.project.buildconfig_cmake import read_cmake

CASE = REPO / "fixtures" / "verify_real" / "tcnn_two_builds" / "input"
GIVEN = {"CMAKE_HIP_ARCHITECTURES": "gfx90a"}
ASSUMED = ["MIN_GPU_ARCH=gfx90a (CMakeLists.txt:23: item 0 of CMAKE_HIP_ARCHITECTURES, from the HIP build's configure)",
           "TCNN_HALF_PRECISION=ON (CMakeLists.txt:33's default)", "TCNN_BUILD_EXAMPLES=ON (CMakeLists.txt:12's default)"]
HALF = ('if (MIN_GPU_ARCH EQUAL 61 OR MIN_GPU_ARCH LESS_EQUAL 52)\n set(DEF OFF)\nelse()\n set(DEF ON)\nendif()\n'
        'option(HALF "h" ${DEF})\nif (HALF)\n list(APPEND DEFS -DHALF=1)\nelse()\n list(APPEND DEFS -DHALF=0)\nendif()\n'
        'add_definitions(${DEFS})\n')


def _defines(text: str, tmp_path: Path, top: Path | None = None) -> list[str]:
    return read_cmake(text, tmp_path, top or tmp_path, None, GIVEN).defines


def test_the_cases_half_precision_is_settled_and_said(tmp_path: Path, capsys):
    """Converted, MIN_GPU_ARCH is the first of CMAKE_HIP_ARCHITECTURES (the configure's: gfx90a), no
    number: the else() sets the default ON. In the CUDA build, CMAKE_CUDA_ARCHITECTURES is CMake's
    own (unknown here), and nothing is settled."""
    out = tmp_path / "out"
    assert main(["convert", str(CASE), "-o", str(out), "-q"]) in (0, 1)
    config = read_cmake((out / "CMakeLists.txt").read_text(), out, out, None, GIVEN)
    assert (config.target_defines["tiny-cuda-nn"], config.assumed) == (["TCNN_HALF_PRECISION=1"], ASSUMED)
    cuda = read_cmake((CASE / "CMakeLists.txt").read_text(), CASE, CASE, None, GIVEN)
    assert (cuda.target_defines, cuda.assumed) == ({}, ["TCNN_BUILD_EXAMPLES=ON (CMakeLists.txt:12's default)"])


@pytest.mark.parametrize("before,defines", [
    # what CMake gives: an unset variable is empty, and EQUAL / LESS_EQUAL of a non-number is false
    ("", ["HALF=1"]),
    ("set(MIN_GPU_ARCH 52)\n", ["HALF=0"]),
    ("set(MIN_GPU_ARCH 61)\n", ["HALF=0"]),
    ("set(MIN_GPU_ARCH 86)\n", ["HALF=1"]),
    ("set(MIN_GPU_ARCH gfx90a)\n", ["HALF=1"]),
    ('set(MIN_GPU_ARCH "75;86")\n', ["HALF=1"]),
    ("list(APPEND A 50)\nlist(APPEND A 86)\nlist(GET A 0 MIN_GPU_ARCH)\n", ["HALF=0"]),
    ('set(MIN_GPU_ARCH "52-virtual")\nstring(REPLACE "-virtual" "" MIN_GPU_ARCH "${MIN_GPU_ARCH}")\n', ["HALF=0"]),
    ("set(HALF OFF)\n", ["HALF=0"]),       # CMP0077: a variable set before the option wins
    # what verify cannot know stays unsettled: neither definition
    ("set(MIN_GPU_ARCH 0x10)\n", []),                            # CMake reads hexadecimal, this does not
    ("get_directory_property(MIN_GPU_ARCH PARENT_DIRECTORY)\n", []),
    ("if(DEFINED ENV{X})\n set(MIN_GPU_ARCH 52)\nendif()\n", []),  # set in a branch that may run
    ("if(WITH_X)\n set(MIN_GPU_ARCH 52)\nendif()\n", ["HALF=1"]),    # one that never runs (WITH_X unset)
    ("foreach(MIN_GPU_ARCH IN ITEMS 52 86)\nendforeach()\n", []),
    ("include(arch.cmake)\n", []),                               # a module may set any name
    ("find_package(CUDAToolkit)\n", []),
    ("list(APPEND MIN_GPU_ARCH 52)\nlist(REMOVE_ITEM MIN_GPU_ARCH 52)\n", []),
])
def test_an_option_whose_default_a_settled_if_sets(tmp_path: Path, before: str, defines: list[str]):
    assert _defines(before + HALF, tmp_path) == defines


@pytest.mark.parametrize("condition,defines", [
    ("(A EQUAL 1)", []),                       # parentheses: not read
    ("DEFINED ENV{A}", []),                    # the environment of the configure
    ("A MATCHES x", []),                       # an operator not read
    ('"${A}" STREQUAL ""', ["YES"]),
    ("A STREQUAL A", ["YES"]),                 # an unset name stands for itself, as in CMake
    ("NOT A", ["YES"]), ("A", ["NO"]), ("DEFINED A", ["NO"]),
    ("1 AND NOT 0", ["YES"]), ("A OR ON", ["YES"]), ("A-NOTFOUND", ["NO"]),
    # a GPU build's switch is the port's to turn on, whatever its default: left to the branch model
    ("WITH_CUDA", []), ("NOT USE_GPU", []), ("DEFINED WITH_GPU", []),
])
def test_conditions_settled_as_cmake_evaluates_them(tmp_path: Path, condition: str, defines: list[str]):
    text = f"if({condition})\n add_compile_definitions(YES)\nelse()\n add_compile_definitions(NO)\nendif()\n"
    assert _defines(text, tmp_path) == defines


def test_an_unset_variable_is_empty_only_in_the_top_cmakelists(tmp_path: Path):
    """A subdirectory sees its parents' variables, which this file does not: nothing is settled
    from an unset name there."""
    (tmp_path / "sub").mkdir()
    assert _defines("if(NOT A)\n add_compile_definitions(YES)\nendif()\n", tmp_path / "sub", tmp_path) == []
    assert _defines("set(A OFF)\nif(NOT A)\n add_compile_definitions(YES)\nendif()\n", tmp_path / "sub",
                    tmp_path) == ["YES"]


def test_nothing_is_settled_or_said_inside_a_branch_that_never_runs(tmp_path: Path):
    config = read_cmake("if(APPLE)\n  if(NOT OpenMP_FOUND)\n    add_compile_definitions(A)\n  endif()\nendif()\n"
                        "option(B \"b\" ON)\nif(B)\n  add_compile_definitions(B)\nendif()\n", tmp_path, tmp_path)
    assert (config.defines, config.assumed) == (["B"], ["B=ON (CMakeLists.txt:6's default)"])


def test_which_build_compiles_each_unit():
    tree = TreeConfig(CASE)
    assert [tree.built_by(rel) for rel in ("src/encoding.cu", "samples/mlp_learning_an_image.cu",
                                           "bindings/torch/bindings.cpp")] == \
        ["CMakeLists.txt", "samples/CMakeLists.txt", None]


@pytest.mark.compile
def test_each_build_compiles_its_own_units(pack62, tmp_path, capsys):
    clang19()
    out = tmp_path / "out"
    assert main(["convert", str(CASE), "-o", str(out), "--rocm", "6.2", "-q"]) in (0, 1)
    capsys.readouterr()
    report = tmp_path / "verify.json"
    main(["verify", str(out), "--rocm", "6.2", "--rocm-headers", str(pack62), "--no-cache", "--format", "json",
          "-o", str(report)])
    doc = json.loads(report.read_text())
    copies = {u["path"]: re.sub(r"-\w+$", "", Path(u["command"][-1][:-len(u["path"])]).name) for u in doc["units"]}
    assert (doc["summary"]["compiled"], doc["summary"]["units"], doc["hipify_units"], copies) == (
        3, 3, ["bindings/torch/bindings.cpp"],
        {"bindings/torch/bindings.cpp": "portkit-torch-hipified", "samples/mlp_learning_an_image.cu": "portkit-converted",
         "src/encoding.cu": "portkit-converted"})
    assert [(c["files"], c["defines"], c["assumed"], c["units"]) for c in doc["configurations"]] == [
        (["CMakeLists.txt", "samples/CMakeLists.txt"], ["TCNN_HALF_PRECISION=1"], ASSUMED, 1),
        (["CMakeLists.txt"], ["TCNN_HALF_PRECISION=1"], ASSUMED, 1),
        (["CMakeLists.txt"], [], ASSUMED, 1)]
    main(["verify", str(out), "--rocm", "6.2", "--rocm-headers", str(pack62), "--no-cache"])
    lines = [re.sub(r" in \d+\.\d s$", "", line) for line in capsys.readouterr().out.splitlines()[1:]]
    assert lines == [
        "configuration of 1 unit: CMake (CMakeLists.txt, samples/CMakeLists.txt): -std=c++17, 1 include directory, "
        "1 definition (TCNN_HALF_PRECISION=1)",
        "  values assumed, as a first configure without -D has them: " + "; ".join(ASSUMED),
        "configuration of 1 unit: CMake (CMakeLists.txt): -std=c++17, 1 include directory, 1 definition "
        "(TCNN_HALF_PRECISION=1)",
        "configuration of 1 unit: CMake (CMakeLists.txt): -std=c++17, 1 include directory, 0 definitions",
        "1 unit compiled after the build's own hipify step (bindings/torch/setup.py:18: ext = CUDAExtension( (torch "
        "hipifies a CUDAExtension's sources when it builds on ROCm)), torch 2.5.1's hipify map "
        "(mappings/torch_hipify.toml) standing in: the units only that build compiles; errors at the tree's own lines",
        "the other units compiled as the CMake build that lists them sees them, without that step: after portkit's "
        "conversion of the tree",
        "",
        "3 translation units: 3 compiled, 0 failed (0 explained by findings, 0 unexplained, 0 not reached)"]


@pytest.mark.compile
@pytest.mark.parametrize("unit", ["src/encoding.cu", "samples/mlp_learning_an_image.cu", "bindings/torch/bindings.cpp"])
def test_the_cases_cuda_compiles_with_nvcc(unit: str):
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    proc = subprocess.run([nvcc, "-x", "cu", "-std=c++17", "-DTCNN_HALF_PRECISION=1", "-Iinclude", "-c", unit,
                           "-o", "/dev/null"], cwd=CASE, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.compile
def test_what_verify_compiles_compiles_with_hipcc(tmp_path: Path, capsys):
    """The CMake build's units as portkit converts them for a build without hipify (what verify's
    copy holds: convert --extension-sources hip), with the definition the build gives."""
    hipcc = require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    out = tmp_path / "out"
    assert main(["convert", str(CASE), "-o", str(out), "--rocm", "6.2", "-q", "--extension-sources", "hip"]) in (0, 1)
    for unit in ("src/encoding.cu", "samples/mlp_learning_an_image.cu", "bindings/torch/bindings.cpp"):
        proc = subprocess.run([hipcc, "-x", "hip", "--offload-arch=gfx90a", "-std=c++17", "-DTCNN_HALF_PRECISION=1",
                               "-Iinclude", "-c", unit, "-o", "/dev/null"], cwd=out, capture_output=True, text=True,
                              timeout=600, env={**os.environ, "HIP_PLATFORM": "amd"})
        assert proc.returncode == 0, unit + proc.stderr[-3000:]
