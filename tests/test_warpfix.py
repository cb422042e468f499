"""`convert --fix warp` (rules/warpfix.py and the rules' own fixes): the fixtures of fixtures/warp, byte for byte."""

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from portkit.engine.context import Options
from portkit.commands.convert import convert_bytes
from portkit.estimate.effort import default_model
from portkit.core.tables.mappings import parse_version

WARP = Path(__file__).resolve().parent.parent / "fixtures" / "warp"
CASES = sorted(p.name for p in WARP.iterdir() if p.is_dir())
FIX = Options(rocm=parse_version("5.2"), fixes=frozenset({"warp"}))


def _convert(data: bytes, options: Options = FIX) -> bytes:
    scan, out = convert_bytes("input.cu", data, options)
    return data if out is None else out


def test_at_least_twenty_idioms():
    assert len(CASES) >= 20


@pytest.mark.parametrize("case", CASES)
def test_fixture_converts_to_expected(case):
    data = (WARP / case / "input.cu").read_bytes()
    expected = (WARP / case / "expected.hip").read_bytes()
    assert _convert(data) == expected
    assert _convert(expected) == expected                      # idempotent
    assert _convert(data, replace(FIX, fixes=frozenset())) != expected   # off by default


def test_unrolled_sequence_gets_a_guarded_32_step():
    data = (WARP / "shfl_unrolled_from_16" / "input.cu").read_bytes()
    out = _convert(data)
    assert b"    if (warpSize > 32) v += __shfl_down(v, 32);\n    v += __shfl_down(v, 16);\n" in out


def test_uncertain_forms_are_left():
    src = (b"__global__ void k(float* o, int a) {\n"
           b"    float v = o[0];\n"
           b"    v += __shfl_down_sync(0xffffffff, v, 16);\n"      # a lone 16: no sequence
           b"    o[1] = a + threadIdx.x >> 5;\n"                    # `/` would regroup it
           b"    o[2] = __shfl_up_sync(0xffffffff, v, 16);\n"       # a scan ends at 16
           b"}\n")
    out = _convert(src)
    assert out == _convert(src, replace(FIX, fixes=frozenset()))


def test_fix_count_in_metrics():
    data = (WARP / "cub_style_block_reduce" / "input.cu").read_bytes()
    scan, _ = convert_bytes("input.cu", data, FIX)
    assert scan.metrics.warp_fixes == 5   # loop, partial[32], & 31, >> 5, blockDim.x / 32


def _audit(tmp_path, case, fmt):
    from portkit.cli.app import main
    target = tmp_path / "src"
    target.mkdir()
    (target / "k.cu").write_bytes((WARP / case / "input.cu").read_bytes())
    out = tmp_path / f"a.{fmt}"
    main(["audit", str(target), "--format", fmt, "-o", str(out)])
    return json.loads(out.read_text())


def test_audit_json_carries_the_fix(tmp_path):
    doc = _audit(tmp_path, "shfl_down_loop_from_16", "json")
    [f] = [f for f in doc["findings"] if f["code"] == "PK202"]
    assert f["autofix"] == [{"line": 8, "column": 23, "end_line": 8, "end_column": 25, "text": "warpSize / 2"}]
    assert (f["effort_hours"]["low"], f["effort_hours"]["likely"], f["effort_hours"]["high"]) == (0.05, 0.1, 0.5)


def test_audit_sarif_fixes(tmp_path):
    doc = _audit(tmp_path, "lane_shift_5", "sarif")
    results = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "PK201"]
    changes = [r["fixes"][0]["artifactChanges"][0]["replacements"] for r in results]
    assert changes == [
        [{"deletedRegion": {"startLine": 5, "startColumn": 27, "endLine": 5, "endColumn": 32},
          "insertedContent": {"text": " / warpSize"}}],
        [{"deletedRegion": {"startLine": 6, "startColumn": 27, "endLine": 6, "endColumn": 32},
          "insertedContent": {"text": " % warpSize"}}],
        [{"deletedRegion": {"startLine": 7, "startColumn": 17, "endLine": 7, "endColumn": 19},
          "insertedContent": {"text": "(warpSize - 1)"}}],
    ]


