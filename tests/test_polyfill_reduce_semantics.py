"""cooperative_groups::reduce, inclusive_scan and exclusive_scan (mappings/polyfills.toml) compute
what CUDA's do, on the host.

No GPU is needed: the bodies are compiled with g++ against a small fake of HIP's groups whose lanes
are std::threads in lockstep (std::barrier: each shuffle publishes the lane's value, waits, reads
the partner's, waits), `__device__` and friends defined away. CUDA's reduce gives EVERY member the
reduction of all members' values; inclusive_scan gives rank r op over ranks 0..r, exclusive_scan
rank r - 1's inclusive result and rank 0 a value-initialized T (CUDA's header returns `{}` there).
The reference below is Python's, on inputs chosen so that float sums are exact (small integers and
halves), so any lane holding a wrong partial result fails.
"""

from __future__ import annotations

import functools
import itertools
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
    template <typename T> T shfl_up(T v, unsigned d) const { return l.exchange(v, rank, rank >= d ? rank - d : rank); }
};
struct coalesced_group {
    lanes l; unsigned rank;
    unsigned size() const { return l.n; }
    unsigned thread_rank() const { return rank; }
    template <typename T> T shfl_down(T v, unsigned d) const { return l.exchange(v, rank, rank + d < l.n ? rank + d : rank); }
    template <typename T> T shfl(T v, int src) const { return l.exchange(v, rank, (unsigned)src % l.n); }
    template <typename T> T shfl_up(T v, unsigned d) const { return l.exchange(v, rank, rank >= d ? rank - d : rank); }
};
}
namespace cg = cooperative_groups;
"""

# main(): reads the group kind, N, the type, the collective, the op and N values; runs N lanes;
# prints each lane's result. The op "default" calls the scans without one (CUDA's default: plus).
MAIN = r"""
template <typename G, typename T, typename Op> T collective(const char *what, const G &g, T v, Op op) {
    if (!std::strcmp(what, "reduce")) return cg::reduce(g, v, op);
    if (!std::strcmp(what, "inclusive")) return cg::inclusive_scan(g, v, op);
    return cg::exclusive_scan(g, v, op);
}
template <typename G, typename T> T apply(const char *what, const char *op, const G &g, T v) {
    if (!std::strcmp(op, "default"))
        return !std::strcmp(what, "inclusive") ? cg::inclusive_scan(g, v) : cg::exclusive_scan(g, v);
    if (!std::strcmp(op, "plus")) return collective(what, g, v, cg::plus<T>());
    if (!std::strcmp(op, "less")) return collective(what, g, v, cg::less<T>());
    if (!std::strcmp(op, "greater")) return collective(what, g, v, cg::greater<T>());
    if constexpr (sizeof(T) == 4 && T(1) / 2 == 0) {
        if (!std::strcmp(op, "bit_and")) return collective(what, g, v, cg::bit_and<T>());
        if (!std::strcmp(op, "bit_or")) return collective(what, g, v, cg::bit_or<T>());
        return collective(what, g, v, cg::bit_xor<T>());
    }
    return v;
}
template <typename G, typename T> void run(unsigned n, const char *what, const char *op, std::vector<T> in, const char *fmt) {
    std::barrier<> sync(n);
    std::vector<double> slot(n);
    std::vector<T> out(n);
    std::vector<std::thread> lanes;
    for (unsigned r = 0; r < n; ++r)
        lanes.emplace_back([&, r] { out[r] = apply(what, op, G{cg::lanes{n, &sync, &slot}, r}, in[r]); });
    for (auto &t : lanes) t.join();
    for (T x : out) std::printf(fmt, x);
    std::printf("\n");
}
struct SumMax { float sum; float max; };   // a struct, as llm.c's softmax reduces
SumMax sum_max(SumMax a, SumMax b) { return {a.sum + b.sum, a.max < b.max ? b.max : a.max}; }
template <unsigned N> void pairs(const char *what) {
    std::vector<SumMax> in(N); for (auto &x : in) { std::scanf("%f", &x.sum); x.max = x.sum; }
    std::barrier<> sync(N);
    std::vector<double> slot(N);
    std::vector<SumMax> out(N);
    std::vector<std::thread> lanes;
    for (unsigned r = 0; r < N; ++r)
        lanes.emplace_back([&, r] { out[r] = collective(what, cg::thread_block_tile<N>{cg::lanes{N, &sync, &slot}, r}, in[r], sum_max); });
    for (auto &t : lanes) t.join();
    for (SumMax x : out) std::printf("%g/%g ", x.sum, x.max);
    std::printf("\n");
}
template <unsigned N> void tile(const char *type, const char *what, const char *op) {
    if (!std::strcmp(type, "float")) {
        std::vector<float> in(N); for (auto &x : in) std::scanf("%f", &x);
        run<cg::thread_block_tile<N>>(N, what, op, in, "%g ");
    } else {
        std::vector<unsigned> in(N); for (auto &x : in) std::scanf("%u", &x);
        run<cg::thread_block_tile<N>>(N, what, op, in, "%u ");
    }
}
int main() {
    char kind[16], type[16], what[16], op[16]; unsigned n;
    while (std::scanf("%15s %u %15s %15s %15s", kind, &n, type, what, op) == 5) {
        if (!std::strcmp(kind, "coalesced")) {
            std::vector<int> in(n); for (auto &x : in) std::scanf("%d", &x);
            run<cg::coalesced_group>(n, what, op, in, "%d ");
        } else if (!std::strcmp(kind, "pair")) pairs<32>(what);
        else if (n == 4) tile<4>(type, what, op);
        else if (n == 16) tile<16>(type, what, op);
        else if (n == 32) tile<32>(type, what, op);
        else tile<64>(type, what, op);
    }
}
"""

REFERENCE = {"plus": operator.add, "less": min, "greater": max,
             "bit_and": operator.and_, "bit_or": operator.or_, "bit_xor": operator.xor}


def _cases(what: str) -> list[tuple[str, int, str, str, str, list]]:
    """(group, N, type, collective, op, values): every op at every tile size HIP has (64 on a
    64-lane wavefront) and at coalesced sizes (any); the scans also with CUDA's default op."""
    cases = []
    ops = ("plus", "less", "greater", "bit_and", "bit_or", "bit_xor") if what != "reduce" else \
        ("plus", "less", "greater", "bit_xor")
    for n in (4, 16, 32, 64):
        words = [(0x9E3779B9 * (i + 1)) & 0xFFFFFFFF for i in range(n)]
        for op in ("bit_and", "bit_or", "bit_xor"):
            cases.append(("tile", n, "unsigned", what, op, [w | 0x80000001 if op == "bit_and" else w for w in words]))
        cases.append(("tile", n, "unsigned", what, "plus", [w >> 8 for w in words]))
        halves = [((i * 37) % 23 - 11) / 2 for i in range(n)]
        for op in ("plus", "less", "greater") + (("default",) if what != "reduce" else ()):
            cases.append(("tile", n, "float", what, op, halves))
    cases.append(("pair", 32, "float", what, "sum_max", [((i * 29) % 31 - 15) / 4 for i in range(32)]))
    for n in (1, 5, 13, 32, 64):   # a coalesced group has any size
        for op in ops + (("default",) if what != "reduce" else ()):
            cases.append(("coalesced", n, "int", what, op, [(i * 53) % 41 - 20 for i in range(n)]))
    return cases


