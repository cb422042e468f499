"""verify compiles each unit as the project's own AMD build does (issue 48): with the definitions
that build gives it (an OS chosen by the CMake, `if(CMAKE_SYSTEM_NAME STREQUAL "Linux")` or the
else() of `if(WIN32)`; a generator expression of a variable set there; an INTERFACE library's
definitions passed on to the targets that link it; ROCm's hip::host, whose users get
__HIP_PLATFORM_AMD__=1), never a unit that build leaves out, and a call written for a newer
hipBLAS explained by the release it needs.

The cases are fixtures/verify_real/os_interface_defines (nccl-tests, reduced), hip_host_platform
(LightGBM) and ctranslate2_own_hip_build (CTranslate2); fixtures/verify_real/README.md says where
each comes from.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import CUDA_LIB_INCLUDE, NVCC, REPO, clang19, require_dir, require_tool
from portkit.cli.app import main
from portkit.project.buildconfig import BuildConfig, TreeConfig
from portkit.project.buildconfig_cmake import read_cmake

CASES = REPO / "fixtures" / "verify_real"
NCCL = CASES / "os_interface_defines" / "input"
LIGHTGBM = CASES / "hip_host_platform" / "input"
CT2 = CASES / "ctranslate2_own_hip_build" / "input"
HIP_HOST = ("__HIP_PLATFORM_HCC__=1", "__HIP_PLATFORM_AMD__=1")


def test_nccl_tests_units_get_the_linux_definitions_of_the_interface_library_they_link():
    """nccl-tests: NCCL_OS_LINUX is set under `if(CMAKE_SYSTEM_NAME STREQUAL "Linux")`, given as
    `$<$<BOOL:${NCCL_OS_LINUX}>:NCCL_OS_LINUX>` to the INTERFACE library nccl_tests_options, which
    each test links inside a foreach loop (`add_executable(${COLL}_perf ${COLL}.cu common.cu)`).
    Without it os.h defines neither NCCL_WEAK nor getopt's names: 11 of its 16 units failed."""
    tree = TreeConfig(NCCL)
    files = ("CMakeLists.txt", "src/CMakeLists.txt")
    include = (str(NCCL / "src"), str(NCCL / "os"))
    for unit in ("src/all_gather.cu", "src/common.cu"):       # named by the loop's variable; listed
        assert tree.for_unit(unit) == BuildConfig("CMake", files, None, include, ("NCCL_OS_LINUX",))


def test_lightgbm_units_get_what_hip_host_gives_its_users():
    """LightGBM: under USE_ROCM its objects link hip::host, and its cuda_rocm_interop.h tests
    __HIP_PLATFORM_AMD__ before any HIP header is included; clang alone defines it only inside
    hip_common.h, so all 7 of its units that got past a missing submodule failed on cudaError_t."""
    config = TreeConfig(LIGHTGBM).for_unit("src/score_updater.cu")
    assert config.defines == ("USE_CUDA", "USE_ROCM", *HIP_HOST)


def _defines(tmp_path: Path, text: str, unit: str = "a.cu") -> tuple[str, ...]:
    (tmp_path / "CMakeLists.txt").write_text(text)
    return TreeConfig(tmp_path).for_unit(unit).defines


@pytest.mark.parametrize("condition,taken", [
    ('CMAKE_SYSTEM_NAME STREQUAL "Linux"', True), ("UNIX", True), ("NOT WIN32", True), ("NOT MSVC", True),
    ('${CMAKE_SYSTEM_NAME} STREQUAL "Linux"', True),
    ("WIN32", False), ("APPLE", False), ('CMAKE_SYSTEM_NAME STREQUAL "Windows"', False), ("NOT UNIX", False),
    ("WITH_MPI", False), ("UNIX AND WITH_MPI", False),
])
def test_the_linux_branch_of_an_os_condition_is_the_builds(tmp_path: Path, condition: str, taken: bool):
    config = read_cmake(f"if({condition})\n  add_compile_definitions(IN_IF)\nendif()\n", tmp_path, tmp_path)
    assert config.defines == (["IN_IF"] if taken else [])


def test_else_is_taken_only_when_every_branch_before_it_is_another_oss(tmp_path: Path):
    config = read_cmake("if(WIN32)\n add_compile_definitions(W)\nelseif(APPLE)\n add_compile_definitions(M)\n"
                        "else()\n add_compile_definitions(L)\nendif()\n"
                        "if(MSVC)\n add_compile_definitions(V)\nelseif(UNIX)\n add_compile_definitions(U)\n"
                        "else()\n add_compile_definitions(X)\nendif()\n"
                        "if(WITH_MPI)\n add_compile_definitions(MPI)\nelse()\n add_compile_definitions(NO_MPI)\nendif()\n"
                        "find_package(MPI)\n"
                        "if(WITH_MPI)\n add_compile_definitions(MPI2)\nelse()\n add_compile_definitions(NO_MPI2)\nendif()\n",
                        tmp_path, tmp_path)
    # WITH_MPI, which nothing sets, is empty on a first configure: its else() is that build's
    # (project/cmake_settle.py); after a find_package() it may be set, and neither branch counts
    assert config.defines == ["L", "U", "NO_MPI"]


