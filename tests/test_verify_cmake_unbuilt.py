"""verify compiles the units of faiss's default build, never its template nor its cuVS units (issue 48,
faiss's last unexplained unit and 8 units on a decision no default build meets):

- a file the build reads as text (`file(READ FILE VAR)`, configure_file's input) and no target lists
  is a template, skipped with the CMake line that reads it: faiss/gpu/CMakeLists.txt:230 reads
  impl/scan/IVFInterleavedScanKernelTemplate.${GPU_EXT_PREFIX} and compiles copies string(REPLACE)
  writes, so the template alone stopped at `use of undeclared identifier 'SUB_CODEC_TYPE'`;
- a source only an option OFF by default adds (`list(APPEND FAISS_GPU_SRC ...)` under
  `if(FAISS_ENABLE_CUVS)`, the option declared OFF in the top CMakeLists.txt) is skipped as the
  folder of an add_subdirectory under such an option is: verify compiles the default build.

The case is fixtures/verify_real/faiss_template_cuvs (faiss, reduced; fixtures/verify_real/README.md).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import NVCC, REPO, clang19, require_tool
from portkit.cli.app import main
from portkit.project.buildconfig import TreeConfig
from portkit.project.buildconfig_cmake import read_cmake

CASE = REPO / "fixtures" / "verify_real" / "faiss_template_cuvs" / "input"
TEMPLATE = "faiss/gpu/impl/scan/IVFInterleavedScanKernelTemplate.cu"
TEMPLATE_WHY = ("file(READ ${CMAKE_CURRENT_SOURCE_DIR}/impl/scan/IVFInterleavedScanKernelTemplate.${GPU_EXT_PREFIX}) "
                "reads it as a template, and no target lists it")
CUVS_WHY = ("list(APPEND FAISS_GPU_SRC ...) only under FAISS_ENABLE_CUVS, OFF by default "
            "(verify compiles the default build)")


def test_the_template_and_the_option_only_units_are_left_out():
    tree = TreeConfig(CASE)
    assert tree.left_out_why(TEMPLATE) == ("faiss/gpu/CMakeLists.txt:19", TEMPLATE_WHY)
    assert tree.left_out_why("faiss/gpu/impl/CuvsFlatIndex.cu") == ("faiss/gpu/CMakeLists.txt:37", CUVS_WHY)
    assert tree.left_out_why("faiss/gpu/GpuDistance.cu") is None


@pytest.mark.parametrize("text,out", [
    # read as text and never a source: a template (a variable it cannot resolve matches any name)
    ('file(READ "${CMAKE_CURRENT_SOURCE_DIR}/scan_template.${EXT}" content)\n', True),
    ('file(READ scan_template.cu content)\n', True),
    ('configure_file(scan_template.cu ${CMAKE_CURRENT_BINARY_DIR}/scan.cu COPYONLY)\n', True),
    # also a target's source, or a path too open to name one file
    ('file(READ scan_template.cu content)\nadd_library(k OBJECT scan_template.cu)\n', False),
    ('file(READ ${NAME}.cu content)\n', False),
    ('file(WRITE scan_template.cu "x")\n', False),
])
def test_which_reads_make_a_template(tmp_path: Path, text: str, out: bool):
    (tmp_path / "scan_template.cu").write_text("__global__ void k() {}\n")
    assert (str(tmp_path / "scan_template.cu") in read_cmake(text, tmp_path, tmp_path).unbuilt) is out


OPTION_OFF = 'option(WITH_EXTRA "e" OFF)\n'


@pytest.mark.parametrize("text,out", [
    # only under an option OFF by default: list(APPEND), set(), target_sources(), add_library()
    (OPTION_OFF + 'set(SRC a.cu)\nif(WITH_EXTRA)\n  list(APPEND SRC x.cu)\nendif()\nadd_library(k ${SRC})\n', True),
    (OPTION_OFF + 'if(WITH_EXTRA)\n  set(SRC x.cu)\nendif()\n', True),
    (OPTION_OFF + 'add_library(k a.cu)\nif(${WITH_EXTRA})\n  target_sources(k PRIVATE x.cu)\nendif()\n', True),
    (OPTION_OFF + 'if(WITH_EXTRA)\n  add_library(extra x.cu)\nendif()\n', True),
    # also listed outside the option, the option ON or set ON, negated, compound, its else(),
    # never declared, or one a port turns on (it names a GPU vendor or HIP)
    (OPTION_OFF + 'set(SRC x.cu)\nif(WITH_EXTRA)\n  list(APPEND SRC x.cu)\nendif()\n', False),
    ('option(WITH_EXTRA "e" ON)\nif(WITH_EXTRA)\n  list(APPEND SRC x.cu)\nendif()\n', False),
    (OPTION_OFF + 'set(WITH_EXTRA ON)\nif(WITH_EXTRA)\n  list(APPEND SRC x.cu)\nendif()\n', False),
    (OPTION_OFF + 'if(NOT WITH_EXTRA)\n  list(APPEND SRC x.cu)\nendif()\n', False),
    (OPTION_OFF + 'if(WITH_EXTRA AND X)\n  list(APPEND SRC x.cu)\nendif()\n', False),
    (OPTION_OFF + 'if(WITH_EXTRA)\nelse()\n  list(APPEND SRC x.cu)\nendif()\n', False),
    ('if(WITH_EXTRA)\n  list(APPEND SRC x.cu)\nendif()\n', False),
    ('option(USE_CUDA "c" OFF)\nif(USE_CUDA)\n  list(APPEND SRC x.cu)\nendif()\n', False),
])
def test_which_options_leave_a_source_out(tmp_path: Path, text: str, out: bool):
    assert (str(tmp_path / "x.cu") in read_cmake(text, tmp_path, tmp_path).unbuilt) is out


def test_an_option_declared_above_counts_below(tmp_path: Path):
    """faiss declares FAISS_ENABLE_CUVS in its top CMakeLists.txt and tests it in faiss/gpu's."""
    text = 'if(WITH_EXTRA)\n  list(APPEND SRC x.cu)\nendif()\n'
    assert str(tmp_path / "x.cu") in read_cmake(text, tmp_path, tmp_path, options={"WITH_EXTRA": False}).unbuilt
    assert read_cmake(text, tmp_path, tmp_path, options={"WITH_EXTRA": None}).unbuilt == {}
    assert read_cmake(OPTION_OFF, tmp_path, tmp_path).options == {"WITH_EXTRA": False}


