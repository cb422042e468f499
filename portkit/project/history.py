"""Audit history in an embedded SQLite database, so the report can show the port converging.

`portkit audit --record` appends one row per run (default `.portkit/history.sqlite` under the
audited root, `--history PATH` to choose). Rows hold the run's summary only, never source.

The database usually lives in the audited tree, so it is an attacker's file (a pull request can
commit one): a view or trigger in it is code that SQLite would run for portkit. Before any query
the schema must be exactly the one portkit creates; every query runs under a time budget that a
SIGTERM or Ctrl-C also ends; a read opens the file alone, read-only, and takes the newest runs.
"""

from __future__ import annotations

import math
import os
import signal
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator
from urllib.parse import quote

from ..core.errors import PortkitError
from ..core.files import link_on_path

DEFAULT = Path(".portkit") / "history.sqlite"
SIDECARS = ("-journal", "-wal", "-shm")   # what SQLite writes beside the database while it works
COLUMNS = ("generated", "root", "version", "files", "lines", "findings", "blockers", "high", "medium",
           "low", "info", "cuda_refs", "refs_converted", "p10_weeks", "p50_weeks", "p90_weeks")
_TYPE = {"generated": "TEXT", "root": "TEXT", "version": "TEXT", "p10_weeks": "REAL", "p50_weeks": "REAL",
         "p90_weeks": "REAL"}
_SCHEMA = f"""CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    {", ".join(f"{c} {_TYPE.get(c, 'INTEGER')}" for c in COLUMNS)}
)"""
# Everything sqlite_master holds in a history portkit made, with the text SQLite keeps for it:
# its table, and SQLite's own counter of AUTOINCREMENT ids. Compared as text, so that a CHECK,
# a DEFAULT or a generated column (expressions SQLite evaluates) is not portkit's either.
_OBJECTS = {("table", "runs"): _SCHEMA.replace(" IF NOT EXISTS", "", 1),
            ("table", "sqlite_sequence"): "CREATE TABLE sqlite_sequence(name,seq)"}
# A history portkit wrote answers in milliseconds (a year of daily runs is a few hundred rows);
# a query past this is the database's doing, and the report goes out without the trend.
BUDGET_S = 2.0
# The trend draws one point per run: 1000 is years of daily CI and more points than its 600-pixel
# chart can tell apart, and it keeps the page small whatever the table holds.
MAX_RUNS = 1000
_STEPS = 1000   # SQLite's virtual-machine steps between two looks at the clock: microseconds


def row_of(doc: dict) -> dict:
    s, e = doc["summary"], doc["estimate"] or {}
    weeks = e.get("person_weeks", {})
    return {
        "generated": doc["generated"], "root": doc["root"], "version": doc["tool"]["version"],
        "files": s["files"], "lines": s["lines"], "findings": s["findings"], "blockers": s["blockers"],
        **{sev: s["by_severity"][sev] for sev in ("high", "medium", "low", "info")},
        "cuda_refs": s["cuda_refs"], "refs_converted": s["refs_converted"],
        "p10_weeks": weeks.get("p10", 0.0), "p50_weeks": weeks.get("p50", 0.0), "p90_weeks": weeks.get("p90", 0.0),
    }


def _check_types(path: Path, row: dict) -> None:
    """SQLite stores whatever it is given: a text in a number column must not reach the charts."""
    for column in COLUMNS:
        value = row[column]
        if _TYPE.get(column) == "TEXT":
            ok = isinstance(value, str)
        else:
            ok = isinstance(value, (int, float)) and math.isfinite(value) and value >= 0   # counts and weeks
        if not ok:
            raise PortkitError(f"{path}: not a portkit history: column {column} holds {value!r:.40}")


def check_path(path: Path, root: Path) -> None:
    """Refuse a database under the audited root that is reached through a symbolic link: the
    `.portkit` directory, any directory on the way, the file, or the journal SQLite writes beside
    it. The tree is not trusted (CI audits pull requests), and a committed link would make
    --record create or overwrite a file outside it. A path outside the root is the user's choice."""
    try:
        rel = path.absolute().relative_to(root.absolute())
    except ValueError:
        return
    names = [rel] + [rel.with_name(rel.name + suffix) for suffix in SIDECARS]
    for name in names:
        try:
            link = link_on_path(root.absolute(), name)
        except OSError:
            continue   # unreadable: SQLite reports it when it opens the file
        if link is not None:
            raise PortkitError(f"{link}: is a symbolic link; the history is never written through one "
                               f"(remove it, or give --history a path outside the tree)")


@contextmanager
def _bounded(db: sqlite3.Connection) -> Iterator[None]:
    """The queries on `db` end within BUDGET_S of this, all together, or at once on SIGTERM or
    Ctrl-C. Python runs a signal handler only between bytecodes, never while SQLite works in C,
    and the sqlite3 module swallows an exception raised in a progress handler: so, inside this, a
    signal only sets a flag that the progress handler reads, and it is raised again on the way out."""
    state = {"deadline": time.monotonic() + BUDGET_S, "signal": None}
    db.set_progress_handler(lambda: state["signal"] is not None or time.monotonic() > state["deadline"], _STEPS)
    previous = _hold_signals(state)
    try:
        yield
    finally:
        db.set_progress_handler(None, 0)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if state["signal"] is not None:
            signal.raise_signal(state["signal"])   # portkit's own handler now ends the run as usual


