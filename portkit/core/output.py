"""Where portkit writes: atomic replacement of files, user-named outputs, and its own temporary files.

Every write goes through a temporary file in the target's directory, named so that it is
recognisably portkit's (`.NAME.portkit-tmp-PID-XXXXXXXX`): discovery ignores such names, and a
later run removes the ones whose writer is gone from the directories it writes. An output the
user names (`-o`, `--html`, a baseline) is written by core/named_output.py, through these.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from pathlib import Path
from typing import BinaryIO, Callable

from .errors import PortkitError

TEMP_MARK = ".portkit-tmp"
# ours: `.a.cu.portkit-tmp-1234-k3j4h5gd`; older releases wrote `.a.cu.k3j4h5gd.portkit-tmp`
# (temp_name cuts a long NAME; NAME may hold any character, a line break too: DOTALL, and \Z, not
# $, which also matches before a final line break)
_TEMP = re.compile(r"\..+\.portkit-tmp-(?P<pid>\d+)-[A-Za-z0-9_]+\Z|\..+\.[A-Za-z0-9_]{8}\.portkit-tmp\Z", re.DOTALL)


def is_temp_name(name: str) -> bool:
    """A temporary file portkit writes (and a killed run may leave): never an input."""
    return _TEMP.match(name) is not None


def in_temp(directory: Path, name: str, body: Callable[[int, str], None], keep: bool = False) -> None:
    """body(fd, path) on a new temporary file for `name` in `directory` (body owns the descriptor);
    the file is removed when body raises, an interrupt included, and always unless `keep` (body
    renamed or linked it away).

    The file is made inside the block that removes it: its name is chosen first, and only this
    process makes names with its own PID in them, so whatever is found under that name after an
    interrupt is its own. With mkstemp, an interrupt (Python runs a signal's handler between two
    steps of the program, in any function) could land after the file was made and before its name
    was known here, and left an empty `.NAME.portkit-tmp-...` beside a file converted in place; a
    signal mask does not close that window once a process has a second thread (a worker pool's),
    since the kernel then hands the signal to the thread that does not hold it."""
    tmp = fd = None
    started = False
    try:
        for attempt in range(100):   # as mkstemp: another name while one is taken
            tmp = os.path.join(directory, temp_name(name, secrets.token_hex(4)))
            try:
                fd = os.open(tmp, _TEMP_FLAGS, 0o600)
                break
            except FileExistsError:   # an earlier process's with this PID: not ours to remove
                tmp = None
                if attempt == 99:
                    raise
        started = True
        body(fd, tmp)
    except BaseException:
        if fd is not None and not started:
            os.close(fd)
        if tmp is not None:
            _unlink_quietly(tmp)
        raise
    if not keep:
        _unlink_quietly(tmp)


def temp_name(name: str, token: str) -> str:
    """`.NAME.portkit-tmp-PID-TOKEN`, within the 255 bytes a file name may have: a long NAME (a
    legal 253-byte one leaves no room for the mark) is cut to the bytes that fit, which keeps the
    name recognisable to `_TEMP` (any NAME matches) and still says which file it is for."""
    tail = f"{TEMP_MARK}-{os.getpid()}-{token}"
    room = NAME_MAX - 1 - len(tail.encode())
    raw = os.fsencode(name)
    if len(raw) > room:   # a cut inside a UTF-8 sequence is kept as its bytes (surrogateescape)
        name = os.fsdecode(raw[:room])
    return f".{name}{tail}"


NAME_MAX = 255   # bytes in one file name: ext4, XFS, btrfs, tmpfs, APFS, NTFS (in UTF-16 units)
_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def sweep_stale(directory: Path, seen: set[Path]) -> None:
    """Remove, once per run and directory, the temporary files of portkit runs that were killed.

    Only names of our own pattern, regular files, owned by this user, whose writing process no
    longer exists: a concurrent run's temporary file is left alone."""
    if directory in seen:
        return
    seen.add(directory)
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        match = _TEMP.match(name)
        if match is None or match.group("pid") is None or _alive(int(match.group("pid"))):
            continue
        path = directory / name
        try:
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid():
                os.unlink(path)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def atomic_write(target: Path, data: bytes, mode_from: Path | None = None, durable: bool = False,
                 keep_owner: bool = False, before_replace: Callable[[], None] | None = None) -> None:
    """Write `data` to `target` so that readers see the old file or the new one, never a part.

    `durable` also flushes the data to disk before the rename, so that even a system crash
    cannot leave an empty file where a user's original was (used for --in-place); `keep_owner`
    gives the new file the owner and group of `mode_from` (or fails: it never silently changes);
    `before_replace` runs last before the rename and may raise to keep the old file (--in-place
    checks there that nobody changed it meanwhile).
    """
    atomic_write_with(target, lambda handle: handle.write(data), mode_from, durable, keep_owner, before_replace)


def atomic_write_with(target: Path, write: Callable[[BinaryIO], object], mode_from: Path | None = None,
                      durable: bool = False, keep_owner: bool = False,
                      before_replace: Callable[[], None] | None = None) -> None:
    """atomic_write of what `write(handle)` writes as it goes (a report rendered straight to the
    file, never held whole): the old file stays until `write` has returned."""
    def body(fd: int, tmp: str) -> None:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        _copy_metadata(tmp, target, mode_from, keep_owner)
        if before_replace is not None:
            before_replace()
        os.replace(tmp, target)
    in_temp(target.parent, target.name, body, keep=True)


def atomic_copy(target: Path, source_fd: int, mode_from: Path | None = None) -> None:
    """atomic_write of the bytes behind `source_fd` (an unchanged file mirrored to the output),
    copied by the kernel (copy_file_range: no copy through Python, a reflink where the file
    system shares blocks), else read and written; `source_fd` is read from its start, not closed."""
    def body(fd: int, tmp: str) -> None:
        try:
            _copy_fd(source_fd, fd)
        finally:
            os.close(fd)
        _copy_metadata(tmp, target, mode_from, keep_owner=False)
        os.replace(tmp, target)
    in_temp(target.parent, target.name, body, keep=True)


def holds(target: Path, data: bytes | None, source_fd: int | None, mode_from: Path) -> bool:
    """Whether `target` is a regular file with the bytes an atomic_write of `data` (an atomic_copy of
    `source_fd`) gives it, and `mode_from`'s permissions: a convert -o re-run writes nothing there
    (2,176 renames of unchanged files were a fifth of a ggml re-run); else it is written as before."""
    try:
        st = os.lstat(target)
        wanted = os.stat(mode_from).st_mode & 0o7777
    except OSError:
        return False
    size = len(data) if data is not None else os.fstat(source_fd).st_size if source_fd is not None else -1
    if not stat.S_ISREG(st.st_mode) or st.st_size != size or st.st_mode & 0o7777 != wanted:
        return False
    try:
        with open(target, "rb") as handle:
            there = handle.read(size + 1)
        return there == (data if data is not None else _read_all(source_fd))
    except OSError:
        return False


def _read_all(fd: int) -> bytes:   # from its start
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _copy_fd(source: int, destination: int) -> None:
    size = os.fstat(source).st_size
    copied = 0
    if hasattr(os, "copy_file_range"):
        try:
            while copied < size:
                done = os.copy_file_range(source, destination, size - copied, copied, copied)
                if done == 0:
                    break     # a file system that copies nothing this way, or a file that shrank
                copied += done
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP,
                                 errno.EPERM, errno.EBADF):
                raise
            copied = 0
    if copied == size and os.fstat(source).st_size == size:
        return
    os.ftruncate(destination, 0)   # anything short of the whole file: the plain way, from the start
    os.lseek(destination, 0, os.SEEK_SET)
    os.lseek(source, 0, os.SEEK_SET)
    while chunk := os.read(source, 1 << 20):
        view = memoryview(chunk)
        while view:
            view = view[os.write(destination, view):]