def test_fixable_finding_priced_as_review():
    from portkit.core.findings import Finding
    model = default_model()
    f = Finding(code="PK202", name="x", severity="high", category="warp", path="a.cu", line=1, column=1,
                end_line=1, end_column=2, message="m")
    assert model.finding_hours(f) == (0.25, 0.5, 2.0)
    assert model.finding_hours(replace(f, autofix=((1, 1, 1, 3, "warpSize / 2"),))) == (0.05, 0.1, 0.5)


def _findings(src: bytes, codes: tuple[str, ...]) -> list[tuple[str, int, int, str]]:
    scan, _ = convert_bytes("k.cu", src, replace(FIX, fixes=frozenset(), audit=True))
    return [(f.code, f.line, f.column, f.message) for f in scan.findings if f.code in codes]


def test_audit_finds_what_the_fixtures_get_wrong_at_64_lanes():
    scan_ = (WARP / "shfl_up_scan_lane_31" / "input.cu").read_bytes()
    assert _findings(scan_, ("PK201", "PK202")) == [
        ("PK202", 10, 25, "shuffle scan loop runs to 32: it scans 32 lanes, an AMD wavefront has 64"),
        ("PK201", 16, 43, "__shfl_sync reads lane 31, the last of a 32-lane warp; an AMD wavefront's last lane is 63")]
    compaction = (WARP / "lane_bit_1u_shift" / "input.cu").read_bytes()
    assert ("PK204", 10, 36, "`1u << lane` is a 32-bit lane bit: undefined for lanes 32-63 of an AMD wavefront "
            "(use 1ull and a 64-bit mask)") in _findings(compaction, ("PK204",))


def _notes(src: bytes) -> list[tuple[int, str]]:
    scan, _ = convert_bytes("k.cu", src, FIX)
    return [(f.line, f.message) for f in scan.findings if f.code == "PK008"]


HOST = (b"void launch(int block_size) {\n"
        b"    const int rows_per_block = block_size / 32;\n"
        b"    dim3 shape = {4, 8, (unsigned)block_size / WARP_SIZE};\n"
        b"    dim3 other = {4, 8, (unsigned)block_size / 32};\n"
        b"}\n")


def test_host_warps_per_block_and_block_shape():
    out = _convert(HOST)
    assert out.split(b"\n")[10:15] == [
        b"    const int rows_per_block = block_size / PORTKIT_WAVEFRONT_SIZE;",
        b"    dim3 shape = {4, WARP_SIZE / 4, (unsigned)block_size / WARP_SIZE};",
        b"    dim3 other = {4, 8, (unsigned)block_size / 32};",   # the kernel's `32 / bdx` would need it too
        b"}", b""]
    assert out.startswith(b"void launch(int block_size) {\n#ifndef PORTKIT_WAVEFRONT_SIZE\n")
    assert _notes(HOST) == [
        (2, "`block_size / 32` warps per block: host code: PORTKIT_WAVEFRONT_SIZE is 64 on the AMD host pass (CDNA), 32 through HIP's NVIDIA backend; "
            "a binary that also targets wave32 GPUs must use the device's warp size (hipDeviceProp_t::warpSize)"),
        (3, "block shape {4, 8, ...}: 4 x 8 threads were one 32-lane warp per layer; y follows WARP_SIZE so that "
            "a layer stays one wavefront"),
        (4, "block shape {4, 8, n / 32} left as it is: 4 x 8 threads are one 32-lane warp per layer, and the "
            "kernel's own `32 / blockDim.x` (or `32 / 4`) must change with it; by hand, make both follow the warp "
            "size (y = WARP_SIZE / 4, z = n / WARP_SIZE, bdy = WARP_SIZE / bdx)")]
    scan, _ = convert_bytes("k.cu", HOST, FIX)
    assert scan.metrics.warp_fixes == 2   # the note on line 4 is not a fix


