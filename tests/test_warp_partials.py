"""PK205's `--fix warp` on the block-reduction shape (rules/_warppartials.py): a per-warp shared
array written by warp index and read back at every lane takes, once widened for the wavefront,
only the partials written. fixtures/warp_partials/* are right on a 64-lane wavefront as CUDA wrote
them (fixtures/warp/README.md's contract does not fit): their proof is that the fixed code stays
right at 32 and 64 lanes, where the widened array alone read shared memory nobody wrote."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from hip_nvidia import compile_for_nvidia, patched_include_dir
from portkit.commands.convert import convert_bytes
from portkit.core.tables.mappings import parse_version
from portkit.engine.context import Options
from warpsim import AMD32, AMD64, CUDA32, CUDA64, HIP_NVIDIA, SimError
from warpsim.fixture import expected, read_case, simulate

CASE = Path(__file__).resolve().parent.parent / "fixtures" / "warp_partials" / "ggml_rms_norm_1024"
FIX = Options(rocm=parse_version("5.2"), fixes=frozenset({"warp"}))
GUARDED = "tmp = (lane_id < (blockDim.x + WARP_SIZE - 1) / WARP_SIZE ? s_sum[lane_id] : 0.0f);"
DEVICE_WAVE_ON_HOST = {"PORTKIT_WAVEFRONT_SIZE": "32"}


def _convert(data: bytes, options: Options = FIX) -> bytes:
    _scan, out = convert_bytes("input.cu", data, options)
    return data if out is None else out


def outcome(source: str, target, host_defines: dict | None = None) -> dict | str:
    try:
        return simulate(source, read_case(CASE), target, host_defines)
    except SimError as err:
        return f"{type(err).__name__}: {err}"


def test_fixture_converts_to_expected_and_is_idempotent():
    data, fixed = (CASE / "input.cu").read_bytes(), (CASE / "expected.hip").read_bytes()
    assert _convert(data) == fixed
    assert _convert(fixed) == fixed
    assert GUARDED.encode() in fixed
    assert b"__shared__ float s_sum[PORTKIT_WAVEFRONT_SIZE];" in fixed


def test_the_original_is_right_at_32_and_64_lanes():
    """Why the case is not in fixtures/warp: width-32 shuffles over 32 logical warps write all 32
    partials on a 64-lane wavefront too (its 0xffffffff masks aside: run leniently)."""
    case = read_case(CASE)
    assert outcome((CASE / "input.cu").read_text(), CUDA32) == expected(case, 32)
    assert outcome((CASE / "input.cu").read_text(), CUDA64.lenient()) == expected(case, 64)


def test_the_fixed_code_gives_the_exact_sums_at_32_and_64_lanes_and_through_nvidia():
    case, fixed = read_case(CASE), (CASE / "expected.hip").read_text()
    assert outcome(fixed, AMD64) == expected(case, 64) == {"dst": [5123.0, 17926.0]}
    assert outcome(fixed, AMD32) == expected(case, 32)
    assert outcome(fixed, AMD32, DEVICE_WAVE_ON_HOST) == expected(case, 32)
    assert outcome(fixed, HIP_NVIDIA) == expected(case, 32)


def test_the_widened_array_alone_reads_partials_nobody_wrote():
    """What --fix warp wrote before (88726b2): s_sum[PORTKIT_WAVEFRONT_SIZE] read at every lane. A
    zero-filled simulator passed it; 16 of 64 partials are written at 64 lanes."""
    unguarded = (CASE / "expected.hip").read_text().replace(GUARDED, "tmp = s_sum[lane_id];")
    assert outcome(unguarded, AMD32) == expected(read_case(CASE), 32)
    assert outcome(unguarded, AMD64) == ("UnwrittenRead: __shared__ array s_sum[64]: element 16 is read before any "
                                         "thread wrote it (lane 16) at line 49: s_sum[lane_id]")
    assert outcome(unguarded, AMD64.lenient()) != expected(read_case(CASE), 64)


KERNEL = b"""__device__ float %s(float v) {
    for (int o = 16; o > 0; o /= 2)
        v = %s;
    return v;
}
__global__ void k(const float* inp, float* out) {
    __shared__ float part[32];
    int lane = threadIdx.x %% 32;
    int warp = threadIdx.x / 32;
    float v = %s(inp[threadIdx.x]);
    if (lane == 0) part[warp] = v;
    __syncthreads();
    %s
    if (threadIdx.x == 0) out[0] = v;
}
"""
SUM = b"v + __shfl_xor_sync(0xffffffff, v, o)"
MAX = b"fmaxf(v, __shfl_xor_sync(0xffffffff, v, o))"


def _kernel(name: bytes, body: bytes, read: bytes) -> bytes:
    return KERNEL % (name, body, name, read)


def _fixed_line(src: bytes) -> bytes:
    out = _convert(src)
    return [line.strip() for line in out.split(b"\n") if b"part[lane]" in line][-1]   # the read: after the writes


def test_the_identity_is_the_reductions_by_its_name_or_its_body():
    assert _fixed_line(_kernel(b"warp_reduce_max", MAX, b"v = part[lane]; v = warp_reduce_max(v);")) == \
        b"v = (lane < (blockDim.x + warpSize - 1) / warpSize ? part[lane] : -INFINITY); v = warp_reduce_max(v);"
    assert _fixed_line(_kernel(b"combine", SUM, b"v = combine(part[lane]);")) == \
        b"v = combine((lane < (blockDim.x + warpSize - 1) / warpSize ? part[lane] : 0.0f));"
    assert _fixed_line(_kernel(b"combine", MAX, b"float w = part[lane];\n    v = combine(w);")) == \
        b"float w = (lane < (blockDim.x + warpSize - 1) / warpSize ? part[lane] : -INFINITY);"


def test_a_read_already_guarded_or_a_lane_written_array_is_left_as_it_is():
    guarded = _kernel(b"warp_sum", SUM, b"v = lane < blockDim.x / 32 ? part[lane] : 0.0f; v = warp_sum(v);")
    assert _fixed_line(guarded) == b"v = lane < blockDim.x / warpSize ? part[lane] : 0.0f; v = warp_sum(v);"
    initialised = _kernel(b"warp_sum", SUM, b"v = part[lane]; v = warp_sum(v);").replace(
        b"    if (lane == 0) part[warp] = v;", b"    if (warp == 0) part[lane] = 0.0f;\n    if (lane == 0) part[warp] = v;")
    assert _fixed_line(initialised) == b"v = part[lane]; v = warp_sum(v);"
    tiles = (b"__global__ void k(const float* inp, float* out) {\n"   # llm.c dev/cuda/global_norm.cu's form
             b"    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());\n"
             b"    __shared__ float part[32];\n"
             b"    part[warp.meta_group_rank()] = cg::reduce(warp, inp[threadIdx.x], cg::plus<float>{});\n"
             b"    __syncthreads();\n"
             b"    float g = warp.thread_rank() < warp.meta_group_size() ? part[warp.thread_rank()] : 0.f;\n"
             b"    out[0] = cg::reduce(warp, g, cg::plus<float>{});\n}\n")
    fixed = _convert(tiles)
    assert b"__shared__ float part[PORTKIT_WAVEFRONT_SIZE];" in fixed
    assert b"    float g = warp.thread_rank() < warp.meta_group_size() ? part[warp.thread_rank()] : 0.f;\n" in fixed


def _audit(src: bytes) -> list[tuple[str, int, str]]:
    scan, _ = convert_bytes("k.cu", src, replace(FIX, fixes=frozenset(), audit=True))
    return [(f.code, f.line, f.message) for f in scan.findings if f.code == "PK205"]


def test_an_unknown_reduction_is_refused_and_the_finding_says_what_to_write():
    """A reduction whose identity is not known (here: it adds and takes a maximum) gets no
    array fix at all: widened without the guard, it would read unwritten partials."""
    both = b"fmaxf(v, v + __shfl_xor_sync(0xffffffff, v, o))"
    src = _kernel(b"combine", both, b"v = part[lane]; v = combine(v);")
    assert b"__shared__ float part[32];" in _convert(src)
    assert _audit(src) == [("PK205", 7, "__shared__ part[32] is indexed by lane or warp: sized for 32-lane warps, an "
                            "AMD wavefront has 64 lanes; written by warp and read at every lane, a wider array reads "
                            "partials no wavefront wrote: --fix warp leaves it, write `lane < (blockDim.x + warpSize - "
                            "1) / warpSize ? part[lane] : IDENTITY` by hand (IDENTITY: the reduction's, 0 for a sum, "
                            "-INFINITY for a max)")]
    known = _kernel(b"warp_reduce_sum", SUM, b"v = part[lane]; v = warp_reduce_sum(v);")
    assert _audit(known) == [("PK205", 7, "__shared__ part[32] is indexed by lane or warp: sized for 32-lane warps, "
                              "an AMD wavefront has 64 lanes")]


@pytest.mark.compile
def test_the_input_compiles_with_nvcc_and_the_output_with_hipcc_and_through_nvidia(tmp_path: Path):
    nvcc, hipcc = shutil.which("nvcc"), shutil.which("hipcc")
    if nvcc is None or hipcc is None:
        if os.environ.get("PORTKIT_REQUIRE_TOOLS") == "1":
            pytest.fail("nvcc or hipcc not found")
        pytest.skip("nvcc or hipcc not found")
    subprocess.run([nvcc, "-c", str(CASE / "input.cu"), "-o", os.devnull], check=True, capture_output=True, timeout=300)
    subprocess.run([hipcc, "-x", "hip", "--offload-arch=gfx90a", "-c", str(CASE / "expected.hip"), "-o",
                    str(tmp_path / "k.o")], check=True, capture_output=True, timeout=300,
                   env={**os.environ, "HIP_PLATFORM": "amd"})
    done = compile_for_nvidia(CASE / "expected.hip", [patched_include_dir(tmp_path)])
    assert done.returncode == 0, done.stderr[-2000:]
