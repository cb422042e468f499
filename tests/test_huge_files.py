"""Generated files with floods of findings (issue 28, item 17): bounded memory, the same estimate.

A file keeps at most CAP_PER_CODE (1,000) findings of one rule in an audit; the rest are counted
by the JSON and the text report and priced as further sites, so the estimate does not change.
A flood of duplicates on one line builds one Finding, not one per report. `check` keeps every
finding: the gate must see a new one however many old ones a file has. (The memory figures:
benchmarks/huge_file_bench.py.)
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from portkit.engine import context
from portkit import rules
from portkit.commands.audit import AuditOptions, ScanJob, audit_bytes, audit_paths
from portkit.cli.app import main
from portkit.core.findingstore import CAP_PER_CODE
from portkit.report.model import audit_document
from portkit.commands.scan.walk import Options

STATEMENT = "o[threadIdx.x%32]=1;"
MESSAGE = "PK201 `threadIdx.x%32` assumes 32-lane warps; an AMD wavefront has 64 lanes"


@pytest.fixture
def flood(tmp_path: Path) -> Path:
    """1,500 warp-size hazards, one per line (lines 2 to 1501)."""
    path = tmp_path / "gen.cu"
    path.write_text("__global__ void k(int*o){\n" + (STATEMENT + "\n") * 1500 + "}\n")
    return path


def test_the_audit_keeps_1000_findings_of_a_rule_per_file_and_counts_the_rest(flood: Path, capsys):
    assert CAP_PER_CODE == 1000
    assert main(["audit", str(flood), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(f["code"], f["line"]) for f in doc["findings"]] == [("PK201", line) for line in range(2, 1002)]
    assert (doc["summary"]["findings"], doc["summary"]["findings_not_stored"], doc["summary"]["findings_cap"]) == \
        (1000, 500, 1000)
    assert doc["files"][0]["findings_not_stored"] == {"PK201": 500}
    (item,) = [i for i in doc["estimate"]["items"] if i["kind"] == "pattern"]
    assert item["count"] == 1500 and len(item["findings"]) == 200
    assert "500 of the sites are past the per-file cap: counted, not listed." in item["why"]


def test_the_estimate_of_a_capped_file_is_the_estimate_with_every_finding_kept(flood: Path):
    capped = audit_document(audit_paths([flood], AuditOptions()))
    whole = audit_document(audit_paths([flood], AuditOptions(scan=Options(audit=True, finding_cap=10**9))))
    assert (whole["summary"]["findings"], whole["summary"]["findings_not_stored"]) == (1500, 0)
    assert capped["estimate"]["hours"] == whole["estimate"]["hours"]
    assert capped["estimate"]["person_weeks"] == whole["estimate"]["person_weeks"]


def test_the_text_report_says_how_many_findings_it_does_not_list(flood: Path, capsys):
    assert main(["audit", str(flood)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (f"portkit audit of {flood.parent.as_posix()}: 1 file, 1,502 lines, 1,000 findings and 500 "
                        "more past the per-file cap (counted, not listed)")
    assert "Not listed: 500 findings past 1,000 of one rule in one file, counted and priced as further sites " \
           "(gen.cu: PK201 500)" in lines


def test_converter_findings_are_capped_after_the_rules_refine_them(tmp_path: Path, capsys):
    """PK001 can be refined by a rule's finding, so it is kept whole until the end, then capped."""
    path = tmp_path / "host.cu"
    path.write_text("void f() {\n" + "cudaDeviceSetLimit(cudaLimitDevRuntimeSyncDepth, 1);\n" * 1200 + "}\n")
    assert main(["audit", str(path), "--format", "json", "--select", "PK001"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [f["line"] for f in doc["findings"]] == list(range(2, 1002))
    assert doc["files"][0]["findings_not_stored"] == {"PK001": 200}


def test_a_file_ignore_also_drops_the_counted_findings(flood: Path, capsys):
    flood.write_text("// portkit: file-ignore[PK2] generated\n" + flood.read_text())
    assert main(["audit", str(flood), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["summary"]["findings"], doc["summary"]["findings_not_stored"]) == (0, 0)


def test_check_keeps_every_finding_of_a_flood(flood: Path):
    """The commit gate (check.py's ScanJob) sets no cap: the 1,501st hazard is still seen."""
    job = ScanJob(Options(audit=True), enabled=rules.selected([], []), hours=False)
    scan = audit_bytes("gen.cu", flood.read_bytes(), "source", job)
    assert len(scan.findings) == 1500 and scan.metrics.findings_not_stored == {}


@pytest.mark.slow
def test_a_flood_on_one_line_builds_one_finding(monkeypatch):
    """20,000 reports of one hazard on one line are one finding; only that one is built (before,
    all 20,000 were built and kept until the end of the scan)."""
    built = []
    real = context.fingerprint
    monkeypatch.setattr(context, "fingerprint", lambda *a: built.append(a) or real(*a))
    data = ("__global__ void k(int*o){" + STATEMENT * 20_000 + "}").encode()
    job = ScanJob(replace(Options(audit=True), finding_cap=CAP_PER_CODE), enabled=rules.selected([], []))
    scan = audit_bytes("one.cu", data, "source", job)
    assert [(f.code, f.line, f.column) for f in scan.findings] == [("PK201", 1, 28)]
    assert len(built) == 1


def test_a_long_line_keeps_a_snippet_of_240_characters(tmp_path: Path, capsys):
    line = "__global__ void k(int*o){ " + STATEMENT + " int a;" * 100 + "}"
    (tmp_path / "long.cu").write_text(line + "\n")
    assert main(["audit", str(tmp_path / "long.cu"), "--format", "json"]) == 0
    (finding,) = json.loads(capsys.readouterr().out)["findings"]
    assert finding["snippet"] == line[:240] + "…"
