"""An output the user names (`-o`, `--html`, `mappings -o`, a baseline): a regular file (or a new
name) replaced atomically, a symbolic link written through to its target, a character device, a
FIFO or a descriptor (`/dev/stdout`) written as a stream and never replaced by a regular file.

`write_output_with` takes a writer instead of the bytes, so that a report is encoded straight
into the output as it is rendered (a 10M-line audit's JSON is 45 MB of text: held as a string,
then as its encoded bytes, it was the run's peak). A regular file still changes only when the
writer has finished: a writer that fails leaves the old file; a stream has what was written.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path
from typing import BinaryIO, Callable

from .errors import PortkitError
from .output import atomic_write_with, stat_or_none

READER_WAIT_S = 5.0     # how long a FIFO may take to get its reader (`cat fifo & portkit ... -o fifo`)
_DESCRIPTOR_DIRS = ("/dev", "/proc")   # the file systems of devices and of descriptors the caller opened

Writer = Callable[[BinaryIO], object]


def write_output(target: Path, data: bytes, durable: bool = False) -> None:
    """Write `data` to an output the user named (the module docstring); refuse anything else."""
    write_output_with(target, lambda handle: handle.write(data), durable)


def write_output_with(target: Path, write: Writer, durable: bool = False) -> None:
    """write_output of what `write(handle)` writes to a binary handle, as it writes it."""
    try:
        _write_output(Path(target), write, durable)
    except BrokenPipeError:
        raise   # the reader stopped early (`-o /dev/stdout | head`): as for standard output, not an error
    except OSError as exc:
        raise PortkitError(f"{target}: cannot write: {exc.strerror or exc}") from None


def _names_a_device(target: Path) -> bool:
    """Whether `target` lies in /dev's or /proc's own file system, where names are devices and
    descriptors and a mistyped one (`-o /dev/nul`) must not become a stray file. Folders mounted
    under /dev with a file system of their own take files as any folder does: /dev/shm, the
    tmpfs where containers and CI keep scratch files."""
    path = os.path.abspath(target)
    if not any(path.startswith(root + "/") for root in _DESCRIPTOR_DIRS):
        return False
    folder = os.path.dirname(path)
    while (found := stat_or_none(Path(folder), follow=True)) is None:   # the folders -o would create
        folder = os.path.dirname(folder)
    return any(_same_file_system(found, root) for root in _DESCRIPTOR_DIRS)


def _same_file_system(st: os.stat_result, root: str) -> bool:
    other = stat_or_none(Path(root), follow=True)
    return other is not None and other.st_dev == st.st_dev


def _write_output(target: Path, write: Writer, durable: bool) -> None:
    if _names_a_device(target):
        st = stat_or_none(target, follow=True)
        if st is None:
            raise PortkitError(f"{target}: no such device; portkit creates no files there")
        return _stream(target, write, st, regular=True)
    st = stat_or_none(target, follow=False)
    if st is None or stat.S_ISREG(st.st_mode):
        target.parent.mkdir(parents=True, exist_ok=True)
        return atomic_write_with(target, write, durable=durable)
    if stat.S_ISLNK(st.st_mode):
        pointed = stat_or_none(target, follow=True)
        if pointed is None or stat.S_ISREG(pointed.st_mode):   # the link stays; its target gets the data
            return atomic_write_with(Path(os.path.realpath(target)), write, durable=durable)
        st = pointed
    _stream(target, write, st, regular=False)


def _stream(target: Path, write: Writer, st: os.stat_result, regular: bool) -> None:
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
        with os.fdopen(fd, "wb", closefd=False) as handle:   # whole writes: it writes again what was left
            write(handle)
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
