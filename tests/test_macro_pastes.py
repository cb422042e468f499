"""CUDA names in a macro body around a `##` paste (portkit/rewrite/macros.py): exact bytes.

A body is re-parsed on its own; read as written, `r_##T(int k, cudaStream_t s)` lexed `#T(...` as
a directive whose text is opaque, so every name after the paste stayed CUDA (faiss's
BLOCK_SELECT_IMPL, fixtures/convert/macro_body_paste_before_names). The golden case holds the real
code; these hold the forms around it, each on one line.
"""

from __future__ import annotations

import pytest

from portkit import convert_text

HEAD, HIP_HEAD = b"#include <cuda_runtime.h>\n", b"#include <hip/hip_runtime.h>\n"


@pytest.mark.parametrize("body,expected", [
    # names after a paste: converted (before: left, the rest of the body opaque)
    (b"#define DECL(T) extern void r_##T(int k, cudaStream_t s)\n",
     b"#define DECL(T) extern void r_##T(int k, hipStream_t s)\n"),
    (b"#define B(T) cudaStream_t s_##T; cudaEvent_t e_##T\n",
     b"#define B(T) hipStream_t s_##T; hipEvent_t e_##T\n"),
    (b"#define D(T, n) void f_##T##_##n(cudaStream_t s) { cudaStreamSynchronize(s); }\n",
     b"#define D(T, n) void f_##T##_##n(hipStream_t s) { hipStreamSynchronize(s); }\n"),
    # a CUDA name left of a paste is still a name of its own: hipMalloc##Async is hipMallocAsync
    (b"#define A(p, n) cudaMalloc##Async(p, n, 0)\n", b"#define A(p, n) hipMalloc##Async(p, n, 0)\n"),
    # a piece that only starts CUDA names is left (PK007 reports it)
    (b"#define P(x) cuda##x\n", b"#define P(x) cuda##x\n"),
    (b"#define Q(x) x##_v = cudaGetLastError()\n", b"#define Q(x) x##_v = hipGetLastError()\n"),
])
def test_names_around_a_paste(body: bytes, expected: bytes):
    out = convert_text(HEAD + body, rocm="5.2").output
    assert out == HIP_HEAD + expected
    assert convert_text(out, rocm="5.2").output == out   # idempotent
