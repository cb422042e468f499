"""Audit history in an embedded SQLite database, so the report can show the port converging.

`portkit audit --record` appends one row per run (default `.portkit/history.sqlite` under the
audited root, `--history PATH` to choose). Rows hold the run's summary only, never source.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

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


def _connect(path: Path) -> sqlite3.Connection:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=2)   # a locked database: a warning soon, not a hang
        db.execute(_SCHEMA)
        return db
    except (OSError, sqlite3.Error) as exc:
        raise PortkitError(f"{path}: cannot open the history database: {exc}") from None


def record(doc: dict, path: Path) -> int:
    """Append this run; returns how many runs the history now holds for this root."""
    row = row_of(doc)
    db = _connect(path)
    try:
        with db:
            db.execute(f"INSERT INTO runs ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})",
                       [row[c] for c in COLUMNS])
        return db.execute("SELECT COUNT(*) FROM runs WHERE root = ?", (row["root"],)).fetchone()[0]
    except sqlite3.Error as exc:
        raise PortkitError(f"{path}: cannot record the run: {exc}") from None
    finally:
        db.close()


def load(path: Path, root: str | None = None) -> list[dict]:
    """The recorded runs (of `root`, when given), oldest first; none when there is no database."""
    if not path.is_file():
        return []
    db = _connect(path)
    try:
        query = f"SELECT {', '.join(COLUMNS)} FROM runs" + (" WHERE root = ?" if root else "") + " ORDER BY id"
        rows = [dict(zip(COLUMNS, r)) for r in db.execute(query, (root,) if root else ())]
        for row in rows:
            _check_types(path, row)
        return rows
    except sqlite3.Error as exc:
        raise PortkitError(f"{path}: cannot read the history: {exc}") from None
    finally:
        db.close()
