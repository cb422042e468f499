"""The __reduce_*_sync polyfills (mappings/polyfills.toml: portkit_reduce_{add,min,max,and,or,xor}_sync)
give each lane in the mask what CUDA's do, checked on the host; and nccl-tests' call converts to them.

No GPU is needed: the bodies are compiled with g++ against a fake of HIP's `__shfl` and `__shfl_xor`
(the lane index arithmetic of HIP's amd_warp_functions.h, widths included) whose 64 lanes are
std::threads in lockstep (std::barrier: each shuffle publishes the lane's value, waits, reads the
source lane's, waits). Only the lanes a test makes call the function are active, as on a wavefront
whose other lanes branched away; an inactive lane's slot holds a poison value, so reading one fails.
The reference is Python's, from CUDA's documentation: every thread named in mask gets op over the
values of all threads named in mask, of its own 32-lane warp.
"""

from __future__ import annotations

import functools
import os
import random
import shutil
import subprocess
import sys

import pytest

from conftest import NVCC, REPO, require_tool

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CASE = REPO / "fixtures" / "polyfills" / "reduce_sync"
OPS = {"add": lambda a, b: (a + b), "min": min, "max": max, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
       "xor": lambda a, b: a ^ b}
SIGNED = ("add", "min", "max")   # CUDA has int and unsigned int overloads of these; and/or/xor take unsigned int
POISON = 0x5A5A5A5A

FAKE = r"""
#include <barrier>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#define __host__
#define __device__
static std::barrier<>* sync_point;
static std::vector<unsigned> slots(64, 0x5A5A5A5Au);
static thread_local int self;
template <typename T> static T exchange(T mine, int from) {
    unsigned raw; std::memcpy(&raw, &mine, 4);
    slots[self] = raw; sync_point->arrive_and_wait();
    T got; unsigned r = slots[from]; std::memcpy(&got, &r, 4); sync_point->arrive_and_wait();
    return got;
}
template <typename T> static T __shfl(T var, int src_lane, int width) {
    return exchange(var, src_lane + (self & ~(width - 1)));   // HIP's index: within the caller's width
}
template <typename T> static T __shfl_xor(T var, int lane_mask, int width) {
    int index = self ^ lane_mask;
    index = index >= ((self + width) & ~(width - 1)) ? self : index;
    return exchange(var, index);
}
"""


def _bodies() -> str:
    records = {r["name"]: r for r in tomllib.loads((REPO / "mappings" / "polyfills.toml").read_text())["polyfill"]}
    return "\n".join(records[n]["body"] for n in ["portkit_reduce_sync", *(f"portkit_reduce_{op}_sync" for op in OPS)])


def _cases() -> list[tuple[str, str, int, list[int]]]:
    """(op, type, mask, the 64 lanes' values): full masks (the butterfly), partial ones (the lane loop)."""
    rng = random.Random(48)
    masks = [0xFFFFFFFF, 0x0000FFFF, 0x80000001, 0x00000001, 0xAAAAAAAA, 0x7FFFFFFF, rng.getrandbits(32) | 1]
    cases = []
    for op in OPS:
        for ctype in (("int", "unsigned int") if op in SIGNED else ("unsigned int",)):
            for mask in masks:
                if ctype == "int":
                    values = [rng.choice([rng.randint(-2 ** 31, 2 ** 31 - 1), rng.randint(-5, 5), 2 ** 31 - 1])
                              for _ in range(64)]
                else:
                    values = [rng.choice([rng.getrandbits(32), rng.randint(0, 9), 0xFFFFFFFF]) for _ in range(64)]
                cases.append((op, ctype, mask, values))
    return cases


def _wrap(value: int, ctype: str) -> int:
    value &= 0xFFFFFFFF
    return value - 2 ** 32 if ctype == "int" and value >= 2 ** 31 else value


def _want(op: str, ctype: str, mask: int, values: list[int]) -> list[int | None]:
    """Lane l (in mask, of its 32-lane half) gets op over the mask's lanes of its half; other lanes: None."""
    out: list[int | None] = []
    for lane in range(64):
        base = lane & ~31
        if not (mask >> (lane - base)) & 1:
            out.append(None)
            continue
        members = [values[base + i] for i in range(32) if (mask >> i) & 1]
        out.append(_wrap(functools.reduce(OPS[op], members), ctype))
    return out


