"""verify's stand-in for torch's build-time hipify (commands/verify/torch_hipify.py): torch 2.5.1's
map, keys and values (mappings/torch_hipify.toml), applied with torch's own rules to the files torch
hipifies, in the copy verify compiles for a tree whose setup.py builds a CUDAExtension.

The compile of the result against the packs is tests/test_torch_pack.py's extension test.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import REPO
from portkit.commands.results import VerifyOptions
from portkit.commands.verify import build_hipify
from portkit.commands.verify.torch_hipify import hipify
from portkit.core.errors import MappingError
from portkit.core.tables import torch_hipify as table

CASE = REPO / "fixtures" / "verify_real" / "torch_extension" / "input"
FAISS = REPO / "fixtures" / "verify_real" / "build_time_hipify" / "input"


def test_the_table_holds_torch_s_values_not_only_its_words():
    loaded = table.load()
    assert loaded.version == "2.5.1" and len(loaded.names) == 2725
    assert (loaded.names["getCurrentCUDAStream"], loaded.names["cudaStream_t"], loaded.names["CUDA_VERSION"],
            loaded.names["c10/cuda/CUDAGuard.h"]) == ("getCurrentHIPStreamMasqueradingAsCUDA", "hipStream_t",
                                                     "TORCH_HIP_VERSION", "ATen/hip/impl/HIPGuardImplMasqueradingAsCUDA.h")
    assert loaded.math["std::max"] == "::max" and len(loaded.math) == 11


def test_a_kernel_source_is_written_as_torch_s_hipify_writes_it():
    """Words of the map between non-word characters (the longest first: cuda::getCurrentCUDAStream
    before getCurrentCUDAStream; cudaStreamX is no word of it), torch's CUDA include folders by
    get_hip_file_path, std:: math in a .cu, and the runtime header first for device code."""
    source = (b'#include <ATen/cuda/CUDAContext.h>\n#include <ATen/cuda/detail/TensorInfo.cuh>\n#include "my_cuda.h"\n'
              b"__global__ void k(float* x) { x[0] = std::max(x[0], 0.f); }\n"
              b"void run(float* x) {\n  cudaStream_t s = at::cuda::getCurrentCUDAStream();\n"
              b"  k<<<1, 1, 0, s>>>(x);  // cudaStreamX stays\n  C10_CUDA_KERNEL_LAUNCH_CHECK();\n}\n")
    assert hipify(source, "csrc/k.cu") == (
        b'#include "hip/hip_runtime.h"\n'
        b'#include <ATen/hip/HIPContext.h>\n#include <ATen/hip/detail/TensorInfo.cuh>\n#include "my_cuda.h"\n'
        b"__global__ void k(float* x) { x[0] = ::max(x[0], 0.f); }\n"
        b"void run(float* x) {\n  hipStream_t s = at::hip::getCurrentHIPStreamMasqueradingAsCUDA();\n"
        b"  k<<<1, 1, 0, s>>>(x);  // cudaStreamX stays\n  C10_HIP_KERNEL_LAUNCH_CHECK();\n}\n")
    # std:: math only in .cu/.cuh, and no runtime header without device code (a .cpp's host code)
    assert hipify(b"int v = std::max(a, b); cudaError_t e;\n", "csrc/k.cpp") == b"int v = std::max(a, b); hipError_t e;\n"


def test_a_broken_table_is_one_line(monkeypatch, tmp_path: Path):
    (tmp_path / "torch_hipify.toml").write_text('torch = "2.5.1"\nnames = ["cudaMalloc"]\n')
    monkeypatch.setattr(table, "tables_dir", lambda: tmp_path)
    table.load.cache_clear()
    try:
        with pytest.raises(MappingError, match=r"torch_hipify\.toml: expected `torch` and the tables `map` and `math`"):
            table.load()
    finally:
        table.load.cache_clear()


def test_torch_s_step_has_torch_s_map_standing_in_and_faiss_keeps_portkit_s():
    where = build_hipify.step(CASE, VerifyOptions())
    assert where == "setup.py:10: CUDAExtension( (torch hipifies a CUDAExtension's sources when it builds on ROCm)"
    assert build_hipify.standin(where) == "torch 2.5.1's hipify map (mappings/torch_hipify.toml)"
    assert build_hipify.standin(build_hipify.step(FAISS, VerifyOptions())) == "portkit's conversion"
    copy = build_hipify.translated(CASE, VerifyOptions(cache=False), where)
    try:
        kernel = (copy / "csrc/cuda/scatter_cuda.cu").read_bytes().splitlines()
        assert kernel[:8] == [b'#include "hip/hip_runtime.h"', b'#include "scatter_cuda.h"', b"",
                              b"#include <ATen/hip/HIPContext.h>", b"#include <ATen/hip/detail/IndexUtils.cuh>",
                              b"#include <ATen/hip/detail/TensorInfo.cuh>", b"", b'#include "reducer.cuh"']
        assert kernel[66] == b"  c10::hip::MaybeSetDevice(src.get_device());"
        # the headers it includes are torch's too; a file torch does not hipify is copied as it is
        assert b"TORCH_HIP_VERSION < 10000" in (copy / "csrc/cuda/atomics.cuh").read_bytes()
        assert (copy / "setup.py").read_bytes() == (CASE / "setup.py").read_bytes()
    finally:
        shutil.rmtree(copy, ignore_errors=True)
