"""A re-run knows the files the last run read by their stamps (core/filestamps.py): it does not
hash them or read their #include lines again, it reports exactly what a run without the cache
reports, and a file whose stamp moved, a file written too recently to trust its stamp, or a
corrupt slot is read again (issue 52, item 3)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from portkit.cli.app import main
from portkit.core import datacache, filestamps
from portkit.core.files import discover

KERNEL = (b"#include <cuda_runtime.h>\n#include \"ops.def\"\n"
          b"__global__ void k(float *x) { x[threadIdx.x] = __shfl_down_sync(0xffffffff, x[0], 16); }\n")
OPS = b"__device__ int warp_id() { return threadIdx.x / 32; }\n"   # an X-macro file: code because a source includes it
HOST = b"#include \"util.h\"\nint host() { return 1; }\n"


@pytest.fixture
def cache_on(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("PORTKIT_NO_CACHE", raising=False)
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    monkeypatch.setattr(filestamps, "SETTLE_NS", 0)   # files written by the test this instant count as settled
    return tmp_path / "cache"


@pytest.fixture
def noted(monkeypatch) -> list[str]:
    """The files whose bytes a Stamps hashed and read the #include lines of, in this process."""
    seen: list[str] = []
    real = filestamps.Stamps.note

    def counting(self, entry, data):
        seen.append(entry.rel)
        return real(self, entry, data)
    monkeypatch.setattr(filestamps.Stamps, "note", counting)
    return seen


@pytest.fixture
def tree(tmp_path) -> Path:
    root = tmp_path / "src"
    root.mkdir()
    (root / "kernel.cu").write_bytes(KERNEL)
    (root / "ops.def").write_bytes(OPS)
    (root / "host.cpp").write_bytes(HOST)
    (root / "util.h").write_bytes(b"int util();\n")
    return root


