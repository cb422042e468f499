"""Issue 48, items 3 and 4: inserted lines never split an include guard, and the CUDA compiler's
macros (`__NVCC__`, `__CUDA__`, `__CUDACC__`, `__CUDA_ARCH__`) take the HIP side in every #if test."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from portkit import convert_text
from portkit.cli.app import main

from conftest import REPO, require_tool

TREES = Path(os.environ.get("PORTKIT_REAL_TREES", "/tmp/trees"))
HEADERS = (".h", ".hpp", ".cuh", ".hh", ".hxx", ".inl")
# `#ifndef X` / `#if !defined(X)` / `#if !defined X` on a line of its own (a comment may follow)
_GUARD = re.compile(rb"^[ \t]*#[ \t]*(?:ifndef[ \t]+(\w+)|if[ \t]+!\s*defined\s*(?:\(\s*(\w+)\s*\)|[ \t]+(\w+)))"
                    rb"[ \t]*(?://[^\n]*|/\*[^\n]*?\*/)?[ \t]*\r?$", re.M)
_SKIP = re.compile(rb"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)


def _guards(data: bytes) -> dict[bytes, bool]:
    """Each guard-like test's name -> whether the next code line is its `#define` (comments and
    blank lines between allowed)."""
    out = {}
    for m in _GUARD.finditer(data):
        name = m.group(1) or m.group(2) or m.group(3)
        rest = data[_SKIP.match(data, m.end()).end():]
        out[name] = re.match(rb"#[ \t]*define[ \t]+" + re.escape(name) + rb"\b", rest) is not None
    return out


def split_guards(original: bytes, converted: bytes) -> list[bytes]:
    """The guards whose #define followed the test in the original and no longer does."""
    after = _guards(converted)
    return [name for name, whole in _guards(original).items() if whole and after.get(name) is False]


def conv(src: bytes, filename: str = "h.cuh") -> bytes:
    out = convert_text(src, filename=filename).output
    assert convert_text(out, filename=filename).output == out, "a re-run changed the output"
    return out


DEVICE = b"__device__ float sq(float v) { return v * v; }\n"
RUNTIME = b"#include <hip/hip_runtime.h>\n"


@pytest.mark.parametrize("src, expected", [
    (b"#ifndef H_CUH\n#define H_CUH\n" + DEVICE + b"#endif\n",
     b"#ifndef H_CUH\n#define H_CUH\n" + RUNTIME + b"\n" + DEVICE + b"#endif\n"),
    # comments and blank lines between, a value and a comment on the #define line
    (b"// x\n#ifndef H_CUH // guard\n\n/* c */\n#define H_CUH 1 // y\n" + DEVICE + b"#endif\n",
     b"// x\n#ifndef H_CUH // guard\n\n/* c */\n#define H_CUH 1 // y\n" + RUNTIME + b"\n" + DEVICE + b"#endif\n"),
    # clang takes `#if !defined(X)` for a controlling macro too, with or without parentheses
    (b"#if !defined(H_CUH)\n#define H_CUH\n" + DEVICE + b"#endif // H_CUH\n",
     b"#if !defined(H_CUH)\n#define H_CUH\n" + RUNTIME + b"\n" + DEVICE + b"#endif // H_CUH\n"),
    (b"#if !defined H_CUH\n#define H_CUH\n" + DEVICE + b"#endif",
     b"#if !defined H_CUH\n#define H_CUH\n" + RUNTIME + b"\n" + DEVICE + b"#endif"),
    (b"#ifndef H_CUH\r\n#define H_CUH\r\n" + DEVICE.replace(b"\n", b"\r\n") + b"#endif\r\n",
     b"#ifndef H_CUH\r\n#define H_CUH\r\n#include <hip/hip_runtime.h>\r\n\r\n" + DEVICE.replace(b"\n", b"\r\n")
     + b"#endif\r\n"),
    # #pragma once inside the guard, after its #define: the earlier place wins, inside the guard
    (b"#ifndef H_CUH\n#define H_CUH\n#pragma once\n" + DEVICE + b"#endif\n",
     b"#ifndef H_CUH\n#define H_CUH\n" + RUNTIME + b"\n#pragma once\n" + DEVICE + b"#endif\n"),
])
def test_the_runtime_header_goes_after_the_guards_define(src: bytes, expected: bytes):
    assert conv(src) == expected
    assert split_guards(src, expected) == []


