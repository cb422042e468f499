"""`convert --fix warp` (rewrite/warpfix.py): the fixtures of fixtures/warp, byte for byte."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from portkit.context import Options
from portkit.convert import convert_bytes
from portkit.effort import default_model
from portkit.mappings import parse_version

WARP = Path(__file__).resolve().parent.parent / "fixtures" / "warp"
CASES = sorted(p.name for p in WARP.iterdir() if p.is_dir())
FIX = Options(rocm=parse_version("5.2"), fix_warp=True)


def _convert(data: bytes, options: Options = FIX) -> bytes:
    scan, out = convert_bytes("input.cu", data, options)
    return data if out is None else out


def test_at_least_fifteen_idioms():
    assert len(CASES) >= 15


@pytest.mark.parametrize("case", CASES)
def test_fixture_converts_to_expected(case):
    data = (WARP / case / "input.cu").read_bytes()
    expected = (WARP / case / "expected.hip").read_bytes()
    assert _convert(data) == expected
    assert _convert(expected) == expected                      # idempotent
    assert _convert(data, replace(FIX, fix_warp=False)) != expected   # off by default


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
    assert out == _convert(src, replace(FIX, fix_warp=False))


def test_fix_count_in_metrics():
    data = (WARP / "cub_style_block_reduce" / "input.cu").read_bytes()
    scan, _ = convert_bytes("input.cu", data, FIX)
    assert scan.metrics.warp_fixes == 5   # loop, partial[32], & 31, >> 5, blockDim.x / 32


def _audit(tmp_path, case, fmt):
    from portkit.cli import main
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
    from portkit.findings import Finding
    model = default_model()
    f = Finding(code="PK202", name="x", severity="high", category="warp", path="a.cu", line=1, column=1,
                end_line=1, end_column=2, message="m")
    assert model.finding_hours(f) == (0.25, 0.5, 2.0)
    assert model.finding_hours(replace(f, autofix=((1, 1, 1, 3, "warpSize / 2"),))) == (0.05, 0.1, 0.5)
