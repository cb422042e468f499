"""cub/hipcub WarpReduce and WarpScan on the lane simulator (tests/warpsim/collectives.py), and the
proof issue 49 asks for: `--fix warp` on a one-warp-block kernel that reduces with a width-less
WarpReduce computes the right sums at 32 and 64 lanes, and the original does not at 64.

A width-less primitive spans the hardware warp: 32 lanes under CUB, the wavefront under hipCUB
(64 on CDNA). The original launches 32-thread blocks, so on a 64-lane wavefront its logical warp
names 32 lanes that do not exist: a strict run refuses that (CUB and hipCUB require every lane of
the logical warp), a lenient run shows what the shuffle algorithm then computes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from warpsim import AMD32, AMD64, CUDA32, CUDA64, HIP_NVIDIA, Device, SimError, run, run_host
from warpsim.fixture import read_case, simulate

REPO = Path(__file__).resolve().parent.parent
WARP_CASE = REPO / "fixtures" / "warp" / "one_warp_block_warp_reduce"
PK208 = REPO / "fixtures" / "rules" / "PK208" / "fixes"
DEVICE_WAVE_ON_HOST = {"PORTKIT_WAVEFRONT_SIZE": "32"}

REDUCE = """
__global__ void k(const int* inp, int* out) {
    typedef cub::WarpReduce<int WIDTH> WarpReduceT;
    __shared__ typename WarpReduceT::TempStorage temp[4];
    int total = WarpReduceT(temp[threadIdx.x / 16]).CALL;
    out[threadIdx.x] = total;
}
"""


def reduce(call: str, target, block: int, width: str = "") -> list[int]:
    source = REDUCE.replace("WIDTH", width).replace("CALL", call)
    return run(source, "k", target, block, {"inp": list(range(block)), "out": [0] * block})["out"]


def test_a_width_less_warp_reduce_totals_the_hardware_warp_in_its_lane_0():
    assert reduce("Sum(inp[threadIdx.x])", CUDA32, 32)[0] == 496
    assert reduce("Sum(inp[threadIdx.x])", AMD64, 64)[0] == 2016
    assert reduce("Sum(inp[threadIdx.x])", AMD32, 64)[::32] == [496, 1520]   # two 32-lane warps


def test_the_other_lanes_get_the_shuffle_trees_partials():
    got = reduce("Sum(inp[threadIdx.x])", CUDA32, 32)
    # offsets 1, 2, 4, 8, 16: lane 16 ends with lanes 16-31, lane 31 with itself
    assert got[16] == sum(range(16, 32)) and got[31] == 31 and got[30] == 61


def test_a_logical_width_cuts_the_wavefront_into_segments():
    got = reduce("Sum(inp[threadIdx.x])", AMD64, 64, width=", 16")
    assert got[::16] == [sum(range(b, b + 16)) for b in range(0, 64, 16)]


def test_a_partial_reduction_and_a_reduction_operator():
    assert reduce("Sum(inp[threadIdx.x], 5)", AMD64, 64)[0] == 0 + 1 + 2 + 3 + 4
    assert reduce("Reduce(inp[threadIdx.x], hipcub::Max())", AMD64, 64)[0] == 63
    assert reduce("Reduce(inp[threadIdx.x], cub::Min())", CUDA32, 32, width=", 8")[::8] == [0, 8, 16, 24]
    with pytest.raises(SimError, match=r"^reduction operator \[\] \(int a, int b\) \{ return a \+ b; \} is not simulated"):
        reduce("Reduce(inp[threadIdx.x], [] (int a, int b) { return a + b; })", CUDA32, 32)


SCAN = """
__global__ void k(const int* inp, int* out, int* agg) {
    using WarpScanT = hipcub::WarpScan<int>;
    __shared__ typename WarpScanT::TempStorage temp;
    int mine, total;
    WarpScanT(temp).CALL;
    out[threadIdx.x] = mine;
    agg[threadIdx.x] = total;
}
"""


def scan(call: str, target, block: int) -> dict[str, list[int]]:
    source = SCAN.replace("CALL", call)
    return run(source, "k", target, block, {"inp": [1] * block, "out": [0] * block, "agg": [0] * block})


def test_a_scan_and_its_aggregate_read_from_the_logical_warps_last_lane():
    got = scan("InclusiveSum(inp[threadIdx.x], mine, total)", AMD64, 64)
    assert got["out"] == list(range(1, 65)) and got["agg"] == [64] * 64
    got = scan("ExclusiveSum(inp[threadIdx.x], mine, total)", AMD32, 64)
    assert got["out"] == list(range(32)) * 2 and got["agg"] == [32] * 64
    got = scan("ExclusiveScan(inp[threadIdx.x], mine, 100, hipcub::Sum(), total)", CUDA32, 32)
    assert got["out"] == list(range(100, 132)) and got["agg"] == [32] * 32


def test_a_logical_warp_naming_lanes_that_do_not_execute_is_refused_and_lenient_reads_them_as_0():
    with pytest.raises(SimError) as error:
        scan("InclusiveSum(inp[threadIdx.x], mine, total)", AMD64, 32)
    assert str(error.value) == (
        "WarpScan<int>::InclusiveSum: lane 32 of the 64-lane logical warp (lanes 0-63, the hardware warp) "
        "does not execute it, and CUB and hipCUB require every lane of the logical warp at line 6: "
        "WarpScanT(temp).InclusiveSum(inp[threadIdx.x], mine, total)")
    got = scan("InclusiveSum(inp[threadIdx.x], mine, total)", AMD64.lenient(), 32)
    assert got["out"] == list(range(1, 33)) and got["agg"] == [0] * 32   # lane 63 never ran


def test_a_failed_static_assert_is_the_compile_error_of_that_instantiation():
    source = """
    template <int kBlockSize>
    __global__ void k(int* out) { static_assert(kBlockSize == 32, "one warp"); out[0] = kBlockSize; }"""
    assert run(source, "k", AMD64, 32, {"out": [0]}, template=[32])["out"] == [32]
    with pytest.raises(SimError, match=r'^static_assert failed at line 3: static_assert\(kBlockSize == 32, "one warp"\);$'):
        run(source, "k", AMD64, 64, {"out": [0]}, template=[64])


# -- the fixture: a split evaluation in one-warp blocks, before and after --fix warp ----------------

CASE = read_case(WARP_CASE)
RIGHT = CASE["expect"]
BINS = 80


def outcome(source: str, target, host_defines=None) -> dict | str:
    try:
        return simulate(source, CASE, target, host_defines)
    except SimError as err:
        return f"SimError: {err}"


def test_the_fixture_is_the_kind_issue_49_names():
    original = (WARP_CASE / "input.cu").read_text()
    assert "uint32_t constexpr kBlockThreads = 32;" in original and "static_assert(kBlockSize == 32" in original
    assert "cub::WarpReduce<float>;" in original and "cub::WarpScan<float>;" in original
    assert RIGHT["total"] == [3160.0, 9560.0]   # 0 + ... + 79, 80 + ... + 159
    assert RIGHT["left"][:4] == [0.0, 1.0, 3.0, 6.0] and RIGHT["left"][BINS:BINS + 2] == [80.0, 161.0]


def test_the_original_is_right_at_32_lanes_and_refused_at_64():
    original = (WARP_CASE / "input.cu").read_text()
    assert outcome(original, CUDA32) == RIGHT
    assert outcome(original, AMD64) == (
        "SimError: WarpScan<float>::InclusiveSum: lane 32 of the 64-lane logical warp (lanes 0-63, the hardware "
        "warp) does not execute it, and CUB and hipCUB require every lane of the logical warp at line 25: "
        "WarpScanT(scan_temp).InclusiveSum(bin, prefix, chunk)")


def test_the_original_computes_wrong_sums_at_64_lanes():
    """Run past the refusal: a 32-thread block on a 64-lane wavefront; the WarpScan's aggregate is lane
    63's, which does not exist (0), so no chunk carries into the next: every prefix after the first
    32 bins is short by the bins before its chunk. The WarpReduce total happens to survive (its
    missing lanes add 0), which is why the chunked scan is in the fixture."""
    got = outcome((WARP_CASE / "input.cu").read_text(), CUDA64.lenient())
    assert got["total"] == RIGHT["total"]
    wrong = [sum(range(f * BINS + i - i % 32, f * BINS + i + 1)) for f in range(2) for i in range(BINS)]
    assert got["left"] == [float(v) for v in wrong]
    assert got["left"][32:34] == [32.0, 65.0] and RIGHT["left"][32:34] == [528.0, 561.0]


def test_the_fixed_kernel_is_right_at_64_lanes_and_through_hips_nvidia_backend():
    fixed = (WARP_CASE / "expected.hip").read_text()
    assert outcome(fixed, AMD64) == RIGHT         # kBlockThreads = 64: one wavefront per block
    assert outcome(fixed, HIP_NVIDIA) == RIGHT    # kBlockThreads = 32 on both passes


def test_the_fixed_kernel_at_32_lanes_needs_the_devices_width_on_the_host():
    """On a wave32 AMD GPU the host pass still takes PORTKIT_WAVEFRONT_SIZE = 64 (the PK008 note):
    the launch names evaluate_splits<64>, which the device pass (kBlockThreads = 32) never compiled. With the device's
    width on the host (hipDeviceAttributeWarpSize), it is right."""
    fixed = (WARP_CASE / "expected.hip").read_text()
    assert outcome(fixed, AMD32).startswith(   # the wave32 device pass compiled evaluate_splits<32> only
        "SimError: the host launches evaluate_splits<64>, which the device pass never instantiated (it names [(32,)])")
    assert outcome(fixed, AMD32, DEVICE_WAVE_ON_HOST) == RIGHT


# -- the PK208 real-code fixture itself (fixtures/rules/PK208/fixes), through its own host function ---

def evaluate(name: str, target, host_defines=None) -> list[float] | str:
    source = (PK208 / name).read_text()
    dev = Device(source, target)
    dev.alloc("gain", "float", [float(i) for i in range(3 * 40)])
    dev.alloc("best", "float", [0.0] * 3)
    try:
        run_host(dev, source, "evaluate", ["gain", "best", 3, 40, 0], host_defines)
    except SimError as err:
        return f"SimError: {err}"
    return dev.buffers["best"].data


FEATURE_SUMS = [float(sum(range(f * 40, f * 40 + 40))) for f in range(3)]


def test_pk208s_evaluate_splits_before_and_after_fix_warp():
    assert evaluate("evaluate_splits.cu", CUDA32) == FEATURE_SUMS == [780.0, 2380.0, 3980.0]
    assert evaluate("evaluate_splits.cu", CUDA64).startswith(
        "SimError: WarpReduce<float>::Sum: lane 32 of the 64-lane logical warp (lanes 0-63, the hardware warp)")
    assert evaluate("evaluate_splits.cu.fixed", AMD64) == FEATURE_SUMS
    assert evaluate("evaluate_splits.cu.fixed", HIP_NVIDIA) == FEATURE_SUMS
    assert evaluate("evaluate_splits.cu.fixed", AMD32, DEVICE_WAVE_ON_HOST) == FEATURE_SUMS


@pytest.mark.compile
def test_the_fixed_fixture_compiles_for_amd_against_the_pinned_hipcub(pack62: Path, tmp_path: Path):
    """Debian's ROCm 5.2 has no hipCUB: the fixed output is compiled with this hipcc against the pinned
    6.2 pack's hipCUB and rocPRIM (only those, beside the installed HIP; rocPRIM 6.2 needs C++14)."""
    from conftest import require_tool
    hipcc = require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    for library in ("hipcub", "rocprim"):
        (tmp_path / library).symlink_to(pack62 / "include" / library)
    done = subprocess.run([hipcc, "-std=c++17", "-x", "hip", "--offload-arch=gfx90a", "-c", str(WARP_CASE / "expected.hip"),
                           "-o", os.devnull, "-I", str(tmp_path)], capture_output=True, text=True,
                          env=dict(os.environ, HIP_PLATFORM="amd"), timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
