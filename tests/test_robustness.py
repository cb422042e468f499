"""No internal error on any input (issue 19, class 3): text rules, build-file translators, saved
reports, baselines, the history database and numeric options.

Each case is an exact input that failed before (a traceback, an internal error, a second
conversion that changed the first one's output, a hang on a locked database) with the exact
behaviour now: the output bytes, or the one-line message and exit code 2.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import REPO
from portkit.api import convert_text
from portkit.cli.app import main

SAMPLE = REPO / "fixtures" / "sample_project"


def twice(text: str, filename: str) -> tuple[bytes, bytes]:
    once = convert_text(text, filename=filename).output
    return once, convert_text(once, filename=filename).output


# --- text rules -----------------------------------------------------------------------------------

CMAKE_OPEN_LINK = ("cmake_minimum_required(VERSION 3.18)\nproject(app LANGUAGES CXX CUDA)\n"
                   "add_executable(app main.cu)\ntarget_link_libraries(\n  app PRIVATE nvinfer)\n")


@pytest.fixture
def open_link_tree(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "CMakeLists.txt").write_text(CMAKE_OPEN_LINK)
    (tmp_path / "main.cu").write_text("__global__ void k() {}\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_link_command_open_at_the_end_of_a_line_is_audited(open_link_tree: Path, capsys):
    assert main(["audit", ".", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    found = [(f["code"], f["line"], f["column"]) for f in json.loads(out)["findings"]]
    assert (found, err) == ([("PK501", 2, 1)], "")


def test_link_command_open_at_the_end_of_a_line_in_baseline_and_check(open_link_tree: Path, capsys):
    assert main(["baseline", "."]) == 0
    entries = json.loads((open_link_tree / ".portkit-baseline.json").read_text())["findings"]
    assert [(e["path"], e["code"]) for e in entries] == [("CMakeLists.txt", "PK501")]
    assert main(["check", "CMakeLists.txt"]) == 0
    assert "internal error" not in capsys.readouterr().err


# --- build-file translators: idempotence ----------------------------------------------------------

@pytest.mark.parametrize("filename, text, expected", [
    ("Makefile", "NVCCFLAGS = -Xcompiler -lcudart\n", b"NVCCFLAGS = -lamdhip64\n"),
    ("Makefile", "all:\n\tnvcc -Xcompiler -lcudart a.cu\n", b"all:\n\thipcc -lamdhip64 a.cu\n"),
    ("Makefile", "NVCCFLAGS = -Xcompiler -fPIC,-lcudart\n", b"NVCCFLAGS = -fPIC -lamdhip64\n"),
    ("CMakeLists.txt", "target_compile_options(t PRIVATE -Xcompiler -lcudart)\n",
     b"target_compile_options(t PRIVATE -lamdhip64)\n"),
    ("setup.py", "CUDAExtension('a', ['a.cu'], extra_compile_args={'nvcc': ['-Xcompiler', '-lcudart']})\n",
     b"CUDAExtension('a', ['a.cu'], extra_compile_args={'nvcc': ['-lamdhip64']})\n"),
])
def test_host_flags_after_xcompiler_convert_once_and_for_all(filename: str, text: str, expected: bytes):
    assert twice(text, filename) == (expected, expected)


@pytest.mark.parametrize("text, expected", [
    ("find_package(CUDA)\nset(CUDA_NVCC_FLAGS ${CUDA_NVCC_FLAGS};-I${CUDA_INCLUDE_DIRS};-arch=sm_80)\n",
     b'enable_language(HIP)\nfind_package(hip)\nstring(APPEND CMAKE_HIP_FLAGS " ${CUDA_NVCC_FLAGS} '
     b'-I${hip_INCLUDE_DIRS} --offload-arch=gfx90a")\n'),
    ("cuda_add_library(k a.cu OPTIONS -I${CUDA_INCLUDE_DIRS} $<$<COMPILE_LANGUAGE:CUDA>:-G>)\n",
     b'add_library(k a.cu)\ntarget_compile_options(k PRIVATE "$<$<COMPILE_LANGUAGE:HIP>:-I${hip_INCLUDE_DIRS};'
     b'$<$<COMPILE_LANGUAGE:HIP>:-G>>")\nset_source_files_properties(a.cu PROPERTIES LANGUAGE HIP)\n'),
])
def test_cmake_names_moved_into_new_flags_are_ported_on_the_first_run(text: str, expected: bytes):
    assert twice(text, "CMakeLists.txt") == (expected, expected)


def test_unclosed_cmake_command_is_left_as_written():
    text = "add_library(k a.cu\nadd_library(j b.cu)\n"
    assert twice(text, "CMakeLists.txt") == (text.encode(), text.encode())


def test_make_variable_that_held_nvcc_converts_the_same_twice():
    text = "NVCC ?= nvcc\nNVCC := -arch=sm_86\n"
    assert twice(text, "Makefile") == (b"NVCC ?= hipcc\nNVCC := -arch=sm_86\n",) * 2


@pytest.mark.parametrize("text, expected", [
    ("NVCC\tnvcc -Xcompiler ", b"NVCC\thipcc "),
    ("NVCCFLAGS = -Xcompiler \tnvcc -Xcompiler ", b"NVCCFLAGS = hipcc "),
])
def test_deleting_make_options_never_takes_the_compiler_between_them(text: str, expected: bytes):
    assert twice(text, "Makefile") == (expected, expected)


def test_include_path_ending_in_nvcc_is_not_the_compiler():
    text = "CFLAGS = -I/usr/local/cuda/include/usr/local/cuda/bin/nvcc\n"
    assert twice(text, "Makefile") == (b"CFLAGS = \n", b"CFLAGS = \n")


# --- portkit report: the saved audit --------------------------------------------------------------

@pytest.fixture(scope="module")
def saved_audit(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("audit") / "audit.json"
    assert main(["audit", str(SAMPLE), "--format", "json", "-o", str(out), "-q"]) == 0
    return json.loads(out.read_text())


def _broken(doc: dict, path: str, value: object) -> dict:
    doc = json.loads(json.dumps(doc))
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    node = doc
    for p in parents:
        node = node[p]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return doc


@pytest.mark.parametrize("path, value, reason", [
    ("findings", "oops", "findings: expected a list, got 'oops'"),
    ("findings.0", {}, "findings[0]: missing field 'code'"),
    ("findings.0.line", "3", "findings[0].line: expected an integer, got '3'"),
    ("findings.0.severity", "fatal", "findings[0].severity: expected one of blocker, high, medium, low, info, "
                                     "got 'fatal'"),
    ("estimate", [], "estimate: expected an object, got list"),
    ("estimate.person_weeks.p50", float("inf"), "estimate.person_weeks.p50: expected a finite number, got inf"),
    ("summary.by_severity", {"high": None}, "summary.by_severity.high: expected an integer, got None"),
    ("files.0.lines", True, "files[0].lines: expected an integer, got True"),
    ("root", KeyError, "the document: missing field 'root'"),
])
def test_malformed_audit_json_is_one_line_naming_the_file(saved_audit: dict, tmp_path: Path, capsys,
                                                          path: str, value: object, reason: str):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_broken(saved_audit, path, value)))
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err == f"portkit: error: {bad}: not a valid portkit audit: {reason}\n"
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("text, reason", [
    ('{"version": 1, "estimate": ' + "[" * 100000 + "]" * 100000 + "}", "nested too deeply"),
])
def test_deeply_nested_audit_json_is_one_line(tmp_path: Path, capsys, text: str, reason: str):
    bad = tmp_path / "deep.json"
    bad.write_text(text)
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err == f"portkit: error: {bad}: cannot read the audit JSON: {reason}\n"


def test_audit_json_with_1e400_and_nan(saved_audit: dict, tmp_path: Path, capsys):
    bad = tmp_path / "big.json"
    text = json.dumps(saved_audit).replace('"converted_share": ', '"converted_share": 1e400, "x": ', 1)
    bad.write_text(text)
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err == (f"portkit: error: {bad}: not a valid portkit audit: "
                                       "summary.converted_share: expected a finite number, got inf\n")
    bad.write_text(json.dumps(_broken(saved_audit, "estimate.focus_hours_per_week", float("nan"))))
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err == (f"portkit: error: {bad}: not a valid portkit audit: "
                                       "estimate.focus_hours_per_week: expected a finite number, got nan\n")


# --- baseline -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, reason", [
    ('{"version": 1, "findings": [{"fingerprint": "a", "count": 1e400}]}',
     "findings[0].count: expected a positive integer, got inf"),
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ('{"version": 1, "findings": "all"}', "`findings` must be a list"),
    ('{"version": 1, "findings": [["a"]]}', "findings[0]: expected an object with a string `fingerprint`"),
    ('{"version": 1, "findings": [{"fingerprint": 7}]}', "findings[0]: expected an object with a string `fingerprint`"),
    ('{"version": 1, "findings": [{"fingerprint": "a", "count": "2"}]}',
     "findings[0].count: expected a positive integer, got '2'"),
    ('"baseline"', "expected an object, got str"),
])
def test_malformed_baseline_is_one_line_naming_the_file(tmp_path: Path, capsys, monkeypatch, text: str, reason: str):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_text("__global__ void k() { asm(\"exit;\"); }\n")
    (tmp_path / ".portkit-baseline.json").write_text(text)
    assert main(["check", "k.cu"]) == 2
    assert capsys.readouterr().err == (f"portkit: error: {tmp_path / '.portkit-baseline.json'}: not a portkit "
                                       f"baseline ({reason}); write one with `portkit baseline`\n")


# --- the history database ------------------------------------------------------------------------

@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    (root / "k.cu").write_text("__global__ void k(int *o) { o[threadIdx.x & 31] = 0; }\n")
    return root


def _audit_with_history(project: Path, tmp_path: Path, capsys) -> tuple[int, str, str]:
    html = tmp_path / "r.html"
    code = main(["audit", str(project), "--record", "--format", "json", "--html", str(html)])
    out, err = capsys.readouterr()
    assert html.read_text().startswith("<!doctype html>")
    return code, json.loads(out)["root"], err


def test_corrupt_history_is_a_warning_and_the_audit_is_still_written(project: Path, tmp_path: Path, capsys):
    db = project / ".portkit" / "history.sqlite"
    db.parent.mkdir()
    db.write_bytes(bytes(range(256)) * 8)
    code, root, err = _audit_with_history(project, tmp_path, capsys)
    assert (code, root) == (0, str(project))
    assert err.splitlines() == [
        f"portkit: warning: {db}: cannot open the history database: file is not a database; this run is not recorded",
        f"portkit: warning: {db}: cannot open the history database: file is not a database; the report has no trend",
        f"portkit: wrote the HTML report to {tmp_path / 'r.html'}"]


@pytest.mark.slow
def test_locked_history_is_a_warning_and_the_audit_is_still_written(project: Path, tmp_path: Path, capsys):
    db = project / ".portkit" / "history.sqlite"
    assert main(["audit", str(project), "--record", "-q"]) == 0
    lock = sqlite3.connect(db)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        code, _, err = _audit_with_history(project, tmp_path, capsys)
    finally:
        lock.close()
    assert code == 0
    assert err.splitlines()[0] == (f"portkit: warning: {db}: cannot open the history database: database is "
                                   "locked; this run is not recorded")


def test_history_with_wrong_column_types(project: Path, tmp_path: Path, capsys):
    db = project / ".portkit" / "history.sqlite"
    assert main(["audit", str(project), "--record", "-q"]) == 0
    assert main(["audit", str(project), "--record", "-q"]) == 0
    with sqlite3.connect(db) as con:
        con.execute("UPDATE runs SET p50_weeks = 'soon' WHERE id = 1")
    con.close()
    saved = tmp_path / "a.json"
    assert main(["audit", str(project), "--format", "json", "-o", str(saved), "-q"]) == 0
    assert main(["report", str(saved), "-o", str(tmp_path / "r.html"), "--history", str(db)]) == 0
    assert capsys.readouterr().err == (f"portkit: warning: {db}: not a portkit history: column p50_weeks holds "
                                       f"'soon'; the report has no trend\nportkit: wrote the HTML report to "
                                       f"{tmp_path / 'r.html'}\n")
    assert "<polyline" not in (tmp_path / "r.html").read_text()


# --- numeric options ------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["audit", "{tmp}", "--file-timeout", "nan"], "--file-timeout must be a finite number, not nan"),
    (["audit", "{tmp}", "--file-timeout", "inf"], "--file-timeout must be a finite number, not inf"),
    (["audit", "{tmp}", "--file-timeout", "1e400"], "--file-timeout must be a finite number, not 1e400"),
    (["audit", "{tmp}", "--file-timeout", "-1"], "--file-timeout must be 0 (no limit) or positive, not -1"),
    (["audit", "{tmp}", "--file-timeout", "0.001"],
     "--file-timeout must be between 0.01 and 1e+06 seconds, not 0.001"),
    (["convert", "{tmp}", "--diff", "--file-timeout", "1e-9"],
     "--file-timeout must be between 0.01 and 1e+06 seconds, not 1e-9"),
    (["audit", "{tmp}", "--focus-hours", "nan"], "--focus-hours must be a finite number, not nan"),
    (["audit", "{tmp}", "--focus-hours", "0"], "--focus-hours must be between 1 and 80, not 0"),
    (["audit", "{tmp}", "--focus-hours=-inf"], "--focus-hours must be a finite number, not -inf"),
    (["audit", "{tmp}", "--team-size", "0"], "--team-size must be at least 1, not 0"),
    (["audit", "{tmp}", "--team-size", "2.5"], "--team-size must be a whole number, not '2.5'"),
    (["audit", "{tmp}", "--team-size", "100000"], "--team-size must be at most 1000, not 100000"),
    (["audit", "{tmp}", "-j", "0"], "--jobs must be at least 1, not 0"),
    (["audit", "{tmp}", "--jobs", "-3"], "--jobs must be at least 1, not -3"),
    (["convert", "{tmp}", "--diff", "-j", "100000"], "--jobs must be at most 1024, not 100000"),
    (["verify", "{tmp}", "-j", "nan"], "--jobs must be a whole number, not 'nan'"),
    (["verify", "{tmp}", "--timeout", "nan"], "--timeout must be a finite number, not nan"),
    (["verify", "{tmp}", "--timeout", "0"], "--timeout must be positive, not 0"),
    (["verify", "{tmp}", "--timeout", "0.0001"], "--timeout must be between 0.01 and 1e+06 seconds, not 0.0001"),
    (["convert", "{tmp}", "-o", "{tmp}/o", "--verify", "--timeout", "inf"],
     "--timeout must be a finite number, not inf"),
    (["audit", "{tmp}", "--engine", "clang", "--file-timeout", "nan"],
     "--file-timeout must be a finite number, not nan"),
])
def test_bad_numbers_are_one_line_and_exit_2(tmp_path: Path, capsys, argv: list[str], message: str):
    (tmp_path / "a.cu").write_text("__global__ void k() {}\n")
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    assert capsys.readouterr() == ("", f"portkit: error: {message}\n")


def test_zero_file_timeout_still_means_no_limit(tmp_path: Path, capsys):
    (tmp_path / "a.cu").write_text("__global__ void k() {}\n")
    assert main(["audit", str(tmp_path), "--file-timeout", "0", "-q"]) == 0
    assert capsys.readouterr() == ("", "")
