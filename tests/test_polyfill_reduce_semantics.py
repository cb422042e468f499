"""cooperative_groups::reduce (mappings/polyfills.toml) computes what CUDA documents, on the host.

No GPU is needed: the body is compiled with g++ against a small fake of HIP's groups whose lanes
are std::threads in lockstep (std::barrier: each shuffle publishes the lane's value, waits, reads
the partner's, waits), `__device__` and friends defined away. CUDA's reduce gives EVERY member the
reduction of all members' values; the reference below is Python's, on inputs chosen so that float
sums are exact (small integers and halves), so any lane holding a partial result fails.
"""

from __future__ import annotations

import functools
import operator
import subprocess
import sys

import pytest

from conftest import REPO, require_tool

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# A thread_block_tile<N> (shfl_xor) and a coalesced_group of any size (shfl_down, shfl), each lane
# a thread; the lanes share one slot array, and a barrier round separates writes from reads.
FAKE = r"""
#include <barrier>
#include <cstdio>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>
#define __host__
#define __device__
#define __forceinline__ inline
namespace cooperative_groups {
struct lanes {
    unsigned n; std::barrier<> *sync; std::vector<double> *slot;
    template <typename T> T exchange(T mine, unsigned rank, unsigned from) const {
        static_assert(std::is_arithmetic_v<T>, "as HIP's shuffles: an integer or float type");
        double raw = 0; std::memcpy(&raw, &mine, sizeof(T));
        (*slot)[rank] = raw; sync->arrive_and_wait();
        T got; std::memcpy(&got, &(*slot)[from], sizeof(T)); sync->arrive_and_wait();
        return got;
    }
};
template <unsigned int Size, typename Parent = void> struct thread_block_tile {
    lanes l; unsigned rank;
    unsigned size() const { return Size; }
    unsigned thread_rank() const { return rank; }
    template <typename T> T shfl_xor(T v, unsigned mask) const { return l.exchange(v, rank, rank ^ mask); }
};
struct coalesced_group {
    lanes l; unsigned rank;
    unsigned size() const { return l.n; }
    unsigned thread_rank() const { return rank; }
    template <typename T> T shfl_down(T v, unsigned d) const { return l.exchange(v, rank, rank + d < l.n ? rank + d : rank); }
    template <typename T> T shfl(T v, int src) const { return l.exchange(v, rank, (unsigned)src % l.n); }
};
}
namespace cg = cooperative_groups;
"""

# main(): reads the group kind, N, the op and N values; runs N lanes; prints each lane's result.
MAIN = r"""
template <typename G, typename T> void run(unsigned n, const char *op, std::vector<T> in, const char *fmt) {
    std::barrier<> sync(n);
    std::vector<double> slot(n);
    std::vector<T> out(n);
    std::vector<std::thread> lanes;
    for (unsigned r = 0; r < n; ++r)
        lanes.emplace_back([&, r] {
            G g{cg::lanes{n, &sync, &slot}, r};
            T v = in[r];
            if (!std::strcmp(op, "plus")) out[r] = cg::reduce(g, v, cg::plus<T>());
            else if (!std::strcmp(op, "less")) out[r] = cg::reduce(g, v, cg::less<T>());
            else if (!std::strcmp(op, "greater")) out[r] = cg::reduce(g, v, cg::greater<T>());
            else if constexpr (sizeof(T) == 4 && T(1) / 2 == 0) {
                if (!std::strcmp(op, "bit_and")) out[r] = cg::reduce(g, v, cg::bit_and<T>());
                else if (!std::strcmp(op, "bit_or")) out[r] = cg::reduce(g, v, cg::bit_or<T>());
                else out[r] = cg::reduce(g, v, cg::bit_xor<T>());
            }
        });
    for (auto &t : lanes) t.join();
    for (T x : out) std::printf(fmt, x);
    std::printf("\n");
}
struct SumMax { float sum; float max; };   // a struct, as llm.c's softmax reduces
SumMax sum_max(SumMax a, SumMax b) { return {a.sum + b.sum, a.max < b.max ? b.max : a.max}; }
template <unsigned N> void pairs() {
    std::vector<SumMax> in(N); for (auto &x : in) { std::scanf("%f", &x.sum); x.max = x.sum; }
    std::barrier<> sync(N);
    std::vector<double> slot(N);
    std::vector<SumMax> out(N);
    std::vector<std::thread> lanes;
    for (unsigned r = 0; r < N; ++r)
        lanes.emplace_back([&, r] { out[r] = cg::reduce(cg::thread_block_tile<N>{cg::lanes{N, &sync, &slot}, r}, in[r], sum_max); });
    for (auto &t : lanes) t.join();
    for (SumMax x : out) std::printf("%g/%g ", x.sum, x.max);
    std::printf("\n");
}
template <unsigned N> void tile(const char *type, const char *op) {
    if (!std::strcmp(type, "float")) {
        std::vector<float> in(N); for (auto &x : in) std::scanf("%f", &x);
        run<cg::thread_block_tile<N>>(N, op, in, "%g ");
    } else {
        std::vector<unsigned> in(N); for (auto &x : in) std::scanf("%u", &x);
        run<cg::thread_block_tile<N>>(N, op, in, "%u ");
    }
}
int main() {
    char kind[16], type[16], op[16]; unsigned n;
    while (std::scanf("%15s %u %15s %15s", kind, &n, type, op) == 4) {
        if (!std::strcmp(kind, "coalesced")) {
            std::vector<int> in(n); for (auto &x : in) std::scanf("%d", &x);
            run<cg::coalesced_group>(n, op, in, "%d ");
        } else if (!std::strcmp(kind, "pair")) pairs<32>();
        else if (n == 4) tile<4>(type, op);
        else if (n == 16) tile<16>(type, op);
        else if (n == 32) tile<32>(type, op);
        else tile<64>(type, op);
    }
}
"""