def _copy_metadata(tmp: str, target: Path, mode_from: Path | None, keep_owner: bool) -> None:
    source = mode_from if mode_from is not None and mode_from.exists() else target if target.exists() else None
    if source is None:   # mkstemp makes 0600; a new report or table export gets the usual 0666 - umask
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        return
    st = source.stat()
    if keep_owner:
        mine = os.stat(tmp)
        if (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except PermissionError:
                raise PermissionError(errno.EPERM, f"cannot keep its owner and group ({st.st_uid}:{st.st_gid}) "
                                                   f"without privileges; left as it is") from None
    os.chmod(tmp, st.st_mode & 0o7777)   # after chown, which clears set-user-ID and set-group-ID


def publish_new(data: bytes, final: Path, like: Path) -> None:
    """Create `final` with `data` (mode, owner and group of `like`), complete or not at all, and
    only if no file, link or anything else has that name: a partial copy never gets the name."""
    def body(fd: int, tmp: str) -> None:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        _copy_metadata(tmp, like, like, keep_owner=True)
        st = like.stat()
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))   # a backup carries the original's times
        try:
            os.link(tmp, final)     # fails on any existing name, a symbolic link included
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.ENOSYS):
                raise
            if os.path.lexists(final):   # no hard links here: check, then rename
                raise FileExistsError(errno.EEXIST, "exists", str(final)) from None
            os.rename(tmp, final)
    in_temp(final.parent, final.name, body)   # linked (the temporary name goes) or renamed


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_generated(target: Path, data: bytes, durable: bool, hint: str, root: Path | None = None) -> None:
    """Write a file portkit generates under a name in a tree or an output root (the polyfill
    header, the compatibility header). Nobody named it, and the tree is not trusted: it lands in
    `root` once every link is resolved (confined), only a regular file is replaced, never through a
    symbolic link (dangling or not), and a link that appears meanwhile is replaced by the rename,
    not followed, so nothing is ever created outside the root."""
    where = confined(target, root, hint) if root is not None else target
    refuse_unless_regular(target, hint)
    try:
        atomic_write(where, data, durable=durable)
    except OSError as exc:
        raise PortkitError(f"{target}: cannot write: {exc.strerror or exc}") from None


