"""Polyfills (portkit/rewrite/polyfills.py, mappings/polyfills.toml): the generated header, where it is
included, the releases that get none, the project's own definitions, and the summary lines."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import NVCC, REPO, cuda_library_includes, require_rocm_libraries, require_tool
from portkit.rewrite import polyfills
from portkit.cli.app import main
from portkit.core.files import discover
from portkit.core.tables.mappings import MappingError

FIXTURES = REPO / "fixtures" / "polyfills"
CASES = ("device", "sparse", "own_shim", "blas", "cache_hints", "cg_reduce", "cg_scan", "driver_errors", "driver_context",
         "lane_id")
# Debian's ROCm 5.2 packages no hipBLAS: the blas header was compiled by hand against hipblas.h of
# hipBLAS rocm-5.2.0 (its export header stubbed), and is compiled here wherever hipBLAS is installed.
HIPBLAS = Path("/usr/include/hipblas/hipblas.h")


def _convert(tmp_path: Path, case: str, *extra: str) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(FIXTURES / case / "input.cu", src / "input.cu")
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", *extra]) == 0
    return out


@pytest.mark.parametrize("case", CASES)
def test_rocm_52_output_and_header_are_exact(tmp_path, case):
    out = _convert(tmp_path, case, "--rocm", "5.2")
    assert (out / "input.cu").read_bytes() == (FIXTURES / case / "expected.hip").read_bytes()
    assert (out / "portkit_polyfills.h").read_bytes() == (FIXTURES / case / "expected_polyfills.h").read_bytes()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.compile
def test_outputs_compile_with_hipcc(tmp_path, case, hipcc_pch):
    require_tool("hipcc", "hipcc")
    require_rocm_libraries([FIXTURES / case / "expected.hip"])
    if case == "blas" and not HIPBLAS.is_file():
        pytest.skip("hipBLAS is not installed (Debian's ROCm 5.2 does not package it)")
    work = tmp_path / case
    work.mkdir()
    shutil.copy(FIXTURES / case / "expected.hip", work / "input.hip")
    shutil.copy(FIXTURES / case / "expected_polyfills.h", work / "portkit_polyfills.h")
    run = hipcc_pch.check([], work / "input.hip")   # hipcc -c for gfx90a, through the session's PCH where the same
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("case", CASES)
@pytest.mark.compile
def test_inputs_compile_with_nvcc(tmp_path, case):
    nvcc = require_tool(NVCC, "nvcc")
    source = FIXTURES / case / "input.cu"
    includes = cuda_library_includes([source])   # sparse, blas: skipped with the reason where they are absent
    run = subprocess.run([nvcc, *includes, "-c", str(source), "-o", os.devnull], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_release_that_has_the_names_gets_no_polyfill(tmp_path):
    out = _convert(tmp_path, "sparse", "--rocm", "6.0")
    assert not (out / "portkit_polyfills.h").exists()
    text = (out / "input.cu").read_bytes()
    assert b"portkit_polyfills.h" not in text
    assert b"hipsparseGetErrorName(status), hipsparseGetErrorString(status)" in text


def test_project_definition_wins_and_its_name_stays_reported(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(FIXTURES / "own_shim" / "input.cu", src / "input.cu")
    assert main(["convert", str(src), "--check", "--rocm", "5.2"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert "Polyfills for ROCm 5.2: 1 name defined in portkit_polyfills.h, would change:" in lines
    assert "  __vsub4 (1 file): per-byte subtraction, modulo 256" in lines
    assert ("  input.cu:11:14: PK001 __vsubss4 has no HIP equivalent: No HIP equivalent for the SIMD-in-a-word "
            "intrinsics; unpack the bytes or halfwords and operate on them one by one.") in lines


def test_summary_lines_and_in_place_reruns_are_byte_identical(tmp_path, capsys):
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    shutil.copy(FIXTURES / "sparse" / "input.cu", tree / "sub" / "report.cu")
    assert main(["convert", str(tree), "--in-place", "--rocm", "5.2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2:5] == ["Polyfills for ROCm 5.2: 2 names defined in portkit_polyfills.h, written:",
                          "  hipsparseGetErrorName (1 file): a switch over hipsparseStatus_t",
                          "  hipsparseGetErrorString (1 file): a switch over hipsparseStatus_t"]
    source = (tree / "sub" / "report.cu").read_bytes()
    assert source.splitlines()[1] == b'#include "../portkit_polyfills.h"'
    header = (tree / "portkit_polyfills.h").read_bytes()
    assert header == (FIXTURES / "sparse" / "expected_polyfills.h").read_bytes()
    # the second run sees HIP names only: the header keeps them, nothing is written again
    assert main(["convert", str(tree), "--check", "--rocm", "5.2"]) == 0
    assert "Polyfills for ROCm 5.2: 2 names defined in portkit_polyfills.h, unchanged:" in capsys.readouterr().out
    assert main(["convert", str(tree), "--in-place", "--rocm", "5.2", "-q"]) == 0
    assert (tree / "sub" / "report.cu").read_bytes() == source
    assert (tree / "portkit_polyfills.h").read_bytes() == header


def test_no_polyfills_leaves_the_names_reported(tmp_path, capsys):
    out = _convert(tmp_path, "device", "--rocm", "5.2", "--no-polyfills")
    assert not (out / "portkit_polyfills.h").exists()
    assert b"portkit_polyfills.h" not in (out / "input.cu").read_bytes()


def test_a_header_of_the_users_is_never_overwritten(tmp_path, capsys):
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(FIXTURES / "device" / "input.cu", tree / "k.cu")
    (tree / "portkit_polyfills.h").write_bytes(b"// mine\n")
    assert main(["convert", str(tree), "--in-place", "--rocm", "5.2"]) == 2
    assert capsys.readouterr().err == (f"portkit: error: {tree / 'portkit_polyfills.h'}: exists and was not generated by "
                                       f"portkit; not overwritten (move it away, or convert with --no-polyfills)\n")
    assert (tree / "k.cu").read_bytes() == (FIXTURES / "device" / "input.cu").read_bytes()


def test_table_is_validated(tmp_path):
    bad = tmp_path / "polyfills.toml"
    bad.write_text('[[polyfill]]\nname = "__x"\nsince = "5.2"\nnote = "n"\nbody = "void __y();"\n')
    with pytest.raises(MappingError, match=r"^polyfills.toml: polyfill __x: the body does not define __x$"):
        polyfills.load(bad)
    bad.write_text('[[polyfill]]\nname = "__x"\nsince = "5.2"\nnote = "n"\nbody = "void __x();"\nfoo = 1\n')
    with pytest.raises(MappingError, match=r"^polyfills.toml: polyfill __x: unknown field foo$"):
        polyfills.load(bad)
    bad.write_text('[[polyfill]]\nname = "__x"\nsince = "5.2"\nnote = "n"\nbody = "void __x();"\nnvidia_body = "void __x();"\n')
    with pytest.raises(MappingError, match=r"^polyfills.toml: polyfill __x: nvidia_body for a name CUDA defines itself$"):
        polyfills.load(bad)
    bad.write_text('[[polyfill]]\nname = "portkit_x"\nserves = ["__x"]\nsince = "5.2"\nnote = "n"\n'
                   'body = "void portkit_x();"\nnvidia_body = "void __x();"\n')
    with pytest.raises(MappingError, match=r"^polyfills.toml: polyfill portkit_x: nvidia_body must define portkit_x, "
                                           r"a name CUDA does not have$"):
        polyfills.load(bad)


def test_the_nvidia_section_defines_only_what_cuda_lacks():
    """Issue 31: the header's definitions were AMD's only, but portkit_* names and HIP names HIP's
    NVIDIA backend lacks are called on NVIDIA too; CUDA's own names must not be defined twice there."""
    from portkit.rewrite.polyfill_header import header_text
    text = header_text(["__vadd4", "portkit_syncwarp", "cooperative_groups::reduce"], "5.2", "cmd").decode()
    amd, nvidia = text.split("#else  // HIP's NVIDIA backend: ")
    assert "static __device__ inline unsigned int __vadd4" in amd and "__vadd4" not in nvidia
    assert nvidia.splitlines()[0] == "CUDA has its own names; these it lacks too; then the CUDA headers the header polyfills stand in for"
    assert nvidia.split("\n\n")[1:] == [
        "// portkit_syncwarp: CUDA's own __syncwarp\n"
        "static __device__ inline void portkit_syncwarp(unsigned long long mask = ~0ull) {\n"
        "    __syncwarp((unsigned int)mask);\n}",
        "#include <cooperative_groups/reduce.h>", "#endif  // __HIP_PLATFORM_AMD__\n"]


