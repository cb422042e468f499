"""convert and audit tell one truth (issue 51: 3, 4, 5, 8, 9): the same files, the same findings
that need a person, counts that add up, a text audit that leads with the product, SARIF columns in
the unit it declares, and one-line errors for what the user can fix."""

from __future__ import annotations

import errno
import io
import json
import re
import sys
from pathlib import Path

import pytest

from conftest import REPO, write_tree
from portkit.cli.app import main

SAMPLE = REPO / "fixtures" / "sample_project"
DUAL = REPO / "fixtures" / "convert" / "dual_vendor_project" / "input"


def _json(capsys, argv: list[str], code: int) -> dict:
    assert main(argv) == code
    return json.loads(capsys.readouterr().out)


def _lines(capsys, argv: list[str], code: int) -> list[str]:
    assert main(argv) == code
    return capsys.readouterr().out.splitlines()


# ---- 3: convert says what the audit says needs a person

def test_needs_person_is_what_the_audit_counts(capsys):
    audit = _json(capsys, ["audit", str(SAMPLE), "--format", "json", "--no-cache"], 0)
    convert = _json(capsys, ["convert", str(SAMPLE), "--check", "--format", "json"], 1)
    wanted = [(f["code"], f["path"], f["line"], f["column"]) for f in audit["findings"]
              if f["severity"] in ("blocker", "high")]
    assert [(f["code"], f["path"], f["line"], f["column"]) for f in convert["needs_person"]] == wanted == [
        ("PK202", "src/reduce.cu", 11, 20), ("PK201", "src/reduce.cu", 24, 16),
        ("PK201", "src/reduce.cu", 24, 41), ("PK201", "src/reduce.cu", 29, 20)]
    assert "4 findings need a person" in audit["summary"]["headline"]


TORCH = REPO / "fixtures" / "convert_torch" / "causal_conv1d" / "input"
# the lines of the extension's sources neither convert nor torch's build-time hipify ports (tests/test_torch_sources.py)
# (the cub alias after the CUB includes is convert's to write: scan/torch_person.py)
TORCH_LEFT = [("PK506", "high", "csrc/causal_conv1d_common.h", 12, 19), ("PK506", "high", "csrc/causal_conv1d_common.h", 21, 19)]


@pytest.mark.parametrize("mode, wanted, caveats, priced", [
    # each line priced as a one-line guard (effort.toml "PK506:high"); setup.py's CUDAExtension call (PK506 at
    # medium) is the extension's build, priced by fixed.torch_extension_build and not again
    ("cuda", TORCH_LEFT, [], {"PK506:__shfl_xor_sync": 0.275}),
    # converted as any other source: no line is left for a person, and the mask's caveat is back
    ("hip", [], [("PK004", "medium", "csrc/causal_conv1d_common.h", 12, 19),
                 ("PK004", "medium", "csrc/causal_conv1d_common.h", 21, 19)], {})])
def test_a_torch_extension_s_lines_left_for_a_person_are_the_audit_s(capsys, tmp_path, mode, wanted, caveats, priced):
    """Convert decided the PyTorch extension's lines torch's hipify leaves (PK506, high) and dropped
    PK004's caveat for the edit it did not write, while the audit still showed the PK004 and none of
    the lines: the scan decides for both, and --extension-sources means the same to both."""
    audit = _json(capsys, ["audit", str(TORCH), "--format", "json", "--no-cache", "--extension-sources", mode], 0)
    convert = _json(capsys, ["convert", str(TORCH), "-o", str(tmp_path / "out"), "--format", "json", "--no-cache",
                             "--extension-sources", mode], 0)
    fields = ("code", "severity", "path", "line", "column", "message")
    needs = [tuple(f[k] for k in fields) for f in convert["needs_person"]]
    assert needs == [tuple(f[k] for k in fields) for f in audit["findings"] if f["severity"] in ("blocker", "high")]
    assert [n[:5] for n in needs] == wanted
    # what the estimate prices and the audit lists at the sources' lines: PK004 only with the edit written
    assert [(f["code"], f["severity"], f["path"], f["line"], f["column"]) for f in audit["findings"]
            if f["path"].startswith("csrc/") and f["code"] in ("PK004", "PK506")] == (caveats or wanted)
    assert {i["key"]: i["hours"]["likely"] for i in audit["estimate"]["items"] if i["key"].startswith("PK506")} == priced


def test_convert_summary_says_how_many_sites_need_a_person(capsys):
    out = _lines(capsys, ["convert", str(SAMPLE), "--check"], 1)
    assert out[1:3] == ["CUDA references: 58 found, 58 converted, 0 left (100.0% converted)",
                        "4 sites need a person (high severity or worse): see `portkit audit`"]


# ---- 8: the counts agree

