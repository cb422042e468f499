"""The HTML report read by a manager in a minute (issue 51, item 7): decisions counted once per
family as the text report counts them, work items in plain words, no "other" bar longer than a
named one, top files only from the headline, and the compile card from `portkit verify` output."""

from __future__ import annotations

import copy
import io
import json
import re
from pathlib import Path

import pytest

from conftest import REPO
from portkit.cli.app import main
from portkit.commands.audit import AuditOptions, audit_paths
from portkit.commands.scan.walk import Options
from portkit.report import html, text
from portkit.report.audit_load import load, load_record
from portkit.report.audit_model import WorkItem
from portkit.report.model import audit_document

SAMPLE = REPO / "fixtures" / "sample_project"
VERIFY = REPO / "fixtures" / "report" / "verify_sample_project.json"   # `portkit verify --format json` of the
                                                                       # converted sample (ROCm 5.2 here)
APART = "benchmarks, tests, examples and dev code"


@pytest.fixture(scope="module")
def sample() -> dict:
    return audit_document(audit_paths([SAMPLE], AuditOptions(scan=Options(audit=True, rocm=(5, 2, 0)))))


def _page(doc: dict, **options) -> str:
    out = io.StringIO()
    html.render(load(doc), out, **options)
    return out.getvalue()


def _decision(family: str, label: str, optional: str, sites: int, p50: float) -> dict:
    return {"id": family, "label": label, "alternative": "MIOpen", "rocm_since": "5.0", "kernels": 0, "files": 1,
            "sites": sites, "blocker_sites": sites, "hours": {"p10": p50 / 2, "p50": p50, "p90": p50 * 2},
            "optional": optional}


CUDNN = "rewrite the code built on cuDNN frontend (graph API)"
NCCL = "communication library swap: NCCL -> RCCL"


def _llmc_like(sample: dict) -> dict:
    """The sample with llm.c's decisions (audit of llm.c, 2026-12): cuDNN frontend in two parts the
    estimate leaves out, NCCL in the headline and in the benchmarks; one blocker site."""
    doc = copy.deepcopy(sample)
    doc["estimate"]["decisions"] = [
        _decision("cudnn-frontend", CUDNN, "ENABLE_CUDNN", 3, 116.3), _decision("cudnn-frontend", CUDNN, APART, 2, 18.0),
        _decision("communication_library", NCCL, "", 1, 11.4), _decision("communication_library", NCCL, APART, 1, 11.4)]
    blocker = dict(doc["findings"][0], code="PK402", name="rewrite-blocker", severity="blocker",
                   message="cuDNN frontend has no drop-in", fix="MIOpen")
    doc["findings"] = [blocker, *doc["findings"]]
    doc["summary"]["blockers"] = 1
    return doc


def test_decisions_are_counted_once_per_family_in_the_page_and_the_text(sample):
    doc = _llmc_like(sample)
    page = _page(doc)
    assert '<p class="big"><span id="kpi-decisions">1</span> <span class="unit">decision</span></p>' in page
    assert ('<p class="small">1 more for code the estimate leaves out &middot; <span id="kpi-blockers">1</span> '
            'blocker sites in all') in page
    assert (f'<summary>1 more decision if the team ports the optional ENABLE_CUDNN code or the {APART}: '
            f'{CUDNN}</summary>') in page
    assert ('<td>3 sites in 1 file in the optional ENABLE_CUDNN code; 2 sites in 1 file in the benchmarks, tests, '
            'examples and dev code</td><td class="num">134 h (67\u2013269)</td>') in page
    assert (f'<td>1 site in 1 file; 1 more site in the {APART}, not in the estimate</td>') in page
    out = io.StringIO()
    text.render(load(doc), out)
    lines = out.getvalue().splitlines()
    head = next(k for k, line in enumerate(lines) if line.startswith("Decisions ("))
    assert lines[head:head + 7] == [
        "Decisions (2) - 1 blocker site, one decision per library or feature family:",
        f"  {CUDNN}: 0 kernels, 1 files, 3 sites; 116 h P50; not included: ENABLE_CUDNN",
        f"      and 0 kernels, 1 files, 2 sites; 18 h P50; not included: {APART}",
        "      instead: MIOpen (ROCm 5.0+)",
        f"  {NCCL}: 0 kernels, 1 files, 1 sites; 11 h P50",
        f"      and 0 kernels, 1 files, 1 sites; 11 h P50; not included: {APART}",
        "      instead: MIOpen (ROCm 5.0+)"]


def test_work_items_carry_the_rules_plain_title_with_the_code_as_a_detail(sample):
    page = _page(sample)
    assert ('<td class="item">A shared array of 32 indexed by lane or warp: <code>warp_<wbr>totals</code> '
            '<span class="detail">PK205 warp-sized-array</span></td>') in page
    assert ('<td class="item">CMake builds CUDA as a language <span class="detail">PK501 cmake-cuda-language</span>'
            '</td>') in page
    assert '<td class="item">warp-sized-array' not in page and '<td class="item">cmake-cuda-language' not in page
    assert '<td class="item">a CI job on an AMD runner</td>' in page   # a plain label stays as it is


def _items(hours: list[float]) -> list[WorkItem]:
    return [load_record(WorkItem, {"label": f"item {k:02d}", "p50": h}) for k, h in enumerate(hours)]