@pytest.mark.compile
def test_faiss_default_build_at_rocm_6_2(pack62, tmp_path, capsys):
    clang19()
    out = tmp_path / "out"
    assert main(["convert", str(CASE), "-o", str(out), "--rocm", "6.2", "-q", "--convert-amd-built"]) in (0, 1)
    capsys.readouterr()
    main(["verify", str(out), "--rocm", "6.2", "--rocm-headers", str(pack62), "--no-cache"])
    lines = [re.sub(r" \(\d+\.\d s\)$| in \d+\.\d s$", "", line) for line in capsys.readouterr().out.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("skipped: "))
    assert lines[start:] == [
        f"skipped: faiss/gpu/impl/CuvsFlatIndex.cu: not compiled: the project's AMD build leaves it out "
        f"(faiss/gpu/CMakeLists.txt:37: {CUVS_WHY})",
        f"skipped: {TEMPLATE}: not compiled: the project's AMD build leaves it out "
        f"(faiss/gpu/CMakeLists.txt:19: {TEMPLATE_WHY})",
        "",
        "1 translation unit: 1 compiled, 0 failed (0 explained by findings, 0 unexplained, 0 not reached)"]


@pytest.mark.compile
@pytest.mark.parametrize("unit", ["faiss/gpu/GpuDistance.cu", "faiss/gpu/impl/CuvsFlatIndex.cu", TEMPLATE])
def test_the_cases_cuda_compiles_with_nvcc(unit: str, tmp_path: Path):
    """The template as faiss's CMake compiles it: a copy with SUB_CODEC_TYPE replaced."""
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    source = CASE / unit
    if unit == TEMPLATE:
        source = tmp_path / "IVFInterleavedScanKernel_Codec11.cu"
        source.write_text((CASE / unit).read_text().replace("SUB_CODEC_TYPE", "faiss::gpu::Codec<1, 1>"))
    proc = subprocess.run([nvcc, "-x", "cu", "-std=c++17", "-I.", "-c", str(source), "-o", "/dev/null"], cwd=CASE,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