@pytest.mark.parametrize("tree", [SAMPLE, DUAL], ids=["sample", "dual-vendor"])
def test_convert_and_audit_count_the_same_files_and_lines(capsys, tree: Path):
    audit = _json(capsys, ["audit", str(tree), "--format", "json", "--no-cache"], 0)
    convert = _json(capsys, ["convert", str(tree), "--check", "--format", "json"], 1)
    assert convert["files"]["scanned"] == audit["summary"]["files"]
    assert convert["references"] == {"found": audit["summary"]["cuda_refs"],
                                     "converted": audit["summary"]["refs_converted"],
                                     "left": audit["summary"]["refs_left"]}


def test_a_tree_with_scripts_is_counted_alike(tmp_path: Path, capsys):
    """llm.c's shape: shell scripts and a requirements list beside the CUDA (audit read 88 files,
    convert scanned 76)."""
    tree = write_tree(tmp_path / "t", {
        "k.cu": "__global__ void k(float *x) { x[threadIdx.x] = 1.0f; }\n"
                "void go(float *d) { cudaMalloc(&d, 4); k<<<1, 1>>>(d); }\n",
        "scripts/run.sh": "#!/bin/sh\nCUDA_VISIBLE_DEVICES=0 ./train\n",
        "requirements.txt": "numpy\n"})
    audit = _json(capsys, ["audit", str(tree), "--format", "json", "--no-cache"], 0)
    convert = _json(capsys, ["convert", str(tree), "--check", "--format", "json"], 1)
    assert (audit["summary"]["files"], convert["files"]["scanned"]) == (3, 3)
    out = _lines(capsys, ["convert", str(tree), "--check"], 1)
    assert out[0] == (f"portkit convert: 3 files scanned ({audit['summary']['lines']} lines), 1 would change, "
                      "0 partially parsed, 0 skipped")


ATOMICS = """#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void add(half2 *sum, half2 v) { atomicAdd(sum, v); }

void capture(cudaStream_t stream, cudaGraph_t graph) {
    cudaStreamBeginCaptureToGraph(stream, graph, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal);
}
"""


def test_left_sites_say_why_they_outnumber_the_references_left(tmp_path: Path, capsys):
    """41 left, then "Left unconverted (43)" on llm.c: atomicAdd on half2 is a site, not a reference
    (with --no-polyfills; with polyfills it is portkit_atomicAdd, a converted reference)."""
    tree = write_tree(tmp_path / "t", {"a.cu": ATOMICS})
    out = _lines(capsys, ["convert", str(tree), "--check", "--rocm", "6.0", "--no-polyfills"], 1)
    assert out[1:5] == ["CUDA references: 6 found, 5 converted, 1 left (83.3% converted)",
                        "2 sites need a person (high severity or worse): see `portkit audit`", "",
                        "Left unconverted (2: the 1 reference left, and 1 use of a converted name HIP has no form for):"]


DYNAMIC = """__global__ void child(int *out) { out[threadIdx.x] = 1; }

__global__ void parent(int *out) {
    child<<<1, 32>>>(out);
}

__global__ void parent2(int *out) {
    child<<<1, 64>>>(out);
}
"""


def test_a_rules_instead_is_printed_once(tmp_path: Path, capsys):
    tree = write_tree(tmp_path / "t", {"dp.cu": DYNAMIC})
    out = _lines(capsys, ["audit", str(tree), "--no-cache"], 0)
    start = out.index("Blocker sites (the first 2):")
    assert [line.split(":", 1)[0].strip() for line in out[start + 1:start + 4]] == ["dp.cu", "instead", "dp.cu"]
    assert out[start + 3].startswith("  dp.cu:8:10: PK302 ")
    assert out[start + 4] == ""


# ---- 4: the text audit leads with the product

PRODUCT = """__global__ void reduce(float *x) {
    unsigned mask = 0xffffffff;
    int lane = threadIdx.x & 31;
    x[lane] = __shfl_down_sync(mask, x[lane], 16);
}
"""


def test_text_audit_lists_the_headline_first_by_severity(tmp_path: Path, capsys):
    tree = write_tree(tmp_path / "t", {"src/reduce.cu": PRODUCT, "tests/test_reduce.cu": PRODUCT})
    out = _lines(capsys, ["audit", str(tree), "--no-cache"], 0)
    listed = [line for line in out if re.match(r"^(src|tests)/\S+:\d+:\d+: PK", line)]
    assert [line.split(" ")[:2] for line in listed] == [
        ["src/reduce.cu:3:16:", "PK201"], ["src/reduce.cu:4:47:", "PK202"], ["src/reduce.cu:4:15:", "PK004"],
        ["tests/test_reduce.cu:3:16:", "PK201"], ["tests/test_reduce.cu:4:47:", "PK202"],
        ["tests/test_reduce.cu:4:15:", "PK004"]]
    assert "In the estimate's headline:" in out
    assert out[out.index(listed[3]) - 1] == "Priced apart: benchmarks, tests, examples and dev code:"