def _want(what: str, op: str, values: list) -> list:
    """Python's result for every lane: the reduction everywhere, or the inclusive/exclusive prefixes
    (rank 0 of an exclusive scan: the type's zero, T{})."""
    f = REFERENCE["plus" if op == "default" else op]
    if what == "reduce":
        return [functools.reduce(f, values)] * len(values)
    inclusive = list(itertools.accumulate(values, f))
    return inclusive if what == "inclusive" else [type(values[0])()] + inclusive[:-1]


def _pair_want(what: str, values: list) -> list[str]:
    """The struct (sum, max) per lane, as "sum/max"; an exclusive scan's rank 0 gets {0, 0}."""
    prefixes = [(sum(values[:i + 1]), max(values[:i + 1])) for i in range(len(values))]
    if what == "reduce":
        prefixes = [prefixes[-1]] * len(values)
    elif what == "exclusive":
        prefixes = [(0, 0)] + prefixes[:-1]
    return [f"{s:g}/{m:g}" for s, m in prefixes]


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    """The shared function objects, reduce and the scans, with the fake groups, built once."""
    cxx = require_tool("g++", "g++")
    table = tomllib.loads((REPO / "mappings" / "polyfills.toml").read_text(encoding="utf-8"))
    bodies = {p["name"]: p["body"] for p in table["polyfill"]}
    names = ("cooperative_groups::plus", "cooperative_groups::reduce", "cooperative_groups::inclusive_scan")
    work = tmp_path_factory.mktemp("collectives")
    source = work / "collectives.cpp"
    source.write_text(FAKE + "".join(bodies[n] for n in names) + MAIN, encoding="utf-8")
    subprocess.run([cxx, "-std=c++20", "-O1", "-pthread", "-o", str(work / "collectives"), str(source)], check=True)
    return work / "collectives"


@pytest.mark.parametrize("what", ["reduce", "inclusive", "exclusive"])
@pytest.mark.slow
def test_every_member_gets_cudas_result(binary, what):
    cases = _cases(what)
    text = "".join(f"{kind} {n} {type_} {what} {op} {' '.join(str(v) for v in values)}\n"
                   for kind, n, type_, what, op, values in cases)
    run = subprocess.run([str(binary)], input=text, capture_output=True, text=True, check=True, timeout=120)
    lines = run.stdout.splitlines()
    assert len(lines) == len(cases)
    wrong = []
    for (kind, n, type_, what, op, values), line in zip(cases, lines):
        if kind == "pair":
            want, got = _pair_want(what, values), line.split()
        else:
            want = _want(what, op, [int(v) for v in values] if type_ != "float" else values)
            if type_ == "unsigned":
                want = [w & 0xFFFFFFFF for w in want]
            got = [float(x) if type_ == "float" else int(x) for x in line.split()]
        if got != want:
            wrong.append((kind, n, type_, op, want, got))
    assert wrong == []
