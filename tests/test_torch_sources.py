"""A PyTorch extension's sources stay CUDA after convert: torch hipifies them at build time, so
convert writes there only the edits torch's hipify cannot make (commands/torch_sources.py).

fixtures/convert_torch/causal_conv1d is reduced from causal-conv1d before its ROCm port: the
expected tree is the golden output of a plain `portkit convert -o`, byte for byte; the sources
still compile with nvcc; `--extension-sources hip` converts them as before.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import NVCC, REPO, require_tool
from portkit.commands.convert import configured, convert_paths
from portkit.commands.torch_sources import torch_spans
from portkit.core.files import discover
from portkit.core.tables import torch_hipify
from portkit.project import torch_extension
from portkit.project.config import Config

CASE = REPO / "fixtures" / "convert_torch" / "causal_conv1d"
FILES = ("csrc/causal_conv1d_common.h", "csrc/causal_conv1d_fwd.cu", "setup.py")


def _convert(tmp_path: Path, **fields):
    out = tmp_path / "out"
    return out, convert_paths([CASE / "input"], configured(Config(), output=out, jobs=1, cache=False, **fields))


def test_the_extension_s_sources_and_the_headers_they_include_are_torch_s():
    _, entries, _ = discover([CASE / "input"], None, [])
    assert torch_extension.learn(entries) == {
        "csrc/causal_conv1d_common.h": "setup.py:12: included from csrc/causal_conv1d_fwd.cu",
        "csrc/causal_conv1d_fwd.cu": "setup.py:12: CUDAExtension"}


def test_convert_writes_only_what_torch_s_hipify_cannot_make(tmp_path):
    out, result = _convert(tmp_path)
    for rel in FILES:
        assert (out / rel).read_bytes() == (CASE / "expected" / rel).read_bytes(), rel
    accounts = {o.entry.rel: o.torch for o in result.outcomes if o.torch is not None}
    # (written, renamed by torch, references left for a person, the lines left for a person):
    # the header's __shfl_xor_sync has no HIP form nvcc compiles; torch renames its includes
    common = accounts["csrc/causal_conv1d_common.h"]
    assert (common.written, common.torch, common.person, [(f.code, f.line) for f in common.left]) == (
        0, 2, 2, [("PK506", 12), ("PK506", 21)])
    # the kernel's const void* cast is written (one change); torch's map lacks cub::BLOCK_LOAD_WARP_TRANSPOSE
    # (line 12): convert writes the alias that serves it after the CUB includes, under #ifdef USE_ROCM (the
    # second change), as the human ports of causal-conv1d and mamba did, so no line is left for a person
    fwd = accounts["csrc/causal_conv1d_fwd.cu"]
    assert (fwd.written, fwd.torch, fwd.person, [(f.code, f.line) for f in fwd.left]) == (2, 9, 0, [])


def test_extension_sources_hip_converts_them_as_any_source(tmp_path):
    out, result = _convert(tmp_path, extension_sources="hip")
    assert result.torch_sources == frozenset()
    text = (out / "csrc/causal_conv1d_fwd.cu").read_text()
    assert "#include <hipcub/block/block_load.hpp>" in text and "hipStream_t stream" in text
    assert "__shfl_xor(x, OFFSET)" in (out / "csrc/causal_conv1d_common.h").read_text()


def test_the_words_torch_renames_are_its_map_s_whole_words():
    data = b" cudaStream_t s; my_cudaMalloc(); cub::BlockLoad<x> cub::Foo;\n"
    assert [data[a:b] for a, b in torch_spans(data)] == [b"cudaStream_t", b"cub::BlockLoad"]


@pytest.mark.compile
def test_the_golden_sources_compile_with_nvcc(tmp_path):
    require_tool("nvcc", "nvcc (the fixture is CUDA)")
    done = subprocess.run(["nvcc", "-c", str(CASE / "expected" / "csrc/causal_conv1d_fwd.cu"), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# An extension's own atomicMax(float*, float), a compare-and-swap loop CUDA needs and HIP's headers
# define too (PK012): convert's guard tests an AMD selector nvcc leaves undefined, so it is written
# for both vendors; before, its two lines were PK506 lines "nvcc does not compile" for a person.
OWN_ATOMIC = b"""#include <cuda_runtime.h>

__device__ float atomicMax(float* address, float val) {
    int* address_as_int = (int*)address;
    int old = *address_as_int, assumed;
    do {
        assumed = old;
        old = atomicCAS(address_as_int, assumed, __float_as_int(fmaxf(val, __int_as_float(assumed))));
    } while (assumed != old);
    return __int_as_float(old);
}

__global__ void peak(float* top, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicMax(top, x[i]);
}

