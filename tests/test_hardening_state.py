"""Issue 46 (defects 1 and 11): the audited tree's state files are an attacker's data.

A pull request can commit `.portkit/history.sqlite` and `.portkit-baseline.json`. Each hostile
history here is built with the sqlite3 module; the runs that the code before the fix never ended
go through a subprocess with a timeout, so that they fail rather than hang the suite. Each test
asserts the exact lines, the exit code and the time: the trend is lost, never the report.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO
from portkit.cli.app import main
from portkit.project import history

SAMPLE = REPO / "fixtures" / "sample_project"
CUDA = "__global__ void k(int *o) { o[threadIdx.x & 31] = 0; }\n"
TIMEOUT_S = 30          # the code before the fix ran these for ever: a failure, not a hung suite
FAST_S = 5              # what "promptly" means here, with room for a loaded machine
CROSS = "FROM t a, t b, t c, t d, t e, t f, t g, t h"   # 100^8 rows: SQLite would never finish
INSERT = f"INSERT INTO runs ({', '.join(history.COLUMNS)}) VALUES ({', '.join('?' * len(history.COLUMNS))})"


def portkit(*argv: str, cwd: Path) -> tuple[int, str, float]:
    """Run portkit as a user does; its exit code, stderr and seconds taken."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "portkit", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT_S)
    return proc.returncode, proc.stderr, time.monotonic() - start


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / ".portkit").mkdir(parents=True)
    (root / "k.cu").write_text(CUDA)
    return root


def _hostile(db: Path, root: Path, *statements: str) -> bytes:
    """A database with a 100-row table `t` for the cross joins, then `statements`; its bytes."""
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE t(x INTEGER, r TEXT)")
        con.executemany("INSERT INTO t VALUES (?, ?)", [(i, str(root)) for i in range(100)])
        for statement in statements:
            con.execute(statement)
    con.close()
    return db.read_bytes()


def _runs_view() -> str:
    """A view named runs, shaped as portkit reads it, over the cross join (the root matches)."""
    columns = ", ".join(f"a.{'r' if c in ('generated', 'root', 'version') else 'x'} AS {c}" for c in history.COLUMNS)
    return f"CREATE VIEW runs AS SELECT a.x AS id, {columns} {CROSS}"


def _run(root: Path, i: int) -> list:
    return [f"2024-01-{1 + i % 28:02d}T00:00:00Z", str(root), "0.1", 1, 1, i, 0, i, 0, 0, 0, 0, 0, 1.0, 2.0, 3.0]


# --- defect 1: the history database ---------------------------------------------------------------

def test_html_with_a_history_whose_runs_is_a_view_over_a_cross_join(tree: Path, tmp_path: Path):
    """The review's repro: `audit --html` read the committed database and never ended (SIGKILL)."""
    db, page = tree / ".portkit" / "history.sqlite", tmp_path / "r.html"
    before = _hostile(db, tree, _runs_view())
    code, err, took = portkit("audit", "--html", str(page), str(tree), cwd=tmp_path)
    assert (code, err.splitlines()) == (0, [
        f"portkit: warning: {db}: not a portkit history: it holds a view 'runs'; the report has no trend",
        f"portkit: wrote the HTML report to {page}"])
    assert took < FAST_S
    text = page.read_text()
    assert "Trend: 0 recorded runs" in text and "<polyline" not in text
    assert db.read_bytes() == before and sorted(os.listdir(db.parent)) == ["history.sqlite"]


@pytest.mark.parametrize("statements, named", [
    ((history._SCHEMA, f"CREATE TRIGGER grow AFTER INSERT ON runs BEGIN INSERT INTO t SELECT a.x, a.r {CROSS}; END"),
     "a trigger 'grow'"),
    ((_runs_view(), f"CREATE TRIGGER grow INSTEAD OF INSERT ON runs BEGIN INSERT INTO t SELECT a.x, a.r {CROSS}; END"),
     "a view 'runs'"),
    ((history._SCHEMA, "CREATE TABLE loot(v)",
      "CREATE TRIGGER copy AFTER INSERT ON runs BEGIN INSERT INTO loot VALUES (new.root); END"),
     "a trigger 'copy'"),
], ids=["trigger-cross-join", "instead-of-trigger-on-a-view", "trigger-writing-elsewhere"])
def test_record_never_runs_a_trigger_of_the_tree(tree: Path, tmp_path: Path, statements: tuple, named: str):
    db, page = tree / ".portkit" / "history.sqlite", tmp_path / "r.html"
    before = _hostile(db, tree, *statements)
    code, err, took = portkit("audit", "--record", "--html", str(page), str(tree), cwd=tmp_path)
    assert (code, err.splitlines()) == (0, [
        f"portkit: warning: {db}: not a portkit history: it holds {named}; this run is not recorded",
        f"portkit: warning: {db}: not a portkit history: it holds {named}; the report has no trend",
        f"portkit: wrote the HTML report to {page}"])
    assert took < FAST_S
    assert "Trend: 0 recorded runs" in page.read_text()
    assert db.read_bytes() == before and sorted(os.listdir(db.parent)) == ["history.sqlite"]