def _hold_signals(state: dict) -> dict:
    """Install the flag-setting handlers; the handlers they replace (none off the main thread,
    where Python cannot set one, nor for a handler not set from Python, which could not be put back)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        handler = signal.getsignal(signum)
        if handler is not None and handler != signal.SIG_IGN:
            previous[signum] = signal.signal(signum, lambda n, _frame: state.update(signal=n))
    return previous


def _reason(exc: sqlite3.Error) -> str:
    """SQLite's reason, or the budget's when the progress handler stopped the query (when a signal
    stopped it, the signal is raised again as _bounded ends, so this reason is never shown)."""
    code = getattr(exc, "sqlite_errorcode", None)   # Python 3.11+; SQLite's message on 3.10
    interrupted = code == sqlite3.SQLITE_INTERRUPT if code is not None else str(exc) == "interrupted"
    if interrupted:
        return f"a query took longer than {BUDGET_S:g} s (a portkit history answers in milliseconds)"
    return str(exc)


def _portkit_schema(db: sqlite3.Connection, path: Path) -> bool:
    """Whether the database holds portkit's table (False: it holds nothing yet). Anything else in
    it is refused by name before any query reads a table; views and triggers, the code, are named first."""
    rows = db.execute("SELECT type, name, sql FROM sqlite_master LIMIT 64").fetchall()
    foreign = [(str(kind), name) for kind, name, sql in rows if _OBJECTS.get((kind, name)) != sql]
    if foreign:
        kind, name = min(foreign, key=lambda o: (o[0] not in ("view", "trigger"), o[0] != "view"))
        if (kind, name) == ("table", "runs"):
            what = "its table 'runs' is not the one portkit creates"
        else:
            what = f"it holds {'an' if kind == 'index' else 'a'} {kind:.20} {name!r:.60}"
        raise PortkitError(f"{path}: not a portkit history: {what}")
    return any(name == "runs" for _, name, _ in rows)


def _open(path: Path, write: bool) -> sqlite3.Connection:
    """A connection that runs no code from the file's schema (trusted_schema off). A read opens
    the file alone, read-only and immutable: SQLite then takes no lock, creates no `-shm` in the
    tree and neither replays a `-wal` nor rolls back a `-journal` committed beside it (portkit
    writes in rollback mode and leaves neither), so what is read is the checked file's own bytes."""
    if write:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=2, isolation_level=None)   # a locked database: a warning soon, not a hang
    else:   # the name quoted for the URI: a `?`, `#` or `%` in it is part of it
        uri = f"file:{quote(os.fsencode(path.absolute()))}?mode=ro&immutable=1"
        db = sqlite3.connect(uri, uri=True, isolation_level=None)
    db.execute("PRAGMA trusted_schema = OFF")
    return db


def record(doc: dict, path: Path) -> int:
    """Append this run; returns how many runs the history now holds for this root. The check, the
    table's creation and the insert are one transaction, so the schema cannot change in between."""
    row = row_of(doc)
    with _session(path, write=True) as db:
        with _failing(path, "cannot open the history database"):
            db.execute("BEGIN IMMEDIATE")
            found = _portkit_schema(db, path)
        with _failing(path, "cannot record the run"):
            return _append(db, row, found)   # closing the connection rolls back a failed one


def _append(db: sqlite3.Connection, row: dict, found: bool) -> int:
    if not found:
        db.execute(_SCHEMA)
    db.execute(f"INSERT INTO runs ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})",
               [row[c] for c in COLUMNS])
    count = db.execute("SELECT COUNT(*) FROM runs WHERE root = ?", (row["root"],)).fetchone()[0]
    db.execute("COMMIT")
    return count


def load(path: Path, root: str | None = None) -> list[dict]:
    """The newest MAX_RUNS recorded runs (of `root`, when given), oldest first; none when there is
    no database or it holds no table yet."""
    if not path.is_file():
        return []
    with _session(path, write=False) as db:
        with _failing(path, "cannot open the history database"):
            if not _portkit_schema(db, path):
                return []
        with _failing(path, "cannot read the history"):
            rows = _newest(db, root)
    for row in rows:
        _check_types(path, row)
    return rows


@contextmanager
def _session(path: Path, write: bool) -> Iterator[sqlite3.Connection]:
    """The database opened (_open), its queries bounded (_bounded), closed however the block ends."""
    try:
        db = _open(path, write)
    except (OSError, sqlite3.Error) as exc:
        raise PortkitError(f"{path}: cannot open the history database: {exc}") from None
    try:
        with _bounded(db):
            yield db
    finally:
        db.close()


@contextmanager
def _failing(path: Path, what: str) -> Iterator[None]:
    """SQLite's errors in the block as one line: `what`, and SQLite's or the budget's reason."""
    try:
        yield
    except sqlite3.Error as exc:
        raise PortkitError(f"{path}: {what}: {_reason(exc)}") from None


def _newest(db: sqlite3.Connection, root: str | None) -> list[dict]:
    query = (f"SELECT {', '.join(COLUMNS)} FROM runs" + (" WHERE root = ?" if root else "")
             + f" ORDER BY id DESC LIMIT {MAX_RUNS}")
    rows = [dict(zip(COLUMNS, r)) for r in db.execute(query, (root,) if root else ())]
    return rows[::-1]