def confined(target: Path, root: Path, hint: str) -> Path:
    """Where a write to `target` lands, checked to stay in `root`: the folder it lands in, with
    every symbolic link resolved, is `root` (resolved too) or lies below it, and its own name is not
    a link (the text of a path says nothing of the links in it: `tree/inc/x.h` with `inc -> /etc`
    is /etc/x.h). Returns the path through the resolved folder, so that the write goes where it
    was checked; a folder that does not exist yet resolves as what `mkdir -p` would make."""
    base = os.path.realpath(root)
    folder = os.path.realpath(os.path.dirname(os.path.abspath(target)))
    if folder != base and not folder.startswith(base.rstrip(os.sep) + os.sep):
        raise PortkitError(f"{target}: would be written outside {root} (its folder is {folder}, through a "
                           f"symbolic link); not written ({hint})")
    if os.path.islink(target):
        raise PortkitError(f"{target}: is a symbolic link; a generated file is never written through or over one "
                           f"({hint})")
    return Path(folder) / os.path.basename(target)


def refuse_unless_regular(target: Path, hint: str) -> None:
    """A generated file's name holds a regular file or nothing; anything else stops the run with
    what it is and what to do (`hint`)."""
    st = stat_or_none(target, follow=False)
    if st is None or stat.S_ISREG(st.st_mode):
        return
    kind = ("a symbolic link" if stat.S_ISLNK(st.st_mode) else "a directory" if stat.S_ISDIR(st.st_mode)
            else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "not a regular file")
    raise PortkitError(f"{target}: is {kind}; a generated file is never written through or over one ({hint})")


def stat_or_none(path: Path, follow: bool) -> os.stat_result | None:
    """os.stat (follow) or os.lstat of `path`; None when nothing has that name."""
    try:
        return os.stat(path) if follow else os.lstat(path)
    except FileNotFoundError:
        return None
