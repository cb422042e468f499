"""Output that other tools parse is exact (issue 19, class 5).

- Terminal text prints names, messages and snippets verbatim: `[bold]`, `[/]`, `:smile:` and
  `:100:` are data, never rich markup or emoji codes, with or without colour.
- CSV cells a spreadsheet would run as a formula are neutralised with a leading `'`.
- Lone-CR (old Mac) line endings give the same line numbers as LF files, in findings and diffs.
- CUDA names split by a backslash-newline or built with `##` are reported (PK007) and counted
  as left, never silently kept while the summary says 100%.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console

from portkit.cli.app import main
from portkit.commands.convert import diff_bytes
from portkit.core.tables.mappings import Mapping, default_db
from portkit.report import mappings as mappings_report
from portkit.report import verify as verify_report
from portkit.report.csv import neutralise
from portkit.commands.results import ErrorReport, UnitReport, VerifyResult
from portkit.commands.scan.walk import Options, scan_source
from portkit.core.source import SourceFile

ANSI = re.compile(r"\x1b\[[0-9;]*m")
TRICKY = ":smile:[bold]:100:[/]"          # markup, an emoji code and a closing tag
PAD = "# pad\n" * 99                       # the finding lands on line 100: `:100:` once joined


@pytest.fixture
def plain_env(monkeypatch):
    for name in ("FORCE_COLOR", "NO_COLOR", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _forced_colour(monkeypatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")


def _tree(root: Path) -> Path:
    """A CMake file whose flag (user text in the message) sits on line 100, and a source whose
    directory and file names carry markup and emoji codes, with a spliced cudaMalloc."""
    (root / "CMakeLists.txt").write_text(
        PAD + f'set(CMAKE_CUDA_FLAGS "${{CMAKE_CUDA_FLAGS}} -Xptxas={TRICKY}")\n', encoding="utf-8")
    odd = root / "x["
    odd.mkdir()
    (odd / "]:100:[bold].cu").write_text(
        "#include <cuda_runtime.h>\n__device__ void nap() { __nanosleep(100); }\n"
        "void f(void **p) {\n  cuda\\\nMalloc(p, 4);\n}\n", encoding="utf-8")
    return root


def _audit_lines(root: Path, capsys) -> tuple[list[str], dict]:
    assert main(["audit", str(root), "--rocm", "5.2", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    main(["audit", str(root), "--rocm", "5.2"])
    out = ANSI.sub("", capsys.readouterr().out)
    return out.splitlines(), doc


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "forced-colour"])
def test_audit_text_prints_paths_and_messages_verbatim(tmp_path, capsys, plain_env, colour):
    root = _tree(tmp_path)
    if colour:
        _forced_colour(plain_env)
    lines, doc = _audit_lines(root, capsys)
    listed = [f for f in doc["findings"] if f["severity"] not in ("blocker", "info")]
    assert {f["code"] for f in listed} >= {"PK504", "PK505", "PK508", "PK308", "PK007"}
    for f in listed:
        assert f"{f['path']}:{f['line']}:{f['column']}: {f['code']} {f['message']}" in lines
    assert (f"CMakeLists.txt:100:43: PK508 `-Xptxas={TRICKY}` has no hipcc counterpart: there is no ptxas "
            "on ROCm; register and spill reports come from -Rpass-analysis=kernel-resource-usage") in lines
    assert ("x[/]:100:[bold].cu:4:3: PK007 cudaMalloc is split across lines by a backslash-newline; the "
            "converter rewrites only names it sees whole: join the lines and convert again") in lines
    assert any(line.startswith(" x[/]:100:[bold].cu ") for line in lines)   # the top-files table
    assert not any("💯" in line or "😄" in line for line in lines)


def test_audit_text_with_colour_still_styles_the_code(tmp_path, capsys, plain_env):
    """The forced-colour run above is a real colour run: the code is styled, the path is not."""
    root = _tree(tmp_path)
    _forced_colour(plain_env)
    main(["audit", str(root), "--rocm", "5.2"])
    raw = capsys.readouterr().out
    assert "\x1b[" in raw
    assert "CMakeLists.txt:100:43: \x1b[33mPK505\x1b[0m nvcc-only: `-Xptxas`" in raw


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "forced-colour"])
def test_convert_summary_prints_paths_verbatim(tmp_path, capsys, plain_env, colour):
    root = _tree(tmp_path)
    if colour:
        _forced_colour(plain_env)
    assert main(["convert", "--check", str(root)]) == 1
    lines = ANSI.sub("", capsys.readouterr().out).splitlines()
    assert ("  x[/]:100:[bold].cu:4:3: PK007 cudaMalloc is split across lines by a backslash-newline; the "
            "converter rewrites only names it sees whole: join the lines and convert again") in lines
    assert not any("💯" in line or "😄" in line for line in lines)


def test_verify_text_prints_compiler_words_verbatim():
    finding = SimpleNamespace(code="PK001", name="no-hip-equivalent", message=f"cudaX {TRICKY}")
    error = ErrorReport(f"src/{TRICKY}.cu", 100, 80, "error", f"no member named '{TRICKY}'",
                        source_line=100, source_text=f"  call({TRICKY});", findings=[finding])
    unit = UnitReport(f"src/{TRICKY}.cu", "failed", 1.0, ("hipcc",), "inferred", [error],
                      output=f"line {TRICKY}")
    result = VerifyResult(Path(f"/t/{TRICKY}"), SimpleNamespace(describe=lambda: f"hipcc {TRICKY}", note=""),
                          (5, 2, 0), ("gfx90a",), units=[unit], unmatched=[f"gone/{TRICKY}.cu"])
    for force in (False, True):
        buffer = io.StringIO()
        verify_report.render_text(result, Console(file=buffer, force_terminal=force, width=200))
        lines = ANSI.sub("", buffer.getvalue()).splitlines()
        assert lines[:8] == [
            f"portkit verify: /t/{TRICKY} with hipcc {TRICKY}, --offload-arch=gfx90a",
            "configuration of 1 unit: default (no CMakeLists.txt or Makefile read; the compiler's standard, "
            "include directories inferred from the tree)",
            "",
            f"src/{TRICKY}.cu: failed, explained (1.0 s)",
            f"  src/{TRICKY}.cu:100:80: error: no member named '{TRICKY}'",
            f"    CUDA line 100: call({TRICKY});",
            f"    explained by PK001 no-hip-equivalent: cudaX {TRICKY}",
            f"  line {TRICKY}",
        ]
        assert f"not in the tree (from compile_commands.json): gone/{TRICKY}.cu" in lines


def test_mapping_record_prints_notes_verbatim():
    m = Mapping(cuda="cudaThing", kind="function", status="partial", family="runtime", hip="hipThing",
                note=f"see {TRICKY}")
    buffer = io.StringIO()
    mappings_report.render_record(m, Console(file=buffer, force_terminal=True, width=200))
    assert f"note    see {TRICKY}" in ANSI.sub("", buffer.getvalue()).splitlines()


# --- CSV ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, cell", [
    ("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"), ("+1", "'+1"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("a=b", "a=b"), ("", ""), (7, 7), (-1.5, -1.5),
])
def test_neutralise(text, cell):
    assert neutralise(text) == cell


def test_audit_csv_neutralises_formula_cells(tmp_path, capsys):
    (tmp_path / "=SUM(1).cu").write_text("__device__ void f() {\n  -__nanosleep(4);\n}\n", encoding="utf-8")
    assert main(["audit", str(tmp_path), "--rocm", "5.2", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["code"], r["path"], r["line"], r["snippet"]) for r in rows] == \
        [("PK308", "'=SUM(1).cu", "2", "'-__nanosleep(4);")]


def test_mappings_csv_neutralises_formula_cells(monkeypatch):
    m = Mapping(cuda="@cudaX", kind="function", status="supported", family="runtime", hip="hipX",
                note="=1+1")
    monkeypatch.setattr(mappings_report, "all_records", lambda db: [m])
    buffer = io.StringIO()
    mappings_report.render_csv(default_db(), buffer)
    row = next(csv.DictReader(io.StringIO(buffer.getvalue())))
    assert (row["cuda"], row["hip"], row["note"]) == ("'@cudaX", "hipX", "'=1+1")


# --- line endings ------------------------------------------------------------------------------

LONE_CR = (b"#include <cuda_runtime.h>\r// a comment: everything after it used to vanish\r"
           b"__device__ void nap() {\r  __nanosleep(100);\r}\r"
           + b"// filler\r" * 5 + b"void f(void **p) { cudaMalloc(p, 4); }\r")


def test_lone_cr_findings_have_their_lines():
    scan = scan_source(SourceFile.from_bytes("mac.cu", LONE_CR), Options(audit=True))
    assert [(f.code, f.line, f.column, f.snippet) for f in scan.findings] == \
        [("PK308", 4, 3, "__nanosleep(100);")]
    assert (scan.metrics.lines, scan.metrics.refs_found, scan.metrics.refs_converted) == (11, 2, 2)
    source = SourceFile.from_bytes("mac.cu", LONE_CR)
    assert source.position(LONE_CR.index(b"cudaMalloc")) == (11, 20)
    assert source.line_text(11) == "void f(void **p) { cudaMalloc(p, 4); }"


def test_lone_cr_diff_hunks_have_their_lines(tmp_path, capsys):
    (tmp_path / "mac.cu").write_bytes(LONE_CR)
    assert main(["convert", "--diff", str(tmp_path / "mac.cu")]) == 0
    out = capsys.readouterr().out
    assert re.findall(r"@@ [^@]+ @@", out) == ["@@ -1,4 +1,4 @@", "@@ -8,4 +8,4 @@"]
    assert "-void f(void **p) { cudaMalloc(p, 4); }\r+void f(void **p) { hipMalloc(p, 4); }\r" in out


def test_diff_breaks_lines_only_at_line_endings():
    """A form feed (GNU style puts ^L between sections) or U+2028 is no line break."""
    old = "a\x0cb\nc\u2028d\ne\n".encode("utf-8")
    new = "a\x0cb\nc\u2028d\nE\n".encode("utf-8")
    assert diff_bytes(old, new, "x.cu", "x.cu") == \
        "--- a/x.cu\n+++ b/x.cu\n@@ -1,3 +1,3 @@\n a\x0cb\n c\u2028d\n-e\n+E\n".encode("utf-8")


def test_lone_cr_build_file_findings_have_their_lines(tmp_path, capsys):
    (tmp_path / "CMakeLists.txt").write_bytes(
        b"cmake_minimum_required(VERSION 3.18)\r# old Mac endings\rproject(x LANGUAGES CXX CUDA)\r")
    main(["audit", str(tmp_path), "--rocm", "5.2", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert [(f["code"], f["line"], f["column"]) for f in doc["findings"]] == [("PK501", 3, 1)]
    assert doc["summary"]["lines"] == 3


# --- names the preprocessor assembles ----------------------------------------------------------

def test_spliced_name_is_reported_and_left(tmp_path, capsys):
    (tmp_path / "s.cu").write_bytes(b"#include <cuda_runtime.h>\nvoid f(void **p) {\n  cuda\\\nMalloc(p, 4);\n}\n")
    assert main(["convert", "--check", str(tmp_path / "s.cu")]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:3] == ["CUDA references: 2 found, 1 converted, 1 left (50.0% converted)",
                          "1 site needs a person (high severity or worse): see `portkit audit`"]
    assert lines[4:6] == ["Left unconverted (1):",
                          "  s.cu:3:3: PK007 cudaMalloc is split across lines by a backslash-newline; the "
                          "converter rewrites only names it sees whole: join the lines and convert again"]


def test_spliced_name_with_crlf_and_in_comments(tmp_path):
    data = (b"void f(void **p) {\r\n  /* cuda\\\r\nMalloc */ cudaStream\\\r\nCreate(0);\r\n"
            b"  const char *s = \"cuda\\\nFree\";\r\n}\r\n")
    scan = scan_source(SourceFile.from_bytes("c.cu", data), Options(audit=True))
    assert [(f.code, f.line, f.column, f.subject) for f in scan.findings] == \
        [("PK007", 3, 11, "cudaStreamCreate")]


def test_token_pasted_names_are_reported_and_left(tmp_path, capsys):
    (tmp_path / "p.cu").write_bytes(b"#include <cuda_runtime.h>\n#define API(n) cuda##n\n"
                                    b"#define MK(t) make_##t\nvoid f(void **p) { API(Malloc)(p, 4); }\n")
    assert main(["audit", str(tmp_path), "--rocm", "5.2", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(f["code"], f["line"], f["column"], f["message"]) for f in doc["findings"]] == [
        ("PK007", 2, 16, "cuda##... builds CUDA names by token pasting; the converter cannot see or "
                         "rewrite the names it makes")]
    s = doc["summary"]
    assert (s["cuda_refs"], s["refs_converted"], s["refs_left"], s["converted_share"]) == (2, 1, 1, 0.5)