def test_constant_choice_is_noted():
    src = (WARP / "define_warp_size" / "input.cu").read_bytes()
    [(line, message)] = [n for n in _notes(src) if "compile-time" in n[1]]
    assert message == ("a compile-time warp size: PORTKIT_WAVEFRONT_SIZE, by GPU family on each device pass (64 on "
                       "gfx9, 32 on RDNA; -DPORTKIT_WAVEFRONT_SIZE=64 for a wave64 RDNA build), 32 through HIP's NVIDIA "
                       "backend and 64 on the AMD host pass; not warpSize, which ROCm 7 made a run-time value")


def test_array_sized_by_a_fixed_define_carries_the_fix_and_is_gone_after_it():
    src = (b"#include <cuda_runtime.h>\n#define WARP_SIZE 32\n__global__ void k(float* o) {\n    __shared__ float s[WARP_SIZE];\n"
           b"    int lane = threadIdx.x % WARP_SIZE;\n    s[lane] = o[lane];\n}\n")
    scan, _ = convert_bytes("k.cu", src, replace(FIX, fixes=frozenset(), audit=True))
    [f] = [f for f in scan.findings if f.code == "PK205"]
    assert (f.line, f.autofix) == (4, ((2, 19, 2, 21, "PORTKIT_WAVEFRONT_SIZE"),))
    assert _findings(_convert(src), ("PK205",)) == []
    assert _convert(src).count(b"PORTKIT_WAVEFRONT_SIZE") == 5   # the helper's 4 and the define's: applied once


def test_constant_block_and_runtime_header_both_go_to_the_top_of_a_file_without_includes():
    """Both insertions land at byte 0: they are written in a fixed order, not rejected as overlapping."""
    src = (b"#define WARP_SIZE 32\n__global__ void k(float* x) {\n"
           b"  int lane = threadIdx.x % WARP_SIZE;\n  x[lane] = 1.0f;\n}\n")
    out = _convert(src)
    assert out == (b"\n#include <hip/hip_runtime.h>\n#ifndef PORTKIT_WAVEFRONT_SIZE\n"
                   b"#if defined(__HIP_PLATFORM_NVIDIA__) || defined(__HIP_PLATFORM_NVCC__) || "
                   b"(defined(__NVCC__) && !defined(__HIP__))\n#define PORTKIT_WAVEFRONT_SIZE 32\n"
                   b"#elif defined(__GFX10__) || defined(__GFX11__) || defined(__GFX12__)\n#define PORTKIT_WAVEFRONT_SIZE 32\n"
                   b"#else\n#define PORTKIT_WAVEFRONT_SIZE 64\n#endif\n#endif\n"
                   b"#define WARP_SIZE PORTKIT_WAVEFRONT_SIZE\n" + src[src.index(b"__global__"):])
    assert _convert(out) == out


def _pk008(scan) -> list[tuple[int, str]]:
    return [(f.line, f.message) for f in scan.findings if f.code == "PK008"]


def test_an_index_not_computed_from_threadidx_is_left_with_a_note():
    """ggml's dequantize_q2_K takes `tid` as a parameter and lays out a quant block with it
    (`n = tid/32; l = tid - 32*n`): rewriting the one `/32` would break the layout."""
    src = (b"__device__ void dq(const float* x, float* y, const int tid) {\n"
           b"    const int n = tid/32;\n"
           b"    const int l = tid - 32*n;\n"
           b"    y[l] = x[n];\n"
           b"}\n"
           b"__global__ void k(float* o) {\n"
           b"    const int tid = threadIdx.x;\n"
           b"    const int lane = tid % 32;\n"        # computed from threadIdx: fixed
           b"    o[tid] = lane;\n"
           b"}\n")
    scan, out = convert_bytes("input.cu", src, FIX)
    assert b"    const int n = tid/32;" in out.splitlines()
    assert b"    const int lane = tid % warpSize;" in out.splitlines()
    assert _pk008(scan) == [(2, "--fix warp left this: `tid` is not computed from threadIdx in this function (a "
                                "parameter, or a value from elsewhere), so it is not certainly a thread, lane or warp "
                                "index; if it is, use warpSize here")]


