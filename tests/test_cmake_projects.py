"""CMake that configures for the HIP build (issue 48, item 7): generator expressions keep every
argument and comma, valued nvcc options become one hipcc option (or go, with a PK509 note), CUDA
libraries' packages become ROCm's, every CUDA source a target compiles is compiled as HIP, and a
CUDA-only library built in the tree is reported (PK510).

The converted fixture projects are configured here with Debian's CMake and ROCm (through
tools/debian-rocm.cmake, docs/verify.md), and the real trees under /tmp/trees (when present) are
converted and their generator expressions checked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from portkit import api
from portkit.buildfiles.cmake_lexer import commands

from conftest import REPO, require_tool

TOOLCHAIN = REPO / "tools" / "debian-rocm.cmake"
FIXTURES = REPO / "fixtures" / "build"
TREES = Path(os.environ.get("PORTKIT_TREES", "/tmp/trees"))


def convert(text: str) -> tuple[str, list[tuple[int, str, str]]]:
    out = api.convert_text(text, filename="CMakeLists.txt", rocm="6.2")
    return out.output.decode(), [(f.line, f.code, f.subject) for f in out.findings]


def test_generator_expressions_keep_every_branch_and_comma():
    """`-Xcompiler=-Wextra,-Wall` read one argument at a time took IF's comma for -Xcompiler's:
    both branches merged (`$<IF:c,-Xcompiler=-Wall -Wextra -Wall -Wextra>`)."""
    text = ("target_compile_options(k PRIVATE $<IF:$<COMPILE_LANGUAGE:CUDA>,-Xcompiler=-Wall -Xcompiler=-Wextra,-Wall -Wextra>)\n"
            "target_compile_options(k PRIVATE \"$<IF:$<COMPILE_LANGUAGE:CUDA>,-Xcompiler=-fPIC;-G,-fPIC>\")\n"
            "target_compile_options(k PRIVATE $<BUILD_INTERFACE:$<$<COMPILE_LANGUAGE:CUDA>:--use_fast_math;-Xcompiler=-O3,-g>>)\n"
            "target_compile_options(k PRIVATE \"$<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CONFIG:Debug>>:-G>\" $<$<COMPILE_LANGUAGE:CXX>:-G>)\n"
            "add_compile_options(\"$<$<NOT:$<COMPILE_LANGUAGE:CUDA>>:-G>\")\n")
    out, findings = convert(text)
    assert out == ("target_compile_options(k PRIVATE $<IF:$<COMPILE_LANGUAGE:HIP>,-Wall -Wextra,-Wall -Wextra>)\n"
                   "target_compile_options(k PRIVATE \"$<IF:$<COMPILE_LANGUAGE:HIP>,-fPIC;-g,-fPIC>\")\n"
                   "target_compile_options(k PRIVATE $<BUILD_INTERFACE:$<$<COMPILE_LANGUAGE:HIP>:-ffast-math;-O3;-g>>)\n"
                   "target_compile_options(k PRIVATE \"$<$<AND:$<COMPILE_LANGUAGE:HIP>,$<CONFIG:Debug>>:-g>\" $<$<COMPILE_LANGUAGE:CXX>:-G>)\n"
                   "add_compile_options(\"$<$<NOT:$<COMPILE_LANGUAGE:HIP>>:-G>\")\n")
    assert findings == []


def test_valued_options_become_one_hip_option_or_go_with_a_note():
    text = ("target_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--default-stream per-thread>)\n"
            "target_compile_options(k PRIVATE \"$<$<COMPILE_LANGUAGE:CUDA>:--default-stream=per-thread;-Xfatbin=-compress-all>\")\n"
            "target_compile_options(k PRIVATE -O2 $<$<COMPILE_LANGUAGE:CUDA>:-Xfatbin -compress-all>)\n"
            "set(CMAKE_CUDA_FLAGS \"${CMAKE_CUDA_FLAGS} -Xcudafe --diag_suppress=177 -maxrregcount 64 -rdc true\")\n"
            "target_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-O3;--default-stream>)\n")
    out, findings = convert(text)
    assert out == ("target_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-fgpu-default-stream=per-thread>)\n"
                   "target_compile_options(k PRIVATE \"$<$<COMPILE_LANGUAGE:HIP>:-fgpu-default-stream=per-thread>\")\n"
                   "target_compile_options(k PRIVATE -O2)\n"
                   "set(CMAKE_HIP_FLAGS \"${CMAKE_HIP_FLAGS} -maxrregcount 64 -fgpu-rdc\")\n"
                   "target_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-O3;--default-stream>)\n")
    assert [(line, code) for line, code, _ in findings] == [(2, "PK509"), (3, "PK509"), (4, "PK509"), (4, "PK508"),
                                                            (5, "PK508")]
    assert "-fgpu-default-stream=\n" not in out and "= " not in out


def test_cuda_library_packages_become_rocm_packages():
    """Names checked against ROCm's CMake configs: hipCUB exports hip::hipcub, rocThrust
    roc::rocthrust, RCCL roc::rccl (rocm_export_targets in each project)."""
    text = ("find_package(CUDAToolkit REQUIRED)\n"
            "find_package(CCCL 2.2 REQUIRED CONFIG)\n"
            "find_package(CUB REQUIRED)\n"
            "find_package(NCCL REQUIRED)\n"
            "find_package(libcudacxx REQUIRED)\n"
            "thrust_create_target(ProjThrust HOST CPP DEVICE CUDA)\n"
            "target_link_libraries(a PRIVATE CCCL::CCCL CUB::CUB Thrust::Thrust ProjThrust)\n"
            "target_link_libraries(b PRIVATE NCCL::NCCL ${NCCL_LIBRARIES} nccl CUDA::cublas)\n"
            "if(NCCL_FOUND)\nendif()\n")
    out, findings = convert(text)
    assert out == ("find_package(hip REQUIRED)\n"
                   "find_package(hipblas REQUIRED)\n"
                   "find_package(rocthrust REQUIRED CONFIG)\n"
                   "find_package(hipcub REQUIRED CONFIG)\n"
                   "find_package(rccl REQUIRED)\n"
                   "find_package(libcudacxx REQUIRED)\n"
                   "add_library(ProjThrust INTERFACE)\n"
                   "target_link_libraries(ProjThrust INTERFACE roc::rocthrust)\n"
                   "target_link_libraries(a PRIVATE roc::rocthrust hip::hipcub hip::hipcub roc::rocthrust ProjThrust)\n"
                   "target_link_libraries(b PRIVATE roc::rccl roc::rccl roc::rccl roc::hipblas)\n"
                   "if(rccl_FOUND)\nendif()\n")
    assert [(line, code, subject) for line, code, subject in findings] == [
        (2, "PK509", "2.2"), (5, "PK508", "libcudacxx")]
    again, notes = convert(out)
    assert again == out and not [n for n in notes if n[1] == "PK509"]


def test_globbed_and_collected_cuda_sources_are_compiled_as_hip():
    text = ("file(GLOB_RECURSE SRCS CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} src/*.cu src/*.cpp src/*.h)\n"
            "aux_source_directory(kernels/ KSRC)\n"
            "add_library(k ${SRCS} ${KSRC})\n")
    out, _ = convert(text)
    assert out == ("file(GLOB_RECURSE SRCS CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} src/*.cu src/*.cpp src/*.h)\n"
                   "file(GLOB_RECURSE SRCS_CU CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} src/*.cu)\n"
                   "set_source_files_properties(${SRCS_CU} PROPERTIES LANGUAGE HIP)\n"
                   "aux_source_directory(kernels/ KSRC)\n"
                   "file(GLOB KSRC_CU \"kernels/*.cu\")\n"
                   "list(APPEND KSRC ${KSRC_CU})\n"
                   "set_source_files_properties(${KSRC_CU} PROPERTIES LANGUAGE HIP)\n"
                   "add_library(k ${SRCS} ${KSRC})\n")
    assert convert(out)[0] == out


def test_cuda_only_subdirectory_is_a_finding(tmp_path: Path):
    result = api.convert_paths([FIXTURES / "cmake_cccl" / "input"], output=tmp_path / "out", rocm="5.2")
    found = [(f.path, f.line, f.code, f.subject) for f in result.findings if f.code == "PK510"]
    assert found == [("CMakeLists.txt", 10, "PK510", "nvbench")]
    doc = api.audit_paths([FIXTURES / "cmake_cccl" / "input"], rocm="5.2")
    assert [(f["line"], f["code"]) for f in doc["findings"] if f["code"] == "PK510"] == [(10, "PK510")]


# ------------------------------------------------------------------ configuring for HIP here


_STAND_IN = """# A stand-in for ROCm's {name} package, which Debian does not ship: an interface target of
# the same name, so that the rest of the converted CMake is configured.
if(NOT TARGET {target})
  add_library({target} INTERFACE IMPORTED)
