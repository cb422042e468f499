"""The mapping tables' cache cannot break conversions or run code (issue 28, item 15).

The cache was a pickle: a truncated file broke every conversion until deleted, and unpickling
runs code named in the file. It is JSON now (portkit/core/datacache.py), with a digest, read only
when it is the user's own and not writable by others; anything else is rebuilt from the TOML
tables, and the conversion is the golden one every time.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from portkit.core import datacache

CASE = REPO / "fixtures" / "convert" / "memory_basic"


def _convert(cache: Path) -> bytes:
    """`portkit convert` of the case in a fresh process (the cache is read at start)."""
    proc = subprocess.run([sys.executable, "-m", "portkit", "convert", str(CASE / "input.cu"), "--rocm", "5.2",
                           "-o", "-", "-q"], env=dict(os.environ, PORTKIT_CACHE_DIR=str(cache)),
                          capture_output=True, check=False)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    return proc.stdout


@pytest.fixture
def cache_file(tmp_path: Path) -> Path:
    """A cache written by a first conversion (which is golden)."""
    assert _convert(tmp_path) == (CASE / "expected.hip").read_bytes()
    (found,) = tmp_path.glob("tables-*.json")
    return found


def _with_digest(payload: bytes) -> bytes:
    return hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


class _Plant:
    """Unpickling this creates a file: what a planted pickle cache could do."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


@pytest.mark.parametrize("damage", ["truncated", "garbage", "pickle", "altered"])
@pytest.mark.slow
def test_a_broken_cache_is_rebuilt_and_the_conversion_is_golden(cache_file: Path, tmp_path: Path, damage: str):
    data = cache_file.read_bytes()
    marker = tmp_path / "pwned"
    if damage == "truncated":
        cache_file.write_bytes(data[:len(data) // 2])
    elif damage == "garbage":
        cache_file.write_bytes(os.urandom(4096))
    elif damage == "pickle":   # with a correct digest: only the format stands between the file and code
        cache_file.write_bytes(_with_digest(pickle.dumps(_Plant(marker))))
    else:   # one byte of the payload changed: the digest no longer matches
        cache_file.write_bytes(data.replace(b'"hipMalloc"', b'"hipMallod"', 1))
    assert _convert(tmp_path) == (CASE / "expected.hip").read_bytes()
    assert not marker.exists()
    digest, _, payload = cache_file.read_bytes().partition(b"\n")   # written again, whole
    assert hashlib.sha256(payload).hexdigest().encode() == digest


@pytest.mark.slow
def test_a_cache_others_can_write_is_not_read(cache_file: Path, tmp_path: Path):
    """Tables altered by someone else (a correct digest, a group- and world-writable file) are not
    used: the conversion is golden, not hipMallocEvil."""
    digest, _, payload = cache_file.read_bytes().partition(b"\n")
    altered = payload.replace(b'"hip":"hipMalloc"', b'"hip":"hipMallocEvil"', 1)
    assert altered != payload
    cache_file.write_bytes(_with_digest(altered))
    os.chmod(cache_file, 0o666)
    assert _convert(tmp_path) == (CASE / "expected.hip").read_bytes()
    assert os.stat(cache_file).st_mode & 0o777 == 0o600


def test_a_cache_owned_by_another_user_is_rebuilt(tmp_path: Path, monkeypatch):
    built = []

    def build() -> dict:
        built.append(1)
        return {"tables": len(built)}

    def load() -> dict:
        return datacache.cached("t", [], [], build, lambda v: v, lambda v: v)

    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path))
    assert load() == {"tables": 1} and load() == {"tables": 1}   # written, then read back
    monkeypatch.setattr(datacache.os, "geteuid", lambda: os.getuid() + 1)
    assert load() == {"tables": 2}
    assert json.loads(next(tmp_path.glob("t-*.json")).read_bytes().partition(b"\n")[2]) == {"tables": 2}
