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
from portkit.report import html
from portkit.report.model import audit_document
from portkit.scan.walk import Options

SAMPLE = REPO / "fixtures" / "sample_project"


def sample_doc() -> dict:
    return audit_document(audit_paths([SAMPLE], AuditOptions(scan=Options(audit=True, rocm=(5, 2, 0)))))


def test_bar_chart_geometry_and_labels():
    chart = html.bar_chart([("warp", 40.0), ("build", 10.0), ("api", 0.25)])
    assert chart["height"] == 3 * html.BAR["row"]
    assert [(b["label"], b["value"], b["width"], b["y"]) for b in chart["bars"]] == [
        ("warp", "40 h", 330.0, 4), ("build", "10 h", 82.5, 28), ("api", "0.2 h", 2.1, 52)]
    assert chart["bars"][1]["text_x"] == html.BAR["label"] + 82.5 + 6


def test_directories_are_top_ten_plus_the_rest():
    rows = [{"name": f"d{i:02d}", "hours": float(20 - i)} for i in range(13)]
    top = html.top_directories(rows)
    assert top[:2] == [("d00", 20.0), ("d01", 19.0)] and len(top) == 11
    assert top[-1] == ("3 more directories", 8.0 + 9.0 + 10.0)


def test_trend_needs_two_runs_and_scales_each_line():
    runs = [{"generated": f"2026-11-0{i}T00:00:00Z", "p50_weeks": w, "findings": n}
            for i, (w, n) in enumerate([(4.0, 100), (3.0, 80), (2.0, 20)], 1)]
    assert html.trend_chart(runs[:1]) is None
    trend = html.trend_chart(runs)
    assert trend["weeks"]["points"] == "40.0,40.0 320.0,70.0 600.0,100.0"
    assert trend["findings"]["points"] == "40.0,40.0 320.0,64.0 600.0,136.0"
    assert [r["date"] for r in trend["runs"]] == ["2026-11-01", "2026-11-02", "2026-11-03"]


def test_headline_comes_from_the_audit_document():
    doc = sample_doc()
    page = io.StringIO()
    html.render(doc, page)
    text = page.getvalue()
    e = doc["estimate"]
    assert f'<div class="big" id="kpi-p50">{e["person_weeks"]["p50"]:.1f}</div>' in text
    assert f'<span id="kpi-blockers">{doc["summary"]["blockers"]}</span> blocker sites' in text
    assert f'<div class="big" id="kpi-decisions">{len(doc["estimate"]["decisions"])}</div>' in text
    assert f'id="kpi-converted">{doc["summary"]["converted_share"] * 100:.0f}%</div>' in text
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
    html.render(doc, page)
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
