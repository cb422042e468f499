"""A cache of validated data (the mapping tables) as JSON in the user's cache directory.

Parsing and validating the ~10,000 TOML records takes ~0.4 s at every start; reading them back
from this cache ~0.1 s (benchmarks/README.md, "mapping cache"). The cache used to be a pickle:
unpickling runs code named in the file, so anyone who could write one file in the cache
directory ran code in every later portkit, and a truncated file broke every run until deleted.
JSON cannot run code; the file also carries a digest of its payload, and anything wrong with it
(missing, unreadable, truncated, altered, another user's or writable by others, written by
another version) means "build it again".
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Callable, Iterable, TypeVar

from .output import in_temp

T = TypeVar("T")
FORMAT = 1   # bump when the plain-data layout changes (the key covers the code too)


def cache_dir() -> Path:
    """PORTKIT_CACHE_DIR, else $XDG_CACHE_HOME/portkit, else ~/.cache/portkit."""
    if os.environ.get("PORTKIT_CACHE_DIR"):
        return Path(os.environ["PORTKIT_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "portkit"


def cached(name: str, inputs: Iterable[Path], code: Iterable[Path], build: Callable[[], T],
           to_plain: Callable[[T], object], from_plain: Callable[[object], T]) -> T:
    """`build()`, or its result as cached for these `inputs` (by size and time) and this `code`."""
    path = cache_dir() / f"{name}-{_key(inputs, code)}.json"
    try:
        return from_plain(_read(path))
    except Exception:
        # Deliberately broad, at this one boundary: whatever is wrong with the file (truncated,
        # altered, a record the code no longer accepts), the answer is to build the data again.
        pass
    value = build()
    try:
        _write(path, to_plain(value))
        _prune(name, KEYED_KEPT)   # an older portkit's or older tables' copies
    except (OSError, ValueError, TypeError):
        pass   # a read-only home is fine: the data is built each time instead
    return value


KEYED_KEPT = 4   # copies of one cached() name kept (two portkit versions used in turn both stay)


SLOTS_KEPT = 32   # slots of one kind (facts-*: one per project) kept; the least recently written go


def cached_slot(name: str, key: str, build: Callable[[], T], to_plain: Callable[[T], object],
                from_plain: Callable[[object], T]) -> T:
    """`build()`, or the value kept in the one slot `name` when it was built for this `key`: a
    slot per project is overwritten, never accumulated (the key changes with every edit), and at
    most SLOTS_KEPT slots of a kind (the part of `name` before its first "-") are kept."""
    path = cache_dir() / f"{name}.json"
    try:
        stored = _read(path)
        if isinstance(stored, dict) and stored.get("key") == key:
            return from_plain(stored["value"])
    except Exception:   # as in cached(): anything wrong with the file means "build it again"
        pass
    value = build()
    try:
        _write(path, {"key": key, "value": to_plain(value)})
        _prune(name.split("-", 1)[0])
    except (OSError, ValueError, TypeError):
        pass
    return value


def load_slot(name: str) -> object | None:
    """The payload kept in slot `name`, or None (none, or anything wrong with it)."""
    try:
        return _read(cache_dir() / f"{name}.json")
    except Exception:   # as in cached(): anything wrong with the file means "build it again"
        return None


def store_slot(name: str, plain: object) -> None:
    """Keep `plain` in slot `name` (one file, overwritten); a read-only home keeps nothing."""
    try:
        _write(cache_dir() / f"{name}.json", plain)
        _prune(name.split("-", 1)[0])
    except (OSError, ValueError, TypeError):
        pass


def _prune(kind: str, kept: int | None = None) -> None:
    """Delete all but the `kept` (SLOTS_KEPT) most recently written files `kind`-*.json."""
    slots = sorted(cache_dir().glob(f"{kind}-*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in slots[SLOTS_KEPT if kept is None else kept:]:
        old.unlink(missing_ok=True)


def digest(parts: Iterable[str], code: Iterable[Path] = ()) -> str:
    """A key over strings and the bytes of the code that interprets them."""
    key = hashlib.sha256(f"format {FORMAT}\0".encode())
    for path in code:
        key.update(path.read_bytes())
    for part in parts:
        key.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return key.hexdigest()


def _key(inputs: Iterable[Path], code: Iterable[Path]) -> str:
    key = hashlib.sha256(f"format {FORMAT}\0".encode())
    for path in code:
        key.update(path.read_bytes())
    for path in inputs:
        stat = path.stat()
        key.update(f"{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return key.hexdigest()[:24]


def _read(path: Path) -> object:
    """The payload of a cache file (its first line is the SHA-256 of the rest), if it is this
    user's and only this user can change it: another's file could hold other tables."""
    with path.open("rb") as handle:
        st = os.fstat(handle.fileno())
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise PermissionError(f"{path}: not this user's own file")
        data = handle.read()
    digest, _, payload = data.partition(b"\n")
    if hashlib.sha256(payload).hexdigest().encode() != digest:
        raise ValueError(f"{path}: digest does not match")
    return json.loads(payload)


def _write(path: Path, plain: object) -> None:
    payload = json.dumps(plain, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    path.parent.mkdir(parents=True, exist_ok=True)

    def body(fd: int, tmp: str) -> None:
        with os.fdopen(fd, "wb") as handle:
            handle.write(hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
        os.replace(tmp, path)
    # made inside the block that removes it (core/output.in_temp): with mkstemp, an interrupt
    # right after the file was made left a stray temporary file in the cache folder
    in_temp(path.parent, path.name, body, keep=True)
