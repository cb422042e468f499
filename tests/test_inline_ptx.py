"""Inline PTX that HIP has exactly is converted, not reported (issue 48): engine/ptx.py decides,
rewrite/inline_ptx.py writes the HIP form, rule PK301 stays silent on the blocks convert rewrites.

The golden (fixtures/convert/inline_ptx_exact, from tiny-cuda-nn's lane_id() and nccl-tests'
verifyPrepared) is checked by test_convert_fixtures.py and test_compile_fixtures.py; here, what the
audit says of the same code before and after conversion, and where the recognizer stops.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO
from portkit.cli.app import main
from portkit.core import parse
from portkit.core.edits import Edit, apply_edits
from portkit.engine.context import View
from portkit.engine.ptx import equivalent

CASE = REPO / "fixtures" / "convert" / "inline_ptx_exact"
# the NVIDIA branch of an #if whose AMD branch reads __lane_id(): left for nvcc, already ported
KEPT = [("PK301", 22, "info")]


def _audit(path: Path, capsys) -> tuple[list[tuple[str, int, str]], dict]:
    assert main(["audit", str(path), "--format", "json", "--rocm", "5.2"]) in (0, 1)
    doc = json.loads(capsys.readouterr().out)
    return [(f["code"], f["line"], f["severity"]) for f in doc["findings"]], doc["summary"]


def test_the_cuda_source_counts_each_block_convert_rewrites_as_converted(capsys):
    findings, summary = _audit(CASE / "input.cu", capsys)
    assert findings == KEPT
    # 9 blocks, and cuda_runtime.h, cudaMemcpy, cudaMemcpyDeviceToHost
    assert (summary["cuda_refs"], summary["refs_converted"]) == (12, 12)


def test_the_converted_file_has_no_ptx_left_to_report(capsys):
    findings, summary = _audit(CASE / "expected.hip", capsys)
    assert findings == KEPT
    assert summary["cuda_refs"] == 0


def test_a_macro_body_is_left_and_reported(tmp_path: Path, capsys):
    """A macro's block is reported at its definition and its uses (project/asm_macros.py): convert
    leaves it, so that the two never disagree."""
    source = tmp_path / "lane.cu"
    source.write_bytes(b'#define LANE_ID(x) asm volatile("mov.u32 %0, %%laneid;" : "=r"(x))\n'
                       b"__global__ void k(unsigned *out) { unsigned l; LANE_ID(l); out[l] = l; }\n")
    assert main(["convert", str(source), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert b"%%laneid" in (tmp_path / "out" / "lane.cu").read_bytes()
    findings, _ = _audit(source, capsys)
    assert [(code, line) for code, line, _ in findings] == [("PK301", 1), ("PK301", 2)]


def _converted(statement: bytes) -> bytes | None:
    """`statement` in a device function, as convert writes it; None where it is left."""
    data = b"__device__ void f(unsigned *p, unsigned long long *q, float *r, int n) {\n  " + statement + b"\n}\n"
    nodes = parse.captures(parse.parse(data).root_node).get("node", [])
    blocks = [n for n in nodes if n.type == "gnu_asm_expression"]
    assert len(blocks) == 1
    found = equivalent(View(data), blocks[0])
    if found is None:
        return None
    after = apply_edits(data, [Edit(start, end, text) for start, end, text in found.pieces])
    return after.splitlines()[1].strip()


@pytest.mark.parametrize("statement,expected", [
    (b'asm("mov.u32 %0, %%laneid;" : "=r"(p[n]));', b"p[n] = __lane_id();"),
    (b'asm volatile("mov.s32 %0, %laneid;\\n\\t" : "=r"(*p));', b"*p = __lane_id();"),
    (b'asm("mov.u32 %0, %%laneid;" : "=r"(n ? p[0] : p[1]));', b"(n ? p[0] : p[1]) = __lane_id();"),
    (b'asm volatile("mov.u32 %0, %%clock;" : "=r"(p[0]));', b"p[0] = (unsigned int)clock();"),
    (b'__asm__ __volatile__("mov.u64 %0, %%clock64;" : "=l"(q[0]));', b"q[0] = clock64();"),
    (b'asm volatile("membar.cta;" ::: "memory");', b"__threadfence_block();"),
    (b'asm volatile("fence.sc.gpu;");', b"__threadfence();"),
    (b'asm volatile("membar.sys;");', b"__threadfence_system();"),
    (b'asm volatile("red.add.u64 [%0], %1;" :: "l"(q), "l"(1ull));',
     b"atomicAdd((unsigned long long*)(q), (unsigned long long)(1ull));"),
    (b'asm volatile("red.relaxed.gpu.global.add.f64 [%0], %1;" :: "l"(r), "d"(2.0));',
     b"atomicAdd((double*)(r), (double)(2.0));"),
    (b'asm("red.global.add.f32 [%0], %1;" :: "l"(r), "r"(p[0]));',                # a float by its bits
     b"atomicAdd((float*)(r), __uint_as_float((unsigned int)(p[0])));"),
    (b'asm("red.global.add.f64 [%0], %1;" :: "l"(r), "l"(q[0]));',
     b"atomicAdd((double*)(r), __longlong_as_double((long long)(q[0])));"),
])
def test_exact_forms_become_their_hip_form(statement: bytes, expected: bytes):
    assert _converted(statement) == expected


@pytest.mark.parametrize("statement", [
    b'asm("mov.u32 %[l], %%laneid;" : [l] "=r"(p[0]));',                          # a named operand
    b'asm("mov.u64 %0, %%laneid;" : "=l"(q[0]));',                                # not the register's width
    b'asm("mov.u32 %0, %%laneid; mov.u32 %0, %%smid;" : "=r"(p[0]));',            # two instructions
    b'asm("@%1 red.global.add.u32 [%0], 1;" :: "l"(p), "r"(n));',                  # a predicate
    b'asm("red.shared.add.u32 [%0], %1;" :: "r"(n), "r"(n));',                     # the shared space
    b'asm("red.sys.global.add.u32 [%0], %1;" :: "l"(p), "r"(n));',                # system scope
    b'asm("red.global.add.u32 [%0], %1;" :: "l"(p), "l"(q));',                     # a value of another width
    b'asm("red.global.add.u32 [%1], %0;" :: "r"(n), "l"(p));',                     # operands the other way round
    b'asm("atom.global.add.u32 %0, [%1], %2;" : "=r"(p[0]) : "l"(p), "r"(n));',   # a result read back
    b'asm("fence.acq_rel.gpu;");',                                                   # a weaker fence
    b'asm("membar.gl;" LINE_END);',                                                 # a macro in the template
    b'n = (asm("mov.u32 %0, %%laneid;" : "=r"(p[0])), 1);',                       # not a statement of its own
])
def test_everything_else_is_left(statement: bytes):
    assert _converted(statement) is None


def test_the_compatibility_header_mode_names_each_block_once(tmp_path: Path, capsys):
    """--compat-header keeps the CUDA source: each block convert would rewrite is one line for a person
    with its HIP form, not one per piece the rewrite writes around the operands."""
    source = tmp_path / "input.cu"
    source.write_bytes((CASE / "input.cu").read_bytes())
    capsys.readouterr()
    main(["convert", str(tmp_path), "--compat-header", str(tmp_path / "compat.h"), "--in-place", "--rocm", "5.2"])
    lines = [line.strip() for line in capsys.readouterr().out.splitlines() if "inline PTX" in line]
    assert lines == [f"input.cu:{line}: inline PTX -> {hip}: the AMD build needs it in place of this inline PTX"
                     for line, hip in ((17, "__lane_id()"), (34, "atomicAdd(float*)"),
                                       (57, "atomicAdd(unsigned long long*)"), (64, "clock64()"),
                                       (67, "atomicAdd(float*)"), (68, "atomicAdd(unsigned int*)"),
                                       (70, "atomicAdd(int*)"), (72, "__threadfence()"), (75, "clock64()"))]


def test_the_polyfilled_lane_read_is_a_lane_index_for_the_warp_fix(tmp_path: Path):
    """Converted code reads the lane through portkit_lane_id() (fixtures/polyfills/lane_id): `--fix
    warp` knows it for a lane index, as it knows `__lane_id()`, and fixes `lane & 31`."""
    source = tmp_path / "src" / "k.hip"
    source.parent.mkdir()
    source.write_bytes(b'#include <hip/hip_runtime.h>\n#include "portkit_polyfills.h"\n'
                       b"__global__ void k(float* out) {\n    unsigned lane = portkit_lane_id();\n"
                       b"    out[lane & 31] = 1.0f;\n}\n")
    assert main(["convert", str(source.parent), "-o", str(tmp_path / "out"), "--fix", "warp", "-q"]) == 0
    assert (tmp_path / "out" / "k.hip").read_bytes().splitlines()[4] == b"    out[lane % warpSize] = 1.0f;"
