"""atomicAdd on 16-bit floats through portkit_atomicAdd (rewrite/atomics.py, mappings/polyfills.toml).

CUDA has atomicAdd for __half, __half2, __nv_bfloat16 and __nv_bfloat162; HIP's atomicAdd takes int,
unsigned, float and double through 6.2, so karpathy/llm.c's dev/cuda/layernorm_backward.cu stopped
there (PK001). With polyfills on, convert calls portkit_atomicAdd, a compare-and-swap loop on the
enclosing 32-bit word. Golden bytes and a re-run; the input with nvcc; the output against the 6.2
pack; the __half overloads with Debian's hipcc 5.2 (no bfloat16 there); and the loop's word
arithmetic run on the host with stand-ins, a racing write included: the lane added to changes, its
neighbour keeps what another thread wrote, the old value comes back.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import NVCC, REPO, clang19, require_tool
from portkit import convert_text
from portkit.api import audit_paths
from portkit.cli.app import main
from portkit.rewrite import polyfills
from portkit.rewrite.polyfill_header import header_text

CASE = REPO / "fixtures" / "polyfills_bf16" / "atomic_add16"


def _convert(tmp_path: Path, *extra: str) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(CASE / "input.cu", src / "input.cu")
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--rocm", "6.2", *extra]) == 0
    return out


def test_rocm_62_output_and_header_are_exact_and_a_rerun_keeps_them(tmp_path):
    out = _convert(tmp_path)
    assert (out / "input.cu").read_bytes() == (CASE / "expected.hip").read_bytes()
    assert (out / "portkit_polyfills.h").read_bytes() == (CASE / "expected_polyfills.h").read_bytes()
    again = tmp_path / "again"
    assert main(["convert", str(out), "-o", str(again), "-q", "--rocm", "6.2"]) == 0
    assert (again / "input.cu").read_bytes() == (out / "input.cu").read_bytes()
    assert (again / "portkit_polyfills.h").read_bytes() == (out / "portkit_polyfills.h").read_bytes()


def test_the_audit_finds_no_site_with_polyfills_and_four_without(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(CASE / "input.cu", src / "input.cu")
    with_fills = audit_paths([src], rocm="6.2", config=False)
    assert [f for f in with_fills["findings"] if f["code"] == "PK001"] == []
    without = audit_paths([src], rocm="6.2", config=False, polyfills=False)
    assert [(f["line"], f["snippet"]) for f in without["findings"] if f["code"] == "PK001"] == [
        (17, "atomicAdd(ptr_bf16, add_val);"), (27, "atomicAdd(ptr_fp16, add_val);"),
        (31, "atomicAdd(reinterpret_cast<__half *>(address), val);"), (41, "atomicAdd(total, __float2bfloat16(src[i]));")]


def test_atomic_add_system_and_other_types_stay_as_they_are():
    """The loop is device-scoped: atomicAdd_system on a 16-bit float stays PK001; float is HIP's own."""
    src = (b"#include <cuda_fp16.h>\n__global__ void k(__half* h, float* f) {\n"
           b"    atomicAdd_system(h, __float2half(1.0f));\n    atomicAdd(f, 1.0f);\n}\n")
    out = convert_text(src, rocm="6.2")
    assert b"portkit_atomicAdd" not in out.output and b"atomicAdd(f, 1.0f)" in out.output
    assert [(f.code, f.line, f.subject) for f in out.findings if f.code == "PK001"] == [
        ("PK001", 3, "atomicAdd_system(__half*)")]


def test_a_project_definition_of_its_own_wins(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "input.cu").write_text(CASE.joinpath("input.cu").read_text().replace(
        "__device__ void atomicAddX(__nv_bfloat16*",
        "__device__ __half portkit_atomicAdd(__half* a, __half v) { return v; }\n__device__ void atomicAddX(__nv_bfloat16*"))
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--rocm", "6.2"]) == 0
    assert not (out / "portkit_polyfills.h").exists()
    assert "    atomicAdd(ptr_bf16, add_val);" in (out / "input.cu").read_text()


