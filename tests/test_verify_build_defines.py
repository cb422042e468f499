"""verify compiles each unit with the definitions the project's own build gives it (issue 48):
an OS chosen by the CMake (`if(CMAKE_SYSTEM_NAME STREQUAL "Linux")`, the else() of `if(WIN32)`),
a generator expression of a variable set there, an INTERFACE library's definitions passed on to
the targets that link it, and ROCm's hip::host, whose users get __HIP_PLATFORM_AMD__=1.

The cases are fixtures/verify_real/os_interface_defines (nccl-tests, reduced) and
hip_host_platform (LightGBM, reduced); fixtures/verify_real/README.md says where each comes from.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import NVCC, REPO, clang19, require_tool
from portkit.cli.app import main
from portkit.project.buildconfig import BuildConfig, TreeConfig
from portkit.project.buildconfig_cmake import read_cmake

CASES = REPO / "fixtures" / "verify_real"
NCCL = CASES / "os_interface_defines" / "input"
LIGHTGBM = CASES / "hip_host_platform" / "input"
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
                        "if(WITH_MPI)\n add_compile_definitions(MPI)\nelse()\n add_compile_definitions(NO_MPI)\nendif()\n",
                        tmp_path, tmp_path)
    assert config.defines == ["L", "U"]


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


@pytest.mark.compile
@pytest.mark.parametrize("case,unit,flags", [
    (NCCL, "src/all_gather.cu", ["-DNCCL_OS_LINUX", "-Isrc", "-Ios"]),
    (NCCL, "src/common.cu", ["-DNCCL_OS_LINUX", "-Isrc", "-Ios"]),
    (LIGHTGBM, "src/score_updater.cu", ["-DUSE_CUDA", "-Iinclude"]),
])
def test_the_cases_cuda_compiles_with_nvcc(case: Path, unit: str, flags: list[str]):
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    proc = subprocess.run([nvcc, "-x", "cu", "-c", unit, "-o", "/dev/null", *flags], cwd=case,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