def test_a_guard_whose_define_does_not_come_next_is_placed_as_before():
    """`#if !defined(X)` with code before its #define is no guard clang knows: the header goes
    before the first #include, as it did; `#ifndef X` likewise keeps hipify-clang's place."""
    src = b"#if !defined(H_CUH)\n#include <vector>\n#define H_CUH\n" + DEVICE + b"#endif\n"
    assert conv(src) == b"\n" + RUNTIME + src
    src = b"#ifndef H_CUH\n#include <vector>\n#define H_CUH\n" + DEVICE + b"#endif\n"
    assert conv(src) == b"#ifndef H_CUH\n" + RUNTIME + b"\n#include <vector>\n#define H_CUH\n" + DEVICE + b"#endif\n"


def test_the_polyfill_header_follows_the_runtime_header_after_the_define(tmp_path: Path):
    src = tmp_path / "in" / "h.cuh"
    src.parent.mkdir()
    src.write_bytes(b"#ifndef H_CUH\n#define H_CUH\n__device__ void f() { __syncwarp(); }\n#endif\n")
    assert main(["convert", str(src.parent), "-o", str(tmp_path / "out"), "-q", "--rocm", "5.2"]) == 0
    assert (tmp_path / "out" / "h.cuh").read_bytes() == (
        b"#ifndef H_CUH\n#define H_CUH\n" + RUNTIME + b'#include "portkit_polyfills.h"\n\n'
        b"__device__ void f() { portkit_syncwarp(); }\n#endif\n")


def test_the_guard_fixture_keeps_every_guard_whole():
    case = REPO / "fixtures" / "convert" / "header_guard_inserted_lines"
    for name in ("cuda_utils.cuh", "vec_ops.cuh"):
        before, after = (case / "input" / name).read_bytes(), (case / "expected" / name).read_bytes()
        assert RUNTIME in after and split_guards(before, after) == [], name


def _tree_headers() -> list[Path]:
    if not TREES.is_dir():
        return []
    return sorted(p for p in TREES.rglob("*") if p.suffix.lower() in HEADERS and p.is_file()
                  and ".git" not in p.parts and p.stat().st_size < 1_000_000)


def test_no_header_of_the_real_trees_has_its_guard_split():
    """Every header of the real trees under /tmp/trees (ggml, faiss, llm.c and any other there;
    PORTKIT_REAL_TREES names another folder), converted: no inserted line sits between a guard's
    test and its #define. On the code before issue 48, llm.c's cuda_utils.cuh and cudnn_att.h."""
    headers = _tree_headers()
    if not headers:
        pytest.skip(f"no real trees under {TREES}")
    split = []
    for path in headers:
        data = path.read_bytes()
        if not _GUARD.search(data):
            continue
        out = convert_text(data, filename=path.name).output
        split += [f"{path.relative_to(TREES)}: {name.decode()}" for name in split_guards(data, out)]
    assert split == []


# --- qualifier macros -------------------------------------------------------------------------

HEADER_CASES = [
    (b"#if defined(__CUDA__) || defined(__NVCC__)\n",
     b"#if (defined(__HIP__) || defined(__CUDA__)) || (defined(__HIPCC__) || defined(__NVCC__))\n"),
    (b"#ifdef __NVCC__\n", b"#if defined(__HIPCC__) || defined(__NVCC__)\n"),
    (b"#ifndef __NVCC__\n", b"#if !defined(__HIPCC__) && !defined(__NVCC__)\n"),
    (b"#ifdef __CUDA_ARCH__\n", b"#if defined(__HIP_DEVICE_COMPILE__) || defined(__CUDA_ARCH__)\n"),
    (b"#if !defined __CUDA_ARCH__\n", b"#if !(defined(__HIP_DEVICE_COMPILE__) || defined(__CUDA_ARCH__))\n"),
    (b"#ifdef __CUDACC__\n", b"#if defined(__HIPCC__) || defined(__CUDACC__)\n"),
    # left: an architecture comparison (PK103, --rewrite-guards), a test that names HIP already
    (b"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n", b"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"),
    (b"#if defined(__HIP_PLATFORM_AMD__) || defined(__NVCC__)\n", b"#if defined(__HIP_PLATFORM_AMD__) || defined(__NVCC__)\n"),
    (b"#if defined(__HIPCC__) || defined(__CUDA__)\n", b"#if defined(__HIPCC__) || defined(__CUDA__)\n"),
]
BODY = b"#define HD __host__ __device__\n#else\n#define HD\n#endif\nint x;\n"


