"""PK103 at a guard's fallback branch (rewrite/guard_fallbacks.py): the AMD build takes the branch the
newest nvcc build takes, which holds a name the target cannot take, and the file has its own code
without it in another branch of the same group (pytorch_scatter's atomics.cuh, whose human port sent
ROCm to its compare-and-swap branch by that very `#if`)."""

from __future__ import annotations

import subprocess
from functools import cache

import pytest

from conftest import NVCC, REPO, require_tool
from portkit.api import scan_options
from portkit.commands.scan.walk import scan_source
from portkit.core.source import SourceFile
from portkit.core.tables.mappings import load_tables, tables_dir

INPUT = REPO / "fixtures" / "guard_fallbacks" / "input.cu"
SCATTER = ("`#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 700 || CUDA_VERSION < 10000)`: hip-clang never defines "
           "`__CUDA_ARCH__`, so an AMD build takes the `#else` branch (line 30), where `atomicAdd(__half*)` (line 32, "
           "PK001) does not compile at ROCm 6.2; this branch is the file's own code without it: "
           "`defined(__HIP_PLATFORM_AMD__) || (defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 700 || CUDA_VERSION < 10000))` "
           "sends the AMD build here")
MATCH = ("`#else`: hip-clang never defines `__CUDA_ARCH__`, so an AMD build takes the `#if !defined(__CUDA_ARCH__) || "
         "__CUDA_ARCH__ >= 700` branch (line 37), where `__match_any_sync` (line 38, PK001) does not compile at ROCm "
         "6.2; this branch is the file's own code without it: make the AMD build skip `#if !defined(__CUDA_ARCH__) || "
         "__CUDA_ARCH__ >= 700` (line 37): `!defined(__HIP_PLATFORM_AMD__) && (!defined(__CUDA_ARCH__) || "
         "__CUDA_ARCH__ >= 700)`")


@cache
def _tables():
    return load_tables(tables_dir())


def _guards(data: bytes, polyfills: bool = True) -> list[tuple[int, str, str]]:
    scan = scan_source(SourceFile.from_bytes("input.cu", data), scan_options(rocm="6.2", audit=True, polyfills=polyfills),
                       _tables())
    return [(f.line, f.severity, f.message) for f in scan.findings if f.code == "PK103"]


def test_without_polyfills_the_half_fallback_is_reported_and_the_match_fallback_has_a_gap_too():
    """No portkit_atomicAdd: the `#else` needs atomicAdd(__half*), the `#if` is the file's loop. The
    match fallback calls __syncwarp, which 6.2 lacks without its polyfill: no branch to send AMD to."""
    assert _guards(INPUT.read_bytes(), polyfills=False) == [(26, "medium", SCATTER)]


def test_with_polyfills_the_half_branch_compiles_and_the_match_fallback_is_reported():
    """portkit_atomicAdd serves atomicAdd(__half*) and portkit_syncwarp __syncwarp: the half branch
    compiles as it is, and the match fallback is the AMD build's way past __match_any_sync."""
    assert _guards(INPUT.read_bytes()) == [(39, "medium", MATCH)]


def test_a_branch_the_amd_build_never_takes_or_a_fallback_with_the_same_gap_is_not_reported():
    clean = (b"#include <cuda_runtime.h>\n__device__ unsigned p(unsigned k) {\n"
             b"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700\n  return __match_any_sync(0xffffffffu, k);\n"
             b"#else\n  return k;\n#endif\n}\n")
    assert [m[:1] for m in _guards(clean)] == [(3,)]   # divergent: PK103's own finding, no fallback one
    assert "fallback" not in _guards(clean)[0][2] and "own code without it" not in _guards(clean)[0][2]
    both = (b"#include <cuda_runtime.h>\n__device__ unsigned p(unsigned k) {\n"
            b"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700\n  return __match_any_sync(0xffffffffu, k) + 1;\n"
            b"#else\n  return __match_any_sync(0xffffffffu, k);\n#endif\n}\n")
    assert _guards(both) == []


@pytest.mark.compile
def test_input_compiles_with_nvcc(tmp_path):
    nvcc = require_tool(NVCC, "nvcc")
    run = subprocess.run([nvcc, "-c", str(INPUT), "-o", str(tmp_path / "o.o")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
