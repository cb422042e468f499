"""engine/platform/compilers.py: the CUDA compiler's macros as convert leaves them (issue 48).

convert writes `#ifdef __CUDACC__` / `__NVCC__` / `__CUDA__` tests as HIP's (rewrite/cudacc.py), so
an AMD build compiles their `#if` branch and their `#else` is host code. Read as hipcc reads the
unconverted source, the `#else` was AMD-only and the `#if` branch PORTED: its names stayed CUDA's
(`#include <cuda_fp16.h>`) in a branch hipcc then compiled. Groups that name an AMD selector keep
their reading and their directive (fixtures/convert/compiler_macro_branches)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cases import CASES_DIR, load_case
from conftest import write_tree
from portkit.cli.app import main
from portkit.engine.platform import regions
from portkit.rewrite import cudacc

CASE = load_case(CASES_DIR / "compiler_macro_branches")
WORLDS = regions.selectors()


def _kinds(source: bytes, worlds: regions.Selectors = WORLDS) -> list[tuple[bytes, str]]:
    found = regions.classify(source, worlds)
    return [(source[s:e], k) for s, e, k in found.ranges]


@pytest.mark.parametrize("source", [
    # tiny-cuda-nn's vec.h/common.h, ggml.h: the #if branch is the AMD build's too after convert
    b"#ifdef __CUDACC__\n#include <cuda_fp16.h>\n#else\ntypedef unsigned short half;\n#endif\n",
    # LightGBM's config.h: host-only members, not AMD code
    b"#ifndef __NVCC__\nstatic const char *name();\n#endif\n",
    b"#if !defined(__CUDACC__)\nhost();\n#else\ngpu();\n#endif\n",
    # tiny-cuda-nn's TCNN_HOST_DEVICE: nvcc or clang's CUDA mode
    b"#if defined(__CUDACC__) || (defined(__clang__) && defined(__CUDA__))\n#define HD __host__ __device__\n"
    b"#else\n#define HD\n#endif\n",
    # ggml-impl.h: a host compiler's NEON path
    b"#if defined(__ARM_NEON) && !defined(__CUDACC__)\nneon();\n#endif\n",
])
def test_a_compiler_test_convert_makes_hips_is_shared_code(source: bytes):
    assert _kinds(source) == []


@pytest.mark.parametrize("source, kinds", [
    # the tree's own vendor choice: as before the change
    (b"#if defined(__HIPCC__)\nhip();\n#elif defined(__CUDACC__)\ncuda();\n#else\nhost();\n#endif\n",
     [(b"hip();\n", "amd"), (b"cuda();\n", "ported")]),
    (b"#ifdef __CUDACC__\ncuda();\n#elif defined(__HIP_PLATFORM_AMD__)\nhip();\n#endif\n",
     [(b"cuda();\n", "ported"), (b"hip();\n", "amd")]),
    # gunrock's compat headers: nvcc but not hip-clang's CUDA emulation
    (b"#if defined(__CUDACC__) && !defined(__HIP__)\ncuda();\n#endif\n", [(b"cuda();\n", "nvidia")]),
    # the outer test is the compiler's, the inner one the author's vendor choice
    (b"#ifdef __CUDACC__\n#ifdef __HIP_PLATFORM_AMD__\nhip();\n#else\ncuda();\n#endif\n#endif\n",
     [(b"hip();\n", "amd"), (b"cuda();\n", "ported")]),
])
def test_a_group_that_names_an_amd_selector_keeps_its_reading(source: bytes, kinds: list):
    assert _kinds(source) == kinds


def test_a_project_selector_makes_the_group_the_authors():
    source = b"#ifdef __CUDACC__\ncuda();\n#elif defined(PROJ_USE_HIP)\nhip();\n#else\nhost();\n#endif\n"
    assert _kinds(source, regions.selectors(("PROJ_USE_HIP",))) == [(b"cuda();\n", "ported"), (b"hip();\n", "amd")]
    found = regions.classify(source, regions.selectors(("PROJ_USE_HIP",)))
    assert found.compiler_tests.keeps(0) and not found.compiler_tests.keeps(source.index(b"cuda();"))
    assert _kinds(source) == []   # without it, the compiler's test


def test_the_model_and_convert_name_the_same_compiler_macros():
    assert regions.builtin_selectors().compilers == tuple(n.decode() for n in cudacc.COMPILERS)


def test_the_if_branch_is_converted_and_a_chosen_amd_branch_left(tmp_path: Path):
    """Before: half_types.h kept `#include <cuda_fp16.h>` under the rewritten test (hipcc: 'cuda_fp16.h'
    file not found), scale.cu kept `cudaError_t` under `#ifdef __HIPCC__`, and the PROJ_USE_HIP
    group's `#ifdef __CUDACC__` became `__HIPCC__`, taking an AMD build away from the author's branch."""
    out = tmp_path / "out"
    assert main(["convert", str(CASE.input), "-o", str(out), "-q", *CASE.convert_args()]) == 0
    for name in ("half_types.h", "scale.cu"):
        assert (out / name).read_bytes() == (CASE.expected / name).read_bytes(), name
    again = tmp_path / "again"
    assert main(["convert", str(CASE.expected), "-o", str(again), "-q", *CASE.convert_args()]) == 0
    assert all((again / n).read_bytes() == (CASE.expected / n).read_bytes() for n in ("half_types.h", "scale.cu"))


KERNEL = """#include <cuda_runtime.h>
#ifdef __CUDACC__
__device__ void fence() { asm volatile("fence.acq_rel.gpu;"); }
#else
inline void fence() {}
#endif
#if !defined(__CUDACC__) || __CUDA_ARCH__ >= 530
#define HALF_MATH 1
#endif
#if !defined(__CUDACC__) || __CUDA_ARCH__ >= 530 || defined(USE_ROCM)
#define HALF_MATH_CHOSEN 1
#endif
__global__ void k(float *o) { fence(); o[threadIdx.x] = 1.0f; }
"""


def test_audit_prices_the_if_branch_and_reads_guards_as_converted(tmp_path: Path, capsys):
    """Before: PK301 in the `#ifdef __CUDACC__` branch was `info`, "already ported", and the
    `!defined(__CUDACC__) || __CUDA_ARCH__ >= 530` half-math guard, which the AMD build skips once
    `__CUDACC__` is `__HIPCC__`, had no PK103 (CTranslate2's cuda/helpers.h, less its
    `|| defined(CT2_USE_HIP)`). A group naming USE_ROCM made its choice: no PK103 there."""
    root = write_tree(tmp_path / "src", {"k.cu": KERNEL})
    assert main(["audit", str(root), "--rocm", "6.2", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    found = [(f["code"], f["line"], f["severity"], f["platform"]) for f in doc["findings"]]
    assert found == [("PK301", 3, "high", ""), ("PK103", 7, "medium", "")]
    assert doc["summary"]["platforms"]["findings_already_ported"] == 0