@pytest.mark.parametrize("statements, what", [
    ((history._SCHEMA, "CREATE TABLE notes(x)"), "it holds a table 'notes'"),
    ((history._SCHEMA, "CREATE INDEX by_root ON runs(lower(root))"), "it holds an index 'by_root'"),
    ((history._SCHEMA.replace("\n)", ",\n    CHECK (length(root) < 8)\n)"),), "its table 'runs' is not the one portkit creates"),
    ((history._SCHEMA.replace("\n)", ",\n    g TEXT AS (upper(root))\n)"),), "its table 'runs' is not the one portkit creates"),
], ids=["extra-table", "index-on-an-expression", "check-constraint", "generated-column"])
def test_anything_but_portkits_own_table_is_not_a_history(tree: Path, tmp_path: Path, capsys, statements: tuple,
                                                          what: str):
    """Expressions SQLite evaluates on insert (an index's, a CHECK, a generated column) are code too."""
    db, page = tree / ".portkit" / "history.sqlite", tmp_path / "r.html"
    with sqlite3.connect(db) as con:
        for statement in statements:
            con.execute(statement)
    con.close()
    before = db.read_bytes()
    assert main(["audit", "--record", "--html", str(page), "-q", str(tree)]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"portkit: warning: {db}: not a portkit history: {what}; this run is not recorded",
        f"portkit: warning: {db}: not a portkit history: {what}; the report has no trend"]
    assert db.read_bytes() == before


def test_a_history_is_read_as_its_own_bytes_under_any_name(tmp_path: Path, capsys):
    """Read-only and immutable: a `-wal` committed beside the database is neither replayed nor
    given a `-shm`, and a `?`, `#` or `%` in the path is part of the name, not of the URI."""
    tree = tmp_path / "a?b#c%41 d"
    (tree / ".portkit").mkdir(parents=True)
    (tree / "k.cu").write_text(CUDA)
    scratch = tmp_path / "scratch.sqlite"
    con = sqlite3.connect(scratch, isolation_level=None)
    con.execute(history._SCHEMA)
    con.executemany(INSERT, [_run(tree, 1), _run(tree, 2)])
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute(INSERT, _run(tree, 3))
    con.execute("CREATE TRIGGER grow AFTER INSERT ON runs BEGIN SELECT 1; END")
    shutil.copy(scratch, tree / ".portkit" / "history.sqlite")
    shutil.copy(f"{scratch}-wal", tree / ".portkit" / "history.sqlite-wal")
    con.close()
    page = tmp_path / "r.html"
    assert main(["audit", "--html", str(page), "-q", str(tree)]) == 0
    assert capsys.readouterr().err == ""
    assert "Trend: 2 recorded runs" in page.read_text()
    assert sorted(os.listdir(tree / ".portkit")) == ["history.sqlite", "history.sqlite-wal"]


def test_the_trend_reads_only_the_newest_runs(tree: Path, tmp_path: Path, capsys):
    db, page = tree / ".portkit" / "history.sqlite", tmp_path / "r.html"
    with sqlite3.connect(db) as con:
        con.execute(history._SCHEMA)
        con.executemany(INSERT, [_run(tree, i) for i in range(1005)])
    con.close()
    runs = history.load(db, str(tree))
    assert (len(runs), runs[0]["findings"], runs[-1]["findings"]) == (1000, 5, 1004)
    assert main(["audit", "--html", str(page), "-q", str(tree)]) == 0
    assert capsys.readouterr().err == ""
    assert "Trend: 1000 recorded runs" in page.read_text()


ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def test_a_query_ends_within_the_time_budget():
    """The budget every history query runs under: SQLite is stopped from inside, by its progress handler."""
    db = sqlite3.connect(":memory:")
    start = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="^interrupted$"):
        with history._bounded(db):
            db.execute(ENDLESS).fetchone()
    assert history.BUDGET_S <= time.monotonic() - start < history.BUDGET_S + 1.5
    db.close()