REFERENCE = {"plus": operator.add, "less": min, "greater": max,
             "bit_and": operator.and_, "bit_or": operator.or_, "bit_xor": operator.xor}


def _cases() -> list[tuple[str, int, str, str, list]]:
    """(group, N, type, op, values): every op at every tile size HIP has (64 on a 64-lane wavefront)."""
    cases = []
    for n in (4, 16, 32, 64):
        words = [(0x9E3779B9 * (i + 1)) & 0xFFFFFFFF for i in range(n)]
        for op in ("bit_and", "bit_or", "bit_xor"):
            cases.append(("tile", n, "unsigned", op, [w | 0x80000001 if op == "bit_and" else w for w in words]))
        cases.append(("tile", n, "unsigned", "plus", [w >> 8 for w in words]))
        halves = [((i * 37) % 23 - 11) / 2 for i in range(n)]
        for op in ("plus", "less", "greater"):
            cases.append(("tile", n, "float", op, halves))
    cases.append(("pair", 32, "float", "sum_max", [((i * 29) % 31 - 15) / 4 for i in range(32)]))
    for n in (1, 5, 13, 32, 64):   # a coalesced group has any size
        for op in ("plus", "less", "greater", "bit_xor"):
            cases.append(("coalesced", n, "int", op, [(i * 53) % 41 - 20 for i in range(n)]))
    return cases


def test_reduce_gives_every_member_the_reduction(tmp_path):
    cxx = require_tool("g++", "g++")
    table = tomllib.loads((REPO / "mappings" / "polyfills.toml").read_text(encoding="utf-8"))
    body = next(p["body"] for p in table["polyfill"] if p["name"] == "cooperative_groups::reduce")
    source = tmp_path / "reduce.cpp"
    source.write_text(FAKE + body + MAIN, encoding="utf-8")
    binary = tmp_path / "reduce"
    subprocess.run([cxx, "-std=c++20", "-O1", "-pthread", "-o", str(binary), str(source)], check=True)
    cases = _cases()
    text = "".join(f"{kind} {n} {type_} {op} {' '.join(str(v) for v in values)}\n"
                   for kind, n, type_, op, values in cases)
    run = subprocess.run([str(binary)], input=text, capture_output=True, text=True, check=True, timeout=120)
    lines = run.stdout.splitlines()
    assert len(lines) == len(cases)
    wrong = []
    for (kind, n, type_, op, values), line in zip(cases, lines):
        if kind == "pair":   # every lane: the sum and the max, as "sum/max"
            want, got = f"{sum(values):g}/{max(values):g}", line.split()
            if got != [want] * n:
                wrong.append((kind, n, op, want, got))
            continue
        want = functools.reduce(REFERENCE[op], values)
        if type_ == "unsigned":
            want &= 0xFFFFFFFF
        got = [float(x) if type_ == "float" else int(x) for x in line.split()]
        if got != [want] * n:
            wrong.append((kind, n, op, want, got))
    assert wrong == []