def test_a_static_assert_on_the_warp_size_is_left_with_a_note():
    src = (b"__global__ void k(float* o) {\n"
           b"    constexpr int warp_size = 32;\n"
           b"    static_assert(warp_size == 32, \"bad warp_size\");\n"
           b"    o[threadIdx.x % warp_size] = 0;\n"
           b"}\n")
    scan, out = convert_bytes("input.cu", src, FIX)
    assert b'    static_assert(warp_size == 32, "bad warp_size");' in out.splitlines()
    assert (3, "--fix warp left this: a static_assert states what the code needs of the warp size; on a 64-lane "
               "wavefront it fails, as it should, until the code it guards is ported") in _pk008(scan)


def test_a_tree_with_its_own_hip_shim_gets_notes_not_edits(tmp_path, capsys):
    """ggml's vendors/hip.h maps CUDA names to HIP: the tree already builds for AMD, where its
    `#define WARP_SIZE 32` and width-32 shuffles are logical 32-lane warps on purpose."""
    from portkit.cli.app import main
    tree = tmp_path / "tree"
    (tree / "vendors").mkdir(parents=True)
    (tree / "vendors" / "hip.h").write_text(
        "#pragma once\n#include <hip/hip_runtime.h>\n" +
        "".join(f"#define cuda{n} hip{n}\n" for n in ("Malloc", "Free", "Memcpy", "Memset", "StreamCreate", "StreamDestroy",
                                                           "GetLastError", "DeviceSynchronize")))
    kernel = ("#define WARP_SIZE 32\n"
              "__global__ void k(float* o) {\n"
              "    float v = o[threadIdx.x];\n"
              "    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffff, v, offset, 32);\n"
              "    o[threadIdx.x] = v;\n"
              "}\n")
    (tree / "k.cu").write_text(kernel)
    assert main(["convert", str(tree), "-o", str(tmp_path / "out"), "--fix", "warp", "--rocm", "5.2"]) in (0, 1)
    out = capsys.readouterr().out
    assert "Warp fixes" not in out
    note = ("PK008 --fix warp left this: the tree has its own CUDA-to-HIP shim header, so it already builds for "
            "AMD, where its 32-lane idioms may be deliberate (logical 32-lane warps: width-32 shuffles); check it "
            "against the AMD build before changing it")
    assert [line for line in out.splitlines() if "PK008" in line] == [
        f"  k.cu:1:19: {note}", f"  k.cu:4:23: {note}"]   # the define; the loop with its width
    converted = (tmp_path / "out" / "k.cu").read_text()
    assert "#define WARP_SIZE 32\n" in converted and "offset = 16;" in converted


def test_the_rule_finding_carries_its_fix_from_the_one_walk(monkeypatch):
    """ruff's model: the check reports the finding with its fix (edits, applicability); nothing walks
    the tree a second time or matches fixes to findings by position."""
    from portkit.engine import syntax
    walked = []
    monkeypatch.setattr(syntax, "walk", lambda root: walked.append(root) or iter(()))
    data = (WARP / "shfl_down_loop_from_16" / "input.cu").read_bytes()
    scan, _ = convert_bytes("k.cu", data, replace(FIX, audit=True))
    assert walked == []
    [f] = [f for f in scan.findings if f.code == "PK202"]
    fix = f.fixed_by
    assert (fix.code, fix.applicability, fix.family) == ("PK202", "unsafe", "warp")
    assert [e.text.decode() for e in fix.edits] == [a[4] for a in f.autofix] == ["warpSize / 2"]
    assert [x for x in scan.findings if x.fixed_by is not None and x.code not in ("PK201", "PK202", "PK204", "PK205")] == []
    assert replace(f, fixed_by=None) == f   # not part of equality (nor of any output)


