"""CUdeviceptr arithmetic that convert rewrites as CUDA's integer (issue 48; engine/deviceptr.py,
rewrite/deviceptr.py), and the PK014 findings left where it does not.

The golden case is fixtures/convert/deviceptr_arithmetic (tiny-cuda-nn's GPUMemoryArena: nvcc
compiles its input, hipcc its output, test_compile_fixtures.py); here: the audit of that input
reports no PK014 and counts each rewrite as converted, PK014 is silent on the output, the output
compiles through HIP's NVIDIA backend (hipDeviceptr_t is CUdeviceptr there), and each place whose
type is not known from the file stays a finding with nothing rewritten.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from portkit.commands.scan.walk import scan_source
from portkit.core.edits import apply_edits
from portkit.core.source import SourceFile
from portkit.engine.options import Options

from conftest import REPO
from hip_nvidia import compile_for_nvidia, patched_include_dir

CASE = REPO / "fixtures" / "convert" / "deviceptr_arithmetic"
HEAD = b"#include <cuda.h>\n#include <cstddef>\n#include <vector>\n"


def _scan(data: bytes, rel: str = "a.cu", **options):
    return scan_source(SourceFile.from_bytes(rel, data), Options(**options))


def _converted(data: bytes, **options) -> bytes:
    return apply_edits(data, _scan(data, **options).edits)


def _pk014(data: bytes, rel: str = "a.cu") -> list[int]:
    return [f.line for f in _scan(data, rel, audit=True).findings if f.code == "PK014"]


def test_the_audit_of_the_golden_input_reports_what_convert_leaves():
    scan = _scan((CASE / "input.cu").read_bytes(), "input.cu", audit=True)
    assert [(f.code, f.line) for f in scan.findings] == []
    # 26 names, and the 7 expressions rewritten (55, 56, 61, 62, 63, 67, 72)
    assert (scan.metrics.refs_found, scan.metrics.refs_converted, scan.metrics.refs_left) == (33, 33, 0)


def test_pk014_is_silent_on_the_converted_output():
    assert _pk014((CASE / "expected.hip").read_bytes(), "expected.hip") == []


# What HIP's NVIDIA headers (ROCm 5.2) declare of the driver API: no virtual memory calls, so the
# forms of the golden case on the copies and sets they do declare
NVIDIA_SOURCE = b"""#include <cuda.h>
#include <cstddef>

CUresult fill_tail(CUdeviceptr base, size_t used, size_t n) {
	CUdeviceptr end = base;
	end += used;
	if (end % 4 != 0) return CUDA_ERROR_INVALID_VALUE;
	CUresult status = cuMemsetD8(base + used, 0, n);
	return status != CUDA_SUCCESS ? status : cuMemcpyDtoD(base, end - n, n);
}

size_t used_bytes(CUdeviceptr base, CUdeviceptr end) { return end - base; }
"""


@pytest.mark.compile
def test_the_rewrites_compile_for_nvidia(tmp_path: Path):
    """hipDeviceptr_t is CUdeviceptr on HIP's NVIDIA backend: both casts are the identity there."""
    converted = _converted(NVIDIA_SOURCE)
    assert converted.count(b"(unsigned long long)") == 6
    (tmp_path / "arena.hip").write_bytes(converted)
    run = compile_for_nvidia(tmp_path / "arena.hip", [patched_include_dir(tmp_path / "hip")])
    assert run.returncode == 0, run.stderr[-6000:]