@pytest.mark.compile
def test_input_compiles_with_nvcc(tmp_path):
    nvcc = require_tool(NVCC, "nvcc")
    run = subprocess.run([nvcc, "-c", str(CASE / "input.cu"), "-o", str(tmp_path / "o.o")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.compile
def test_output_compiles_against_the_62_pack(pack62, tmp_path):
    shutil.copy(CASE / "expected.hip", tmp_path / "input.hip")
    shutil.copy(CASE / "expected_polyfills.h", tmp_path / "portkit_polyfills.h")
    run = subprocess.run([clang19(), "-x", "hip", "--offload-arch=gfx90a", "-nogpulib", f"--rocm-path={pack62}",
                          "-isystem", str(pack62 / "include"), "-std=c++17", "-fsyntax-only", str(tmp_path / "input.hip")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]


# the __half calls as code writes them, a float value to a __half one included (CUDA's own __half
# converts from float, so `atomicAdd(h, x)` compiles with nvcc)
HALF_KERNEL = ('#include "portkit_polyfills.h"\n__global__ void k(__half* h, __half2* p, float x) '
               '{ portkit_atomicAdd(h + threadIdx.x, __float2half(1.0f)); '
               'portkit_atomicAdd(p, __floats2half2_rn(1.0f, 2.0f)); portkit_atomicAdd(h, x); }\n')


@pytest.mark.compile
def test_half_overloads_compile_for_nvidia_through_hip(tmp_path):
    """HIP's NVIDIA backend (nvcc, -D__HIP_PLATFORM_NVIDIA__): the header's NVIDIA section is CUDA's
    own atomicAdd, taking the value as the call gives it. HIP 5.2 has no hip_bf16.h: __half only."""
    from hip_nvidia import compile_for_nvidia, patched_include_dir
    (tmp_path / "portkit_polyfills.h").write_bytes(header_text(["portkit_atomicAdd"], "5.2", "portkit convert"))
    (tmp_path / "k.hip").write_text(HALF_KERNEL)
    run = compile_for_nvidia(tmp_path / "k.hip", [patched_include_dir(tmp_path / "hip")])
    assert run.returncode == 0, run.stderr[-4000:]


@pytest.mark.compile
def test_half_overloads_compile_with_hipcc_52(tmp_path):
    """Debian's HIP 5.2 has no hip_bf16.h: the header's bfloat16 part is under HIP_VERSION >= 5.7."""
    require_tool("hipcc", "hipcc")
    (tmp_path / "portkit_polyfills.h").write_bytes(header_text(["portkit_atomicAdd"], "5.2", "portkit convert"))
    (tmp_path / "k.hip").write_text(HALF_KERNEL)
    run = subprocess.run(["hipcc", "-x", "hip", "--offload-arch=gfx90a", "-c", str(tmp_path / "k.hip"), "-o",
                          str(tmp_path / "k.o")], capture_output=True, text=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    assert run.returncode == 0, run.stderr[-4000:]


# The loop's word arithmetic on the host: HIP's types and functions stood in for (the 16-bit sums by
# _Float16 and float), atomicCAS by a plain compare-and-swap that, when `interfere` is set, first
# writes 0x4700 (7.0 as __half, 32768 as bfloat16) into the other half of the word, as a racing
# thread would, so the first exchange fails and the loop must retry from what it read.
STANDINS = r"""
#include <cstdio>
#include <cstring>
#define __device__
#define HIP_VERSION 60200000
struct __half { _Float16 v; };
struct __half2 { __half x, y; };
static unsigned short __half_as_ushort(__half h) { unsigned short b; memcpy(&b, &h, 2); return b; }
static __half __ushort_as_half(unsigned short b) { __half h; memcpy(&h, &b, 2); return h; }
static __half __hadd(__half a, __half b) { return __half{(_Float16)((float)a.v + (float)b.v)}; }
static __half2 __hadd2(__half2 a, __half2 b) { return {__hadd(a.x, b.x), __hadd(a.y, b.y)}; }
static int interfere;
static unsigned interfere_mask;
static unsigned atomicCAS(unsigned* p, unsigned cmp, unsigned v) {
    if (interfere) { interfere = 0; *p = (*p & ~interfere_mask) | (0x47004700u & interfere_mask); }
    unsigned old = *p; if (old == cmp) *p = v; return old; }
"""
BF16 = r"""
struct __hip_bfloat16 { unsigned short x; };
struct __hip_bfloat162 { __hip_bfloat16 x, y; };
static float __bfloat162float(__hip_bfloat16 b) { unsigned u = (unsigned)b.x << 16; float f; memcpy(&f, &u, 4); return f; }
static __hip_bfloat16 __float2bfloat16(float f) {
    unsigned u; memcpy(&u, &f, 4); u += 0x7fffu + ((u >> 16) & 1u); return {(unsigned short)(u >> 16)}; }
"""
MAIN = r"""
static __half H(float f) { return __half{(_Float16)f}; }
static float F(__half h) { return (float)h.v; }
static __hip_bfloat16 B(float f) { return __float2bfloat16(f); }
static float G(__hip_bfloat16 b) { return __bfloat162float(b); }
int main() {
    alignas(4) __half h[4] = {H(1), H(1), H(1), H(1)};
    __half old = portkit_atomicAdd(&h[1], H(2.5f));
    printf("half %g %g %g %g old %g\n", F(h[0]), F(h[1]), F(h[2]), F(h[3]), F(old));
    old = portkit_atomicAdd(&h[2], H(-0.25f));
    printf("half %g %g %g %g old %g\n", F(h[0]), F(h[1]), F(h[2]), F(h[3]), F(old));
    interfere = 1; interfere_mask = 0xffff0000u;
    old = portkit_atomicAdd(&h[0], H(0.5f));
    printf("half raced %g %g old %g\n", F(h[0]), F(h[1]), F(old));
    alignas(4) __half2 p = {H(1), H(2)};
    __half2 was = portkit_atomicAdd(&p, __half2{H(0.5f), H(0.25f)});
    printf("half2 %g %g old %g %g\n", F(p.x), F(p.y), F(was.x), F(was.y));
    alignas(4) __hip_bfloat16 b[2] = {B(1), B(1)};
    __hip_bfloat16 bold = portkit_atomicAdd(&b[1], B(2.5f));
    printf("bf16 %g %g old %g\n", G(b[0]), G(b[1]), G(bold));
    interfere = 1; interfere_mask = 0x0000ffffu;
    bold = portkit_atomicAdd(&b[1], B(1));
    printf("bf16 raced %g %g old %g\n", G(b[0]), G(b[1]), G(bold));
    alignas(4) __hip_bfloat162 q = {B(1), B(-2)};
    __hip_bfloat162 qold = portkit_atomicAdd(&q, __hip_bfloat162{B(0.5f), B(0.25f)});
    printf("bf162 %g %g old %g %g\n", G(q.x), G(q.y), G(qold.x), G(qold.y));
}
"""


def test_the_loop_adds_to_its_lane_keeps_the_other_and_returns_the_old_value(tmp_path):
    (tmp_path / "hip").mkdir()
    (tmp_path / "hip" / "hip_bf16.h").write_text(BF16)   # the body includes it under HIP_VERSION >= 5.7
    (tmp_path / "t.cpp").write_text(STANDINS + polyfills.by_name()["portkit_atomicAdd"].body + MAIN)
    build = subprocess.run([require_tool("g++", "g++"), "-std=c++17", "-I", str(tmp_path), str(tmp_path / "t.cpp"), "-o",
                            str(tmp_path / "t")], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-4000:]
    got = subprocess.run([str(tmp_path / "t")], capture_output=True, text=True, check=True).stdout.splitlines()
    assert got == ["half 1 3.5 1 1 old 1",
                   "half 1 3.5 0.75 1 old 1",
                   "half raced 1.5 7 old 1",       # the other thread's 7.0 in h[1] survives the retry
                   "half2 1.5 2.25 old 1 2",
                   "bf16 1 3.5 old 1",
                   "bf16 raced 32768 4.5 old 3.5",
                   "bf162 1.5 -1.75 old 1 -2"]