def test_nothing_outside_rules_imports_a_rule_module():
    import ast
    package = Path(__file__).resolve().parent.parent / "portkit"
    found = []
    for path in package.rglob("*.py"):
        if path.parent.name == "rules":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] + [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(n.split(".")[-1].startswith("PK") and n.split(".")[-1][2:5].isdigit() for n in names):
                found.append(str(path.relative_to(package)))
    assert found == []


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1201"])
@pytest.mark.compile
def test_the_helper_gives_each_gpu_familys_own_wavefront_size(arch: str, tmp_path):
    """PORTKIT_WAVEFRONT_SIZE comes from the GPU family, not from __AMDGCN_WAVEFRONT_SIZE (deprecated
    in ROCm 7's clang): on each device pass it must equal what the compiler itself says (clang-19
    still defines the old macro, so it can check); CDNA 64, RDNA 32."""
    from conftest import require_tool
    from portkit.rules.warpfix import HELPER
    clang = require_tool("clang++-19", "clang 19 (apt-get install clang-19)")
    source = tmp_path / "w.hip"
    source.write_bytes(b"\n".join(HELPER) + b"\n#ifndef __HIP_DEVICE_COMPILE__\n#error not a device pass\n#endif\n"
                       b"static_assert(PORTKIT_WAVEFRONT_SIZE == __AMDGCN_WAVEFRONT_SIZE, \"family\");\n")
    run = subprocess.run([clang, "-x", "hip", f"--offload-arch={arch}", "-nogpulib", "-nogpuinc", "--cuda-device-only",
                          "-fsyntax-only", str(source)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_shared_arrays_of_32_that_are_not_per_lane_are_left():
    """--fix warp widens a `__shared__ T s[32]` only where PK205 reports it (indexed by lane or
    warp). A transpose tile, a 32-tap table, llm.c's [128][32] matmul tiles and apex's
    `extern __shared__ float s[32][32]` rows (one per thread of a 32-thread block, a typed view of
    the dynamic allocation, which a wider row would overrun) are the program's own shapes."""
    clean = (Path(__file__).resolve().parent.parent / "fixtures" / "rules" / "PK205" / "clean.cu").read_bytes()
    out = _convert(clean)
    shared = lambda text: [line for line in text.splitlines() if b"__shared__" in line]  # noqa: E731
    assert shared(out) == shared(clean) and b"PORTKIT_WAVEFRONT_SIZE" not in out
    rows = (b"#include <cuda_runtime.h>\n__global__ void rows(const float* in, float* out, int n)\n{\n"
            b"    extern __shared__ float s[32][32];\n"
            b"    float* mine = (float*)&s[threadIdx.x];\n"
            b"    for (int i = 0; i < n; ++i) mine[i] = in[threadIdx.x * n + i];\n"
            b"    out[threadIdx.x] = mine[0];\n}\n")
    assert _convert(rows) == rows.replace(b"<cuda_runtime.h>", b"<hip/hip_runtime.h>")


def test_shared_arrays_of_32_the_rule_reports_are_all_sized_per_target():
    flagged = (Path(__file__).resolve().parent.parent / "fixtures" / "rules" / "PK205" / "flagged.cu").read_bytes()
    out = _convert(flagged)
    expected = [line for line in flagged.splitlines() if b"__shared__" in line and b"expect: PK205" in line
                and b"[32]" in line]
    assert len(expected) == 3
    for line in expected:
        assert line.replace(b"[32]", b"[PORTKIT_WAVEFRONT_SIZE]") in out.splitlines()


_LEFT_FIRST = (b"#include <cuda_runtime.h>\n"
               b"#ifdef __HIP_PLATFORM_AMD__\n"
               b"constexpr int kWarpSize = 64;\n"
               b"#else\n"
               b"constexpr int kWarpSize = 32;\n"
               b"#endif\n"
               b"\n"
               b"__global__ void sums(const float *in, float *out) {\n"
               b"    __shared__ float partial[32];\n"
               b"    int lane = threadIdx.x % 32;\n"
               b"    partial[lane] = in[threadIdx.x];\n"
               b"    __syncthreads();\n"
               b"    if (threadIdx.x == 0) {\n"
               b"        float s = 0;\n"
               b"        for (int i = 0; i < kWarpSize; ++i) s += partial[i];\n"
               b"        out[blockIdx.x] = s;\n"
               b"    }\n"
               b"}\n")


def test_the_constant_is_defined_with_the_first_fix_applied_when_the_first_use_is_left():
    """faiss's DeviceDefs.cuh has this shape: the file's first compile-time warp size is in the NVIDIA
    branch of an `#ifdef` with an AMD branch, which --fix warp leaves alone. PORTKIT_WAVEFRONT_SIZE's
    definition went with that fix, so it was never written, and the shared array sized with the
    constant did not compile for AMD (`use of undeclared identifier`). Audit shows the definition with
    the first fix it shows."""
    from portkit.rules.warpfix import HELPER
    helper = b"\n".join(HELPER) + b"\n"
    out = _convert(_LEFT_FIRST)
    assert out == (_LEFT_FIRST.replace(b"<cuda_runtime.h>", b"<hip/hip_runtime.h>")
                   .replace(b"    __shared__ float partial[32];\n",
                            helper + b"    __shared__ float partial[PORTKIT_WAVEFRONT_SIZE];\n")
                   .replace(b"threadIdx.x % 32", b"threadIdx.x % warpSize"))
    assert _convert(out) == out
    scan, _ = convert_bytes("k.cu", _LEFT_FIRST, replace(FIX, fixes=frozenset(), audit=True))
    shown = [(f.code, f.line, [(a[0], a[4]) for a in f.autofix]) for f in scan.findings if f.autofix]
    assert shown == [("PK201", 5, [(5, helper.decode()), (5, "PORTKIT_WAVEFRONT_SIZE")]),
                     ("PK205", 9, [(9, "PORTKIT_WAVEFRONT_SIZE")]),
                     ("PK201", 10, [(10, "warpSize")])]


@pytest.mark.compile
def test_the_constant_defined_with_the_first_fix_applied_compiles_for_amd_and_nvidia(tmp_path):
    from conftest import require_tool
    from hip_nvidia import compile_for_nvidia, patched_include_dir
    hipcc = require_tool("hipcc", "hipcc (ROCm)")
    source = tmp_path / "k.hip"
    source.write_bytes(_convert(_LEFT_FIRST))
    run = subprocess.run([hipcc, "-x", "hip", "--offload-arch=gfx90a", "-fsyntax-only", str(source)],
                         capture_output=True, text=True, env={**__import__("os").environ, "HIP_PLATFORM": "amd"})
    assert run.returncode == 0, run.stderr
    nvidia = compile_for_nvidia(source, [patched_include_dir(tmp_path / "hip")])   # 32 there, as the original
    assert nvidia.returncode == 0, nvidia.stderr[-4000:]


def test_an_audit_finds_the_fixes_of_the_findings_it_keeps_only(monkeypatch):
    """A generated line repeats a shuffle thousands of times; audit keeps one finding per line and
    rule, so it asks for the fixes of those alone (before: every literal's, 0.5 s of a 5 MB line)."""
    from portkit import rules
    asked = []
    warp = rules.fix_families()["warp"]   # the registry's warp family: its rules' fixers, node by node
    fixer = warp.fix_of

    def counted(view, node):
        if node.type == "number_literal":
            asked.append(node.start_byte)
        return fixer(view, node)
    monkeypatch.setattr(warp, "fix_of", counted)
    body = b"".join(b"    " + b" ".join([b"v += __shfl_down_sync(0xffffffff, v, 16);"] * 200) + b"\n"
                    for _ in range(3))
    data = b"__global__ void k(float* o) {\n    float v = o[0];\n" + body + b"    o[0] = v;\n}\n"
    scan, _ = convert_bytes("k.cu", data, replace(FIX, fixes=frozenset(), audit=True))
    kept = [f for f in scan.findings if f.code == "PK202"]
    lines = data.split(b"\n")
    firsts = [sum(len(x) + 1 for x in lines[:n - 1]) + lines[n - 1].index(b"16") for n in (3, 4, 5)]
    assert [f.line for f in kept] == [3, 4, 5] and sorted(asked) == firsts   # each line's first 16
    asked.clear()
    scan, out = convert_bytes("k.cu", data, FIX)   # --fix warp: every literal's fix, to apply it
    assert len(asked) == 600