def _audit(tree: Path, capsys) -> dict:
    assert main(["audit", str(tree), "--format", "json", "-j", "1"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    report.pop("generated", None)
    return report


def _codes(report: dict) -> list[tuple[str, int, str]]:
    return sorted((f["path"], f["line"], f["code"]) for f in report["findings"])


def test_a_rerun_reads_again_only_the_file_whose_stamp_moved(tree, cache_on, noted, capsys, monkeypatch):
    cold = _audit(tree, capsys)
    assert sorted(noted) == ["host.cpp", "kernel.cu", "ops.def", "util.h"]
    assert ("ops.def", 1, "PK201") in _codes(cold)   # the included X-macro file is audited as code
    noted.clear()
    assert _audit(tree, capsys) == cold and noted == []   # the include walk and the result keys from the records
    (tree / "host.cpp").write_bytes(HOST + b"__global__ void g() { int lane = threadIdx.x % 32; (void)lane; }\n")
    edited = _audit(tree, capsys)
    assert noted == ["host.cpp"]
    monkeypatch.setenv("PORTKIT_NO_CACHE", "1")
    assert edited == _audit(tree, capsys) and ("host.cpp", 3, "PK201") in _codes(edited)


def test_bytes_rewritten_at_the_same_size_are_read_again(tree, cache_on, noted, capsys):
    _audit(tree, capsys)
    noted.clear()
    # the same size, the same modification time set back: the change time and the bytes moved
    st = os.stat(tree / "ops.def")
    (tree / "ops.def").write_bytes(OPS.replace(b"/ 32", b"/ 64"))
    os.utime(tree / "ops.def", ns=(st.st_atime_ns, st.st_mtime_ns))
    report = _audit(tree, capsys)
    assert noted == ["ops.def"] and ("ops.def", 1, "PK201") not in _codes(report)


def test_a_file_written_just_before_the_read_is_not_trusted_next_time(tree, cache_on, noted, capsys, monkeypatch):
    monkeypatch.setattr(filestamps, "SETTLE_NS", 3600 * 10**9)   # nothing written in the last hour is settled
    _audit(tree, capsys)
    noted.clear()
    _audit(tree, capsys)
    assert sorted(noted) == ["host.cpp", "kernel.cu", "ops.def", "util.h"]


def test_a_corrupt_or_altered_slot_is_read_as_empty(tree, cache_on, noted, capsys):
    cold = _audit(tree, capsys)
    (slot,) = cache_on.glob("stamps-*.json")
    stored = datacache.load_slot(slot.stem)
    stored["files"]["kernel.cu"][1] = "not hex"   # a valid file (its digest matches) with a foreign record
    datacache.store_slot(slot.stem, stored)
    noted.clear()
    assert _audit(tree, capsys) == cold and noted == ["kernel.cu"]
    slot.write_text("{truncated")
    noted.clear()
    assert _audit(tree, capsys) == cold and sorted(noted) == ["host.cpp", "kernel.cu", "ops.def", "util.h"]


def test_a_record_answers_only_for_the_stamp_it_was_kept_under(tmp_path, monkeypatch):
    monkeypatch.setattr(filestamps, "SETTLE_NS", 0)
    (tmp_path / "a.cu").write_bytes(b'#include "b.h"\n#  include <c/d.h>\nint a;\n')
    _, (entry,), _ = discover([tmp_path])
    stamps = filestamps.Stamps(tmp_path, "k")
    data, skipped = stamps.read(entry)
    assert skipped is None
    known = stamps.known(entry)
    assert known is not None and known.includes == ((True, "b.h"), (False, "c/d.h"))
    moved = filestamps.Stamps(None, None)
    moved._old = {"a.cu": [[*entry.seen[:3], entry.seen[3] + 1], known.sha256.hex(), []]}   # another inode
    assert moved.known(entry) is None
    moved._old = {"a.cu": [list(entry.seen), known.sha256.hex(), [[True, "b.h"]]]}
    assert moved.known(entry) == filestamps.Known(known.sha256, ((True, "b.h"),))


def test_a_file_written_between_the_walk_and_the_read_is_known_by_the_bytes_read(tmp_path, monkeypatch):
    """convert applies a kept result's edits to the bytes it reads: after Stamps.read, known() is
    the record of those bytes, even when the walk's stamp matched a record of the old ones."""
    import hashlib
    monkeypatch.setattr(filestamps, "SETTLE_NS", 0)
    (tmp_path / "a.cu").write_bytes(b"int a;\n")
    _, (entry,), _ = discover([tmp_path])
    last = filestamps.Stamps(None, None)
    last.read(entry)
    now = filestamps.Stamps(None, None)
    now._old = dict(last._new)   # the next run, whose walk saw the same stamp
    (tmp_path / "a.cu").write_bytes(b"int b;\n")   # written after that walk, before the read
    data, _ = now.read(entry)
    assert data == b"int b;\n" and now.known(entry).sha256 == hashlib.sha256(data).digest()
    assert now._new["a.cu"] is None   # not kept under the walk's stamp (nor the last run's): read again next time


def test_an_unchanged_rerun_writes_no_record_and_keeps_the_build_files_ones(tree, cache_on, noted, capsys):
    """prepare saves the records before the audit reads the build files for their kept results:
    the build files' records survive that save, and a re-run of an unchanged tree writes nothing."""
    (tree / "CMakeLists.txt").write_text("project(k LANGUAGES CXX CUDA)\nadd_library(k kernel.cu host.cpp)\n")
    cold = _audit(tree, capsys)
    _audit(tree, capsys)   # the first re-run records the CMake file (no cold run reads it in this process)
    (slot,) = cache_on.glob("stamps-*.json")
    written = slot.stat().st_mtime_ns
    noted.clear()
    assert _audit(tree, capsys) == cold and noted == [] and slot.stat().st_mtime_ns == written
    assert sorted(datacache.load_slot(slot.stem)["files"]) == ["CMakeLists.txt", "host.cpp", "kernel.cu", "ops.def",
                                                               "util.h"]


def test_a_convert_rerun_reads_no_file_the_last_run_left_as_it_is(tree, tmp_path, cache_on, noted, capsys):
    """convert's kept results (convert_cache.py) and its summary's audit take the same records: the
    build files' too, once a re-run has read them for its kept results."""
    (tree / "CMakeLists.txt").write_text("project(k LANGUAGES CXX CUDA)\nadd_library(k kernel.cu host.cpp)\n")
    out = tmp_path / "out"
    for _ in range(2):
        assert main(["convert", str(tree), "-o", str(out), "-j", "1", "-q"]) == 0
    written = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    noted.clear()
    assert main(["convert", str(tree), "-o", str(out), "-j", "1", "-q"]) == 0
    assert noted == [] and {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == written
