"""PK103 at a guard's fallback branch (rewrite/guard_fallbacks.py): the AMD build takes the branch the
newest nvcc build takes, which holds a name the target cannot take, and the file has its own code
without it in another branch of the same group (pytorch_scatter's atomics.cuh, whose human port sent
ROCm to its compare-and-swap branch by that very `#if`)."""

from __future__ import annotations

import os
import subprocess
from functools import cache

import pytest

from conftest import NVCC, REPO, require_tool
from portkit.api import scan_options
from portkit.cli.app import main
from portkit.commands.scan.walk import scan_source
from portkit.core.source import SourceFile
from portkit.core.tables.mappings import load_tables, tables_dir

INPUT = REPO / "fixtures" / "guard_fallbacks" / "input.cu"
EXPECTED = INPUT.parent / "expected_rewrite_guards.hip"   # convert --rocm 6.2 --rewrite-guards
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
    """The PK103 findings of the audit's scan (no --rewrite-guards)."""
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


def _convert(tmp_path, *extra: str):
    src = tmp_path / "src"
    src.mkdir()
    (src / "input.cu").write_bytes(INPUT.read_bytes())
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--rocm", "6.2", *extra]) == 0
    return out


def test_rewrite_guards_sends_the_amd_build_to_the_fallback_and_keeps_nvidia_s_branch(tmp_path):
    """--rewrite-guards: the `#if` before the fallback `#else` gets `!defined(__HIP_PLATFORM_AMD__) && (...)`;
    a re-run writes the same bytes; the finding is info and says what was written."""
    out = _convert(tmp_path, "--rewrite-guards")
    assert (out / "input.cu").read_bytes() == EXPECTED.read_bytes()
    assert (out / "portkit_polyfills.h").read_bytes() == (INPUT.parent / "expected_polyfills.h").read_bytes()
    again = tmp_path / "again"
    assert main(["convert", str(out), "-o", str(again), "-q", "--rocm", "6.2", "--rewrite-guards"]) == 0
    assert (again / "input.cu").read_bytes() == EXPECTED.read_bytes()
    scan = scan_source(SourceFile.from_bytes("input.cu", INPUT.read_bytes()),
                       scan_options(rocm="6.2", polyfills=True, rewrite_guards=True), _tables())
    assert [(f.line, f.severity, f.message) for f in scan.findings if f.code == "PK103"] == [
        (39, "info", MATCH.split(": make the AMD build skip")[0] + ": rewritten for AMD, `#if !defined(__CUDA_ARCH__) "
         "|| __CUDA_ARCH__ >= 700` -> `#if !defined(__HIP_PLATFORM_AMD__) && (!defined(__CUDA_ARCH__) || "
         "__CUDA_ARCH__ >= 700)`")]


def test_rewrite_guards_without_polyfills_takes_the_half_fallback(tmp_path):
    out = _convert(tmp_path, "--rewrite-guards", "--no-polyfills")
    assert "#if defined(__HIP_PLATFORM_AMD__) || (defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 700 || CUDA_VERSION < 10000))\n" \
        in (out / "input.cu").read_text()


@pytest.mark.compile
def test_the_rewritten_output_compiles_with_hipcc(tmp_path):
    """The AMD build takes the match fallback (and portkit_atomicAdd, portkit_syncwarp): it compiles."""
    require_tool("hipcc", "hipcc")
    (tmp_path / "input.hip").write_bytes(EXPECTED.read_bytes())
    (tmp_path / "portkit_polyfills.h").write_bytes((INPUT.parent / "expected_polyfills.h").read_bytes())
    run = subprocess.run(["hipcc", "-x", "hip", "--offload-arch=gfx90a", "-c", str(tmp_path / "input.hip"), "-o",
                          str(tmp_path / "o.o")], capture_output=True, text=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    assert run.returncode == 0, run.stderr[-4000:]


@pytest.mark.compile
def test_the_rewritten_output_compiles_for_nvidia_through_hip(tmp_path):
    """Through HIP's NVIDIA backend the `#if` keeps nvcc's branch (__match_any_sync, CUDA's atomicAdd)."""
    from hip_nvidia import compile_for_nvidia, patched_include_dir
    (tmp_path / "input.hip").write_bytes(EXPECTED.read_bytes())
    (tmp_path / "portkit_polyfills.h").write_bytes((INPUT.parent / "expected_polyfills.h").read_bytes())
    run = compile_for_nvidia(tmp_path / "input.hip", [patched_include_dir(tmp_path / "hip")])
    assert run.returncode == 0, run.stderr[-4000:]
