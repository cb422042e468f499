"""convert's per-file cache (commands/convert_cache.py): a re-run scans only the files whose bytes
changed and writes exactly what a run without the cache writes, the JSON summary included; a
corrupt or foreign cache, other settings or another tree scan everything again (issue 52, item 3)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from portkit.cli.app import main
from portkit.commands import convert as convert_command

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "fixtures" / "sample_project"


@pytest.fixture
def cache_on(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("PORTKIT_NO_CACHE", raising=False)
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    return tmp_path / "cache"


def _counted(monkeypatch, module, name: str) -> list[str]:
    """The paths module.name(rel, ...) is called with in this process, in order."""
    seen: list[str] = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda rel, *args, **kwargs: seen.append(rel) or real(rel, *args, **kwargs))
    return seen


@pytest.fixture
def scanned(monkeypatch) -> list[str]:
    """The files convert scans in this process (-j 1)."""
    return _counted(monkeypatch, convert_command, "convert_bytes")


@pytest.fixture
def tree(tmp_path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "src"))


def _convert(tree: Path, out: Path, capsysbinary, *extra: str) -> tuple[bytes, dict[str, bytes]]:
    """The JSON summary on standard output and every file written, of one run."""
    code = main(["convert", str(tree), "-o", str(out), "--format", "json", "-j", "1", *extra])
    assert code in (0, 1)
    summary = capsysbinary.readouterr().out
    written = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    return summary, written


def _uncached(tree: Path, out: Path, capsysbinary, monkeypatch, *extra: str):
    monkeypatch.setenv("PORTKIT_NO_CACHE", "1")
    try:
        return _convert(tree, out, capsysbinary, *extra)
    finally:
        monkeypatch.delenv("PORTKIT_NO_CACHE")


SOURCES = ["src/cuda_check.cuh", "src/gemm.cu", "src/main.cpp", "src/ops.h", "src/reduce.cu", "src/vector_add.cu"]


def test_a_rerun_scans_nothing_and_writes_the_same_bytes(tree, tmp_path, cache_on, scanned, capsysbinary, monkeypatch):
    cold = _convert(tree, tmp_path / "cold", capsysbinary)
    assert sorted(scanned) == ["CMakeLists.txt", *SOURCES]
    scanned.clear()
    warm = _convert(tree, tmp_path / "warm", capsysbinary)
    assert scanned == []
    plain = _uncached(tree, tmp_path / "plain", capsysbinary, monkeypatch)
    assert warm == cold == plain
    assert json.loads(warm[0])["files"]["changed"] == 7
    assert sorted(p.name for p in cache_on.glob("converts-*.json")) != []
    assert not any(p.name.startswith("converts-") for p in tree.rglob("*"))   # never in the tree


def test_a_changed_file_is_the_only_one_scanned_again(tree, tmp_path, cache_on, scanned, capsysbinary, monkeypatch):
    _convert(tree, tmp_path / "cold", capsysbinary)
    gemm = tree / "src" / "gemm.cu"
    gemm.write_bytes(gemm.read_bytes() + b"void sync_all() { cudaDeviceSynchronize(); }\n")
    scanned.clear()
    again = _convert(tree, tmp_path / "again", capsysbinary)
    assert scanned == ["src/gemm.cu"]
    assert again == _uncached(tree, tmp_path / "plain", capsysbinary, monkeypatch)
    assert again[1]["src/gemm.cu"].endswith(b"void sync_all() { hipDeviceSynchronize(); }\n")


def test_other_settings_scan_everything_again(tree, tmp_path, cache_on, scanned, capsysbinary):
    _convert(tree, tmp_path / "one", capsysbinary, "--rocm", "6.2")
    scanned.clear()
    _convert(tree, tmp_path / "two", capsysbinary, "--rocm", "5.2")
    assert sorted(scanned) == ["CMakeLists.txt", *SOURCES]


@pytest.mark.parametrize("damage", ["garbage", "foreign-entry"])
def test_a_corrupt_or_foreign_cache_is_ignored_and_rebuilt(tree, tmp_path, cache_on, scanned, capsysbinary,
                                                           monkeypatch, damage):
    cold = _convert(tree, tmp_path / "cold", capsysbinary)
    (slot,) = cache_on.glob("converts-*.json")
    if damage == "garbage":
        slot.write_bytes(b"{not json")
        rescanned = ["CMakeLists.txt", *SOURCES]
    else:   # one entry altered by hand: a well-formed file whose payload no longer matches its digest,
        # or a payload whose rows are not what convert kept; either way the file is scanned again
        text = slot.read_text()
        assert '"hipStream_t"' in text
        slot.write_text(text.replace('"hipStream_t"', '"hipXtream_t"', 1))
        rescanned = ["CMakeLists.txt", *SOURCES]
    scanned.clear()
    again = _convert(tree, tmp_path / "again", capsysbinary)
    assert sorted(scanned) == rescanned
    assert again == cold
    scanned.clear()
    assert _convert(tree, tmp_path / "third", capsysbinary) == cold and scanned == []   # rebuilt


def test_a_kept_entry_with_rows_that_are_not_edits_is_scanned_again(tree, tmp_path, cache_on, scanned,
                                                                    capsysbinary):
    from portkit.commands.scan import resultcache
    from portkit.core import datacache
    cold = _convert(tree, tmp_path / "cold", capsysbinary)
    (slot,) = cache_on.glob("converts-*.json")
    stored = datacache.load_slot(slot.stem)
    stored["files"]["src/gemm.cu"][1][2] = [["not", "an", "edit"]]
    datacache.store_slot(slot.stem, stored)   # a valid file (its digest matches) with a foreign row
    scanned.clear()
    again = _convert(tree, tmp_path / "again", capsysbinary)
    assert scanned == ["src/gemm.cu"] and again == cold
    assert resultcache.FORMAT == 1


@pytest.fixture
def audited(monkeypatch) -> list[str]:
    """The files the audit's scan reads for convert's summary in this process."""
    from portkit.commands import audit
    return _counted(monkeypatch, audit, "audit_bytes")


def test_kept_conversions_are_audited_once_ahead_for_the_summary(tree, tmp_path, cache_on, capsysbinary, monkeypatch,
                                                                 audited):
    """`convert -q` keeps the conversions and not the audit's scans; the next convert's summary audits
    the kept files in one batch (convert_audit.Summary.ahead, in the -j workers), each once, and says
    what a run without the cache says."""
    assert main(["convert", str(tree), "-o", str(tmp_path / "quiet"), "-q", "-j", "1"]) in (0, 1)
    capsysbinary.readouterr()
    assert audited == []
    from portkit.commands import convert_audit
    batches: list[list[str]] = []
    real_scan = convert_audit.Summary._scan
    monkeypatch.setattr(convert_audit.Summary, "_scan",
                        lambda self, entries: batches.append([e.rel for e in entries]) or real_scan(self, entries))
    again = _convert(tree, tmp_path / "again", capsysbinary)
    assert sorted(audited) == ["CMakeLists.txt", *SOURCES]
    assert sorted(max(batches, key=len)) == ["CMakeLists.txt", *SOURCES]
    plain = _uncached(tree, tmp_path / "plain", capsysbinary, monkeypatch)
    assert again == plain and json.loads(again[0])["needs_person"] != []


def test_a_kept_file_that_changes_under_the_batch_is_audited_again_as_convert_read_it(tree, tmp_path, cache_on,
                                                                                      capsysbinary, monkeypatch, audited):
    """The batch's worker reads the file again: bytes other than the ones convert read (written
    meanwhile) are audited once more from convert's, so the summary is of what was converted."""
    from portkit.commands import convert_audit
    assert main(["convert", str(tree), "-o", str(tmp_path / "quiet"), "-q", "-j", "1"]) in (0, 1)
    capsysbinary.readouterr()
    plain = _uncached(tree, tmp_path / "plain", capsysbinary, monkeypatch)
    audited.clear()
    gemm = tree / "src" / "gemm.cu"
    real_ahead = convert_audit.Summary.ahead

    def ahead_while_changed(self, entries):
        kept = gemm.read_bytes()
        gemm.write_bytes(kept + b"__global__ void spare(int *p) { p[threadIdx.x % 32] = 0; }\n")
        try:
            real_ahead(self, entries)
        finally:
            gemm.write_bytes(kept)
    monkeypatch.setattr(convert_audit.Summary, "ahead", ahead_while_changed)
    again = _convert(tree, tmp_path / "again", capsysbinary)
    assert sorted(audited) == sorted(["CMakeLists.txt", *SOURCES, "src/gemm.cu"])
    assert again[0] == plain[0]
