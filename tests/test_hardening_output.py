"""What portkit prints cannot be steered by the tree, and saved inputs fail in one line (issue 28).

- Item 14: control characters in file names, snippets and messages reach no terminal raw: every
  text output shows them as `\\xNN` (portkit/report/safe_text.py).
- Item 15: `portkit report` on a saved audit whose fields are malformed names the file and the
  field in one line, exit 2; every field the HTML report reads is validated first.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conftest import REPO
from portkit.cli import main
from portkit.report import html, shape

FLASH = REPO / "fixtures" / "audit" / "flash_attention_like"


# --- item 15: portkit report on a malformed saved audit ---------------------------------------------

@pytest.fixture(scope="module")
def saved_audit(tmp_path_factory) -> dict:
    """An audit with blockers, dependencies and findings, plus the sections only some trees have
    (deep mode, polyfills, an optional feature), so that the report reads every field it can."""
    out = tmp_path_factory.mktemp("audit") / "audit.json"
    assert main(["audit", str(FLASH), "--format", "json", "-o", str(out), "-q"]) == 0
    doc = json.loads(out.read_text())
    doc["engine"] = {"name": "clang", "toolchain": "clang", "units": 2, "files_seen": 2, "seconds": 1.0, "added": 1,
                     "left_out_inactive": 0, "partial_parse_settled": 0, "clang_errors": 0,
                     "fell_back": [{"path": "a.cu", "reason": "clang crashed"}]}
    doc["summary"]["polyfills"] = [{"name": "portkit_umin", "serves": ["umin"], "files": ["a.cu"], "note": "n"}]
    doc["estimate"]["items"].append({**doc["estimate"]["items"][0], "optional": "benchmarks"})
    doc["estimate"]["optional"] = [{"feature": "benchmarks", "hours": {"p10": 1.0, "p50": 2.0, "p90": 3.0},
                                    "person_weeks": {"p10": 0.1, "p50": 0.2, "p90": 0.3}}]
    assert doc["findings"] and doc["dependencies"] and doc["summary"]["blockers"]
    return doc


@pytest.mark.parametrize("value, reason", [
    ("many", "estimate.hours: expected an object, got 'many'"),
    ([1, 2, 3], "estimate.hours: expected an object, got list"),
    ({"p10": 1.0}, "estimate.hours: missing field 'p50'"),
    ({"p10": -1.0, "p50": 2.0, "p90": 3.0}, "estimate.hours.p10: expected a number >= 0, got -1.0"),
    ({"p10": float("nan"), "p50": 2.0, "p90": 3.0}, "estimate.hours.p10: expected a finite number, got nan"),
])
def test_report_on_malformed_estimate_hours_names_the_file_and_field(saved_audit: dict, tmp_path: Path, capsys,
                                                                     value: object, reason: str):
    bad = tmp_path / "audit.json"
    doc = json.loads(json.dumps(saved_audit))
    doc["estimate"]["hours"] = value
    bad.write_text(json.dumps(doc))
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err == f"portkit: error: {bad}: not a valid portkit audit: {reason}\n"
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("path, value, reason", [
    (("summary", "refs_left"), KeyError, "summary: missing field 'refs_left'"),
    (("summary", "files"), -3, "summary.files: expected a number >= 0, got -3"),
    (("estimate", "by_category", 0, "hours"), -2.5, "estimate.by_category[0].hours: expected a number >= 0, got -2.5"),
    (("findings", 0, "effort_hours", "low"), -1, "findings[0].effort_hours.low: expected a number >= 0, got -1"),
])
def test_report_rejects_missing_and_negative_numbers_it_reads(saved_audit: dict, tmp_path: Path, capsys,
                                                              path: tuple, value: object, reason: str):
    bad = tmp_path / "audit.json"
    doc = json.loads(json.dumps(saved_audit))
    node = doc
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    bad.write_text(json.dumps(doc))
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err == f"portkit: error: {bad}: not a valid portkit audit: {reason}\n"


def _cut_to(doc: object, spec: object) -> object:
    """`doc` with every field the shape does not list removed."""
    if isinstance(spec, dict):
        return {key: _cut_to(doc[key], inner) for key, inner in spec.items()}
    if isinstance(spec, list):
        return [_cut_to(item, spec[0]) for item in doc]
    return doc


def test_every_field_the_html_report_reads_is_in_the_validated_shape(saved_audit: dict):
    """A document holding only what shape.py validates renders: a field the report reads that the
    shape does not check would be a KeyError or template error here (estimate.hours was one)."""
    cut = _cut_to(saved_audit, shape.AUDIT)
    cut["summary"]["polyfills"] = _cut_to(saved_audit["summary"]["polyfills"], shape.POLYFILLS)
    cut["engine"] = _cut_to(saved_audit["engine"], shape.ENGINE)
    assert shape.audit_problem(cut) is None
    out = io.StringIO()
    html.render(cut, out)
    assert "benchmarks" in out.getvalue()
