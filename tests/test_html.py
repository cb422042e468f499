"""The HTML report: view model and charts (exact values), escaping of untrusted text, history."""

from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

from conftest import REPO
from portkit.project import history
from portkit.commands.audit import AuditOptions, audit_paths
from portkit.cli.app import main
from portkit.report import html, html_groups, html_markup, shape
from portkit.report.audit_load import load, load_record
from portkit.report.audit_model import Decision, FindingRecord, NamedHours, WorkItem, as_json
from portkit.report.html_view import Run
from portkit.report.model import audit_document
from portkit.commands.scan.walk import Options

SAMPLE = REPO / "fixtures" / "sample_project"


def sample_doc() -> dict:
    return audit_document(audit_paths([SAMPLE], AuditOptions(scan=Options(audit=True, rocm=(5, 2, 0)))))


def test_bars_are_shares_of_the_longest_labelled_with_hours():
    assert as_json(html.bars([("warp", 40.0, True), ("build", 10.0, False), ("api", 0.25, False),
                              ("none", 0.0, False)])) == [
        {"label": "warp", "value": "40 h", "percent": 100.0, "decision": True},
        {"label": "build", "value": "10 h", "percent": 25.0, "decision": False},
        {"label": "api", "value": "0.2 h", "percent": 0.6, "decision": False},
        {"label": "none", "value": "0.0 h", "percent": 0.5, "decision": False}]   # a sliver stays visible


def test_the_one_chart_is_the_largest_work_items_then_the_rest():
    items = [load_record(WorkItem, {"label": f"item {k}", "p50": float(k)}) for k in range(1, 11)]
    chart = html.hours_chart(items, {"item 9"})
    assert [(b.label, b.value, b.decision) for b in chart] == [
        ("item 10", "10 h", False), ("item 9", "9.0 h", True), ("item 8", "8.0 h", False), ("item 7", "7.0 h", False),
        ("item 6", "6.0 h", False), ("item 5", "5.0 h", False), ("item 4", "4.0 h", False), ("item 3", "3.0 h", False),
        ("2 other work items", "3.0 h", False)]
    assert html.hours_chart(items[:2], set()) == html.bars([("item 2", 2.0, False), ("item 1", 1.0, False)])


def test_directories_are_top_ten_plus_the_rest():
    rows = [NamedHours(f"d{i:02d}", float(20 - i)) for i in range(13)]
    top = html.top_directories(rows)
    assert top[:2] == [("d00", 20.0), ("d01", 19.0)] and len(top) == 11
    assert top[-1] == ("3 more directories", 8.0 + 9.0 + 10.0)


def test_trend_needs_two_runs_and_scales_each_line():
    runs = [Run(f"2026-11-0{i}T00:00:00Z", w, n) for i, (w, n) in enumerate([(4.0, 100), (3.0, 80), (2.0, 20)], 1)]
    assert html.trend_chart(runs[:1]) is None
    trend = html.trend_chart(runs)
    assert trend is not None
    assert trend.weeks.points == "40.0,40.0 320.0,70.0 600.0,100.0"
    assert trend.findings.points == "40.0,40.0 320.0,64.0 600.0,136.0"
    assert [r.date for r in trend.runs] == ["2026-11-01", "2026-11-02", "2026-11-03"]


def _page(doc: dict) -> str:
    out = io.StringIO()
    html.render(load(doc), out)
    return out.getvalue()


