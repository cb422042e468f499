"""Scan results kept between runs, by file content: re-auditing a tree where five files changed
scans those five (ruff and black keep the same kind of cache).

A file's result is kept under its path, its kind and the SHA-256 of its bytes, in one slot per
project and command (`scans-...` for audit, `gate-...` for check) in the user's cache directory
(datacache.py: JSON, this user's own file, a digest over the payload; anything wrong with it means
"scan again"). The slot as a whole belongs to one key: the run's settings and the tree's facts
(what every file is scanned with), portkit's version and the names, sizes and times of its code
and shipped tables. Any change there starts the slot afresh, so a result is only ever reused for
the same bytes scanned by the same code with the same settings.

Kept per file: its findings and metrics, what audit and check read, and for convert (slot
`converts-...`, commands/convert_cache.py) its edits too, from which the output is applied again.
Not kept: each finding's `fixed_by` (the rule's fix object, part of no output).
PORTKIT_NO_CACHE=1 (or `--no-cache`) turns it off; the test suite runs with it off.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import os
from pathlib import Path

from ...core import datacache
from ...core.edits import Edit
from ...core.files import Entry
from ...core.filestamps import Stamps
from ...core.findings import Finding
from ...core.version import __version__
from ...engine.context import FileScan, Metrics

FORMAT = 1
_FINDING_FIELDS = tuple(f.name for f in dataclasses.fields(Finding) if f.name != "fixed_by")
_METRIC_FIELDS = tuple(f.name for f in dataclasses.fields(Metrics))


def enabled(asked: bool = True) -> bool:
    return asked and os.environ.get("PORTKIT_NO_CACHE", "") in ("", "0")


class ResultCache:
    """One project's kept results for one kind of run, read once and written back once."""

    def __init__(self, slot: str, root: Path, settings: object, keep_others: int = 0):
        self.slot = f"{slot}-" + datacache.digest([str(root.absolute())])[:24]
        self.keep_others = keep_others   # check: results of files this run did not see, up to this many
        self._old: dict = {}
        self._new: dict = {}
        self.hits = 0
        try:
            self.key: str | None = run_key(settings)
        except (TypeError, OSError):   # a setting with no canonical form, code unreadable: no cache
            self.key = None
            return
        stored = datacache.load_slot(self.slot)
        if isinstance(stored, dict) and stored.get("key") == self.key and isinstance(stored.get("files"), dict):
            self._old = stored["files"]

    def holds(self, rel: str) -> bool:
        """Whether a result is kept under `rel` at all: a file with none need not be read to ask."""
        return rel in self._old

    def get(self, rel: str, kind: str, data: bytes) -> FileScan | None:
        """The kept result for these bytes, or None (then `put` the one scanned)."""
        return self.get_content(rel, content_key(kind, data))

    def get_entry(self, entry: Entry, stamps: Stamps) -> FileScan | None:
        """The kept result for `entry`'s bytes as they are now (None: none kept), known from the
        run's records of a file as the last run left it (core/filestamps.py), else read here."""
        if entry.kind is None or not self.holds(entry.rel):
            return None
        known = stamps.known(entry)
        if known is not None:
            return self.get_content(entry.rel, digest_key(entry.kind, known.sha256))
        data, skipped = stamps.read(entry)
        return self.get(entry.rel, entry.kind, data) if data is not None and skipped is None else None

    def get_content(self, rel: str, digest: str) -> FileScan | None:
        """The kept result for the bytes whose content key is `digest`, or None."""
        kept = self._old.get(rel)
        if not (isinstance(kept, list) and len(kept) == 2 and kept[0] == digest):
            return None
        try:
            scan = _scan_from_plain(rel, kept[1])
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):   # altered by hand: scan again
            return None
        self._new[rel] = kept
        self.hits += 1
        return scan

    def put(self, rel: str, content: str, scan: FileScan) -> None:
        """Keep `scan`, the result for the bytes whose content_key is `content` (computed where
        they were read and scanned: the file may have changed since this process read it)."""
        if self.key is not None:
            self._new[rel] = [content, _scan_plain(scan)]

    def save(self) -> None:
        if self.key is None:
            return
        files: dict = {}
        if self.keep_others:   # the most recent last: a later run keeps the newest of them
            others = [(rel, kept) for rel, kept in self._old.items() if rel not in self._new]
            files.update(others[-self.keep_others:])
        files.update(self._new)
        datacache.store_slot(self.slot, {"key": self.key, "files": files})


