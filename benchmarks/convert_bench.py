"""Benchmark: end-to-end `portkit convert` throughput on a large tree of realistic CUDA.

    python benchmarks/convert_bench.py [--lines 200000] [--extra DIR ...] [--keep DIR]

The corpus is the fixture inputs plus generated translation units (seeded, so every run
converts the same bytes) until it holds at least --lines lines. --extra adds a real tree (for
example a local checkout of NVIDIA's cuda-samples; never committed). Each configuration runs in
a fresh process, so the figures include interpreter start-up, table loading, parsing, the scan,
and writing the mirrored tree: what a user waits for. Peak memory is the largest resident set
of any process of that run.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

KERNEL = """
template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_{n}(const T* __restrict__ in, T* out, int count) {{
  __shared__ T partial[BLOCK];
  int tid = threadIdx.x;
  int i = blockIdx.x * BLOCK * 2 + tid;
  T sum = 0;
  while (i < count) {{
    sum += in[i];
    if (i + BLOCK < count) sum += in[i + BLOCK];
    i += gridDim.x * BLOCK * 2;
  }}
  for (int offset = 16; offset > 0; offset >>= 1)
    sum += __shfl_down_sync(0xffffffff, sum, offset);
  if ((tid & 31) == 0) partial[tid / 32] = sum;
  __syncthreads();
  if (tid < 32) {{
    sum = tid < BLOCK / 32 ? partial[tid] : 0;
    for (int offset = 16; offset > 0; offset >>= 1)
      sum += __shfl_down_sync(0xffffffff, sum, offset);
    if (tid == 0) atomicAdd(out, sum);
  }}
}}

