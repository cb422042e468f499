"""CMake that learns of CUDA at configure time (buildfiles/cmake_probes.py): tiny-cuda-nn's converted
CMakeLists.txt stopped at its own architecture detection (try_run of a `.cu` probe) and then at
`if (CUDA_VERSION VERSION_LESS 10.2)` / `message(FATAL_ERROR ...)`; after both it configures for HIP up
to hipBLAS's package (benchmarks/results/real_builds.md)."""

from __future__ import annotations

from portkit import convert_text

# cut down from NVlabs/tiny-cuda-nn's CMakeLists.txt (BSD-3-Clause): the detection function, its call,
# the version check; and two that stay (no FATAL_ERROR in the block; a NOT in the condition)
SOURCE = b"""cmake_minimum_required(VERSION 3.18)
project(tcnn LANGUAGES CXX CUDA)
function(TCNN_AUTODETECT_CUDA_ARCHITECTURES OUT_VARIABLE)
	try_run(run_result compile_result ${PROJECT_BINARY_DIR} ${PROJECT_BINARY_DIR}/detect.cu RUN_OUTPUT_VARIABLE caps)
	set(${OUT_VARIABLE} ${caps} PARENT_SCOPE)
endfunction()
if (DEFINED ENV{TCNN_CUDA_ARCHITECTURES})
	set(CMAKE_CUDA_ARCHITECTURES $ENV{TCNN_CUDA_ARCHITECTURES})
else()
	TCNN_AUTODETECT_CUDA_ARCHITECTURES(CMAKE_CUDA_ARCHITECTURES)
endif()
if (CUDA_VERSION VERSION_LESS 10.2)
	message(FATAL_ERROR "CUDA version too low. tiny-cuda-nn require CUDA 10.2 or higher.")
endif()
if (CUDA_VERSION VERSION_LESS 11.0)
	message(STATUS "an old CUDA")
endif()
if (NOT CUDA_VERSION VERSION_LESS 12.0)
	message(FATAL_ERROR "not this one")
endif()
"""
EXPECTED = SOURCE.replace(b"VERSION 3.18", b"VERSION 3.21").replace(b"CXX CUDA", b"CXX HIP").replace(
    b"\tset(CMAKE_CUDA_ARCHITECTURES $ENV{TCNN_CUDA_ARCHITECTURES})", b"\tset(CMAKE_HIP_ARCHITECTURES gfx90a)").replace(
    b"\tTCNN_AUTODETECT_CUDA_ARCHITECTURES(CMAKE_CUDA_ARCHITECTURES)", b"\tset(CMAKE_HIP_ARCHITECTURES gfx90a)").replace(
    b"if (CUDA_VERSION VERSION_LESS 10.2)", b"if (CUDA_VERSION AND CUDA_VERSION VERSION_LESS 10.2)")


def test_detection_and_version_check_become_what_a_hip_configure_can_run():
    out = convert_text(SOURCE, filename="CMakeLists.txt", rocm="6.2")
    assert out.output == EXPECTED
    notes = [(f.line, f.message) for f in out.findings if f.code == "PK509"]
    assert (10, "`TCNN_AUTODETECT_CUDA_ARCHITECTURES(CMAKE_CUDA_ARCHITECTURES)` detects NVIDIA compute capabilities "
                "into the variable: replaced by gfx90a (--offload-arch); AMD chips do not correspond to sm_XX") in notes
    assert (12, "`CUDA_VERSION VERSION_LESS 10.2` before a FATAL_ERROR: the HIP build has no CUDA version (CUDA_VERSION "
                "is empty, so the test holds and the configure stopped); now `CUDA_VERSION AND ...`, tested only where "
                "a CUDA version is known") in notes
    assert not any(line in (15, 18) for line, _ in notes)


def test_a_rerun_changes_nothing_and_a_builtin_reading_the_variable_stays():
    out = convert_text(SOURCE, filename="CMakeLists.txt", rocm="6.2").output
    assert convert_text(out, filename="CMakeLists.txt", rocm="6.2").output == out
    reads = b"project(t LANGUAGES CUDA)\nforeach(cc IN LISTS CMAKE_CUDA_ARCHITECTURES)\nendforeach()\n"
    assert b"IN LISTS CMAKE_HIP_ARCHITECTURES" in convert_text(reads, filename="CMakeLists.txt", rocm="6.2").output


def test_several_offload_archs_are_one_quoted_list():
    out = convert_text(SOURCE, filename="CMakeLists.txt", rocm="6.2", offload_arch=["gfx90a", "gfx942"]).output
    assert b'\tset(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942")\nendif()' in out
