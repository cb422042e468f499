"""Warp width as data (issue 49, PK208): a constant of 32 that makes a kernel's block one warp is
reported once, at its definition, with every use that depends on it; a width-less cub warp
primitive in a literal one-warp launch is reported where it is; `--fix warp` makes the block the
wavefront and the kernel's assertion follow it.
"""

from __future__ import annotations

import json

from conftest import REPO
from portkit import rules
from portkit.api import audit_paths
from portkit.commands.audit import ScanJob, audit_bytes
from portkit.commands.convert import convert_bytes
from portkit.commands.scan.walk import Options
from portkit.core.tables.mappings import parse_version

CASES = REPO / "fixtures" / "rules" / "PK208"
ROCM = parse_version("5.2")


def _findings(name: str, data: bytes):
    job = ScanJob(Options(rocm=ROCM, audit=True), enabled=rules.selected(None, None))
    result = audit_bytes(name, data, "source", job)
    return [f for f in result.findings if f.code.startswith("PK2")]


def _warp(name: str, data: bytes):
    return [(f.line, f.code) for f in _findings(name, data)]


def test_the_constant_is_reported_once_with_its_uses():
    found = [f for f in _findings("flagged.cu", (CASES / "flagged.cu").read_bytes()) if f.code == "PK208"]
    assert [(f.line, f.subject) for f in found] == [(6, "kBlockThreads"), (7, "SCAN_THREADS"),
                                                    (34, "cub::WarpReduce<float>")]
    assert found[0].message.endswith(
        "Uses: line 12 static_assert in evaluate_splits; line 13 cub::WarpReduce<float> in evaluate_splits, with no "
        "logical width; line 45 block size of the launch of evaluate_splits; line 45 template argument of "
        "evaluate_splits")
    assert found[1].message.endswith(
        "Uses: line 23 cub::WarpScan<int> in prefix_counts, with no logical width; line 25 index arithmetic; "
        "line 28 index arithmetic; line 46 a dim3 block shape; line 47 block size of the launch of prefix_counts")
    assert "row_sum is launched with one-warp blocks (line 48)" in found[2].message


def test_no_finding_without_a_one_warp_launch_or_with_a_width():
    assert _warp("clean.cu", (CASES / "clean.cu").read_bytes()) == []


def test_an_assertion_alone_makes_the_block_one_warp():
    data = b"""#include <cub/cub.cuh>
template <int kBlockSize>
__global__ void k(const float* x, float* y)
{
    static_assert(kBlockSize == 32, "one warp");
    using R = cub::WarpReduce<float>;
    __shared__ typename R::TempStorage t;
    float s = R(t).Sum(x[threadIdx.x]);
    if (threadIdx.x == 0) *y = s;
}
"""
    assert _warp("assert.cu", data) == [(6, "PK208")]


def test_a_warp_size_name_is_pk201s_alone():
    """`#define WARP_SIZE 32` at the launch: PK201 reports the definition; one finding per defect."""
    data = b"""#include <cub/cub.cuh>
#define WARP_SIZE 32
__global__ void k(const float* x, float* y)
{
    using R = cub::WarpReduce<float>;
    __shared__ typename R::TempStorage t;
    float s = R(t).Sum(x[threadIdx.x]);
    if (threadIdx.x == 0) *y = s;
}
void run(const float* x, float* y) { k<<<1, WARP_SIZE>>>(x, y); }
"""
    assert _warp("warpish.cu", data) == [(2, "PK201")]


def test_a_derived_constant_is_followed():
    data = b"""#include <cub/cub.cuh>
constexpr int kWarps = 1;
constexpr int kThreadsPerRow = kWarps * 32;
__global__ void k(const float* x, float* y)
{
    using S = cub::WarpScan<float>;
    __shared__ typename S::TempStorage t;
    float out;
    S(t).InclusiveSum(x[threadIdx.x], out);
    y[threadIdx.x] = out;
}
void run(const float* x, float* y) { k<<<1, dim3(kThreadsPerRow, 1, 1)>>>(x, y); }
"""
    assert _warp("derived.cu", data) == [(3, "PK208")]


def test_the_fix_makes_the_block_the_wavefront_and_the_assertion_follows():
    source = CASES / "fixes" / "evaluate_splits.cu"
    _scan, fixed = convert_bytes(source.name, source.read_bytes(), Options(rocm=ROCM, fixes=frozenset({"warp"})), "source")
    text = fixed.decode()
    assert "uint32_t constexpr kBlockThreads = PORTKIT_WAVEFRONT_SIZE;" in text
    assert 'static_assert(kBlockSize == PORTKIT_WAVEFRONT_SIZE, "one warp per feature");' in text
    assert text.count("#ifndef PORTKIT_WAVEFRONT_SIZE") == 1
    assert [c for _l, c in _warp("evaluate_splits.hip", fixed)] == []   # nothing left to report


def test_the_estimate_prices_the_constant_once():
    document = audit_paths([CASES / "fixes" / "evaluate_splits.cu"], rocm="5.2", config=False)
    items = [i for i in document["estimate"]["items"] if "PK208" in json.dumps(i)]
    assert len(items) == 1 and items[0]["count"] == 1