def content_key(kind: str, data: bytes) -> str:
    """The key of a file of `kind` with bytes `data`: digest_key of their SHA-256, so that a run
    that knows the SHA-256 without the bytes (core/filestamps.py) asks for the same result."""
    return digest_key(kind, hashlib.sha256(data).digest())


def digest_key(kind: str, sha256: bytes) -> str:
    """The key of bytes known by their SHA-256 (convert's outcomes carry it, not the bytes)."""
    return hashlib.sha256(kind.encode() + b"\0" + sha256).hexdigest()


def run_key(settings: object) -> str:
    """The key a slot belongs to: the settings (canonical: no set's order, no object identity),
    portkit's version and the stamp of its code and tables."""
    return datacache.digest([f"resultcache {FORMAT} portkit {__version__}", _canonical(settings), _code_stamp()])


def _code_stamp() -> str:
    """Names, sizes and modification times of portkit's own sources and shipped tables."""
    from ...core.tables.mappings import tables_dir
    package = Path(__file__).resolve().parents[2]
    parts = []
    for folder, pattern in ((package, "*.py"), (tables_dir(), "*.toml")):
        for path in sorted(folder.rglob(pattern)):
            st = path.stat()
            parts.append(f"{path.relative_to(folder)}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts)


def _canonical(value: object) -> str:
    """A text that is equal for equal settings in any process (a frozenset's order depends on
    the process's hash seed, so sets are sorted)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        inner = ",".join(f"{f.name}={_canonical(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"{type(value).__name__}({inner})"
    if isinstance(value, enum.Enum):
        return repr(value)
    if isinstance(value, dict):
        return "{" + ",".join(sorted(f"{_canonical(k)}:{_canonical(v)}" for k, v in value.items())) + "}"
    if isinstance(value, (set, frozenset)):
        return "set(" + ",".join(sorted(_canonical(v) for v in value)) + ")"
    if isinstance(value, (list, tuple)):
        return "(" + ",".join(_canonical(v) for v in value) + ")"
    if value is None or isinstance(value, (str, bytes, int, float, bool, Path)):
        return repr(value)
    raise TypeError(f"no canonical form for {type(value).__name__}")


def _scan_plain(scan: FileScan) -> list:
    findings = [[getattr(f, name) for name in _FINDING_FIELDS] for f in scan.findings]
    metrics = {}
    for name in _METRIC_FIELDS:
        value = getattr(scan.metrics, name)
        if isinstance(value, set):
            value = {"set": sorted(value)}
        elif isinstance(value, dict):
            value = {"items": [[list(k) if isinstance(k, tuple) else k, v] for k, v in value.items()]}
        metrics[name] = value
    return [findings, metrics, [_edit_plain(e) for e in scan.edits]] if scan.edits else [findings, metrics]


def _edit_plain(edit: Edit) -> list:
    """An edit as JSON: bytes as Latin-1 text (one character a byte, any byte), a part that is a
    range of the original as [start, end], a literal part as [text]."""
    parts = [[p.decode("latin-1")] if isinstance(p, bytes) else list(p) for p in edit.parts]
    return [edit.start, edit.end, edit.text.decode("latin-1"), edit.what, edit.covers, parts, edit.kind]


def _edit_from_plain(row: list) -> Edit:
    start, end, text, what, covers, parts, kind = row
    back = tuple(p[0].encode("latin-1") if len(p) == 1 else (int(p[0]), int(p[1])) for p in parts)
    if not (isinstance(start, int) and isinstance(end, int) and isinstance(what, str) and isinstance(kind, str)):
        raise TypeError("not an edit")
    return Edit(start, end, text.encode("latin-1"), what, bool(covers), back, kind)


def _tuples(value: object) -> object:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _scan_from_plain(rel: str, plain: list) -> FileScan:
    findings_plain, metrics_plain = plain[:2]
    edits = [_edit_from_plain(row) for row in plain[2]] if len(plain) == 3 else []
    findings = [Finding(**{name: _tuples(v) for name, v in zip(_FINDING_FIELDS, row, strict=True)})
                for row in findings_plain]
    values = {}
    for name in _METRIC_FIELDS:
        value = metrics_plain[name]
        if isinstance(value, dict) and "set" in value:
            value = set(value["set"])
        elif isinstance(value, dict) and "items" in value:
            value = {_tuples(k): v for k, v in value["items"]}
        else:
            value = _tuples(value)
        values[name] = value
    return FileScan(rel, edits, findings, Metrics(**values))
