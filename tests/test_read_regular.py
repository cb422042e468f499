"""core/files.read_regular: every file portkit reads from a tree. It reads the size the opened file
has and one byte more, never a 64 MiB buffer per file; a file that grew since still reads whole, up
to the limit, and one past the limit is refused."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from portkit.core import files
from portkit.core.files import FileTooLarge, read_regular


class GrewSince:
    """os, with fstat saying each file is 3 bytes long: the file grew after it was looked at."""

    def __getattr__(self, name: str):
        return getattr(os, name)

    @staticmethod
    def fstat(fd: int) -> os.stat_result:
        st = os.fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 3,
                               int(st.st_atime), int(st.st_mtime), int(st.st_ctime)))


def test_a_file_reads_whole_empty_or_not(tmp_path: Path):
    (tmp_path / "a.cu").write_bytes(b"__global__ void k() {}\n" * 500)
    (tmp_path / "empty.h").write_bytes(b"")
    assert read_regular(tmp_path / "a.cu") == b"__global__ void k() {}\n" * 500
    assert read_regular(tmp_path / "empty.h") == b""


def test_a_file_that_grew_since_its_size_was_taken_reads_whole(tmp_path: Path, monkeypatch):
    data = bytes(range(256)) * 40
    (tmp_path / "a.cu").write_bytes(data)
    monkeypatch.setattr(files, "os", GrewSince())
    assert read_regular(tmp_path / "a.cu") == data


def test_a_file_past_the_limit_is_refused_whether_it_was_or_grew_so(tmp_path: Path, monkeypatch):
    (tmp_path / "a.cu").write_bytes(b"x" * 5001)
    (tmp_path / "b.cu").write_bytes(b"x" * 5000)
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 5000)
    with pytest.raises(FileTooLarge):
        read_regular(tmp_path / "a.cu")
    assert read_regular(tmp_path / "b.cu") == b"x" * 5000
    monkeypatch.setattr(files, "os", GrewSince())   # 3 bytes when looked at, 5,001 when read
    with pytest.raises(FileTooLarge):
        read_regular(tmp_path / "a.cu")
    assert read_regular(tmp_path / "b.cu") == b"x" * 5000


def test_reading_a_small_file_allocates_about_its_size(tmp_path: Path):
    (tmp_path / "a.cu").write_bytes(b"y" * 1000)
    read_regular(tmp_path / "a.cu")   # imports and first-use allocations out of the way
    tracemalloc.start()
    try:
        read_regular(tmp_path / "a.cu")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 10, peak   # was MAX_FILE_BYTES + 1, 64 MiB, for any file