def test_a_generator_expression_the_linux_build_settles(tmp_path: Path):
    config = read_cmake(
        'if(CMAKE_SYSTEM_NAME STREQUAL "Linux")\n  set(OS_LINUX ON)\nelse()\n  set(OS_WINDOWS ON)\nendif()\n'
        "set(OFF_FLAG OFF)\n"
        "add_compile_definitions($<$<BOOL:${OS_LINUX}>:LINUX_ON> $<$<BOOL:${OS_WINDOWS}>:WINDOWS_ON>\n"
        "  $<$<NOT:$<BOOL:${OFF_FLAG}>>:NOT_OFF> $<$<BOOL:${OFF_FLAG}>:OFF_ON> $<$<PLATFORM_ID:Linux>:PLATFORM>\n"
        "  $<$<PLATFORM_ID:Windows>:WINPLATFORM> $<$<BOOL:${FROM_CACHE}>:UNKNOWN> $<$<CONFIG:Debug>:DEBUG>\n"
        "  $<1:ONE> $<0:ZERO>)\n", tmp_path, tmp_path)
    assert config.defines == ["LINUX_ON", "NOT_OFF", "PLATFORM", "ONE"]


def test_a_targets_links_pass_on_interface_and_public_definitions_only(tmp_path: Path):
    defines = _defines(tmp_path, (
        "add_library(opts INTERFACE)\ntarget_compile_definitions(opts INTERFACE FROM_OPTS)\n"
        "add_library(base STATIC base.cu)\n"
        "target_compile_definitions(base PRIVATE BASE_ONLY PUBLIC BASE_PUBLIC INTERFACE BASE_USERS)\n"
        "target_link_libraries(base PUBLIC opts PRIVATE hidden)\n"
        "add_library(hidden INTERFACE)\ntarget_compile_definitions(hidden INTERFACE HIDDEN)\n"
        "add_executable(app a.cu)\ntarget_link_libraries(app PRIVATE base)\n"
        "if(WITH_EXTRA)\n  target_link_libraries(app PRIVATE extra)\nendif()\n"
        "add_library(extra INTERFACE)\ntarget_compile_definitions(extra INTERFACE EXTRA)\n"))
    assert defines == ("BASE_PUBLIC", "BASE_USERS", "FROM_OPTS")
    assert TreeConfig(tmp_path).for_unit("base.cu").defines == ("BASE_ONLY", "BASE_PUBLIC", "BASE_USERS",
                                                                 "FROM_OPTS", "HIDDEN")


@pytest.mark.parametrize("link,given", [
    ("if(USE_ROCM)\n  target_link_libraries(objs PUBLIC hip::host)\nendif()\n", True),
    ("target_link_libraries(objs PRIVATE hip::device)\n", True),
    ("if(USE_CUDA)\n  target_link_libraries(objs PUBLIC hip::host)\nendif()\n", False),
    ("target_link_libraries(objs PRIVATE hip::amdhip64)\n", False),
])
def test_hip_host_gives_the_hip_platform_macros(tmp_path: Path, link: str, given: bool):
    defines = _defines(tmp_path, "add_library(objs OBJECT a.cu)\n" + link)
    assert defines == (HIP_HOST if given else ())


@pytest.mark.compile
@pytest.mark.parametrize("case,units", [(NCCL, ("src/all_gather.cu", "src/common.cu")),
                                        (LIGHTGBM, ("src/score_updater.cu",))])
def test_the_cases_compile_for_amd_after_convert(case: Path, units: tuple[str, ...], pack62, tmp_path, capsys):
    """Converted, each case compiles against the pinned 6.2 pack with its build's definitions."""
    clang19()
    out = tmp_path / "out"
    assert main(["convert", str(case), "-o", str(out), "--rocm", "6.2", "-q"]) in (0, 1)
    capsys.readouterr()
    main(["verify", str(out), "--rocm", "6.2", "--rocm-headers", str(pack62)])
    lines = [re.sub(r" in \d+\.\d s$", "", line) for line in capsys.readouterr().out.splitlines()]
    n = len(units)
    assert lines[-1] == (f"{n} translation unit{'s' if n > 1 else ''}: {n} compiled, 0 failed (0 explained by "
                         f"findings, 0 unexplained, 0 not reached)")


def test_a_unit_the_projects_hip_build_removes_is_left_out():
    """CTranslate2's `elseif(WITH_HIP)` removes its AWQ kernels (inline PTX) from CUDA_SOURCES:
    verify compiled them anyway, 3 units unexplained on `'cuda_fp16.h' file not found`."""
    tree = TreeConfig(CT2)
    assert tree.left_out("src/ops/awq/dequantize_gpu.cu") == "CMakeLists.txt:21"
    assert tree.left_out("src/ops/bias_add_gpu.cu") is None
    assert tree.left_out("src/cuda/primitives.cu") is None