def test_headline_comes_from_the_audit_document():
    doc = sample_doc()
    text = _page(doc)
    weeks = doc["estimate"]["person_weeks"]
    assert (f'<p class="big"><span id="kpi-p50">{weeks["p50"]:.1f}</span> <span class="unit">person-weeks</span></p>'
            in text)
    assert (f'<p class="range" id="estimate-range">likely (P50); <span id="kpi-p10">{weeks["p10"]:.1f}</span>&ndash;'
            f'<span id="kpi-p90">{weeks["p90"]:.1f}</span> person-weeks (P10&ndash;P90)</p>') in text
    assert '<p class="big"><span id="kpi-decisions">0</span> <span class="unit">decisions</span></p>' in text
    assert f'<span id="kpi-blockers">{doc["summary"]["blockers"]}</span> blocker sites in all' in text
    assert "http://" not in text.replace("http://www.w3.org", "") and "https://" not in text


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_untrusted_names_and_code_render_as_text(tmp_path: Path):
    evil = tmp_path / "<img src=x onerror=alert(1)>.cu"
    evil.write_text('// </script><script>alert("x")</script>\n__global__ void k(int* o) { o[threadIdx.x % 32] = 1; }'
                    ' // "</script><b>bold</b>&amp;\n')
    doc = audit_document(audit_paths([tmp_path], AuditOptions()))
    assert any(f["path"].startswith("<img") for f in doc["findings"])
    page = io.StringIO()
    html.render(load(doc), page)
    text = page.getvalue()
    parser = _Tags()
    parser.feed(text)
    tags = [t for t, _ in parser.tags]
    assert "img" not in tags and "b" not in tags
    assert tags.count("script") == 2
    assert all("onerror" not in attrs for _, attrs in parser.tags)
    data = re.search(r'<script type="application/json" id="findings-data">(.*?)</script>', text, re.S).group(1)
    assert "<" not in data and ">" not in data
    assert json.loads(data)["paths"] == ["<img src=x onerror=alert(1)>.cu"]


def test_history_records_runs_and_the_report_shows_the_trend(tmp_path: Path, capsys):
    project = tmp_path / "p"
    project.mkdir()
    reduce = (SAMPLE / "src" / "reduce.cu").read_text()
    (project / "reduce.cu").write_text(reduce)
    assert main(["audit", str(project), "--record", "-q"]) == 0
    (project / "reduce.cu").write_text(reduce.replace("threadIdx.x & 31", "threadIdx.x % warpSize"))
    report = tmp_path / "report.html"
    assert main(["audit", str(project), "--record", "-q", "--html", str(report)]) == 0
    runs = history.load(project / ".portkit" / "history.sqlite")
    assert [r["findings"] for r in runs] == [7, 6]
    text = report.read_text()
    assert "findings: 7 &rarr; 6" in text and "<polyline" in text
    saved = tmp_path / "audit.json"
    assert main(["audit", str(project), "--format", "json", "-o", str(saved)]) == 0
    again = tmp_path / "again.html"
    assert main(["report", str(saved), "-o", str(again), "--history", str(project / ".portkit" / "history.sqlite")]) == 0
    assert "findings: 7 &rarr; 6" in again.read_text()
    assert main(["report", str(report), "-o", str(again)]) == 2
    assert "cannot read the audit JSON" in capsys.readouterr().err