@pytest.mark.parametrize("test, expected", HEADER_CASES)
def test_a_headers_compiler_test_keeps_the_nvidia_macro_beside_the_hip_one(test: bytes, expected: bytes):
    assert conv(b"#pragma once\n" + test + BODY) == b"#pragma once\n" + expected + BODY


@pytest.mark.parametrize("test, expected", [
    (b"#if defined(__CUDA__) || defined(__NVCC__)\n", b"#if defined(__HIP__) || defined(__HIPCC__)\n"),
    (b"#ifndef __CUDA_ARCH__\n", b"#ifndef __HIP_DEVICE_COMPILE__\n"),
    (b"#ifdef __CUDACC__\n", b"\n" + RUNTIME + b"#ifdef __HIPCC__\n"),   # a runtime name (driver.toml)
    (b"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700\n", b"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700\n"),
])
def test_a_sources_compiler_test_is_renamed(test: bytes, expected: bytes):
    """A .cu includes the HIP runtime header first, which defines __HIPCC__ and
    __HIP_DEVICE_COMPILE__ on HIP's NVIDIA backend too: the plain rename, as for __CUDACC__."""
    assert conv(test + BODY, filename="k.cu") == expected + BODY


def test_code_and_comments_naming_the_macros_are_left():
    src = b"#pragma once\n// built by __NVCC__ or __CUDA__\nconst char* by = \"__NVCC__\";\n#define NV __NVCC__\n"
    assert conv(src) == src


def test_a_header_with_a_compiler_test_gets_the_runtime_header_on_the_first_run():
    """The #else of `#if defined(__NVCC__)` is host compilers' code, not an AMD path: the first
    run adds the runtime header the re-run would (it once came only with the re-run)."""
    src = b"#pragma once\n#ifdef __NVCC__\n#define HD __host__ __device__\n#else\n#define HD\n#endif\n" + DEVICE
    assert conv(src) == (b"#pragma once\n" + RUNTIME + b"\n#if defined(__HIPCC__) || defined(__NVCC__)\n"
                         b"#define HD __host__ __device__\n#else\n#define HD\n#endif\n" + DEVICE)


def test_rewrite_guards_owns_the_cuda_arch_tests(tmp_path: Path):
    """Under --rewrite-guards, guards.py decides each __CUDA_ARCH__ test (one edit per directive)."""
    src = tmp_path / "k.cuh"
    src.write_bytes(b"#pragma once\n#ifdef __CUDA_ARCH__\n#define FAST 1\n#endif\n#ifdef __NVCC__\n#define N 1\n#endif\n")
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "-q", "--rewrite-guards"]) == 0
    assert (tmp_path / "out" / "k.cuh").read_bytes() == (
        b"#pragma once\n#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)\n#define FAST 1\n#endif\n"
        b"#if defined(__HIPCC__) || defined(__NVCC__)\n#define N 1\n#endif\n")


@pytest.mark.compile
def test_the_kernels_helpers_are_device_functions_after_convert(tmp_path: Path):
    """fixtures/convert/qualifier_macros converted now: hipcc compiles the kernel that calls the
    header's helpers (before issue 48: 'reference to __host__ function ... in __global__ function')."""
    hipcc = require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    case = REPO / "fixtures" / "convert" / "qualifier_macros"
    assert main(["convert", str(case / "input"), "-o", str(tmp_path / "out"), "-q", "--rocm", "5.2"]) == 0
    proc = subprocess.run([hipcc, "-x", "hip", "--offload-arch=gfx90a", "-c", str(tmp_path / "out" / "blend.cu"),
                           "-o", os.devnull], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, HIP_PLATFORM="amd"))
    assert proc.returncode == 0, proc.stderr[-3000:]