def test_only_the_hip_branch_removes_a_unit(tmp_path: Path):
    (tmp_path / "CMakeLists.txt").write_text(
        "set(SRC a.cu b.cu c.cu d.cu)\nlist(REMOVE_ITEM SRC a.cu)\n"
        "if(USE_ROCM)\n  if(WITH_MPI)\n    list(REMOVE_ITEM SRC b.cu)\n  endif()\n  list(REMOVE_ITEM SRC c.cu)\n"
        "else()\n  list(REMOVE_ITEM SRC d.cu)\nendif()\n")
    tree = TreeConfig(tmp_path)
    assert [tree.left_out(u) for u in ("a.cu", "b.cu", "c.cu", "d.cu")] == [None, None, "CMakeLists.txt:7", None]


@pytest.mark.compile
def test_ctranslate2s_own_hip_build_at_rocm_6_2(pack62, tmp_path, capsys):
    """CTranslate2 builds for AMD itself (CT2_USE_HIP), for ROCm 7: its AWQ kernel is not compiled,
    as its HIP build leaves it out, and its hipblasGemmEx call with hipDataType arguments, which
    hipBLAS takes at ROCm 6.x only with HIPBLAS_V2 and by default from 7.0, is explained by the release
    it needs (PK002), the ROCm release decision."""
    clang19()
    out = tmp_path / "out"
    assert main(["convert", str(CT2), "-o", str(out), "--rocm", "6.2", "-q"]) in (0, 1)
    capsys.readouterr()
    main(["verify", str(out), "--rocm", "6.2", "--rocm-headers", str(pack62)])
    lines = [re.sub(r" \(\d+\.\d s\)$| in \d+\.\d s$", "", line) for line in capsys.readouterr().out.splitlines()]
    start = lines.index("src/cuda/primitives.cu: failed, explained")
    assert lines[start:] == [
        "src/cuda/primitives.cu: failed, explained",
        "  src/cuda/primitives.cu:34:18: error: no matching function for call to 'hipblasGemmEx'",
        "    explained by PK002 needs-newer-rocm: hipblasGemmEx takes 'hipblasDatatype_t' at ROCm 6.2 where the "
        "call passes 'hipDataType', the argument of its signature in a newer ROCm: call hipblasGemmEx_v2 "
        "(cublasGemmEx's HIP name from ROCm 6.0, which takes it), or define HIPBLAS_V2 for the build, which "
        "gives hipblasGemmEx that signature, or build with ROCm 7.0 or newer, where it has that signature by "
        "default",
        "skipped: src/ops/awq/dequantize_gpu.cu: not compiled: the project's AMD build leaves it out "
        "(CMakeLists.txt:21: list(REMOVE_ITEM ...) under its HIP condition)",
        "",
        "2 translation units: 1 compiled, 1 failed (1 explained by findings, 0 unexplained, 0 not reached)",
        # hipBLAS 3.0 (ROCm 7.0) has that signature by default: the ROCm release is the decision
        "failed only on a decision: 1 of the 1 failed units reached (newer_rocm: 1); compiled or failed on a "
        "decision: 2 of 2 reached units (100%)"]
    main(["verify", str(out), "--rocm", "6.2", "--rocm-headers", str(pack62), "-D", "HIPBLAS_V2", "-q"])
    assert capsys.readouterr().out.startswith("portkit verify: 2/2 compiled")


@pytest.mark.compile
@pytest.mark.parametrize("case,unit,flags", [
    (CT2, "src/ops/bias_add_gpu.cu", ["-DCT2_WITH_CUDA"]),
    (CT2, "src/ops/awq/dequantize_gpu.cu", ["-DCT2_WITH_CUDA"]),
    (NCCL, "src/all_gather.cu", ["-DNCCL_OS_LINUX", "-Isrc", "-Ios"]),
    (NCCL, "src/common.cu", ["-DNCCL_OS_LINUX", "-Isrc", "-Ios"]),
    (LIGHTGBM, "src/score_updater.cu", ["-DUSE_CUDA", "-Iinclude"]),
    (CT2, "src/cuda/primitives.cu", ["-DCT2_WITH_CUDA"]),
])
def test_the_cases_cuda_compiles_with_nvcc(case: Path, unit: str, flags: list[str]):
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    if unit == "src/cuda/primitives.cu":
        flags = [*flags, "-I", str(require_dir(CUDA_LIB_INCLUDE, "CUDA library headers (set CUDA_LIB_INCLUDE)"))]
    proc = subprocess.run([nvcc, "-x", "cu", "-c", unit, "-o", "/dev/null", *flags], cwd=case,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