def test_a_history_past_the_time_budget_costs_only_the_trend(tree: Path, tmp_path: Path, capsys, monkeypatch):
    """The budget's own line: here no time at all, so the first look at the clock stops the read."""
    db, page = tree / ".portkit" / "history.sqlite", tmp_path / "r.html"
    with sqlite3.connect(db) as con:
        con.execute(history._SCHEMA)
        con.executemany(INSERT, [_run(tree, i) for i in range(1005)])
    con.close()
    monkeypatch.setattr(history, "BUDGET_S", 0.0, raising=False)
    assert main(["audit", "--html", str(page), "-q", str(tree)]) == 0
    assert capsys.readouterr().err == (f"portkit: warning: {db}: cannot read the history: a query took longer than "
                                       f"0 s (a portkit history answers in milliseconds); the report has no trend\n")
    assert "Trend: 0 recorded runs" in page.read_text()


SIGTERM_PROBE = f"""
import signal, sqlite3, sys
from portkit.cli import app
from portkit.project import history
signal.signal(signal.SIGTERM, app._on_sigterm)   # as portkit's main() installs it
history.BUDGET_S = 600                           # only the signal can end this query
db = sqlite3.connect(":memory:")
try:
    with history._bounded(db):
        print("querying", flush=True)
        db.execute({ENDLESS!r}).fetchone()
except app.Terminated:
    print("terminated", flush=True)
    sys.exit(143)
"""


def test_sigterm_ends_a_history_query_at_once(tmp_path: Path):
    """Python runs its SIGTERM handler only between bytecodes, never while SQLite works in C, and
    the sqlite3 module swallows an exception raised in a progress handler: without the guard the
    signal waits for the query (the review's reader needed SIGKILL) or is lost."""
    proc = subprocess.Popen([sys.executable, "-c", SIGTERM_PROBE], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "querying\n"
        time.sleep(0.5)
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=TIMEOUT_S)
        assert (proc.returncode, out) == (143, "terminated\n")
        assert time.monotonic() - sent < 2
    finally:
        proc.kill()
        proc.wait()


# --- the baseline ------------------------------------------------------------------------------------

def test_a_baseline_larger_than_the_limit_is_one_line(tmp_path: Path, capsys, monkeypatch):
    """A committed baseline of gigabytes was read whole into memory; past 64 MiB it is refused unread."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_text(CUDA)
    empty = b'{"tool": "portkit", "version": 1, "findings": []}'
    (tmp_path / ".portkit-baseline.json").write_bytes(empty + b" " * ((64 << 20) + 1 - len(empty)))
    assert main(["check", "k.cu"]) == 2
    assert capsys.readouterr().err == (f"portkit: error: {tmp_path / '.portkit-baseline.json'}: not a portkit "
                                       f"baseline (larger than 64 MiB); write one with `portkit baseline`\n")


# --- defect 11: --explain-estimate -o FILE --------------------------------------------------------

def test_explain_estimate_goes_to_the_output_file(tmp_path: Path, capsys):
    assert main(["audit", str(SAMPLE), "--rocm", "5.2", "--explain-estimate"]) == 0
    shown = capsys.readouterr().out
    saved = tmp_path / "items.txt"
    assert main(["audit", str(SAMPLE), "--rocm", "5.2", "--explain-estimate", "-o", str(saved)]) == 0
    assert capsys.readouterr() == ("", f"portkit: wrote the estimate's work items to {saved}\n")
    assert saved.read_text() == shown
    assert shown.startswith("Work items (hours; their sum is the estimate)\n")


def test_explain_estimate_output_goes_through_the_output_checks(tmp_path: Path, capsys):
    folder = tmp_path / "reports"
    folder.mkdir()
    assert main(["audit", str(SAMPLE), "--rocm", "5.2", "--explain-estimate", "-o", str(folder)]) == 2
    assert capsys.readouterr() == ("", f"portkit: error: {folder}: is a directory; not written\n")
    assert list(folder.iterdir()) == []