def test_all_lists_every_finding_and_statistics_count_per_rule(tmp_path: Path, capsys):
    body = "".join(f"__global__ void k{i}(int *x) {{ x[threadIdx.x & 31] = {i}; }}\n" for i in range(45))
    tree = write_tree(tmp_path / "t", {"many.cu": body})
    out = _lines(capsys, ["audit", str(tree), "--no-cache"], 0)
    assert "... and 5 more (--all lists them; so do --format json, sarif and csv)" in out
    every = _lines(capsys, ["audit", str(tree), "--no-cache", "--all", "--statistics"], 0)
    assert sum(1 for line in every if re.match(r"^many\.cu:\d+:\d+: PK201 ", line)) == 45
    assert re.search(r"^ +45 │ PK201 │ hardcoded-warp-size +│ high", "\n".join(every), re.M)
    assert main(["audit", str(tree), "--all", "--format", "json"]) == 2
    assert capsys.readouterr().err == ("portkit: error: --all lists every finding of the text report; "
                                       "--format json lists them all already\n")


# ---- 5: SARIF columns in the declared unit; a help URI per rule

def test_sarif_columns_count_code_points(tmp_path: Path, capsys):
    line = "    /* é€ */ int lane = threadIdx.x & 31;"
    tree = write_tree(tmp_path / "t", {"k.cu": "__global__ void k(int *x) {\n" + line + "\n    x[lane] = 1;\n}\n"})
    doc = _json(capsys, ["audit", str(tree), "--format", "sarif", "--no-cache"], 0)
    run = doc["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    region = next(r for r in run["results"] if r["ruleId"] == "PK201")["locations"][0]["physicalLocation"]["region"]
    start = line.index("threadIdx.x & 31") + 1   # code points, 1-based
    assert (region["startLine"], region["startColumn"], region["endColumn"]) == (2, start, start + len("threadIdx.x & 31"))
    audit = _json(capsys, ["audit", str(tree), "--format", "json", "--no-cache"], 0)
    finding = next(f for f in audit["findings"] if f["code"] == "PK201")
    assert finding["column"] == start + 3   # the audit's own columns stay bytes: é is 2, € 3


def test_each_rules_help_uri_is_a_heading_of_rules_md(capsys):
    doc = _json(capsys, ["audit", str(SAMPLE), "--format", "sarif"], 0)
    text = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    anchors = {re.sub(r"[^a-z0-9 _-]", "", h.lower()).replace(" ", "-") for h in re.findall(r"^## (.+)$", text, re.M)}
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    assert rules and all(r["helpUri"].split("#")[1] in anchors for r in rules)
    assert next(r for r in rules if r["id"] == "PK201")["helpUri"].endswith("docs/rules.md#pk201-hardcoded-warp-size")


# ---- 9: the smaller ones

class _Full(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_on_standard_output_is_a_write_error(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", _Full())
    assert main(["audit", str(SAMPLE), "--format", "json"]) == 2
    assert capsys.readouterr().err == "portkit: error: cannot write the output: No space left on device\n"


def test_a_key_spelt_as_python_gets_did_you_mean(tmp_path: Path, capsys, monkeypatch):
    tree = write_tree(tmp_path / "t", {"pyproject.toml": '[tool.portkit]\nfail_on = "high"\n', "a.cu": "int x;\n"})
    monkeypatch.chdir(tree)
    assert main(["audit", str(tree)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"portkit: error: {tree / 'pyproject.toml'}: unknown portkit setting fail_on "
                          "(did you mean fail-on? known: ")


def test_a_configured_rocm_is_named_by_its_file(tmp_path: Path, capsys, monkeypatch):
    """Already so at the base commit (the issue saw `--rocm 6.9`): pinned here."""
    tree = write_tree(tmp_path / "t", {"pyproject.toml": '[tool.portkit]\nrocm = "6.9"\n', "a.cu": "int x;\n"})
    monkeypatch.chdir(tree)
    assert main(["convert", str(tree), "--check"]) == 2
    assert capsys.readouterr().err.startswith(f"portkit: error: {tree / 'pyproject.toml'}: `rocm` 6.9: "
                                              "not a ROCm release portkit knows")


def test_a_team_mapping_file_needs_no_title_or_source(tmp_path: Path, capsys):
    tree = write_tree(tmp_path / "t", {
        "team.toml": 'schema = 1\nfamily = "team"\nentries = [\n'
                     '  { cuda = "cudaMalloc", hip = "teamMalloc", kind = "function", status = "supported" },\n]\n',
        "a.cu": "void f(void **p) { cudaMalloc(p, 4); }\n"})
    assert main(["convert", str(tree / "a.cu"), "-o", "-", "--mappings", str(tree / "team.toml")]) == 0
    assert "teamMalloc(p, 4)" in capsys.readouterr().out


def test_a_quiet_text_convert_runs_no_second_scan(tmp_path, monkeypatch, capsys):
    """needs_person is the audit's scan of every file again: `convert -q` (text) shows no summary,
    so it is not run (a 1.2M-line in-place run spent its first minute auditing before writing)."""
    from portkit.commands import convert_audit

    def second_scan(*args):
        raise AssertionError("convert -q ran the audit's scan")
    monkeypatch.setattr(convert_audit, "Summary", second_scan)
    assert main(["convert", str(REPO / "fixtures" / "sample_project"), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert capsys.readouterr().out == ""