endif()
set({name}_FOUND TRUE)
"""


def _configure(project: Path, build: Path, prefix: Path | None) -> subprocess.CompletedProcess:
    cmake = require_tool("cmake", "cmake (apt-get install cmake)")
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    if not Path("/usr/lib/x86_64-linux-gnu/cmake/hip-lang").is_dir():
        pytest.skip("Debian's hip-lang CMake package (apt-get install libamdhip64-dev) not found")
    cmd = [cmake, "-S", str(project), "-B", str(build), f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN}"]
    if prefix is not None:
        cmd.append(f"-DCMAKE_FIND_ROOT_PATH_MODE_PACKAGE=BOTH")
        cmd.append(f"-D{'rocthrust'}_DIR={prefix / 'rocthrust'}")
        cmd.append(f"-D{'hipcub'}_DIR={prefix / 'hipcub'}")
    return subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, HIP_PLATFORM="amd"), timeout=600)


@pytest.mark.compile
def test_converted_cccl_project_configures_up_to_the_packages_debian_lacks(tmp_path: Path):
    """Debian ships no rocThrust or hipCUB: the configure stops at the first of them, by name
    (before, at `find_package(CCCL)`, which no ROCm machine has). With stand-ins for those two,
    the rest of the converted file configures."""
    project = tmp_path / "histo"
    shutil.copytree(FIXTURES / "cmake_cccl" / "expected", project)
    bare = _configure(project, tmp_path / "bare", None)
    assert bare.returncode != 0
    first = next(line for line in bare.stderr.splitlines() if "rocthrust" in line or "CCCL" in line)
    assert "rocthrust" in first, bare.stderr[-2000:]
    prefix = tmp_path / "stand-ins"
    for name, target in (("rocthrust", "roc::rocthrust"), ("hipcub", "hip::hipcub")):
        (prefix / name).mkdir(parents=True)
        (prefix / name / f"{name}-config.cmake").write_text(_STAND_IN.format(name=name, target=target))
    done = _configure(project, tmp_path / "build", prefix)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


# ------------------------------------------------------------------ real trees


def _genex_commas(text: str) -> tuple[int, bool]:
    """Commas inside generator expressions, and whether every `$<` of every command closes."""
    commas, balanced = 0, True
    for cmd in commands(text):
        depth = 0
        for arg in cmd.args:
            value = arg.value if arg.kind in ("quoted", "unquoted") else ""
            i = 0
            while i < len(value):
                if value.startswith("$<", i):
                    depth, i = depth + 1, i + 2
                    continue
                if value[i] == ">" and depth:
                    depth -= 1
                elif value[i] == "," and depth:
                    commas += 1
                i += 1
        balanced = balanced and depth == 0
    return commas, balanced


def _tree_cmake_files() -> list[Path]:
    if not TREES.is_dir():
        return []
    return sorted(p for p in TREES.rglob("*") if p.is_file() and (p.name == "CMakeLists.txt" or p.suffix == ".cmake")
                  and b"$<" in p.read_bytes())


def test_the_fixture_and_unit_cases_keep_generator_expressions_whole():
    """The same check the real trees get, on this file's own cases (always runs)."""
    text = "target_compile_options(k PRIVATE $<IF:$<COMPILE_LANGUAGE:CUDA>,-Xcompiler=-a -Xcompiler=-b,-a -b>)\n"
    assert _genex_commas(convert(text)[0]) == _genex_commas(text) == (2, True)


def test_no_generator_expression_of_a_real_tree_loses_a_comma():
    files = _tree_cmake_files()
    if not files:
        pytest.skip(f"no real trees with generator expressions under {TREES}")
    changed = []
    for path in files:
        text = path.read_bytes().decode("latin-1")
        out = api.convert_text(text, filename=path.name, rocm="6.2").output.decode("latin-1")
        if _genex_commas(out) != _genex_commas(text) or not _genex_commas(out)[1]:
            changed.append(f"{path}: {_genex_commas(text)} -> {_genex_commas(out)}")
    assert changed == []
