"""Finding the files to work on, and reading them without ever failing the whole run."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .errors import PortkitError
from .output import is_temp_name
from .source import UTF16_BOMS

# C, C++, CUDA and HIP sources and headers: scanned. Everything else is only mirrored with -o.
# .hip is here so that a tree converted with --rename (.cu -> .hip, .cuh -> .hip.h) is still
# audited and checked like the .cu files it came from.
SOURCE_SUFFIXES = frozenset({
    ".cu", ".cuh", ".hip", ".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".h++",
    ".inl", ".inc", ".ipp", ".tpp", ".tcc",
})
# Build, dependency and Python files where CUDA hides: read by the audit's text rules.
BUILD_NAMES = {
    "cmakelists.txt": "cmake", "makefile": "make", "gnumakefile": "make", "pyproject.toml": "pyproject",
    "environment.yml": "conda", "environment.yaml": "conda", "pipfile": "requirements",
}
BUILD_SUFFIXES = {".cmake": "cmake", ".mk": "make", ".mak": "make", ".py": "python", ".sh": "shell"}
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".portkit", ".pytest_cache"})


@dataclass(frozen=True)
class Entry:
    """A file found under the root: where it is, and its name relative to the root."""

    path: Path
    rel: str          # forward slashes, relative to the common root
    kind: str | None  # "source" (C/C++/CUDA), a build/dependency kind (see kind_of), or None
    named: bool = False   # named on the command line: a symbolic link there is followed
    # (size, st_mtime_ns, st_ctime_ns, st_ino) as the walk saw them (its one lstat): what the commit
    # gate keys its tree facts on (project/pipeline.py), without a second lstat of every file at
    # every commit, and what a re-run knows a file by without reading it (filestamps.py)
    seen: tuple[int, int, int, int] | None = field(default=None, compare=False, repr=False)

    @property
    def is_source(self) -> bool:
        return self.kind == "source"


def kind_of(name: str) -> str | None:
    """What a file is, from its name: C/C++/CUDA source, a build or dependency file, or None."""
    lower = name.lower()
    suffix = lower[lower.rfind("."):] if "." in lower else ""
    if suffix in SOURCE_SUFFIXES:
        return "source"
    if lower in BUILD_NAMES:
        return BUILD_NAMES[lower]
    if "requirements" in lower and lower.endswith((".txt", ".in")):
        return "requirements"
    if lower.startswith("environment") and lower.endswith((".yml", ".yaml")):
        return "conda"
    return BUILD_SUFFIXES.get(suffix)


@dataclass(frozen=True)
class Skipped:
    rel: str
    reason: str
    error: bool       # True: something went wrong (exit 2); False: a note (binary file, symlink)
    link: bool = False   # a symbolic link the walk did not follow (includes.py names who includes it)


@dataclass(frozen=True)
class LeftOut:
    """What a command did not read under the paths it was given, and why: its summary says so, so
    that a tree git ignores is never mistaken for a tree with nothing to port."""

    ignored: tuple[str, ...] = ()   # what git ignores (a folder ends with /), as discover() names them
    excluded: int = 0               # files the configuration's `exclude` or --exclude leaves as they are

    def __bool__(self) -> bool:
        return bool(self.ignored or self.excluded)


def walk_stamp(entries: list[Entry]) -> list[str]:
    """Each file's name, kind, size and modification time as the walk saw them (its own lstat):
    what a cache of facts about a whole tree is keyed on, as ruff and black key theirs (an edit
    changes its file's size or time)."""
    parts = []
    for entry in entries:
        if entry.seen is not None:
            size, mtime = entry.seen[:2]
        else:
            st = os.lstat(entry.path)
            size, mtime = st.st_size, st.st_mtime_ns
        parts.append(f"{entry.rel}\0{entry.kind}\0{size}\0{mtime}")
    return parts


def common_root(paths: list[Path]) -> Path:
    """The directory every input lies in: a directory argument is its own root."""
    bases = [p if p.is_dir() else p.parent for p in paths]
    return Path(os.path.commonpath([str(b) for b in bases]))


def discover(paths: list[Path], ignored=None,
             left: list[str] | None = None) -> tuple[Path, list[Entry], list[Skipped]]:
    """All files under the given paths, sorted by relative name, with what had to be skipped.
    `ignored` (project/ignored.py: what git ignores, by absolute path) leaves folders and files out
    of the walk, each named in `left` (a folder with a trailing /), so that a command can say what
    it did not read; a path named in `paths` is always taken."""
    resolved = []
    for given in paths:
        if not given.exists() and not given.is_symlink():
            raise PortkitError(f"{given}: no such file or directory")
        resolved.append(given.absolute())
    root = common_root(resolved)
    entries: dict[str, Entry] = {}
    skipped: list[Skipped] = []
    for path in resolved:
        if path.is_dir():
            _walk(root, path, entries, skipped, ignored, left)
        else:
            rel = path.relative_to(root).as_posix()
            if not _regular(path, follow=True):
                skipped.append(Skipped(rel, "not a regular file, not read", error=True))
                continue
            entries[rel] = Entry(path, rel, kind_of(path.name) or "source", named=True)  # always scanned
    return root, [entries[k] for k in sorted(entries)], skipped


def _walk(root: Path, top: Path, entries: dict[str, Entry], skipped: list[Skipped], ignored=None,
          left: list[str] | None = None) -> None:
    """os.walk's order (top-down, each folder's subfolders in name order), from os.scandir's
    entries: their type and link bits come with the listing, so a file costs at most one lstat
    (three through pathlib, for every file of the tree at every commit the gate keys its facts on)."""
    folders = [str(top)]
    while folders:
        base = folders.pop()
        try:
            with os.scandir(base) as listing:
                found = list(listing)
        except OSError as exc:
            name = Path(exc.filename).relative_to(root).as_posix() if exc.filename else str(top)
            skipped.append(Skipped(name, f"cannot read directory: {exc.strerror}", error=True))
            continue
        prefix = os.path.relpath(base, root).replace(os.sep, "/")
        prefix = "" if prefix == "." else prefix + "/"
        subfolders = []
        for entry in sorted((e for e in found if _is_dir(e)), key=lambda e: e.name):
            if entry.name in SKIP_DIRS:
                continue
            if ignored and ignored.folder(entry.path):
                if left is not None:
                    left.append(prefix + entry.name + "/")
                continue
            if entry.is_symlink():
                skipped.append(Skipped(prefix + entry.name, "symbolic link to a directory, not followed",
                                       error=False, link=True))
                continue
            subfolders.append(entry.path)
        for entry in sorted((e for e in found if not _is_dir(e)), key=lambda e: e.name):
            name = entry.name
            if is_temp_name(name):   # a write in progress, or left by a killed run: never an input
                continue
            if ignored and ignored.file(entry.path):
                if left is not None:
                    left.append(prefix + name)
                continue
            rel = prefix + name
            if entry.is_symlink():
                skipped.append(Skipped(rel, "symbolic link, not followed", error=False, link=True))
                continue
            st = _lstat_entry(entry)
            if st is not None and not stat.S_ISREG(st.st_mode):   # a FIFO would block the read forever; sockets, devices: nothing to port
                skipped.append(Skipped(rel, "not a regular file, not read", error=False))
                continue
            entries[rel] = Entry(Path(entry.path), rel, kind_of(name),
                                 seen=stamp_of(st) if st is not None else None)
        folders.extend(reversed(subfolders))


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()   # a link to a folder counts, as in os.walk (then reported, not followed)
    except OSError:
        return False


def _lstat_entry(entry: os.DirEntry) -> os.stat_result | None:
    """The entry's own lstat; None when it vanished or cannot be read (read() says which, as an error)."""
    try:
        return entry.stat(follow_symlinks=False)
    except OSError:
        return None


def _regular(path: Path, follow: bool = False) -> bool:
    try:
        return stat.S_ISREG((path.stat() if follow else path.lstat()).st_mode)
    except OSError:
        return True     # vanished or unreadable: read() says which, as an error


def stamp_of(st: os.stat_result) -> tuple[int, int, int, int]:
    """Entry.seen of a file's lstat: (size, mtime, ctime in ns, inode)."""
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def read(entry: Entry) -> tuple[bytes | None, Skipped | None]:
    """The file's bytes, or why it is not converted (unreadable: an error; binary: a note)."""
    try:
        data = read_regular(entry.path, follow=entry.named)
    except NotRegularFile:
        return None, Skipped(entry.rel, "not a regular file any more (it changed during the run), not read",
                             error=True)
    except FileTooLarge as exc:   # an error: a file nobody checked must not pass the gate as clean
        return None, Skipped(entry.rel, exc.strerror, error=True)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, Skipped(entry.rel, "became a symbolic link during the run, not followed", error=True)
        return None, Skipped(entry.rel, f"cannot read: {exc.strerror or exc}", error=True)
    if entry.kind is not None:
        if data.startswith(UTF16_BOMS):
            return data, Skipped(entry.rel, "UTF-16 encoded: not converted", error=False)
        if b"\0" in data[:8192]:
            return data, Skipped(entry.rel, "binary file: not converted", error=False)
    return data, None


def read_sources(entries: list[Entry]) -> list[tuple[Entry, bytes]]:
    """The C/C++/CUDA sources among `entries` with their bytes, those that read as text: what the
    project-level passes (platform facts, polyfill definitions) read, once for all of them."""
    found = []
    for entry in entries:
        if entry.kind != "source":
            continue
        data, skipped = read(entry)
        if data is not None and skipped is None:
            found.append((entry, data))
    return found


class NotRegularFile(OSError):
    """What was opened is a FIFO, device, socket or directory: reading it could block or never end."""


class FileTooLarge(OSError):
    """A regular file past MAX_FILE_BYTES: read whole, it would take its size in memory."""


# The most portkit reads of one file from a tree. A source this large is generated data, not code
# a person ports (the parser would pass --file-timeout on it anyway), and a git blob of zeros a few
# MB in the repository checks out as gigabytes: read whole, a 1 GB one took 1.1 GB of memory.
MAX_FILE_BYTES = 64 << 20


def read_regular(path: Path, follow: bool = False) -> bytes:
    """The bytes of a regular file. Opened without blocking (a FIFO swapped in since discovery
    has no writer) and, unless `follow`, without following a symbolic link; the type is checked
    on the opened descriptor, so nothing can change between the check and the read. A file past
    MAX_FILE_BYTES raises FileTooLarge (its size is checked first, and the read stops there).

    It reads the size fstat gives and one byte more: a read asked for MAX_FILE_BYTES takes a buffer
    of that size first (64 MiB for every file: 20 of each small file's ~30 us, and half the system
    time of a 3M-line audit). One byte more than that size is a file that grew since: the rest is
    read, up to the limit."""
    with os.fdopen(open_regular(path, follow), "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= MAX_FILE_BYTES:
            data = handle.read(size + 1)
            if len(data) > size:   # it grew meanwhile: what follows, and a file growing still stops here too
                data += handle.read(MAX_FILE_BYTES + 1 - len(data))
            if len(data) <= MAX_FILE_BYTES:
                return data
        raise FileTooLarge(errno.EFBIG, f"larger than {MAX_FILE_BYTES >> 20} MiB, not read", str(path))


def open_regular(path: Path, follow: bool = False) -> int:
    """A descriptor of a regular file, opened as read_regular opens it (the caller closes it)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", str(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def link_on_path(root: Path, rel: str | Path) -> Path | None:
    """The first of root/rel's components below `root` (the file included) that is a symbolic
    link, or None. A file portkit reads or writes by a name the tree controls (the baseline, the
    audit history) must not lead out of it through a committed link. A missing component ends
    the walk: nothing below it exists yet. Other errors (EACCES) propagate."""
    path = root
    for part in Path(rel).parts:
        path = path / part
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return path
        except (FileNotFoundError, NotADirectoryError):
            return None
    return None
