"""The project's sources as prepare's passes read them: a file's bytes read when a pass asks for
them, and kept for the next pass only while they fit a budget.

prepare read every source once and held all the bytes through every project pass (the per-file
facts, the platform model, optional.learn's defaults and switches, the warp constants): the main
process's peak grew with the tree, by about the size of its sources (a 1M-line corpus: 52 MB of
bytes in a 133 MB peak; 3M lines: 157 MB in 249 MB). Here the first BUDGET bytes read are kept and
the rest are read again, from the page cache, by each pass that asks: a tree whose sources fit
(ggml's 18 MB, faiss's 7 MB) is read once as before, and a larger one costs a read per pass while
the memory it holds stays the same. The kept files are the first ones read, not the most recent:
the passes walk the files in one order, and a least-recently-used set smaller than the tree would
miss on every file of every pass.

Every read goes through `reader` (filestamps.Stamps.read: the SHA-256 of the bytes read is
recorded) and `on_read` (the facts store takes that SHA-256, file_facts.FactsStore.seed). Values
computed from a file are kept under the hash of the bytes they came from, so a file written
between two passes can make two passes of this run disagree, never a kept value wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..core.files import Entry, Skipped, read

# The bytes of sources kept between passes (and, apart, the facts store's memo of their hashes).
BUDGET = 64 << 20
RECENT_BYTES = 4 << 20   # and past it, the most recent ones up to this

Reader = Callable[[Entry], "tuple[bytes | None, Skipped | None]"]


class Kept:
    """Values about bytes, by name, held until their bytes reach `budget` in all: first come, kept
    (see above); past it, the last few (RECENT_BYTES in all) too, so that a value asked for right
    after its file was read is there (the facts store's hash of the bytes a pass just read). A
    name given again replaces its value."""

    def __init__(self, budget: int | None = None):
        self.budget = BUDGET if budget is None else budget
        self.size = 0
        self._items: dict[str, tuple] = {}
        self._recent: dict[str, tuple] = {}   # insertion order: the oldest leaves first
        self._recent_size = 0

    def get(self, name: str) -> tuple | None:
        """(bytes, *values) kept for `name`, or None."""
        found = self._items.get(name)
        return found if found is not None else self._recent.get(name)

    def put(self, name: str, data: bytes, *values) -> None:
        old = self._items.pop(name, None)
        if old is not None:
            self.size -= len(old[0])
        old = self._recent.pop(name, None)
        if old is not None:
            self._recent_size -= len(old[0])
        if self.size + len(data) <= self.budget:
            self._items[name] = (data, *values)
            self.size += len(data)
        elif len(data) <= RECENT_BYTES:
            self._recent[name] = (data, *values)
            self._recent_size += len(data)
            while self._recent_size > RECENT_BYTES:
                self._recent_size -= len(self._recent.pop(next(iter(self._recent)))[0])


class Sources:
    """(entry, bytes) of each readable file of `entries`, in order, read as iterated (see above).
    Re-iterable: every pass walks it anew. Views made by only() share the kept bytes."""

    def __init__(self, entries: Iterable[Entry], reader: Reader = read,
                 on_read: Callable[[Entry, bytes], None] | None = None, budget: int | None = None):
        self.entries = list(entries)
        self.rels = frozenset(e.rel for e in self.entries)
        self._reader, self._on_read = reader, on_read
        self._kept = Kept(budget)
        self._unread: set[str] = set()   # skipped at its first read: skipped by every pass of the run
        self._read_once: set[str] = set()   # read as text once: every pass finds it (paths())

    @classmethod
    def given(cls, pairs: list[tuple[Entry, bytes]]) -> "Sources":
        """Bytes the caller holds already (a test's, or read_sources'), as Sources: nothing read."""
        held = {entry.rel: data for entry, data in pairs}
        return cls([entry for entry, _ in pairs], lambda entry: (held.get(entry.rel), None), budget=0)

    def __iter__(self) -> Iterator[tuple[Entry, bytes]]:
        for entry in self.entries:
            data = self.data(entry)
            if data is not None:
                yield entry, data

    def __bool__(self) -> bool:
        return bool(self.entries)

    def data(self, entry: Entry) -> bytes | None:
        """The bytes of `entry` (kept, or read now), None when it does not read as text."""
        kept = self._kept.get(entry.rel)
        if kept is not None:
            return kept[0]
        if entry.rel in self._unread:
            return None
        data, skipped = self._reader(entry)
        if data is None or skipped is not None:
            self._unread.add(entry.rel)
            return None
        if self._on_read is not None:
            self._on_read(entry, data)
        self._kept.put(entry.rel, data)
        self._read_once.add(entry.rel)
        return data

    def readable(self, entry: Entry) -> bool:
        """Whether `entry` reads as text (read now only if no pass read it yet)."""
        return entry.rel in self._read_once or entry.rel not in self._unread and self.data(entry) is not None

    def only(self, entries: Iterable[Entry]) -> "Sources":
        """A view of some of these files: the same reads, the same kept bytes."""
        view = Sources.__new__(Sources)
        view.entries = list(entries)
        view.rels = frozenset(e.rel for e in view.entries)
        view._reader, view._on_read, view._kept = self._reader, self._on_read, self._kept
        view._unread, view._read_once = self._unread, self._read_once
        return view

    def also(self, entries: Iterable[Entry], reader: Reader = read) -> "Sources":
        """A view of other files (build files) read by `reader`, kept in the same budget."""
        view = self.only(entries)
        view._reader, view._on_read = reader, None
        return view

    def pairs(self, entries: Iterable[Entry]) -> list[tuple[Entry, bytes]]:
        """(entry, bytes) of the readable ones of `entries`: a few files a pass holds at once."""
        return [(entry, data) for entry in entries if (data := self.data(entry)) is not None]


def as_sources(sources: "Sources | Iterable[tuple[Entry, bytes]]") -> Sources:
    """`sources` as Sources: itself, or pairs of bytes already read wrapped."""
    return sources if isinstance(sources, Sources) else Sources.given(list(sources))


class Contents:
    """(path, kind, bytes) of the sources among `entries` that `sources` reads and of the build
    files among them (`build`: which), in order, read as iterated: optional.learn's `files`.
    paths() and of_kind() let a loop that needs names, or one kind, read nothing else."""

    def __init__(self, entries: list[Entry], sources: Sources, build: Callable[[Entry], bool],
                 build_reader: Reader = read):
        self.entries = [e for e in entries if (e.rel in sources.rels if e.kind == "source" else build(e))]
        self._sources = sources
        self._build = sources.also([e for e in self.entries if e.kind != "source"], build_reader)

    @classmethod
    def given(cls, files: list[tuple[str, str, bytes]]) -> "Contents":
        """(path, kind, bytes) a caller holds (a test's), as Contents."""
        entries = [Entry(Path(path), path, kind) for path, kind, _ in files]
        held = {path: data for path, _, data in files}

        def reader(entry: Entry) -> tuple[bytes, None]:
            return held[entry.rel], None
        sources = Sources([e for e in entries if e.kind == "source"], reader, budget=0)
        return cls(entries, sources, lambda e: True, reader)

    def __iter__(self) -> Iterator[tuple[str, str | None, bytes]]:
        return self.of_kind()

    def of_kind(self, *kinds: str) -> Iterator[tuple[str, str | None, bytes]]:
        """The files of these kinds (all without any), read as iterated."""
        for entry in self.entries:
            if kinds and entry.kind not in kinds:
                continue
            data = self._reader(entry).data(entry)
            if data is not None:
                yield entry.rel, entry.kind, data

    def paths(self, *kinds: str) -> frozenset[str]:
        """The paths iteration yields (of these kinds): a file read by an earlier pass is not read again."""
        return frozenset(e.rel for e in self.entries if (not kinds or e.kind in kinds) and self._reader(e).readable(e))

    def _reader(self, entry: Entry) -> Sources:
        return self._sources if entry.kind == "source" else self._build
