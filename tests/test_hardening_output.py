"""What portkit prints cannot be steered by the tree, and saved inputs fail in one line (issue 28).

- Item 14: control characters in file names, snippets and messages reach no terminal raw: every
  text output shows them as `\\xNN` (portkit/report/safe_text.py).
- Item 15: `portkit report` on a saved audit whose fields are malformed names the file and the
  field in one line, exit 2; every field the HTML report reads is validated first.
"""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from portkit.project import history
from portkit.cli.app import main
from portkit.report import html, shape
from portkit.report.audit_load import load
from portkit.report.safe_text import safe, safe_diff

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
    out, whole = io.StringIO(), io.StringIO()
    html.render(load(cut), out)
    html.render(load(saved_audit), whole)
    assert "benchmarks" in out.getvalue()
    assert out.getvalue() == whole.getvalue()   # nothing the shape leaves out shows on the page


# --- item 14: control characters from the tree never reach a terminal raw ----------------------------

OSC_TITLE = b"\x1b]0;pwned\x07"          # sets the terminal's title
KERNEL = b"__global__ void k(int*o){ o[threadIdx.x%32]=1; } // " + OSC_TITLE + b" \xc2\x9b \x9b\n"
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")   # \t and \n are portkit's own layout


def _run(*args: str, cwd: Path) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "portkit", *args], cwd=cwd, capture_output=True, check=False)
    out, err = (data.decode("utf-8", "surrogateescape") for data in (proc.stdout, proc.stderr))
    return proc.returncode, out, err


@pytest.fixture
def hostile_tree(tmp_path: Path) -> Path:
    """A file named with an OSC escape, one with a raw C1 CSI byte (not UTF-8) in its name."""
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / os.fsdecode(b"k" + OSC_TITLE + b".cu")).write_bytes(KERNEL)
    (tree / os.fsdecode(b"j\x9b.cu")).write_bytes(KERNEL)
    return tree


def test_safe_shows_controls_bidi_and_undecodable_bytes_as_escapes():
    assert safe("a\x1b]0;x\x07\tb\r\n\x7f\x9b\u202ec\udcff é…") == \
        "a\\x1b]0;x\\x07\\x09b\\x0d\\x0a\\x7f\\x9b\\u202ec\\xff é…"
    assert safe("plain text, C \"\\x1b\" stays") == "plain text, C \"\\x1b\" stays"
    assert safe(Path("a\x1bb")) == "a\\x1bb"


def test_safe_diff_keeps_line_endings_tabs_form_feeds_and_latin1():
    diff = b"--- a/k\x1b.cu\n+++ b/k\x1b.cu\n@@ -1 +1 @@\n-\tx\x07\xe9\x0c\r\n+\ty\x9b\xc2\x9b\r\n"
    assert safe_diff(diff) == \
        b"--- a/k\\x1b.cu\n+++ b/k\\x1b.cu\n@@ -1 +1 @@\n-\tx\\x07\xe9\x0c\r\n+\ty\\x9b\\x9b\r\n"
    clean = b"--- a/k.cu\n+++ b/k.cu\n@@ -1 +1 @@\n-\tcudaMalloc\xe9\n+\thipMalloc\xe9\n"
    assert safe_diff(clean) is clean


def test_audit_text_output_escapes_control_characters_in_file_names(hostile_tree: Path):
    code, out, err = _run("audit", str(hostile_tree), cwd=hostile_tree.parent)
    assert code == 0 and not RAW_CONTROL.search(out) and not RAW_CONTROL.search(err), (out, err)
    message = ": PK201 `threadIdx.x%32` assumes 32-lane warps; an AMD wavefront has 64 lanes"
    assert [line for line in out.splitlines() if "PK201" in line] == [
        "j\\x9b.cu:1:29" + message, "k\\x1b]0;pwned\\x07.cu:1:29" + message]
    assert " k\\x1b]0;pwned\\x07.cu " in out   # the top files table