def test_no_other_bar_is_longer_than_a_named_one():
    items = _items([5.0] + [1.0] * 7 + [0.9] * 19)   # llm.c: the rest summed to the longest bar
    bars = html.hours_chart(items, set())
    assert [b.label for b in bars] == [f"item {k:02d}" for k in range(8)]
    assert max(b.percent for b in bars) == 100.0 and bars[0].label == "item 00"
    from portkit.report import html_items
    assert html_items.rest_line(items) == ("Not drawn: 19 smaller work items, 17 h together (each 0.9 h or less); "
                                           "the work items below list them all.")
    few = _items([5.0] + [1.0] * 7 + [0.5, 0.4])    # a rest no longer than the shortest named bar stays a bar
    assert [(b.label, b.value) for b in html.hours_chart(few, set())][-1] == ("2 other work items", "0.9 h")
    assert html_items.rest_line(few) == ""


def _files_table(page: str) -> list[str]:
    """The paths of the first files table (the headline's), in order."""
    fold = page[page.index('<details id="files"'):]
    table = fold[:fold.index("</table>")]
    return ["/".join(re.findall(r'<span class="seg">([^<]*)</span>', row))
            for row in re.findall(r"<tr><td>(.*?)</td>", table)]


def test_top_files_are_only_those_in_the_headline(sample):
    doc = copy.deepcopy(sample)
    ranked = sorted(doc["files"], key=lambda f: (-f["effort_hours"], f["path"]))
    top = ranked[0]["path"]
    for item in doc["estimate"]["items"]:   # the estimate prices the top file apart
        if any(site.rsplit(":", 1)[0] == top for site in item["findings"]):
            item["findings"] = [s for s in item["findings"] if s.rsplit(":", 1)[0] == top]
            item["optional"] = APART
    doc["estimate"]["items"].append(dict(doc["estimate"]["items"][0], kind="dependency", key="cublas", optional="",
                                         findings=[f"{top}:1"], label="adopt rocBLAS"))   # priced once, anywhere
    page = _page(doc)
    shown = _files_table(page)
    assert shown and top not in shown
    assert shown[0] == next(f["path"] for f in ranked[1:] if any(
        s.rsplit(":", 1)[0] == f["path"] for i in doc["estimate"]["items"] if not i["optional"]
        for s in i["findings"]))
    assert "<summary>Files the estimate prices apart or has nothing to price in:" in page


def test_a_verify_result_is_a_card_of_units_that_compile(tmp_path: Path, capsys):
    out = tmp_path / "report.html"
    assert main(["audit", str(SAMPLE), "--rocm", "5.2", "-q", "--html", str(out), "--verify-result", str(VERIFY)]) == 0
    page = out.read_text()
    assert '<p class="compiles" id="compiles"><strong>1 of 4 units compile at ROCm 5.2</strong></p>' in page
    assert ('<p class="small">portkit verify: 3 failed (0 unexplained, 3 stopped at a library not installed)</p>'
            in page)
    saved = tmp_path / "audit.json"
    assert main(["audit", str(SAMPLE), "--rocm", "5.2", "-q", "--format", "json", "-o", str(saved)]) == 0
    again = tmp_path / "again.html"
    assert main(["report", str(saved), "-o", str(again), "--verify-result", str(VERIFY)]) == 0
    assert "1 of 4 units compile at ROCm 5.2" in again.read_text()
    assert "compiles-unknown" not in page and 'id="compiles-unknown"' in _page(audit_document(audit_paths(
        [SAMPLE], AuditOptions())))


def _verify_doc(**summary) -> dict:
    doc = json.loads(VERIFY.read_text())
    doc["summary"].update(summary)
    return doc


BAD = [
    ("{", "cannot read the verify result: Expecting property name enclosed in double quotes"),
    ([], "not a portkit verify result (write one with `portkit verify --format json`): not a JSON object"),
    (dict(_verify_doc(), tool="portkit audit"), "`tool` is not \"portkit verify\" or `version` is not 1"),
    (dict(_verify_doc(), target_rocm="6.2</strong><script>"), "`target_rocm` is not a release such as \"6.2\""),
    (_verify_doc(compiled=True), "`summary.compiled` is not a whole number of 0 or more"),
    (_verify_doc(units=-1), "`summary.units` is not a whole number of 0 or more"),
    (_verify_doc(units=1e9), "`summary.units` is not a whole number of 0 or more"),
    (_verify_doc(compiled=40), "`summary.compiled` and `summary.failed` do not add up to `summary.units`"),
    (_verify_doc(unexplained=2), "`summary.unexplained` and `summary.not_reached` add up to more than "
                                 "`summary.failed`"),
]


@pytest.mark.parametrize("content, reason", BAD)
def test_a_bad_verify_result_is_one_line_exit_2_before_the_audit(tmp_path: Path, capsys, content, reason):
    bad = tmp_path / "verify.json"
    bad.write_text(content if isinstance(content, str) else json.dumps(content))
    code = main(["audit", str(tmp_path / "missing"), "--html", str(tmp_path / "r.html"), "--verify-result", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"portkit: error: {bad}: ") and reason in err
    assert not (tmp_path / "r.html").exists()


def test_a_verify_result_needs_the_html_report(tmp_path: Path, capsys):
    assert main(["audit", str(SAMPLE), "-q", "--verify-result", str(VERIFY)]) == 2
    assert capsys.readouterr().err == "portkit: error: --verify-result is shown in the HTML report: add --html FILE\n"


def test_the_answer_is_four_cards(sample):
    page = _page(sample)
    cards = re.findall(r'<div class="card[^"]*" id="([^"]+)">\s*<h2 class="question">([^<]+)</h2>', page)
    assert cards == [("headline", "How long"), ("blocks", "What blocks"), ("not-included", "Not in the estimate"),
                     ("depends", "What it depends on")]
    assert '<p class="range">2 CUDA libraries and packages: 2 drop-in</p>' in page