def test_every_command_that_writes_a_report_names_the_file(tmp_path: Path, capsys):
    """The README's first command writes the HTML report; the user is told where (stderr)."""
    page, saved, again, export = (tmp_path / n for n in ("r.html", "a.json", "again.html", "m.csv"))
    assert main(["audit", str(SAMPLE), "--rocm", "5.2", "--html", str(page), "--format", "json",
                 "-o", str(saved)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"portkit: wrote the HTML report to {page}", f"portkit: wrote the json report to {saved}"]
    assert main(["report", str(saved), "-o", str(again)]) == 0
    assert capsys.readouterr().err.splitlines() == [f"portkit: wrote the HTML report to {again}"]
    assert main(["mappings", "--format", "csv", "-o", str(export)]) == 0
    assert capsys.readouterr().err.splitlines() == [f"portkit: wrote the csv export to {export}"]
    assert main(["audit", str(SAMPLE), "-q", "--html", str(page)]) == 0
    assert capsys.readouterr().err == ""


# --- the layout: the answer first, one chart, the rest folded (issue 33, item 8) ---------------------

class _Outline(HTMLParser):
    """The page's sections in order, the ids inside each, and every <details> with its `open`."""

    def __init__(self):
        super().__init__()
        self.sections: list[str] = []
        self.ids: dict[str, list[str]] = {}
        self.details: list[tuple[str, bool]] = []
        self.folded: list[str] = []   # the ids of the folds directly inside #details
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.sections.append(attrs["id"])
        elif "id" in attrs and self.sections:
            self.ids.setdefault(self.sections[-1], []).append(attrs["id"])
        if tag == "details":
            self.details.append((attrs.get("id", attrs.get("class", "")), "open" in attrs))
            if self.sections[-1] == "details" and self._depth == 0:
                self.folded.append(attrs["id"])
            self._depth += 1

    def handle_endtag(self, tag):
        if tag == "details":
            self._depth -= 1


def _outline(text: str) -> _Outline:
    parser = _Outline()
    parser.feed(text)
    return parser


def test_the_page_answers_first_then_one_chart_then_folded_details():
    doc = sample_doc()
    text = _page(doc)
    outline = _outline(text)
    assert outline.sections == ["answer", "decisions", "effort", "details", "method"]
    assert outline.ids["answer"] == ["headline", "kpi-p50", "estimate-range", "kpi-p10", "kpi-p90", "blocks",
                                     "kpi-decisions", "kpi-blockers", "not-included", "scope", "port-style", "depends",
                                     "compiles-unknown", "conversion"]   # the fourth card (issue 51, item 7)
    assert outline.ids["decisions"] == ["no-decisions"]
    assert outline.folded == ["blocker-sites", "work-items", "by-directory", "dependencies", "breakdown", "trend",
                              "all-findings", "files"]   # and "polyfills" where convert would define some
    assert outline.details and not [d for d, is_open in outline.details if is_open]
    items = [i for i in load(doc).estimate.items if not i.optional]
    assert text.count('<div class="bar-row"') == len(html.hours_chart(items, set())) == 8
    assert text.count('<p class="caption" id="chart-rest">Not drawn: ') == 1   # the rest: longer than a bar
    assert "<svg" not in text   # the one chart is HTML; the trend (an svg) needs two recorded runs
    assert '<details id="all-findings" class="section" hidden>' in text   # the script shows it


def test_the_conversion_share_is_a_sentence_not_a_headline_figure():
    doc = sample_doc()
    text = _page(doc)
    assert text.count("(100.0%)") == 1 and ">100%<" not in text   # the old headline card's figure
    assert ('<p class="conversion" id="conversion">58 of 58 CUDA references (100.0%) converted mechanically; 4 findings '
            'need a person (high severity or worse); blockers: 0.</p>') in text
    assert ('<span id="kpi-blockers">0</span> blocker sites in all &middot; 4 findings need a person</p>') in text


FLASH = REPO / "fixtures" / "audit" / "flash_attention_like"


def test_decisions_lead_and_link_to_their_sites_grouped():
    doc = audit_document(audit_paths([FLASH], AuditOptions()))
    text = _page(doc)
    assert '<p class="big"><span id="kpi-decisions">2</span> <span class="unit">decisions</span></p>' in text
    assert ('<tr><td><a href="#decision-1">rewrite the code built on CUTLASS and CuTe (CUTLASS 3 layout algebra, CuTe '
            'DSL)</a></td><td>composable_kernel (CK) for fused kernels, hipBLASLt for plain GEMMs with epilogues <span '
            'class="since">(ROCm 5.7+)</span></td><td>12 sites (11 blockers) in 3 files, 3 kernels</td><td class="num">'
            '345 h (200\u2013552)</td></tr>') in text
    assert ('<summary>rewrite the code built on CUTLASS and CuTe (CUTLASS 3 layout algebra, CuTe DSL): 11 blocker sites '
            'in 3 files &middot; in the estimate</summary>') in text
    assert ('<summary>rewrite the code built on Hopper TMA/WGMMA through CuTe (FlashAttention-3 style kernels): 1 '
            'blocker site in 1 file &middot; in the estimate</summary>') in text
    head = ('<p class="group-head"><span class="sev sev-blocker">blocker</span> <strong>PK402</strong> rewrite-blocker '
            '<span class="count">&times;&nbsp;{}</span> <span class="small">in {}</span></p>')
    blockers = text[text.index('id="decision-1"'):text.index('id="work-items"')]
    assert [blockers.count(head.format(n, files)) for n, files in ((11, "3 files"), (1, "1 file"))] == [1, 1]
    assert blockers.count('<p class="group-head">') == 2   # 12 blocker rows became two groups
    assert '<span class="dir"><span class="path"><span class="seg">csrc</span></span>/</span>' in blockers


# --- grouping: same rule and same advice, one row ------------------------------------------------

def _finding(path: str, line: int, message: str, code: str = "PK201", fix: str = "use `warpSize`",
             severity: str = "high") -> FindingRecord:
    return load_record(FindingRecord, {
        "code": code, "name": {"PK201": "hardcoded-warp-size", "PK402": "rewrite-blocker"}.get(code, "x"),
        "severity": severity, "path": path, "line": line, "column": 1, "message": message, "fix": fix})


WARP = " assumes 32-lane warps; an AMD wavefront has 64 lanes"


def test_identical_findings_are_one_group_with_their_sites_folded_by_directory():
    findings = [_finding("src/b.cu", 9, "`tid % 32`" + WARP), _finding("src/a.cu", 4, "`tid / 32`" + WARP),
                _finding("lib/c.cu", 2, "`tid / 32`" + WARP),
                _finding("src/a.cu", 7, "`tid / 32`" + WARP, fix="other advice"),
                _finding("x.cu", 1, "NPP: no drop-in", code="PK402", fix="RPP", severity="blocker")]
    groups = as_json(html_groups.finding_groups(findings))
    assert [(g["severity"], g["code"], g["fix"], g["count"], g["files"]) for g in groups] == [
        ("blocker", "PK402", "RPP", 1, 1), ("high", "PK201", "use `warpSize`", 3, 3),
        ("high", "PK201", "other advice", 1, 1)]
    warp = groups[1]
    assert (warp["messages"], warp["tail"], warp["more"]) == (2, WARP, 0)
    assert warp["places"] == [
        {"directory": "lib", "sites": [{"file": "c.cu", "line": 2, "message": "`tid / 32`"}]},
        {"directory": "src", "sites": [{"file": "a.cu", "line": 4, "message": "`tid / 32`"},
                                       {"file": "b.cu", "line": 9, "message": "`tid % 32`"}]}]
    assert groups[0]["places"] == [{"directory": ".", "sites": [{"file": "x.cu", "line": 1, "message": ""}]}]


def test_a_shared_tail_starts_at_a_space_outside_code():
    assert html_groups.shared_tail(["nppiFree(): NPP has no drop-in on AMD", "nppsMalloc_8u(): NPP has no drop-in on AMD"]
                                   ) == " NPP has no drop-in on AMD"
    assert html_groups.shared_tail(["`x / 32`" + WARP, "`y % 32`" + WARP]) == WARP   # not " 32` assumes ..."
    assert html_groups.shared_tail(["a is short", "b is short"]) == ""       # under 16 characters says nothing
    assert html_groups.shared_tail(["same" + WARP, "same" + WARP[:-1]]) == ""
    assert html_groups.shared_tail([WARP, "`x`" + WARP]) == ""               # one message has no part of its own
    assert html_groups.shared_tail(["only one" + WARP]) == ""


def test_blockers_are_grouped_under_the_decision_whose_item_lists_them():
    decisions = [load_record(Decision, d) for d in (
        {"label": "rewrite NPP", "optional": "", "sites": 2},
        {"label": "rewrite cuDLA", "optional": "benchmarks, tests, examples and dev code", "sites": 1})]
    items = [load_record(WorkItem, i) for i in (
        {"label": "rewrite NPP", "optional": "", "count": 2, "findings": ["a.cu:1", "a.cu:5"]},
        {"label": "rewrite cuDLA", "optional": "", "count": 1, "findings": ["d.cu:3"]},   # not that part
        {"label": "rewrite cuDLA", "optional": "benchmarks, tests, examples and dev code", "count": 1,
         "findings": ["t/d.cu:3"]})]
    findings = [_finding("a.cu", 1, "m", "PK402", "RPP", "blocker"), _finding("a.cu", 5, "m", "PK402", "RPP", "blocker"),
                _finding("a.cu", 5, "warp", severity="high"), _finding("t/d.cu", 3, "m", "PK402", "none", "blocker"),
                _finding("z.cu", 8, "m", "PK302", "host launches", "blocker")]
    out = as_json(html_groups.by_decision(decisions, items, findings))
    assert [(o["decision"] and o["decision"]["label"], o["anchor"], o["count"], o["files"],
             [(g["code"], g["count"]) for g in o["groups"]]) for o in out] == [
        ("rewrite NPP", "decision-1", 2, 1, [("PK402", 2)]),
        ("rewrite cuDLA", "decision-2", 1, 1, [("PK402", 1)]),
        (None, "decision-other", 1, 1, [("PK302", 1)])]


def test_findings_by_directory_are_two_levels_deep_the_most_first():
    findings = [_finding("Samples/0_Intro/a/k.cu", 1, "m"), _finding("Samples/0_Intro/b/k.cu", 1, "m"),
                _finding("Samples/0_Intro/b/k.cu", 2, "m", severity="blocker", code="PK402", fix="RPP"),
                _finding("Common/h.h", 3, "m"), _finding("top.cu", 1, "m")]
    areas = html_groups.by_area(findings)
    assert [(a.name, a.count, a.files, a.severities, len(a.groups)) for a in areas] == [
        ("Samples/0_Intro", 3, 2, (("blocker", 1), ("high", 2)), 2), (".", 1, 1, (("high", 1),), 1),
        ("Common", 1, 1, (("high", 1),), 1)]


def test_backtick_spans_are_code_and_paths_wrap_only_after_a_slash():
    assert html_markup.code_spans("use `a<b` or `c`") == "use <code>a&lt;b</code> or <code>c</code>"
    assert html_markup.code_spans("pairs `left` to `right & a lone ` stays") == (
        "pairs <code>left</code> to <code>right &amp; a lone </code> stays")
    assert html_markup.code_spans("`a`b`") == "<code>a</code>b`"
    assert html_markup.name_breaks("no-hip-equivalent: CUBLAS_STATUS `a_b<`") == (
        "no-hip-equivalent: CUBLAS_<wbr>STATUS <code>a_<wbr>b&lt;</code>")   # a long name breaks between words
    assert html_markup.path("dev/cuda/<x>.cu") == (
        '<span class="path"><span class="seg">dev</span>/<wbr><span class="seg">cuda</span>/<wbr>'
        '<span class="seg">&lt;x&gt;.cu</span></span>')
    css = (REPO / "reports" / "report.css").read_text()
    assert ".path .seg, .site { white-space: nowrap; }" in css   # inside a cell that may break anywhere, too


def test_a_saved_audit_with_a_broken_decision_is_refused_in_one_line(tmp_path: Path, capsys):
    """The first screen reads estimate.decisions: checked like every other field (report/shape.py)."""
    doc = audit_document(audit_paths([FLASH], AuditOptions()))
    assert shape.audit_problem(doc) is None
    doc["estimate"]["decisions"][1]["blocker_sites"] = "1"
    saved = tmp_path / "audit.json"
    saved.write_text(json.dumps(doc))
    assert main(["report", str(saved), "-o", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err == (f"portkit: error: {saved}: not a valid portkit audit: "
                                       "estimate.decisions[1].blocker_sites: expected an integer, got '1'\n")
    del doc["estimate"]["decisions"]   # a document saved before decisions existed still renders
    assert shape.audit_problem(doc) is None
    assert '<p id="no-decisions">' in _page(doc)
