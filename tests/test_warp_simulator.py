"""The lane-level simulator (tests/warpsim/) and the proof it gives for `convert --fix warp`.

Unit tests pin the simulator on tiny kernels whose results are known by hand; the fixture tests
run every warp fixture pair (fixtures/warp/*/) through the contract
in fixtures/warp/README.md: the CUDA original and the fixed HIP agree at 32 lanes, the fixed HIP
is right at 64, and the original is not (a wrong value, or an error the oracle refuses to guess
past: out of bounds, an undefined shift, a mask that does not name the executing lanes).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from warpsim import AMD32, AMD64, CUDA32, CUDA64, HIP_NVIDIA, OutOfBounds, SimError, UnwrittenRead, run
from warpsim.fixture import expected, folders, read_case, simulate

REPO = Path(__file__).resolve().parent.parent
CASES = folders(REPO / "fixtures" / "warp")

IOTA64 = [float(i) for i in range(64)]


def warp_sums(source: str, target, block: int = 64) -> list[float]:
    return run(source, "k", target, block, {"inp": IOTA64[:block], "out": [0.0] * 2})["out"]


REDUCE = """
__global__ void k(const float* inp, float* out) {
    float v = inp[threadIdx.x];
    for (int offset = START; offset > 0; offset /= 2)
        v += __shfl_down(v, offset);
    if (threadIdx.x % warpSize == 0)
        out[threadIdx.x / warpSize] = v;
}
"""


def test_shuffle_reduction_gives_each_warps_sum():
    source = REDUCE.replace("START", "warpSize / 2")
    assert warp_sums(source, AMD32) == [496.0, 1520.0]  # lanes 0-31, lanes 32-63
    assert warp_sums(source, AMD64) == [2016.0, 0.0]  # one wavefront: all 64 lanes


def test_reduction_from_16_at_64_lanes_sums_half_the_wavefront():
    source = REDUCE.replace("START", "16")
    assert warp_sums(source, AMD32) == [496.0, 1520.0]
    assert warp_sums(source, AMD64) == [496.0, 0.0]  # lanes 32-63 never reach lane 0


def test_shuffle_width_splits_the_wavefront_into_segments():
    source = """
    __global__ void k(const float* inp, float* out) {
        out[threadIdx.x] = __shfl(inp[threadIdx.x], 0, 16) + __shfl_xor(inp[threadIdx.x], 1, 16) * 1000.0f;
    }"""
    got = run(source, "k", AMD64, 64, {"inp": IOTA64, "out": [0.0] * 64})["out"]
    assert got == [(i // 16 * 16) + (i ^ 1) * 1000.0 for i in range(64)]


def test_shuffle_up_and_down_keep_their_own_value_at_the_segment_edge():
    source = """
    __global__ void k(const float* inp, float* out) {
        out[threadIdx.x] = __shfl_up(inp[threadIdx.x], 3, 8) + 100.0f * __shfl_down(inp[threadIdx.x], 3, 8);
    }"""
    got = run(source, "k", AMD64, 16, {"inp": IOTA64[:16], "out": [0.0] * 16})["out"]
    up = [i if i % 8 < 3 else i - 3 for i in range(16)]
    down = [i if i % 8 + 3 >= 8 else i + 3 for i in range(16)]
    assert got == [u + 100.0 * d for u, d in zip(up, down)]


BALLOT = """
__global__ void k(const float* inp, unsigned long long* wide, unsigned int* narrow, int* counts) {
    bool odd = ((int)inp[threadIdx.x]) & 1;
    unsigned long long w = __ballot(odd);
    unsigned int n = __ballot(odd);
    if (threadIdx.x == 0) {
        wide[0] = w;
        narrow[0] = n;
        counts[0] = __popcll(w);
        counts[1] = __popc(w);
        counts[2] = __ffsll(w & ~0xffffffffull);
    }
}
"""


def test_ballot_has_one_bit_per_lane_and_a_32_bit_destination_truncates():
    args = {"inp": IOTA64, "wide": [0], "narrow": [0], "counts": [0, 0, 0]}
    got = run(BALLOT, "k", AMD64, 64, args)
    assert got["wide"] == [0xAAAAAAAAAAAAAAAA]
    assert got["narrow"] == [0xAAAAAAAA]
    assert got["counts"] == [32, 16, 34]  # __popc takes an unsigned int: lanes 32-63 are lost


def test_a_mask_less_vote_is_an_error_on_nvidia_and_the_helper_makes_it_the_active_lanes_vote():
    """HIP's `__ballot(p)` built through HIP's NVIDIA backend is CUDA's pre-Volta vote, which ptxas
    refuses for sm_70+; convert's helper (rewrite/nvidia_votes.py) makes it `__ballot_sync` over
    `__activemask()`. Lanes 20-31 returned early: the 20 that stay vote."""
    from portkit.rewrite.nvidia_votes import helper
    kernel = """
    __global__ void k(int* out) {
        if (threadIdx.x >= 20) return;
        unsigned long long b = __ballot(threadIdx.x % 2 == 0);
        int a = __all(threadIdx.x < 20), n = __any(threadIdx.x == 7);
        if (threadIdx.x == 0) { out[0] = __popcll(b); out[1] = a; out[2] = n; }
    }"""
    with pytest.raises(SimError, match=r"__ballot: vote without \.sync, which ptxas refuses for sm_70 and later"):
        run(kernel, "k", HIP_NVIDIA, 32, {"out": [0, 0, 0]})
    fixed = helper([b"__all", b"__any", b"__ballot"], b"\n", include=True).decode() + kernel
    assert run(fixed, "k", HIP_NVIDIA, 32, {"out": [0, 0, 0]})["out"] == [10, 1, 1]
    assert run(fixed, "k", AMD64, 64, {"out": [0, 0, 0]})["out"] == [10, 1, 1]   # the helper is NVIDIA's only
    assert run(kernel, "k", AMD32, 32, {"out": [0, 0, 0]})["out"] == [10, 1, 1]


def test_cuda_ballot_sync_is_32_bits():
    source = """
    __global__ void k(unsigned long long* out) { out[0] = __ballot_sync(0xffffffff, 1) + 1; }"""
    assert run(source, "k", CUDA32, 32, {"out": [0]})["out"] == [0]  # 0xffffffff + 1 wraps in 32 bits


def test_shared_array_indexed_by_lane_is_out_of_bounds_at_64_lanes():
    source = """
    __global__ void k(const float* inp, float* out) {
        __shared__ float s[32];
        s[threadIdx.x % warpSize] = inp[threadIdx.x];
        out[threadIdx.x] = s[threadIdx.x % warpSize];
    }"""
    assert run(source, "k", AMD32, 32, {"inp": IOTA64[:32], "out": [0.0] * 32})["out"] == IOTA64[:32]
    with pytest.raises(OutOfBounds) as error:
        run(source, "k", AMD64, 64, {"inp": IOTA64, "out": [0.0] * 64})
    assert str(error.value) == "__shared__ array s[32]: element 32 is out of bounds (lane 32)"


def test_lane_bit_shift_past_32_bits_is_an_error():
    source = """
    __global__ void k(unsigned int* out) { out[threadIdx.x] = 1u << (threadIdx.x % warpSize); }"""
    assert run(source, "k", AMD32, 32, {"out": [0] * 32})["out"] == [1 << i for i in range(32)]
    with pytest.raises(SimError) as error:
        run(source, "k", AMD64, 64, {"out": [0] * 64})
    assert str(error.value) == ("shift by 32 is undefined for unsigned int (32 bits) at line 2: "
                                "1u << (threadIdx.x % warpSize) (lane 32)")


def test_a_32_bit_full_mask_does_not_name_lanes_32_to_63():
    source = REDUCE.replace("START", "warpSize / 2").replace("__shfl_down(v,", "__shfl_down_sync(0xffffffff, v,")
    with pytest.raises(SimError) as error:
        warp_sums(source, CUDA64)
    assert str(error.value).startswith("__shfl_down_sync: lane 32 executes it but its mask 0xffffffff does not name it")
    with pytest.raises(SimError) as error:
        warp_sums(source, AMD64)
    assert str(error.value).startswith("__shfl_down_sync: HIP requires a 64-bit mask, got unsigned int")
    assert warp_sums(source, AMD64.lenient()) == [2016.0, 0.0]


def test_a_mask_naming_lanes_that_took_the_other_branch_is_an_error():
    source = """
    __global__ void k(const float* inp, float* out) {
        float v = inp[threadIdx.x];
        if (threadIdx.x < 16)
            v = __shfl_down_sync(0xffffffff, v, 1);
        out[threadIdx.x] = v;
    }"""
    with pytest.raises(SimError) as error:
        run(source, "k", CUDA32, 32, {"inp": IOTA64[:32], "out": [0.0] * 32})
    assert "names lanes that do not execute it (first: lane 16)" in str(error.value)


def test_lanes_that_returned_may_sit_out_a_full_mask_shuffle():
    source = """
    __global__ void k(const float* inp, float* out, int n) {
        if (threadIdx.x >= n) return;
        out[threadIdx.x] = __shfl_sync(0xffffffff, inp[threadIdx.x], 0);
    }"""
    got = run(source, "k", CUDA32, 32, {"inp": IOTA64[1:33], "out": [0.0] * 32, "n": 20})["out"]
    assert got == [1.0] * 20 + [0.0] * 12


def test_c_integer_semantics():
    source = """
    __global__ void k(int* out) {
        int big = 2147483647;
        out[0] = big + 1;
        out[1] = -7 / 2;
        out[2] = -7 % 2;
        out[3] = -1 < 0u;
        out[4] = (unsigned)-1 >> 28;
        out[5] = -16 >> 2;
        out[6] = 0xffffffff == -1;
        out[7] = (int)(3.9f) + (int)(-3.9f);
    }"""
    got = run(source, "k", CUDA32, 1, {"out": [9] * 8})["out"]
    assert got == [-2147483648, -3, -1, 0, 15, -4, 1, 0]


def test_barrier_separates_phases_of_the_block():
    source = """
    __global__ void k(float* out) {
        __shared__ float partial[4];
        if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = threadIdx.x + 1;
        SYNC
        if (threadIdx.x == 0) out[0] = partial[0] + partial[1] + partial[2] + partial[3];
    }"""
    with_barrier = run(source.replace("SYNC", "__syncthreads();"), "k", CUDA32, 128, {"out": [0.0]})
    assert with_barrier["out"] == [1.0 + 33.0 + 65.0 + 97.0]
    # Without it warp 0 runs to its end first (the simulator's fixed order) and reads what the
    # other warps have not written yet: garbage on a GPU, refused here.
    with pytest.raises(UnwrittenRead) as error:
        run(source.replace("SYNC", ""), "k", CUDA32, 128, {"out": [0.0]})
    assert str(error.value) == ("__shared__ array partial[4]: element 1 is read before any thread wrote it "
                                "(lane 0) at line 6: partial[1]")


# ggml's rms_norm_f32 (norm.cu) as --fix warp wrote it before the read was guarded: 1024 threads
# are 16 wavefronts at 64 lanes, so 16 partials are written and all 64 lanes read theirs.
PARTIALS = """
__global__ void k(const float* inp, float* out) {
    __shared__ float s_sum[PORTKIT_WAVEFRONT_SIZE];
    float tmp = inp[threadIdx.x];
    for (int mask = warpSize / 2; mask > 0; mask >>= 1)
        tmp += __shfl_xor(tmp, mask, warpSize);
    const int warp_id = threadIdx.x / PORTKIT_WAVEFRONT_SIZE;
    const int lane_id = threadIdx.x % PORTKIT_WAVEFRONT_SIZE;
    if (lane_id == 0) s_sum[warp_id] = tmp;
    __syncthreads();
    tmp = READ;
    for (int mask = warpSize / 2; mask > 0; mask >>= 1)
        tmp += __shfl_xor(tmp, mask, warpSize);
    if (threadIdx.x == 0) out[0] = tmp;
}"""


def partial_sums(read: str, target) -> list[float]:
    source = PARTIALS.replace("READ", read)
    defines = {"PORTKIT_WAVEFRONT_SIZE": str(target.wave)}
    ones = [1.0] * 1024
    return run(source, "k", target, 1024, {"inp": ones, "out": [0.0]}, defines=defines)["out"]


def test_shared_memory_is_not_zeroed_a_read_of_an_unwritten_partial_is_refused():
    """A zero-filled simulator summed 48 unwritten partials as 0 and proved this right at 64 lanes."""
    assert partial_sums("s_sum[lane_id]", AMD32) == [1024.0]   # 32 wavefronts, 32 partials: all written
    with pytest.raises(UnwrittenRead) as error:
        partial_sums("s_sum[lane_id]", AMD64)
    assert str(error.value) == ("__shared__ array s_sum[64]: element 16 is read before any thread wrote it "
                                "(lane 16) at line 11: s_sum[lane_id]")
    assert math.isnan(partial_sums("s_sum[lane_id]", AMD64.lenient())[0])   # poisoned: the sum shows it
    guarded = "lane_id < (blockDim.x + warpSize - 1) / warpSize ? s_sum[lane_id] : 0.0f"
    assert partial_sums(guarded, AMD64) == partial_sums(guarded, AMD32) == [1024.0]


def test_an_unwritten_integer_reads_a_sentinel_in_a_lenient_run():
    source = """
    __global__ void k(int* out) {
        __shared__ int s[64];
        if (threadIdx.x < 16) s[threadIdx.x] = 1;
        __syncthreads();
        out[threadIdx.x] = s[threadIdx.x];
    }"""
    with pytest.raises(UnwrittenRead, match=r"^__shared__ array s\[64\]: element 16 is read before any thread wrote it"):
        run(source, "k", AMD64, 64, {"out": [0] * 64})
    got = run(source, "k", AMD64.lenient(), 64, {"out": [0] * 64})["out"]
    assert got == [1] * 16 + [0x5A5A5A5A] * 48


def test_preprocessor_sees_each_targets_macros():
    source = """
    #if defined(__AMDGCN_WAVEFRONT_SIZE)
    #define WS __AMDGCN_WAVEFRONT_SIZE
    #elif defined(__CUDACC__)
    #define WS (16 + 16)
    #else
    #error no target
    #endif
    constexpr int kWave = WS;
    __global__ void k(int* out) { out[0] = kWave; out[1] = warpSize; }"""
    assert run(source, "k", CUDA32, 1, {"out": [0, 0]})["out"] == [32, 32]
    assert run(source, "k", AMD32, 1, {"out": [0, 0]})["out"] == [32, 32]
    assert run(source, "k", AMD64, 1, {"out": [0, 0]})["out"] == [64, 64]


def test_warp_size_is_not_a_constant_expression():
    source = "__global__ void k(float* out) { __shared__ float s[warpSize]; out[0] = s[0]; }"
    with pytest.raises(SimError) as error:
        run(source, "k", AMD64, 64, {"out": [0.0]})
    assert str(error.value) == "unknown name 'warpSize' at line 1: warpSize (not a constant expression)"


def test_templates_with_int_and_deduced_type_parameters():
    source = """
    template <int width = 8, typename T>
    __device__ T segment_max(T v) {
        for (int o = width / 2; o > 0; o >>= 1) v = max(v, __shfl_xor(v, o, width));
        return v;
    }
    template <int block>
    __global__ void k(const int* inp, int* out) {
        out[threadIdx.x] = segment_max(inp[threadIdx.x]) + segment_max<4>(inp[threadIdx.x]) * block;
    }"""
    got = run(source, "k", AMD64, 16, {"inp": list(range(16)), "out": [0] * 16}, template=[1000])["out"]
    assert got == [(i | 7) + (i | 3) * 1000 for i in range(16)]


# -- the fixture pairs ---------------------------------------------------------------------------


def ids(folder: Path) -> str:
    return f"{folder.parent.name}/{folder.name}"


def outcome(source: str, case: dict, target, host_defines: dict | None = None) -> dict | str:
    try:
        return simulate(source, case, target, host_defines)
    except SimError as err:
        return f"{type(err).__name__}: {err}"


def test_the_simulator_has_fixtures_to_prove():
    assert {"ballot_eq_full_mask", "lane_bit_1u_shift", "shfl_up_scan_lane_31"} <= {p.name for p in CASES}
    assert {"host_rows_per_block_div_32", "host_block_shape_4x8"} <= {p.name for p in CASES}
    assert len(CASES) >= 20


@pytest.mark.parametrize("folder", CASES, ids=ids)
def test_original_at_32_lanes_gives_the_expected_result(folder: Path):
    case = read_case(folder)
    assert outcome((folder / "input.cu").read_text(), case, CUDA32) == expected(case, 32)


# The device's own warp size handed to the host pass, as host code reading hipDeviceProp_t::warpSize would.
DEVICE_WAVE_ON_HOST = {"PORTKIT_WAVEFRONT_SIZE": "32"}


@pytest.mark.parametrize("folder", CASES, ids=ids)
def test_fixed_at_32_lanes_gives_the_same_result(folder: Path):
    """Unless `host_wave = 64`: the fixed host code assumes 64-lane wavefronts (its host pass sees
    PORTKIT_WAVEFRONT_SIZE = 64), so the 32-lane run must differ, and must be right once the host
    pass is given the device's 32; the exemption is asserted, never skipped."""
    case = read_case(folder)
    fixed = (folder / "expected.hip").read_text()
    if case.get("host_wave") == 64:
        assert outcome(fixed, case, AMD32) != expected(case, 32)
        assert outcome(fixed, case, AMD32, DEVICE_WAVE_ON_HOST) == expected(case, 32)
    else:
        assert outcome(fixed, case, AMD32) == expected(case, 32)


