"""verify compiles a tree whose own CMake selects the AMD build as that build does (issue 48,
gunrock and faiss): the else() of the NVIDIA backend's condition when that branch names HIP, a
definition nested under an outer option whose innermost condition names HIP, a remembered variable
inside a definition (`SM_TARGET=${CMAKE_HIP_ARCHITECTURES}`: the architecture verify compiles for),
a function an upper CMakeLists.txt defines and a lower one calls, and no unit of a folder only the
NVIDIA branch adds.

And a tree whose own AMD build translates its sources as it builds (faiss's hipify.sh): each unit
is compiled after portkit's conversion, standing in for that step, its errors at the tree's lines.

The cases are fixtures/verify_real/nvidia_switch_else (gunrock, reduced) and build_time_hipify
(faiss, reduced); fixtures/verify_real/README.md.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import NVCC, REPO, clang19, cuda_library_includes, require_tool
from portkit.cli.app import main
from portkit.project.buildconfig import TreeConfig
from portkit.project.buildconfig_cmake import read_cmake

GUNROCK = REPO / "fixtures" / "verify_real" / "nvidia_switch_else" / "input"
BFS = "examples/algorithms/bfs/bfs.cu"
AMD_BUILD = ("SM_TARGET=gfx90a", "__HIP_PLATFORM_AMD__", "HIP_BACKEND=0", "ESSENTIALS_VERSION=2.1.0")


def test_gunrocks_examples_get_the_amd_backends_definitions():
    """gunrock builds for AMD by default: the else() of `if(${ESSENTIALS_NVIDIA_BACKEND})` gives the
    INTERFACE library essentials SM_TARGET, __HIP_PLATFORM_AMD__ and HIP_BACKEND, and each example
    links it inside `add_essentials_example(bfs)`, a function examples/algorithms/CMakeLists.txt
    defines. Without them 18 units stopped at `use of undeclared identifier 'sm_SM_TARGET'`."""
    config = TreeConfig(GUNROCK).for_unit(BFS)
    assert config.defines == AMD_BUILD
    assert config.std == "c++17"
    assert config.includes == (str(GUNROCK / "include"), str(GUNROCK / "include" / "gunrock" / "compat"))
    other = TreeConfig(GUNROCK, ("gfx942",)).for_unit(BFS)
    assert other.defines[0] == "SM_TARGET=gfx942"


def test_a_folder_only_the_nvidia_branch_adds_is_left_out():
    tree = TreeConfig(GUNROCK)
    assert tree.left_out_why("examples/experiments/copy_ctor.cu") == (
        "examples/CMakeLists.txt:4", "add_subdirectory(experiments) only in a branch it does not take")
    assert tree.left_out("examples/experiments/copy_ctor.cu") == "examples/CMakeLists.txt:4"
    assert tree.left_out_why(BFS) is None


@pytest.mark.parametrize("text,defines", [
    # the else() of the NVIDIA build's switch, naming HIP: the AMD build's
    ("if(${USE_NVIDIA})\n  add_definitions(-DNV)\nelse()\n  add_definitions(-D__HIP_PLATFORM_AMD__)\nendif()\n",
     ["__HIP_PLATFORM_AMD__"]),
    ("if(WITH_CUDA)\n  add_definitions(-DCU)\nelse()\n  add_definitions(-DUSE_HIP=1)\nendif()\n", ["USE_HIP=1"]),
    # a plain else() of a CUDA switch can be the CPU-only build: left out
    ("if(WITH_CUDA)\n  add_definitions(-DCU)\nelse()\n  add_definitions(-DCPU_ONLY)\nendif()\n", []),
    # the else() of an option that names no vendor, even naming HIP: left out (after a find_package()
    # that may set WITH_MPI: unset, a first configure would take the else(), project/cmake_settle.py)
    ("find_package(MPI)\nif(WITH_MPI)\n  add_definitions(-DMPI)\nelse()\n  add_definitions(-DHIP_NO_MPI)\nendif()\n",
     []),
    # the else() of the HIP branch is the NVIDIA build's
    ("if(USE_ROCM)\n  add_definitions(-DR)\nelse()\n  add_definitions(-DNV_AMD_OFF)\nendif()\n", ["R"]),
    # nested: the innermost condition names HIP, the outer one is an option (faiss's USE_AMD_ROCM)
    ("if(FAISS_ENABLE_GPU)\n  if(FAISS_ENABLE_ROCM)\n    add_definitions(-DUSE_AMD_ROCM)\n  else()\n"
     "    add_definitions(-DCU)\n  endif()\nendif()\n", ["USE_AMD_ROCM"]),
    # ... but not under another OS's branch, the NVIDIA build's, or an inner option
    ("if(WIN32)\n  if(USE_ROCM)\n    add_definitions(-DWIN_ROCM)\n  endif()\nendif()\n", []),
    ("if(USE_NVIDIA_BACKEND)\n  if(USE_HIP_ON_NVIDIA)\n    add_definitions(-DHN)\n  endif()\nendif()\n", []),
    ("if(USE_ROCM)\n  if(WITH_MPI)\n    add_definitions(-DROCM_MPI)\n  endif()\nendif()\n", []),
])
def test_which_branch_is_the_amd_builds(tmp_path: Path, text: str, defines: list[str]):
    assert read_cmake(text, tmp_path, tmp_path).defines == defines


def test_a_remembered_literal_variable_inside_a_definition(tmp_path: Path):
    config = read_cmake('set(MAJOR 2)\nset(VERSION "${MAJOR}.1")\nif(OPT)\n  set(LATE 3)\nendif()\n'
                        "if(NOT CMAKE_HIP_ARCHITECTURES)\n  set(CMAKE_HIP_ARCHITECTURES gfx900)\nendif()\n"
                        "add_compile_definitions(V=${VERSION} L=${LATE} ARCH=${CMAKE_HIP_ARCHITECTURES} "
                        "U=${UNKNOWN})\n", tmp_path, tmp_path, given={"CMAKE_HIP_ARCHITECTURES": "gfx90a"})
    assert config.defines == ["V=2.1", "ARCH=gfx90a"]


def test_a_function_called_below_reads_its_body_with_the_calls_arguments(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        "add_library(opts INTERFACE)\ntarget_compile_definitions(opts INTERFACE FROM_OPTS)\n"
        "macro(add_tool NAME)\n  add_executable(${NAME} ${NAME}.cu)\n  target_link_libraries(${NAME} opts)\n"
        "  target_compile_definitions(${NAME} PRIVATE TOOL_${ARGV1})\nendmacro()\nadd_subdirectory(sub)\n")
    (tmp_path / "sub" / "CMakeLists.txt").write_text("add_tool(a X)\nadd_tool(b Y)\n")
    tree = TreeConfig(tmp_path)
    assert tree.for_unit("sub/a.cu").defines == ("TOOL_X", "FROM_OPTS")
    assert tree.for_unit("sub/b.cu").defines == ("TOOL_Y", "FROM_OPTS")


@pytest.mark.compile
def test_gunrocks_amd_build_at_rocm_6_2(pack62, tmp_path, capsys):
    """Converted, bfs.cu compiles with the AMD backend's definitions, and the experiment only the
    NVIDIA build compiles is skipped with the line that says so."""
    clang19()
    out = tmp_path / "out"
    assert main(["convert", str(GUNROCK), "-o", str(out), "--rocm", "6.2", "-q"]) in (0, 1)
    capsys.readouterr()
    main(["verify", str(out), "--rocm", "6.2", "--rocm-headers", str(pack62), "--no-cache"])
    lines = [re.sub(r" in \d+\.\d s$", "", line) for line in capsys.readouterr().out.splitlines()]
    assert lines[1:] == [
        "configuration of 1 unit: CMake (CMakeLists.txt, examples/CMakeLists.txt, examples/algorithms/CMakeLists.txt, "
        "examples/algorithms/bfs/CMakeLists.txt): -std=c++17, 2 include directories, 4 definitions (SM_TARGET=gfx90a, "
        "__HIP_PLATFORM_AMD__, HIP_BACKEND=0, ESSENTIALS_VERSION=2.1.0)",
        "skipped: examples/experiments/copy_ctor.cu: not compiled: the project's AMD build leaves it out "
        "(examples/CMakeLists.txt:4: add_subdirectory(experiments) only in a branch it does not take)",
        "",
        "1 translation unit: 1 compiled, 0 failed (0 explained by findings, 0 unexplained, 0 not reached)"]


@pytest.mark.compile
@pytest.mark.parametrize("unit,flags", [
    (BFS, ["-D__HIP_PLATFORM_NVIDIA__", "-DSM_TARGET=75", "-DHIP_BACKEND=1", "-std=c++17", "-Iinclude"]),
    ("examples/experiments/copy_ctor.cu", []),
])
def test_the_cases_cuda_compiles_with_nvcc(unit: str, flags: list[str]):
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    proc = subprocess.run([nvcc, "-x", "cu", "-c", unit, "-o", "/dev/null", *flags], cwd=GUNROCK,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


FAISS = REPO / "fixtures" / "verify_real" / "build_time_hipify" / "input"


def test_faiss_gets_its_nested_rocm_definition_and_its_hipify_step_is_found():
    """faiss defines USE_AMD_ROCM under `if(FAISS_ENABLE_GPU)` then `if(FAISS_ENABLE_ROCM)`, and that
    branch runs faiss/gpu/hipify.sh before anything compiles (CMakeLists.txt:19 here, :116 in faiss)."""
    assert TreeConfig(FAISS).for_unit("faiss/gpu/GpuDistance.cu").defines == (
        "USE_AMD_ROCM", "__HIP_PLATFORM_HCC__=1", "__HIP_PLATFORM_AMD__=1")
    from portkit.commands.results import VerifyOptions
    from portkit.commands.verify import build_hipify
    assert build_hipify.step(FAISS, VerifyOptions()) == (
        "CMakeLists.txt:19: execute_process(COMMAND ${PROJECT_SOURCE_DIR}/faiss/gpu/hipify.sh)")
    assert build_hipify.step(GUNROCK, VerifyOptions()) == ""


def test_an_error_in_the_converted_copy_is_placed_at_the_trees_line(tmp_path: Path):
    from portkit.commands.results import ErrorReport, UnitReport, VerifyResult
    from portkit.commands.verify import build_hipify
    (tmp_path / "tree").mkdir()
    (tmp_path / "copy").mkdir()
    (tmp_path / "tree" / "a.cu").write_text("// a\n#include <cuda_runtime.h>\nint x;\ncudaError_t e = bad;\n")
    (tmp_path / "copy" / "a.cu").write_text("// a\n#include <hip/hip_runtime.h>\n\nint x;\nhipError_t e = bad;\n")
    unit = UnitReport("a.cu", "failed", 0.1, (), "tree", [ErrorReport("a.cu", 5, 16, "error", "bad")])
    result = VerifyResult(tmp_path / "copy", None, None, ("gfx90a",), units=[unit])
    placed = build_hipify.placed_back(result, tmp_path / "tree", tmp_path / "copy", "CMakeLists.txt:1: hipify", True)
    assert (placed.root, placed.units[0].errors[0].line, placed.hipify_step) == (
        tmp_path / "tree", 4, "CMakeLists.txt:1: hipify")


@pytest.mark.compile
def test_faiss_compiles_after_its_own_hipify_step(pack62, tmp_path, capsys):
    """convert leaves faiss as it is (its own AMD build compiles it, after hipify.sh): verify compiles
    each unit after portkit's conversion, standing in for that step, and says so; before, every unit
    stopped at `'cublas_v2.h' file not found`, unexplained (faiss: 69 units)."""
    clang19()
    out = tmp_path / "out"
    assert main(["convert", str(FAISS), "-o", str(out), "--rocm", "6.2", "-q"]) == 0
    assert (out / "faiss" / "gpu" / "GpuDistance.cu").read_bytes() == (FAISS / "faiss" / "gpu" / "GpuDistance.cu").read_bytes()
    capsys.readouterr()
    main(["verify", str(out), "--rocm", "6.2", "--rocm-headers", str(pack62), "--no-cache"])
    lines = [re.sub(r" in \d+\.\d s$", "", line) for line in capsys.readouterr().out.splitlines()]
    assert lines[1:] == [
        "configuration of 1 unit: CMake (CMakeLists.txt, faiss/gpu/CMakeLists.txt): -std=c++20, 1 include directory, "
        "3 definitions (USE_AMD_ROCM, __HIP_PLATFORM_HCC__=1, __HIP_PLATFORM_AMD__=1)",
        "every unit compiled after the build's own hipify step (CMakeLists.txt:19: execute_process(COMMAND "
        "${PROJECT_SOURCE_DIR}/faiss/gpu/hipify.sh)), portkit's conversion standing in; errors at the tree's own lines",
        "",
        "1 translation unit: 1 compiled, 0 failed (0 explained by findings, 0 unexplained, 0 not reached)"]


@pytest.mark.compile
def test_faiss_cuda_compiles_with_nvcc():
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    proc = subprocess.run([nvcc, "-x", "cu", "-std=c++17", "-I.", *cuda_library_includes([FAISS / "faiss/gpu/GpuDistance.cu"]), "-c", "faiss/gpu/GpuDistance.cu",
                           "-o", "/dev/null"], cwd=FAISS, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
