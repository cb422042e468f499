"""Where portkit writes: atomic replacement of files, user-named outputs, and its own temporary files.

Every write goes through a temporary file in the target's directory, named so that it is
recognisably portkit's (`.NAME.portkit-tmp-PID-XXXXXXXX`): discovery ignores such names, and a
later run removes the ones whose writer is gone from the directories it writes. An output the
user names (`-o`, `--html`, `mappings -o`, a baseline) is a stream when it is a device, a FIFO or
a descriptor (`/dev/stdout`), is written through when it is a symbolic link, and is never
replaced by a regular file in those cases.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import time
from pathlib import Path
from typing import Callable

from .errors import PortkitError

TEMP_MARK = ".portkit-tmp"
# ours: `.a.cu.portkit-tmp-1234-k3j4h5gd`; older releases wrote `.a.cu.k3j4h5gd.portkit-tmp`
# (temp_name cuts a long NAME; NAME may hold any character, a line break too: DOTALL, and \Z, not
# $, which also matches before a final line break)
_TEMP = re.compile(r"\..+\.portkit-tmp-(?P<pid>\d+)-[A-Za-z0-9_]+\Z|\..+\.[A-Za-z0-9_]{8}\.portkit-tmp\Z", re.DOTALL)
READER_WAIT_S = 5.0     # how long a FIFO may take to get its reader (`cat fifo & portkit ... -o fifo`)
_DESCRIPTOR_DIRS = ("/dev", "/proc")   # the file systems of devices and of descriptors the caller opened


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
    def body(fd: int, tmp: str) -> None:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
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


def write_output(target: Path, data: bytes, durable: bool = False) -> None:
    """Write an output the user named: a regular file (or a new name) atomically, through a symbolic
    link to its target, to a character device, FIFO or descriptor as a stream; refuse the rest."""
    try:
        _write_output(Path(target), data, durable)
    except BrokenPipeError:
        raise   # the reader stopped early (`-o /dev/stdout | head`): as for standard output, not an error
    except OSError as exc:
        raise PortkitError(f"{target}: cannot write: {exc.strerror or exc}") from None


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
    st = _stat(target, follow=False)
    if st is None or stat.S_ISREG(st.st_mode):
        return
    kind = ("a symbolic link" if stat.S_ISLNK(st.st_mode) else "a directory" if stat.S_ISDIR(st.st_mode)
            else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "not a regular file")
    raise PortkitError(f"{target}: is {kind}; a generated file is never written through or over one ({hint})")


def _names_a_device(target: Path) -> bool:
    """Whether `target` lies in /dev's or /proc's own file system, where names are devices and
    descriptors and a mistyped one (`-o /dev/nul`) must not become a stray file. Folders mounted
    under /dev with a file system of their own take files as any folder does: /dev/shm, the
    tmpfs where containers and CI keep scratch files."""
    path = os.path.abspath(target)
    if not any(path.startswith(root + "/") for root in _DESCRIPTOR_DIRS):
        return False
    folder = os.path.dirname(path)
    while (found := _stat(Path(folder), follow=True)) is None:   # the folders -o would create
        folder = os.path.dirname(folder)
    return any(_same_file_system(found, root) for root in _DESCRIPTOR_DIRS)


def _same_file_system(st: os.stat_result, root: str) -> bool:
    other = _stat(Path(root), follow=True)
    return other is not None and other.st_dev == st.st_dev


def _write_output(target: Path, data: bytes, durable: bool) -> None:
    if _names_a_device(target):
        st = _stat(target, follow=True)
        if st is None:
            raise PortkitError(f"{target}: no such device; portkit creates no files there")
        return _stream(target, data, st, regular=True)
    st = _stat(target, follow=False)
    if st is None or stat.S_ISREG(st.st_mode):
        target.parent.mkdir(parents=True, exist_ok=True)
        return atomic_write(target, data, durable=durable)
    if stat.S_ISLNK(st.st_mode):
        pointed = _stat(target, follow=True)
        if pointed is None or stat.S_ISREG(pointed.st_mode):   # the link stays; its target gets the data
            return atomic_write(Path(os.path.realpath(target)), data, durable=durable)
        st = pointed
    _stream(target, data, st, regular=False)


def _stat(path: Path, follow: bool) -> os.stat_result | None:
    try:
        return os.stat(path) if follow else os.lstat(path)
    except FileNotFoundError:
        return None


def _stream(target: Path, data: bytes, st: os.stat_result, regular: bool) -> None:
    """Write to a device, FIFO or descriptor without replacing it (a regular file behind
    /dev/stdout, `regular`, is appended to, as the shell's `>>` or `>` opened it)."""
    kind = _refused_kind(st.st_mode, regular)
    if kind is not None:
        raise PortkitError(f"{target}: is {kind}; not written")
    flags = os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | os.O_APPEND
    deadline = time.monotonic() + READER_WAIT_S
    while True:
        try:
            fd = os.open(target, flags)
            break
        except OSError as exc:   # ENXIO: a FIFO that nobody reads (yet)
            if exc.errno != errno.ENXIO or time.monotonic() >= deadline:
                if exc.errno == errno.ENXIO:
                    raise PortkitError(f"{target}: no process reads this FIFO; not written") from None
                raise
            time.sleep(0.05)
    try:
        kind = _refused_kind(os.fstat(fd).st_mode, regular)   # what was opened, not what was looked at
        if kind is not None:
            raise PortkitError(f"{target}: is {kind}; not written")
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _refused_kind(mode: int, regular: bool) -> str | None:
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or (regular and stat.S_ISREG(mode)):
        return None
    if stat.S_ISREG(mode):
        return "a regular file that replaced a device or FIFO during the run"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a file"