@pytest.mark.parametrize("folder", CASES, ids=ids)
def test_fixed_through_hips_nvidia_backend_gives_the_same_result(folder: Path):
    """HIP is single-source: the fixed code built for NVIDIA (32-lane warps on the device and, with
    PORTKIT_WAVEFRONT_SIZE's NVIDIA branch, on the host pass) computes what the original does. Issue
    31: before that branch, 3 fixtures computed wrong results on an H100."""
    case = read_case(folder)
    assert outcome((folder / "expected.hip").read_text(), case, HIP_NVIDIA) == expected(case, 32)


@pytest.mark.parametrize("folder", CASES, ids=ids)
def test_host_wave_is_claimed_only_by_host_launches(folder: Path):
    case = read_case(folder)
    hosts = [launch["host"] for launch in case["launch"] if "host" in launch]
    assert case.get("host_wave") in ((None, 64) if hosts else (None,))
    if hosts:  # with the device's warp size the fixed host code is right at 32 lanes, exempt or not
        assert outcome((folder / "expected.hip").read_text(), case, AMD32, DEVICE_WAVE_ON_HOST) == expected(case, 32)


@pytest.mark.parametrize("folder", CASES, ids=ids)
def test_fixed_at_64_lanes_gives_the_correct_result(folder: Path):
    case = read_case(folder)
    assert outcome((folder / "expected.hip").read_text(), case, AMD64) == expected(case, 64)


@pytest.mark.parametrize("folder", CASES, ids=ids)
def test_original_at_64_lanes_is_wrong(folder: Path):
    case = read_case(folder)
    if not case.get("original_wrong_at_64", False):
        pytest.skip("the case does not claim the original is wrong at 64 lanes")
    assert outcome((folder / "input.cu").read_text(), case, CUDA64) != expected(case, 64)


@pytest.mark.parametrize("folder", CASES, ids=ids)
def test_original_at_64_lanes_is_wrong_even_without_the_mask_check(folder: Path):
    """Every fixture's bug is in the values, not only in its 32-bit `0xffffffff` masks: with the
    masks run as HIP's mask-less forms, the original still computes something else at 64 lanes."""
    case = read_case(folder)
    assert case.get("original_wrong_at_64", False) is True
    assert outcome((folder / "input.cu").read_text(), case, CUDA64.lenient()) != expected(case, 64)
