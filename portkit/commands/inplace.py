"""--in-place: rewrite a file where it is, and only when that loses nothing the user has.

A file is replaced by the conversion of the bytes that were read: when the file on disk is no
longer those bytes (an editor saved it during the run), replacing it would throw the edit away, so
it is left as it is and the run fails (exit 2). A read-only file is one somebody protected: it is
left with a note unless --force. A file with other hard links gets a new inode, and a note.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable

from ..core.files import Entry, Skipped, read_regular
from ..core.output import atomic_write, publish_new, sweep_stale
from .results import ConvertResult, FileOutcome

BACKUP_SUFFIX = ".orig"
CHANGED = "changed on disk during the conversion; not rewritten (run portkit convert again)"
READ_ONLY = "read-only: not rewritten (make it writable, or convert with --force)"

# entry, bytes -> what they convert to (None: unchanged); the backup check converts an old .orig
Converter = Callable[[Entry, bytes], "bytes | None"]


def digest(data: bytes) -> bytes:
    """What the conversion read, in 32 bytes: the outcome carries this across worker processes
    instead of a second copy of every file; an editor's save cannot collide with it."""
    return hashlib.sha256(data).digest()


def rewrite(outcome: FileOutcome, backup: bool, force: bool, result: ConvertResult, converter: Converter,
            swept: set[Path]) -> bytes | None:
    """Rewrite one file where it is (through a symbolic link named on the command line); with
    --rename, write the new name first, then remove the old one, so that an interruption leaves
    both rather than neither. A refusal is recorded in `result`, never raised. Returns the bytes
    the file had when it was written (renaming.py converts them again if a reference must change),
    None when it was not."""
    try:
        path = in_place_path(outcome.entry)
        if outcome.renamed and path != outcome.entry.path:
            raise OSError(0, "a symbolic link is not renamed; rename its target instead")
        target = path.with_name(outcome.target_rel.rsplit("/", 1)[-1]) if outcome.renamed else path
        st = os.stat(path)
        if not force and read_only(path, st):
            result.skipped.append(Skipped(outcome.entry.rel, READ_ONLY, False))
            return None
        sweep_stale(path.parent, swept)
        original = read_regular(path)
        unchanged(outcome.input_digest, original)
        data = outcome.output if outcome.changed else original
        made = _backup(outcome.entry, path, original, converter) if backup else None
        if target != path and os.path.lexists(target):
            raise FileExistsError(f"{target.name} appeared during the run")
        _write(target, data or b"", path, outcome, made)
        if target != path:
            path.unlink()
    except OSError as exc:   # errno 0: a refusal of ours, which says why itself
        reason = exc.strerror if exc.errno == 0 else f"cannot write: {exc.strerror or exc}"
        result.skipped.append(Skipped(outcome.entry.rel, reason, True))
        return None
    result.written += 1
    if st.st_nlink > 1:
        result.notes.append(Skipped(outcome.entry.rel, links_note(st.st_nlink - 1), False))
    return original


def _write(target: Path, data: bytes, path: Path, outcome: FileOutcome, made: Path | None) -> None:
    """Replace `target` unless `path` changed; a backup this call made for a file it then does
    not rewrite is removed, so that the next run can make the right one."""
    try:
        replace_unchanged(target, data, path, outcome.input_digest)
    except OSError:
        if made is not None:
            made.unlink(missing_ok=True)
        raise


def replace_unchanged(target: Path, data: bytes, path: Path, expected: bytes | None) -> None:
    """Replace `target` with `data` atomically and durably (mode, owner and group of `path`),
    looking at `path` once more just before the rename: an edit can land while the backup and the
    new bytes are flushed."""
    atomic_write(target, data, mode_from=path, durable=True, keep_owner=True,
                 before_replace=lambda: unchanged(expected, read_regular(path)))


def unchanged(expected: bytes | None, current: bytes) -> None:
    """Raise the refusal when `current` is not the bytes that were converted (digest `expected`)."""
    if expected is not None and digest(current) != expected:
        raise OSError(0, CHANGED)


def read_only(path: Path, st: os.stat_result) -> bool:
    """No write permission for this user, or (for root, whom permissions do not stop) a mode that
    grants writing to nobody: a generated or vendored file somebody protected on purpose. The
    rename --in-place uses only needs the directory, so without this check it would go through."""
    return not st.st_mode & 0o222 or not os.access(path, os.W_OK)


def links_note(others: int) -> str:
    """Why the other names are not rewritten too: writing into the shared inode would change
    files that may lie outside the tree (nothing is written outside the output root) and would
    not be atomic (an interruption would leave a partial file under every name); the rename keeps
    both promises, and the note says what the other names keep."""
    links = "1 other hard link keeps" if others == 1 else f"{others} other hard links keep"
    return f"rewritten as a new file; its {links} the old content (link it again if both should change)"


def in_place_path(entry: Entry) -> Path:
    """The file that --in-place rewrites: the entry itself, or the target of a symbolic link the
    user named; a file found in the tree that has become a link since is not written."""
    if not entry.path.is_symlink():
        return entry.path
    if not entry.named:
        raise OSError(0, "became a symbolic link during the run; not written")
    return Path(os.path.realpath(entry.path))


def _backup(entry: Entry, path: Path, original: bytes, converter: Converter) -> Path | None:
    """NAME.orig: written complete under a temporary name, then linked into place, so that a
    partial copy never has the final name. One that exists already is kept only when it is the
    original of this file (a copy of it, or what converts to it); anything else, a link, or a
    partial copy from an older release, stops the file rather than stand in for its original.
    Returns the backup when this call made it."""
    keep = path.with_name(path.name + BACKUP_SUFFIX)
    if not os.path.lexists(keep):
        publish_new(original, keep, like=path)
        return keep
    problem = f"{keep.name} exists but is not a backup of {path.name}"
    try:
        old = read_regular(keep)
    except OSError:
        raise OSError(0, f"{keep.name} exists and is not a regular file; not converted") from None
    if old == original:
        return None
    try:
        converted = converter(entry, old)
    except Exception:   # whatever it is, it is not the original of this file
        converted = None
    if (converted if converted is not None else old) != original:
        raise OSError(0, f"{problem} (a partial copy, or another version); not converted: "
                         f"move it away to make a new backup")
    return None