@pytest.mark.compile
def test_syncwarp_polyfill_survives_rocm_7_definitions(tmp_path):
    """ROCm 7.0 defines __syncwarp() and a template __syncwarp(MaskT) asserting a 64-bit mask
    (amd_warp_sync_functions.h): the converted code calls portkit_syncwarp, so a ROCm 7 header
    (simulated by these two declarations, included first) neither collides nor rejects 0xffffffffu."""
    hipcc = require_tool("hipcc", "hipcc")
    work = tmp_path / "rocm7"
    work.mkdir()
    (work / "rocm7.h").write_text(
        "#include <hip/hip_runtime.h>\n"
        "__device__ inline void __syncwarp() { __builtin_amdgcn_wave_barrier(); }\n"
        "template <typename MaskT> __device__ inline void __syncwarp(MaskT mask) {\n"
        "  static_assert(sizeof(MaskT) == 8, \"The mask must be a 64-bit integer.\");\n"
        "  __syncwarp();\n"
        "}\n")
    shutil.copy(FIXTURES / "device" / "expected.hip", work / "input.hip")
    shutil.copy(FIXTURES / "device" / "expected_polyfills.h", work / "portkit_polyfills.h")
    assert b"portkit_syncwarp(0xffffffffu);" in (work / "input.hip").read_bytes()
    run = subprocess.run([hipcc, "-x", "hip", "--offload-arch=gfx90a", "-include", str(work / "rocm7.h"), "-c",
                          str(work / "input.hip"), "-o", os.devnull], env={**os.environ, "HIP_PLATFORM": "amd"},
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_a_project_defining_the_served_cuda_name_gets_no_polyfill(tmp_path, capsys):
    """hypre defines __syncwarp itself: renaming its calls to portkit_syncwarp would leave its own
    definition unused and the header defining a second barrier; the name stays reported instead."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text("static __device__ __forceinline__ void __syncwarp() {}\n"
                              "__global__ void k(int *x) { x[0] = 1; __syncwarp(); }\n")
    assert main(["convert", str(src), "--check", "--rocm", "5.2"]) == 1
    out = capsys.readouterr().out
    assert "Polyfills" not in out
    why = ("PK001 __syncwarp has no HIP equivalent: Not in ROCm 5.2; the lanes of a wavefront execute in lockstep, "
           "so the call can usually be removed (or replaced by __builtin_amdgcn_wave_barrier()).")
    lines = out.splitlines()
    assert f"  k.cu:1:40: {why}" in lines and f"  k.cu:2:39: {why}" in lines


@pytest.mark.parametrize("definition, blocked", [
    # a typed overload for the project's own type stands beside the polyfill's template
    ("__device__ float2 __ldcs(const float2* p) { return *p; }\n", False),
    ("#if defined(OLD_NVCC)\n__device__ float2 __ldcs(const float2* p) { return *p; }\n#endif\n", False),
    # a template of the same name, or a macro, would collide with it: the project's wins
    ("template <typename T>\n__device__ T __ldcs(const T* p) { return *p; }\n", True),
    ("template <typename T> __device__ __forceinline__\nT __ldcs(const T* p) { return *p; }\n", True),
    ("#define __ldcs(p) (*(p))\n", True),
])
def test_a_typed_overload_does_not_rule_out_a_template_polyfill(tmp_path, definition, blocked):
    """llm.c defines `__ldcs(const floatX*)` for bf16 (under an nvcc-version guard): the float and
    int4 loads of the same tree still need the polyfill's template, which overloads with it."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(definition + "__global__ void k(float *o, const float *i) { o[0] = __ldcs(i); }\n")
    _root, entries, _skipped = discover([src])
    assert ("__ldcs" in polyfills.project_defined(entries)) is blocked


def test_the_python_api_defaults_to_polyfills_as_the_cli_does(tmp_path):
    """portkit.api.convert_paths/audit_paths are `portkit convert`/`audit` without printing: their
    polyfill default was off, so benchmarks through the API (compile_rate.py) measured a tool that
    reported `cuGetErrorString` where the CLI defines it."""
    from portkit import api
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(FIXTURES / "device" / "input.cu", src / "input.cu")
    api.convert_paths([src], output=tmp_path / "out", rocm="5.2")
    assert (tmp_path / "out" / "portkit_polyfills.h").read_bytes() == \
        (FIXTURES / "device" / "expected_polyfills.h").read_bytes()
    api.convert_paths([src], output=tmp_path / "plain", rocm="5.2", polyfills=False)
    assert not (tmp_path / "plain" / "portkit_polyfills.h").exists()
    on, off = api.audit_paths([src], rocm="5.2")["summary"], api.audit_paths([src], rocm="5.2", polyfills=False)["summary"]
    assert (on["refs_left"], on["by_code"]) == (0, {"PK206": 2})
    assert (off["refs_left"], off["by_code"]) == (18, {"PK001": 16, "PK206": 2})


def test_a_static_helper_of_one_file_does_not_rule_out_the_polyfill_elsewhere(tmp_path):
    """cuda-samples' mergeSort_host.cpp defines `static uint umin(uint, uint)` for itself; the
    device code in mergeSort.cu calls CUDA's umin and needs the polyfill; the .cpp keeps its own
    (a polyfill there would define the name twice)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "host.cpp").write_text("typedef unsigned int uint;\n"
                                  "static uint umin(uint a, uint b) { return (a <= b) ? a : b; }\n"
                                  "uint first(uint a, uint b) { return umin(a, b); }\n")
    (src / "k.cu").write_text("__global__ void k(unsigned int *o, unsigned int n) { o[0] = umin(o[1], n); }\n")
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "--rocm", "5.2", "-q"]) == 0
    assert (tmp_path / "out" / "host.cpp").read_text() == (src / "host.cpp").read_text()
    assert (tmp_path / "out" / "k.cu").read_text() == (
        '\n#include <hip/hip_runtime.h>\n#include "portkit_polyfills.h"\n'
        "__global__ void k(unsigned int *o, unsigned int n) { o[0] = portkit_umin(o[1], n); }\n")
    header = (tmp_path / "out" / "portkit_polyfills.h").read_text()
    assert "static __host__ __device__ inline unsigned int portkit_umin(unsigned int a, unsigned int b) {" in header


def test_cuda_13_context_parameters_are_dropped_with_a_caveat(tmp_path, capsys):
    """cuCtxCreate with CUDA 13's CUctxCreateParams (4 arguments) is hipCtxCreate without them:
    right for NULL or zero-initialised parameters, which PK004 asks the user to check."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(FIXTURES / "driver_context" / "input.cu", src / "input.cu")
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "--rocm", "5.2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert ("  input.cu:10:9: PK004 cuCtxCreate_v4 -> hipCtxCreate: The CUctxCreateParams argument is dropped: HIP "
            "has no execution-affinity or CIG context parameters; correct when it is NULL or zero-initialised.") in lines
    assert "  portkit_CUctxCreateParams (1 file): CUDA 13's context-creation parameters, declared only: hipCtxCreate " \
           "takes none (the converter drops the argument)" in lines