def _program(cases) -> str:
    lines = [FAKE, _bodies(), "int main() {"]
    for i, (op, ctype, mask, values) in enumerate(cases):
        active = [lane for lane in range(64) if (mask >> (lane % 32)) & 1]
        lines += [f"  {{ static const {ctype} V[64] = {{{', '.join(f'({ctype}){v}' for v in values)}}};",
                  f"    static {ctype} R[64]; std::barrier<> b({len(active)}); sync_point = &b;",
                  "    std::fill(slots.begin(), slots.end(), 0x5A5A5A5Au); std::vector<std::thread> ts;",
                  f"    for (int lane : {{{', '.join(map(str, active))}}})",
                  f"      ts.emplace_back([lane] {{ self = lane; R[lane] = portkit_reduce_{op}_sync({mask}u, V[lane]); }});",
                  "    for (auto& t : ts) t.join();",
                  f"    for (int lane : {{{', '.join(map(str, active))}}}) printf(\"{i} %d %lld\\n\", lane, (long long)R[lane]); }}"]
    return "\n".join(lines + ["}"])


def test_every_lane_in_the_mask_gets_cudas_result(tmp_path):
    cases = _cases()
    (tmp_path / "t.cpp").write_text(_program(cases))
    build = subprocess.run([require_tool("g++", "g++"), "-std=c++20", "-O1", "-pthread", str(tmp_path / "t.cpp"), "-o",
                            str(tmp_path / "t")], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-4000:]
    run = subprocess.run([str(tmp_path / "t")], capture_output=True, text=True, check=True, timeout=300)
    got: dict[tuple[int, int], int] = {}
    for line in run.stdout.splitlines():
        i, lane, value = map(int, line.split())
        got[(i, lane)] = value
    wrong = []
    for i, (op, ctype, mask, values) in enumerate(cases):
        for lane, want in enumerate(_want(op, ctype, mask, values)):
            if want is not None and got.get((i, lane)) != want:
                wrong.append((op, ctype, hex(mask), lane, got.get((i, lane)), want))
    assert not wrong, wrong[:8]
    assert len(got) == sum(1 for *_, mask, _v in cases for lane in range(64) if (mask >> (lane % 32)) & 1)


def test_the_reference_reads_only_the_callers_half():
    """Lanes 32-63 are CUDA's second warp: a full mask there folds lanes 32-63 only."""
    values = list(range(64))
    want = _want("add", "int", 0xFFFFFFFF, values)
    assert want[0] == sum(range(32)) and want[40] == sum(range(32, 64))


def test_rocm_52_output_and_header_are_exact(tmp_path):
    from portkit.cli.app import main
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(CASE / "input.cu", src / "input.cu")
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--rocm", "5.2"]) == 0
    assert (out / "input.cu").read_bytes() == (CASE / "expected.hip").read_bytes()
    assert (out / "portkit_polyfills.h").read_bytes() == (CASE / "expected_polyfills.h").read_bytes()
    again = tmp_path / "again"
    assert main(["convert", str(out), "-o", str(again), "-q", "--rocm", "5.2"]) == 0
    assert (again / "input.cu").read_bytes() == (out / "input.cu").read_bytes()


@pytest.mark.compile
def test_input_compiles_with_nvcc(tmp_path):
    nvcc = require_tool(NVCC, "nvcc")
    run = subprocess.run([nvcc, "-arch=sm_80", "-c", str(CASE / "input.cu"), "-o", str(tmp_path / "o.o")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.compile
def test_output_compiles_with_hipcc(tmp_path):
    require_tool("hipcc", "hipcc")
    shutil.copy(CASE / "expected.hip", tmp_path / "input.hip")
    shutil.copy(CASE / "expected_polyfills.h", tmp_path / "portkit_polyfills.h")
    run = subprocess.run(["hipcc", "-x", "hip", "--offload-arch=gfx90a", "-c", str(tmp_path / "input.hip"), "-o",
                          str(tmp_path / "o.o")], capture_output=True, text=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    assert run.returncode == 0, run.stderr