# (the CUDA source, what convert writes): each place that goes back to a device pointer or stays an integer
REWRITTEN = [
    (b"void f(CUdeviceptr p, size_t n) { cuMemsetD8(p + n - 4, 0, n); }\n",
     b"void f(hipDeviceptr_t p, size_t n) { hipMemsetD8((hipDeviceptr_t)((unsigned long long)p + n - 4), 0, n); }\n"),
    (b"size_t f(CUdeviceptr a, CUdeviceptr b) { size_t d = (a - b); return d; }\n",
     b"size_t f(hipDeviceptr_t a, hipDeviceptr_t b) { size_t d = ((unsigned long long)a - (unsigned long long)b); return d; }\n"),
    (b"void f(CUdeviceptr a, CUdeviceptr b) { cuMemAddressFree(a, b - a); }\n",
     b"void f(hipDeviceptr_t a, hipDeviceptr_t b) { hipMemAddressFree(a, (unsigned long long)b - (unsigned long long)a); }\n"),
    (b"CUdeviceptr f(CUdeviceptr a, unsigned n) { a -= n * 2 + 1; return a; }\n",
     b"hipDeviceptr_t f(hipDeviceptr_t a, unsigned n) { a = (hipDeviceptr_t)((unsigned long long)a - (n * 2 + 1)); return a; }\n"),
    (b"int f(CUdeviceptr a) { if (a & 0xff) return 1; return static_cast<int>(a >> 12); }\n",
     b"int f(hipDeviceptr_t a) { if ((unsigned long long)a & 0xff) return 1; return static_cast<int>((unsigned long long)a >> 12); }\n"),
    (b"void f(CUdeviceptr a, float* q) { CUdeviceptr b; b = a + 16; q = (float*)(a + 4); }\n",
     b"void f(hipDeviceptr_t a, float* q) { hipDeviceptr_t b; b = (hipDeviceptr_t)((unsigned long long)a + 16); "
     b"q = (float*)((unsigned long long)a + 4); }\n"),
]


@pytest.mark.parametrize("source, expected", REWRITTEN, ids=range(len(REWRITTEN)))
def test_each_known_place_is_rewritten_and_not_reported(source: bytes, expected: bytes):
    assert _converted(HEAD + source) == HEAD.replace(b"<cuda.h>", b"<hip/hip_runtime.h>") + expected
    assert _pk014(HEAD + source) == []


# Where the value goes to a type the file does not say: nothing rewritten, PK014 on line 4
LEFT = [
    b"void g(CUdeviceptr p); void f(CUdeviceptr p) { g(p + 4); }\n",                    # the project's own function
    b"void f(CUdeviceptr p) { auto q = p + 4; (void)q; }\n",                             # auto
    b"void f(CUdeviceptr p) { const size_t& q = p - 4; (void)q; }\n",                   # a reference
    b"void f(CUdeviceptr p) { p++; }\n",                                                 # ++
    b"void f(CUdeviceptr p, std::vector<CUdeviceptr>& v) { v.push_back({p + 4}); }\n",   # a brace initialiser
    b"void f(CUdeviceptr p) { CUdeviceptr q = static_cast<CUdeviceptr>(p + 4); }\n",     # static_cast to void*
    b"void f(CUdeviceptr p, bool c) { p = c ? p + 4 : p; }\n",                          # a conditional's branch
    b"size_t f(CUdeviceptr p) { size_t n = 0; n += (p += 4, 4); return n; }\n",          # += as a value
]


@pytest.mark.parametrize("source", LEFT, ids=range(len(LEFT)))
def test_each_unknown_place_is_left_and_reported(source: bytes):
    converted = _converted(HEAD + source)
    assert b"unsigned long long" not in converted
    assert _pk014(HEAD + source) == [4]


def test_a_member_another_class_declares_with_another_type_is_not_rewritten():
    source = (b"struct A { CUdeviceptr base; };\nstruct B { size_t base; };\n"
              b"void f(A& a, B& b, size_t n) { cuMemsetD8(a.base + n, 0, n); n = b.base + n; }\n")
    assert b"unsigned long long" not in _converted(HEAD + source)
    assert _pk014(HEAD + source) == [6]


def test_amd_only_code_and_a_macro_body_are_left_as_they_are():
    source = (b"#ifdef __HIP_PLATFORM_AMD__\nvoid f(CUdeviceptr p) { cuMemsetD8(p + 4, 0, 4); }\n#endif\n"
              b"#define AT(p) cuMemsetD8((CUdeviceptr)(p) + 4, 0, 4)\n")
    assert _converted(HEAD + source).count(b"unsigned long long") == 0