void launch(float* top, const float* x, int n, cudaStream_t stream) {
    peak<<<(n + 255) / 256, 256, 0, stream>>>(top, x, n);
}
"""
OWN_ATOMIC_SETUP = b"""from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(name="peak", ext_modules=[CUDAExtension("peak_cuda", ["csrc/peak.cu"])], cmdclass={"build_ext": BuildExtension})
"""


# The device pass tested in the extension's header and in its source: hip-clang defines no
# __CUDA_ARCH__, so the AMD build would take the host branch in device code. convert writes the
# test of both macros there (rewrite/cudacc.keeps_both), which nvcc reads as before: before, the
# source got the plain rename and both lines were PK506 lines for a person.
ARCH_H = b"#pragma once\n#ifdef __CUDA_ARCH__\n#define ON_DEVICE 1\n#else\n#define ON_DEVICE 0\n#endif\n"
ARCH_CU = b"""#include <cuda_runtime.h>
#include "arch.h"

__device__ __host__ int where() {
#if defined(__CUDA_ARCH__)
    return 1;
#else
    return ON_DEVICE;
#endif
}

__global__ void mark(int* out) { out[threadIdx.x] = where(); }

void launch(int* out, cudaStream_t stream) { mark<<<1, 64, 0, stream>>>(out); }
"""


def _own_atomic(tmp_path: Path, files: dict[str, bytes] | None = None):
    tree, out = tmp_path / "tree", tmp_path / "out"
    (tree / "csrc").mkdir(parents=True)
    for rel, data in (files or {"csrc/peak.cu": OWN_ATOMIC}).items():
        (tree / rel).write_bytes(data)
    (tree / "setup.py").write_bytes(OWN_ATOMIC_SETUP)
    return out, convert_paths([tree], configured(Config(), output=out, jobs=1, cache=False))


def test_a_device_pass_test_in_an_extension_is_written_for_both_vendors(tmp_path):
    out, result = _own_atomic(tmp_path, {"csrc/peak.cu": ARCH_CU, "csrc/arch.h": ARCH_H})
    assert (out / "csrc" / "arch.h").read_bytes() == ARCH_H.replace(
        b"#ifdef __CUDA_ARCH__", b"#if defined(__HIP_DEVICE_COMPILE__) || defined(__CUDA_ARCH__)")
    assert (out / "csrc" / "peak.cu").read_bytes() == ARCH_CU.replace(
        b"#if defined(__CUDA_ARCH__)", b"#if (defined(__HIP_DEVICE_COMPILE__) || defined(__CUDA_ARCH__))")
    accounts = {o.entry.rel: (o.torch.written, o.torch.person, o.torch.left) for o in result.outcomes if o.torch}
    assert accounts == {"csrc/arch.h": (1, 0, ()), "csrc/peak.cu": (1, 0, ())}


def test_a_guard_convert_writes_in_an_extension_source_is_written_for_both_vendors(tmp_path):
    out, result = _own_atomic(tmp_path)
    lines = OWN_ATOMIC.splitlines(keepends=True)
    assert (out / "csrc" / "peak.cu").read_bytes() == b"".join(
        [*lines[:2], b"#if !defined(__HIP_PLATFORM_AMD__)\n", *lines[2:11], b"#endif\n", *lines[11:]])
    (account,) = [o.torch for o in result.outcomes if o.torch is not None]
    assert (account.written, account.torch, account.person, account.left) == (2, 2, 0, ())
    assert [(f.code, f.line, f.severity) for f in result.findings] == [("PK012", 3, "info")]


@pytest.mark.compile
def test_the_guarded_extension_source_builds_for_nvidia_and_as_torch_hipifies_it_for_amd(tmp_path):
    """nvcc compiles the written source (the NVIDIA build), and hip-clang the same source after the
    renames of torch's own map (what PyTorch for ROCm compiles); the original's HIP form fails there
    with `redefinition of 'atomicMax'`."""
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    hipcc = require_tool("hipcc", "hipcc (ROCm)")
    out, _ = _own_atomic(tmp_path)
    arch_out, _ = _own_atomic(tmp_path / "arch", {"csrc/peak.cu": ARCH_CU, "csrc/arch.h": ARCH_H})
    done = subprocess.run([nvcc, "-c", str(arch_out / "csrc" / "peak.cu"), "-o", str(tmp_path / "a.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    written = (out / "csrc" / "peak.cu").read_bytes()
    done = subprocess.run([nvcc, "-c", str(out / "csrc" / "peak.cu"), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    torch = torch_hipify.load()
    hipified = tmp_path / "peak.hip"
    for source, expected in ((written, 0), (OWN_ATOMIC, 1)):
        hipified.write_bytes(torch.words.sub(lambda m: torch.names[m.group().decode()].encode(), source))
        done = subprocess.run([hipcc, "-x", "hip", "--offload-arch=gfx90a", "-c", str(hipified), "-o", str(tmp_path / "h.o")],
                              capture_output=True, text=True, env={**os.environ, "HIP_PLATFORM": "amd"})
        assert done.returncode == expected, done.stderr
    assert "redefinition of 'atomicMax'" in done.stderr


SUMMARY = [
    "a PyTorch extension (2 files torch hipifies at build time, torch 2.5.1's map): their sources stay CUDA; "
    "convert wrote 2 changes there that torch's hipify cannot make and nvcc compiles too, left 11 CUDA references "
    "to torch's hipify at build time and 2 sites to a person (\"Left for a person\" below; --extension-sources hip "
    "converts them all)",
    "portkit convert: 3 files scanned (94 lines), 2 changed, 1 partially parsed, 0 skipped",
    "CUDA references: 14 found, 1 converted, 11 left to torch's hipify at build time, 2 left for a person, "
    "0 left unconverted (85.7% converted or left to torch's hipify)",
    "2 sites need a person (high severity or worse): \"Left for a person\" below",
    "",
    "Converted with a caveat (2):",   # no PK004 for the __shfl_xor_sync edits convert did not write
    "  setup.py:6:16: PK509 GPU targets sm_80 left to the NVIDIA build: PyTorch for ROCm adds --offload-arch for "
    "each target in PYTORCH_ROCM_ARCH (PYTORCH_ROCM_ARCH=\"gfx90a\")",
    "  setup.py:21:21: PK509 `--expt-relaxed-constexpr` dropped: clang already lets device code call constexpr "
    "host functions",
    "",
    "Partially parsed (1):",
    "  csrc/causal_conv1d_fwd.cu:24:33: PK005 tree-sitter could not parse this region; names in it were converted, "
    "but constructs spanning it (kernel launches, symbol arguments) may be missed",
    "",
    "Left for a person (2):",
]
SHFL = ("`__shfl_xor_sync` left as it is: torch's hipify does not rename it and convert's HIP form does not compile "
        "with nvcc; under `#ifdef USE_ROCM` write `x = op(x, __shfl_xor({}));`, and keep this line under "
        "`#ifndef USE_ROCM` (__shfl_xor_sync -> __shfl_xor: The mask is dropped, which is only correct when the whole "
        "warp takes part; an AMD wavefront has 64 lanes, and ROCm 6.2+ *_sync variants need 64-bit masks.)")
# (csrc/causal_conv1d_fwd.cu's `cub::BLOCK_LOAD_WARP_TRANSPOSE` is served by the alias convert writes)
LEFT = [("csrc/causal_conv1d_common.h", 12, 19, SHFL.format("x, OFFSET")),
        ("csrc/causal_conv1d_common.h", 21, 19, SHFL.format("x, 1"))]


def test_the_summary_counts_what_convert_wrote_what_torch_renames_and_what_a_person_writes(tmp_path, capsys):
    from portkit.cli import main
    assert main(["convert", str(CASE / "input"), "-o", str(tmp_path / "out"), "--no-cache"]) == 0
    assert capsys.readouterr().out.splitlines() == SUMMARY + [
        f"  {path}:{line}:{column}: PK506 {message}" for path, line, column, message in LEFT] + ["", "Wrote 3 files."]


def test_the_json_carries_the_mode_the_three_counts_and_the_lines_left_for_a_person(tmp_path, capsys):
    import json
    from portkit.cli import main
    assert main(["convert", str(CASE / "input"), "-o", str(tmp_path / "out"), "--no-cache", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["references"] == {"found": 14, "converted": 1, "left": 0}
    assert doc["torch_extension"] == {"mode": "cuda", "files": 2, "torch": "2.5.1", "written": 2, "torch_hipify": 11,
                                      "left_for_person": 2, "sites_for_person": 2}
    assert doc["findings"]["by_code"] == {"PK005": 1, "PK509": 2}   # PK004's caveat went with the edit not written
    assert [(f["code"], f["severity"], f["path"], f["line"], f["column"], f["message"]) for f in doc["needs_person"]] == [
        ("PK506", "high", *site) for site in LEFT]


def test_with_extension_sources_hip_the_json_says_so_and_counts_as_any_source(tmp_path, capsys):
    import json
    from portkit.cli import main
    assert main(["convert", str(CASE / "input"), "-o", str(tmp_path / "out"), "--no-cache", "--format", "json",
                 "--extension-sources", "hip"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["references"] == {"found": 14, "converted": 14, "left": 0}
    assert doc["torch_extension"] == {"mode": "hip", "files": 2, "torch": "2.5.1", "written": None,
                                      "torch_hipify": None, "left_for_person": None, "sites_for_person": None}
    assert doc["needs_person"] == [] and doc["findings"]["by_code"] == {"PK004": 2, "PK005": 1, "PK509": 2}


def test_a_second_run_from_the_cache_gives_the_same_account(tmp_path, monkeypatch, capsys):
    """The result cache kept the scan convert had already cut to the edits it writes, and a second
    run cut it again: 0 references left to torch, 0 sites to a person, 14 converted. The scan itself
    now decides (commands/scan/torch_gaps.py), so the kept result is the decided one."""
    from portkit.cli import main
    monkeypatch.delenv("PORTKIT_NO_CACHE", raising=False)
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    runs = []
    for n in (1, 2):
        assert main(["convert", str(CASE / "input"), "-o", str(tmp_path / f"out{n}")]) == 0
        runs.append(capsys.readouterr().out.splitlines())
    assert runs[0] == runs[1] and runs[1][0] == SUMMARY[0] and runs[1][2] == SUMMARY[2]
    for rel in FILES:
        assert (tmp_path / "out2" / rel).read_bytes() == (CASE / "expected" / rel).read_bytes(), rel