def test_convert_diff_and_summary_escape_control_characters(hostile_tree: Path):
    for name in os.listdir(hostile_tree):
        (hostile_tree / name).write_bytes(b"void f(void **p) { cudaMalloc(p, 4); cudaDeviceSetLimit("
                                          b"cudaLimitDevRuntimeSyncDepth, 1); }\t// " + OSC_TITLE + b" \xc2\x9b \xe9\n")
    code, out, err = _run("convert", str(hostile_tree), "--diff", cwd=hostile_tree.parent)
    assert code == 0 and not RAW_CONTROL.search(out.replace("\udce9", "")) and not RAW_CONTROL.search(err), (out, err)
    tail = "\t// \\x1b]0;pwned\\x07 \\x9b \udce9"   # the tab and the latin-1 byte are the file's own text
    assert out.splitlines()[:7] == [
        "--- a/j\\x9b.cu", "+++ b/j\\x9b.cu", "@@ -1 +1,3 @@",
        "-void f(void **p) { cudaMalloc(p, 4); cudaDeviceSetLimit(cudaLimitDevRuntimeSyncDepth, 1); }" + tail,
        "+", "+#include <hip/hip_runtime.h>",
        "+void f(void **p) { hipMalloc(p, 4); hipDeviceSetLimit(cudaLimitDevRuntimeSyncDepth, 1); }" + tail]
    assert "  k\\x1b]0;pwned\\x07.cu:1:57: PK001 cudaLimitDevRuntimeSyncDepth has no HIP equivalent" in err.splitlines()


def test_error_lines_escape_the_names_they_carry(tmp_path: Path):
    code, out, err = _run("report", "gone\x1b]0;pwned\x07.json", "-o", "r.html", cwd=tmp_path)
    assert code == 2 and err == ("portkit: error: gone\\x1b]0;pwned\\x07.json: cannot read the audit JSON: "
                                 "[Errno 2] No such file or directory: 'gone\\x1b]0;pwned\\x07.json'\n")


@pytest.mark.slow
def test_json_sarif_csv_and_html_of_a_name_that_is_not_utf8(hostile_tree: Path, tmp_path: Path):
    """These wrote an internal error (surrogates not allowed) for such a name; JSON now escapes it
    (and C1 controls) so that it reads back the same, and `portkit report` renders it."""
    for fmt in ("json", "sarif", "csv"):
        code, out, err = _run("audit", str(hostile_tree), "--format", fmt, "-o", str(tmp_path / f"a.{fmt}"), "-q",
                              cwd=tmp_path)
        assert (code, err) == (0, ""), err
    text = (tmp_path / "a.json").read_bytes().decode("utf-8")   # valid UTF-8
    assert '"path": "j\\udc9b.cu"' in text and "\\u009b" in text and not RAW_CONTROL.search(text)
    doc = json.loads(text)
    assert [f["path"] for f in doc["findings"]] == ["j\udc9b.cu", "k\x1b]0;pwned\x07.cu"]
    assert doc["findings"][0]["snippet"].endswith("// \x1b]0;pwned\x07 \x9b \ufffd")
    assert _run("report", str(tmp_path / "a.json"), "-o", str(tmp_path / "r.html"), cwd=tmp_path)[0] == 0


def test_report_history_with_a_negative_number_has_no_trend(saved_audit: dict, tmp_path: Path, capsys):
    """A negative count or week in the history database drew the trend off its chart."""
    saved, db = tmp_path / "a.json", tmp_path / "history.sqlite"
    saved.write_text(json.dumps(saved_audit))
    with sqlite3.connect(db) as con:
        con.execute(history._SCHEMA)
        for weeks in (-3.0, 2.0):
            con.execute(f"INSERT INTO runs ({', '.join(history.COLUMNS)}) VALUES ({', '.join('?' * 16)})",
                        ("2026-11-26T00:00:00Z", saved_audit["root"], "1", 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1.0,
                         weeks, 3.0))
    con.close()
    assert main(["report", str(saved), "-o", str(tmp_path / "r.html"), "--history", str(db)]) == 0
    assert capsys.readouterr().err == (f"portkit: warning: {db}: not a portkit history: column p50_weeks holds "
                                       f"-3.0; the report has no trend\nportkit: wrote the HTML report to "
                                       f"{tmp_path / 'r.html'}\n")


def test_a_saved_port_style_is_validated_before_the_page_reads_it(saved_audit: dict):
    """estimate.port_style (issue 50) is shown on the page: a saved document's is checked like the rest."""
    bad = json.loads(json.dumps(saved_audit))
    bad["estimate"]["port_style"]["assumed"] = "sideways"
    assert shape.audit_problem(bad) == "estimate.port_style.assumed: expected one of one-way, both-vendors, got 'sideways'"