__global__ void saxpy_{n}(int n, float a, const float* x, float* y) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaf(a, x[i], y[i]) + __expf(-fabsf(x[i])) * rsqrtf(1.0f + x[i] * x[i]);
}}
"""

HOST = """
// Host driver {n}: allocate, copy, launch, time and check. cudaMalloc in a comment stays.
static float run_{n}(int count, cudaStream_t stream) {{
  float *d_in = nullptr, *d_out = nullptr;
  std::vector<float> host(count, 1.0f);
  CUDA_CHECK(cudaMalloc(&d_in, count * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_out, sizeof(float)));
  CUDA_CHECK(cudaMemcpyAsync(d_in, host.data(), count * sizeof(float), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), stream));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start, stream));
  reduce_{n}<float, 256><<<(count + 511) / 512, 256, 0, stream>>>(d_in, d_out, count);
  saxpy_{n}<<<(count + 255) / 256, 256>>>(count, 2.0f, d_in, d_in);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0.0f, result = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaMemcpy(&result, d_out, sizeof(float), cudaMemcpyDeviceToHost));
  printf("run_{n}: %f in %.3f ms (cudaMemcpy ok)\\n", result, ms);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(d_in);
  cudaFree(d_out);
  return result;
}}
"""

HOST_UTIL = """
// Host utilities {n}: option parsing, statistics and a small matrix type, as real projects
// carry around their kernels. No CUDA here.
namespace util_{n} {{
struct Options {{
  int size = 1 << 20;
  int iterations = 10;
  bool verbose = false;
  std::string output;
}};

static Options parse_options(int argc, char** argv) {{
  Options opts;
  for (int i = 1; i < argc; ++i) {{
    std::string arg = argv[i];
    if (arg == "--size" && i + 1 < argc) {{
      opts.size = std::atoi(argv[++i]);
    }} else if (arg == "--iterations" && i + 1 < argc) {{
      opts.iterations = std::atoi(argv[++i]);
    }} else if (arg == "--verbose") {{
      opts.verbose = true;
    }} else if (arg == "--output" && i + 1 < argc) {{
      opts.output = argv[++i];
    }}
  }}
  return opts;
}}

template <typename T>
struct Matrix {{
  int rows = 0, cols = 0;
  std::vector<T> data;
  Matrix(int r, int c) : rows(r), cols(c), data(static_cast<size_t>(r) * c) {{}}
  T& at(int r, int c) {{ return data[static_cast<size_t>(r) * cols + c]; }}
  const T& at(int r, int c) const {{ return data[static_cast<size_t>(r) * cols + c]; }}
}};

static double mean(const std::vector<double>& v) {{
  double sum = 0.0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}}

static double stddev(const std::vector<double>& v) {{
  double m = mean(v), acc = 0.0;
  for (double x : v) acc += (x - m) * (x - m);
  return v.size() < 2 ? 0.0 : std::sqrt(acc / static_cast<double>(v.size() - 1));
}}

static void report(const std::vector<double>& times, const Options& opts) {{
  std::printf("size=%d iterations=%d mean=%.3f ms stddev=%.3f ms\\n", opts.size, opts.iterations,
              mean(times), stddev(times));
  if (!opts.output.empty()) {{
    std::FILE* f = std::fopen(opts.output.c_str(), "w");
    if (f) {{
      for (double t : times) std::fprintf(f, "%.6f\\n", t);
      std::fclose(f);
    }}
  }}
}}
}}  // namespace util_{n}
"""

PRELUDE = """// Generated benchmark translation unit {index}.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \\
  do {{                                                                          \\
    cudaError_t err_ = (call);                                                  \\
    if (err_ != cudaSuccess) {{                                                  \\
      fprintf(stderr, "%s:%d: %s\\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \\
    }}                                                                           \\
  }} while (0)
"""


def generate(dest: Path, lines_wanted: int, seed: int = 7, dense: bool = False) -> int:
    """Fill `dest` with the fixture inputs and generated units; returns the line count.

    Realistic units mix kernels and host drivers with plain C++ host utilities, so that CUDA
    names are about as frequent as in NVIDIA's cuda-samples (a few per hundred lines);
    `dense` leaves the utilities out (a CUDA name every other line: a stress case).
    """
    rng = random.Random(seed)
    total = 0
    fixtures = REPO / "fixtures" / "convert"
    for path in sorted(fixtures.rglob("input*")):
        if path.is_file():
            target = dest / "fixtures" / path.relative_to(fixtures)
            target.parent.mkdir(parents=True, exist_ok=True)
            data = path.read_bytes()
            target.write_bytes(data)
            total += data.count(b"\n")
    index = 0
    while total < lines_wanted:
        parts = [PRELUDE.format(index=index)]
        for n in range(rng.randint(4, 12)):
            name = f"{index}_{n}"
            parts.append(KERNEL.format(n=name))
            parts.append(HOST.format(n=name))
            if not dense:
                parts.extend(HOST_UTIL.format(n=f"{name}_{k}") for k in range(4))
        text = "".join(parts).encode()
        target = dest / "generated" / f"dir{index % 16:02d}" / f"unit{index:04d}.cu"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text)
        total += text.count(b"\n")
        index += 1
    return total


def count_lines(root: Path) -> int:
    from portkit.core.files import SOURCE_SUFFIXES
    return sum(p.read_bytes().count(b"\n") for p in root.rglob("*")
               if p.is_file() and p.suffix.lower() in SOURCE_SUFFIXES)


def run_portkit(argv: list[str]) -> dict:
    """One fresh `portkit ARGV...` process: its wall time, the command's own time, the CPU time
    and peak RSS of it and its workers."""
    script = (
        "import resource, sys, time\n"
        "from portkit.cli.app import main\n"
        "t = time.perf_counter()\n"
        f"code = main({argv!r})\n"
        "el = time.perf_counter() - t\n"
        "me = resource.getrusage(resource.RUSAGE_SELF)\n"
        "kids = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime\n"
        "print(code, el, max(me.ru_maxrss, kids.ru_maxrss), cpu)\n")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    code, inner, rss_kb, cpu = proc.stdout.split()
    assert code == "0", proc.stderr
    return {"wall_s": round(wall, 3), "inner_s": round(float(inner), 3), "cpu_s": round(float(cpu), 3),
            "peak_rss_mb": round(int(rss_kb) / 1024, 1)}


def run_once(tree: Path, jobs: int) -> dict:
    """One fresh `portkit convert` process over `tree`."""
    out = Path(tempfile.mkdtemp(prefix="portkit-bench-out-"))
    try:
        run = run_portkit(["convert", str(tree), "-o", str(out / "o"), "-q", "--jobs", str(jobs)])
    finally:
        shutil.rmtree(out)
    return {"jobs": jobs, "wall_s": run["wall_s"], "convert_s": run["inner_s"], "cpu_s": run["cpu_s"],
            "peak_rss_mb": run["peak_rss_mb"]}


def reference_density(tree: Path) -> float:
    """CUDA names that need converting, per 100 lines: how CUDA-heavy the tree is."""
    from portkit import convert_paths
    result = convert_paths([tree], check=True)
    return round(100.0 * result.total("refs_found") / max(1, result.total("lines")), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--extra", type=Path, action="append", default=[],
                        help="also benchmark this real tree on its own")
    parser.add_argument("--repeat", type=int, default=5, help="runs per configuration (best is kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="portkit-bench-") as tmp:
        trees = []
        for label, dense in (("fixtures+generated", False), ("fixtures+generated-dense", True)):
            corpus = Path(tmp) / label
            generate(corpus, args.lines, dense=dense)
            trees.append((label, corpus))
        trees.extend((str(extra), extra) for extra in args.extra)
        for label, tree in trees:
            lines, density = count_lines(tree), reference_density(tree)
            for jobs in (1, 2):
                best = min((run_once(tree, jobs) for _ in range(args.repeat)), key=lambda r: r["wall_s"])
                best.update(tree=label, lines=lines, refs_per_100_lines=density,
                            lines_per_s=round(lines / best["wall_s"]))
                print(json.dumps(best), flush=True)


if __name__ == "__main__":
    main()
