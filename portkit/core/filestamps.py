"""What a run learned of each file's bytes, kept under the stamp its lstat gave: a re-run reads
only the files whose stamp moved.

A re-run of a whole tree after one edit read every source three times (the include walk, the
project facts, the result cache's content keys) to learn that all but one were as before: on
ggml, 0.4 s of a 1.2 s re-run. git, make and ruff answer "unchanged?" from the file's metadata;
so does this. A file's record is its SHA-256 and the #include lines it spells (includes.py's
walk), kept per project in the user's cache folder (slot `stamps-...`) under the stamp the walk's
one lstat gave (files.Entry.seen: size, mtime and ctime in ns, inode). A later run that finds the
same stamp takes the record and does not read the file. Any write changes the ctime (which no
program can set back), a replace by rename the inode too.

A stamp is kept only when the file was settled when it was read: its mtime and ctime at least
SETTLE_NS before the read (git's "racily clean" rule). A file written within that window of the
read, on a file system whose clock is coarse, could change again within the same tick after the
read and keep its stamp; such a file is read again next time. A corrupt or foreign slot reads as
empty (datacache.py); PORTKIT_NO_CACHE=1 and --no-cache keep nothing.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from . import datacache
from .files import Entry, Skipped, read, stamp_of
from .source import include_lines

FORMAT = 1
SETTLE_NS = 2_000_000_000   # FAT's 2 s, the coarsest common file-system clock

IncludeLine = tuple[bool, str]   # (quoted, the path as spelled): includes.include_lines


@dataclass(frozen=True)
class Known:
    """A file's bytes as a run knows them without reading: their SHA-256 and their #include lines."""

    sha256: bytes
    includes: tuple[IncludeLine, ...]


class Stamps:
    """One project's records for one run: `known` answers from the last run's records when the
    stamp is the same; `read` reads, and records what it read. `save()` writes them back."""

    def __init__(self, root: Path | None, key: str | None):
        self.slot = None if root is None or key is None else "stamps-" + datacache.digest([str(root.absolute())])[:24]
        self.key = key
        self._old: dict = {}
        self._new: dict[str, list | None] = {}   # this run's records to keep (None: drop the last run's)
        self._known: dict[str, Known] = {}   # this run's, by name
        # the tree's files as this run's walk found them (prepare sets it): the last run's records of
        # those this run did not ask about are kept, of the others dropped; None: keep what was asked
        self.present: frozenset[str] | None = None
        self.reads = 0   # files this object read (a test reads it)
        if self.slot is not None:
            stored = datacache.load_slot(self.slot)
            if isinstance(stored, dict) and stored.get("key") == key and isinstance(stored.get("files"), dict):
                self._old = stored["files"]

    def known(self, entry: Entry) -> Known | None:
        """The record of `entry`'s bytes, from this run or from the last when its stamp is the one
        the walk saw now; None when the file must be read."""
        mine = self._known.get(entry.rel)
        if mine is not None:
            return mine
        kept = self._old.get(entry.rel)
        if entry.seen is None or not isinstance(kept, list) or len(kept) != 3 or kept[0] != list(entry.seen):
            return None
        try:
            found = Known(bytes.fromhex(kept[1]), tuple((bool(q), str(s)) for q, s in kept[2]))
        except (TypeError, ValueError):   # altered by hand: read the file
            return None
        self._known[entry.rel] = found
        self._new[entry.rel] = kept
        return found

    def read(self, entry: Entry) -> tuple[bytes | None, Skipped | None]:
        """files.read(entry), recording the bytes' SHA-256 and include lines when they are text;
        after it, known(entry) is the record of the very bytes returned: a file whose record the
        walk's stamp matched is lstat'ed again after the read, and one that changed since the walk
        is recorded afresh (convert applies a kept result's edits to these bytes)."""
        data, skipped = read(entry)
        self.reads += 1
        if data is not None and skipped is None:
            if self.known(entry) is None:
                self.note(entry, data)
            elif _stamp(entry) != entry.seen:   # written since the walk: these bytes are not the record's
                self.note(entry, data, keep=False)
        return data, skipped

    def note(self, entry: Entry, data: bytes, keep: bool = True) -> Known:
        """Record `data` as `entry`'s bytes, read by the caller after the walk's lstat (a file that
        changed in between has another stamp next time, and is read again); `keep`: the record is
        kept for the next run under the walk's stamp (when the file was settled)."""
        found = Known(hashlib.sha256(data).digest(), tuple(include_lines(data)) if b"include" in data else ())
        self._known[entry.rel] = found
        if keep and entry.seen is not None and _settled(entry.seen):
            self._new[entry.rel] = [list(entry.seen), found.sha256.hex(), [list(line) for line in found.includes]]
        else:
            self._new[entry.rel] = None
        return found

    def save(self) -> None:
        """Write the records back, unless they are the ones read (a re-run of an unchanged tree):
        this run's, and the last run's of the files still `present` that this run did not ask about."""
        if self.slot is None:
            return
        names = self.present if self.present is not None else self._new.keys()
        files = {rel: record for rel in names if (record := self._new.get(rel, self._old.get(rel))) is not None}
        if files.keys() == self._old.keys() and all(files[rel] is self._old[rel] for rel in files):
            return
        datacache.store_slot(self.slot, {"format": FORMAT, "key": self.key, "files": files})
        self._old = files   # a second save writes only what was recorded since


def _stamp(entry: Entry) -> tuple[int, int, int, int] | None:
    """The file's stamp now, as the walk takes it (files._walk); None when it cannot be had."""
    try:
        return stamp_of(os.lstat(entry.path))
    except OSError:
        return None


def _settled(seen: tuple[int, ...]) -> bool:
    """Whether the stamp's times are SETTLE_NS or more before now (the read was after the lstat)."""
    return len(seen) == 4 and time.time_ns() - max(seen[1], seen[2]) >= SETTLE_NS


def stamps_for(root: Path, on: bool) -> Stamps:
    """The run's records for the tree at `root`, kept between runs when `on` (the command's cache
    setting; PORTKIT_NO_CACHE=1 turns it off), under a key of the code that reads the lines. Not on
    Windows, whose st_ctime is the file's creation time: no write moves it."""
    if not on or os.environ.get("PORTKIT_NO_CACHE", "") not in ("", "0") or os.name == "nt":
        return Stamps(None, None)
    from . import files, source
    try:
        key = datacache.digest([f"stamps {FORMAT}"], [Path(__file__), Path(files.__file__), Path(source.__file__)])
    except OSError:   # the code is unreadable: keep nothing
        return Stamps(None, None)
    return Stamps(root, key)
