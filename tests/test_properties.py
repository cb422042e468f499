"""Property tests (hypothesis) over generated CUDA-like sources (issue 9).

The generator mixes what real CUDA is made of and what breaks parsers: CUDA names from the
tables (and names that merely contain them), launches, includes, macros, comments, strings,
preprocessor branches, stray brackets, odd bytes and line endings. For every input:

- convert and audit raise nothing;
- the edits are sorted and never overlap, and every byte outside them is unchanged;
- converting the output again changes nothing (idempotence);
- every finding lies inside the file.

CI runs a fixed number of examples from a fixed seed (derandomize), well inside the time limit.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from portkit.api import convert_text
from portkit.core.edits import normalize
from portkit.commands.scan.walk import Options, scan_source
from portkit.core.source import SourceFile

NAMES = ["cudaMalloc", "cudaFree", "cudaMemcpy", "cudaMemcpyHostToDevice", "cudaStream_t", "cudaError_t",
         "cublasSgemm", "cublasHandle_t", "__shfl_down_sync", "__ballot_sync", "threadIdx", "blockIdx",
         "my_cudaMalloc", "cudaMallocX", "cub", "thrust", "cudaMemcpyToSymbol", "cudaFuncGetAttributes",
         "cudaGraphInstantiate", "warpSize", "__syncwarp", "texture", "dim3", "x", "kernel", "T"]
FRAGMENTS = [
    "#include <cuda_runtime.h>\n", "#include <cublas_v2.h>\n", '#include "k.cuh"\n', "#pragma once\n",
    "#if defined(X)\n", "#else\n", "#endif\n", "#define M(a) cudaFree(a)\n", "#define K k<<<1, 32>>>()\n",
    "__global__ void ", "__device__ ", "template <typename T> ", "<<<", ">>>", "<<<g, b, 0, s>>>", "(", ")",
    "{", "}", "[", "]", ";", ",", " ", "\n", "\r\n", "\r", "\t", "// comment cudaMalloc\n", "/* cudaFree */",
    '"cudaMalloc"', "'c'", "::", ".", "->", "&", "*", "32", "0xffffffff", "31", "% 32", "/ 32", "asm(\"mov.u32 %0, %%laneid;\");",
    "\\\n", "/*", '"', "\0", "\xe9", "\ufeff", "??=", "<%", "%>",
]
pieces = st.one_of(st.sampled_from(NAMES), st.sampled_from(FRAGMENTS))
sources = st.lists(pieces, max_size=80).map("".join)
SETTINGS = settings(max_examples=1000, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


@SETTINGS
@given(sources)
@pytest.mark.slow
def test_convert_edits_are_disjoint_and_keep_every_other_byte(text: str):
    data = _bytes(text)
    result = convert_text(data, filename="gen.cu", rocm="5.2")
    edits = result.edits
    assert list(normalize(edits)) == list(edits)               # sorted, disjoint, already normal
    out, pos, at = result.output, 0, 0
    for edit in edits:
        assert edit.start >= pos and edit.end <= len(data)
        gap = data[pos:edit.start]
        assert out[at:at + len(gap)] == gap                     # untouched bytes, in order
        at += len(gap) + len(edit.text)
        pos = edit.end
    assert out[at:] == data[pos:]


@SETTINGS
@given(sources)
@pytest.mark.slow
def test_convert_is_idempotent(text: str):
    once = convert_text(_bytes(text), filename="gen.cu", rocm="5.2").output
    assert convert_text(once, filename="gen.cu", rocm="5.2").output == once


@SETTINGS
@given(sources, st.sampled_from(["cuda", "hip"]))
@pytest.mark.slow
def test_audit_findings_lie_inside_the_file(text: str, launch_syntax: str):
    data = _bytes(text)
    source = SourceFile.from_bytes("gen.cu", data)
    scan = scan_source(source, Options(audit=True, launch_syntax=launch_syntax))
    lines = max(1, source.line_count)
    for f in scan.findings:
        assert 1 <= f.line <= f.end_line <= lines + 1, (f.line, f.end_line, lines)
        assert f.column >= 1


@SETTINGS
@given(st.binary(max_size=400))
@pytest.mark.slow
def test_arbitrary_bytes_never_raise(data: bytes):
    convert_text(data, filename="gen.cu")
    scan_source(SourceFile.from_bytes("gen.cu", data), Options(audit=True))
