"""The result cache (commands/scan/resultcache.py): an audit re-run scans only the files whose bytes
changed, gives exactly what a full scan gives, and scans everything again when the settings,
the tree's facts or the cache file itself are not what the results were kept for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_tree
from portkit.cli import main
from portkit.commands import audit as audit_command
from portkit.commands.audit import audit_paths, configured
from portkit.core import datacache
from portkit.engine.context import FileScan, Metrics
from portkit.core.findings import Finding
from portkit.project.config import Config
from portkit.commands.scan import resultcache

KERNEL = "__global__ void k%d(float* o) { o[threadIdx.x %% 32] = __shfl_down_sync(0xffffffff, o[0], 16); }\n"
FILES = {f"src/k{i}.cu": KERNEL % i for i in range(5)} | {
    "CMakeLists.txt": "project(p LANGUAGES CXX CUDA)\nfind_package(CUDAToolkit)\n",
    "src/host.cpp": "#include <cuda_runtime.h>\nvoid f() { cudaDeviceSynchronize(); }\n"}


@pytest.fixture
def cache_on(tmp_path, monkeypatch):
    monkeypatch.delenv("PORTKIT_NO_CACHE", raising=False)
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def scanned(monkeypatch) -> list[str]:
    """The files audit_bytes scans in this process (--jobs 1)."""
    seen: list[str] = []
    real = audit_command.audit_bytes

    def counting(rel, data, kind, job):
        seen.append(rel)
        return real(rel, data, kind, job)
    monkeypatch.setattr(audit_command, "audit_bytes", counting)
    return seen


def _audit(root: Path, **fields):
    result = audit_paths([root], configured(Config(), **fields))
    return [(f.entry.rel, f.scan.findings, f.scan.metrics) for f in result.files if f.scan is not None]


def _fingerprints(outcomes):
    return [[x.fingerprint for x in findings] for _, findings, _ in outcomes]


def test_a_rerun_scans_nothing_and_gives_the_same_results(tmp_path, cache_on, scanned):
    root = write_tree(tmp_path / "tree", FILES)
    first = _audit(root)
    assert sorted(scanned) == sorted(FILES)
    scanned.clear()
    second = _audit(root)
    assert scanned == []
    assert second == first and _fingerprints(second) == _fingerprints(first)
    assert [f.code for f in second[3][1]] == ["PK201", "PK203", "PK202"]   # src/k0.cu, by column


def test_a_changed_file_is_the_only_one_scanned_again(tmp_path, cache_on, scanned):
    root = write_tree(tmp_path / "tree", FILES)
    _audit(root)
    (root / "src/k3.cu").write_text("__global__ void k(int* o) { o[threadIdx.x] = 1; }\n")
    scanned.clear()
    again = _audit(root)
    assert scanned == ["src/k3.cu"]
    uncached = _audit(root, cache=False)
    assert again == uncached and _fingerprints(again) == _fingerprints(uncached)
    assert dict((rel, findings) for rel, findings, _ in again)["src/k3.cu"] == []


def test_other_settings_or_facts_scan_everything_again(tmp_path, cache_on, scanned):
    root = write_tree(tmp_path / "tree", FILES)
    _audit(root)
    scanned.clear()
    _audit(root, select=("PK2",))          # other rules enabled: another key
    assert sorted(scanned) == sorted(FILES)
    scanned.clear()
    (root / "src/vendor.h").write_text("#if defined(USE_HIP)\n#include <hip/hip_runtime.h>\n#endif\n")
    _audit(root, select=("PK2",))          # USE_HIP selects AMD: the tree's facts change
    assert sorted(scanned) == sorted([*FILES, "src/vendor.h"])


def test_an_altered_cache_file_is_scanned_again_not_trusted(tmp_path, cache_on, scanned):
    root = write_tree(tmp_path / "tree", FILES)
    first = _audit(root)
    [slot] = cache_on.glob("scans-*.json")
    digest, _, payload = slot.read_bytes().partition(b"\n")
    doc = json.loads(payload)
    for kept in doc["files"].values():
        kept[1][0] = []   # no findings
    slot.write_bytes(digest + b"\n" + json.dumps(doc).encode())   # the digest no longer matches
    scanned.clear()
    assert _audit(root) == first
    assert sorted(scanned) == sorted(FILES)


def test_no_cache_neither_reads_nor_writes(tmp_path, cache_on, scanned, capsys):
    root = write_tree(tmp_path / "tree", FILES)
    assert main(["audit", str(root), "--no-cache", "--format", "json"]) == 0
    assert not list(cache_on.glob("scans-*.json"))
    assert main(["audit", str(root), "--format", "json"]) == 0
    assert len(list(cache_on.glob("scans-*.json"))) == 1
    scanned.clear()
    assert main(["audit", str(root), "--no-cache", "--format", "json"]) == 0
    assert sorted(scanned) == sorted(FILES)


def test_the_environment_turns_it_off(tmp_path, cache_on, monkeypatch):
    monkeypatch.setenv("PORTKIT_NO_CACHE", "1")
    _audit(write_tree(tmp_path / "tree", FILES))
    assert not cache_on.exists() or not list(cache_on.glob("scans-*.json"))


def test_every_field_survives_the_round_trip():
    finding = Finding("PK201", "hardcoded-warp-size", "high", "warp", "a.cu", 3, 5, 3, 9, "m", snippet="s",
                      fix="f", subject="x", effort_hours=(0.5, 1.0, 2.0), platform="ported",
                      autofix=((3, 5, 3, 7, "warpSize"),), fingerprint="abc")
    metrics = Metrics(lines=9, libraries={"cublas", "cub"}, region_bytes={"amd": 3}, nvidia_lines=((1, 2),),
                      findings_not_stored={("PK201", "x", "high", ""): 4}, polyfills={"__syncwarp"})
    back = resultcache._scan_from_plain("a.cu", json.loads(json.dumps(
        resultcache._scan_plain(FileScan("a.cu", [], [finding], metrics)))))
    assert back.findings == [finding] and back.findings[0].fingerprint == "abc"
    assert back.metrics == metrics


def test_the_key_does_not_depend_on_the_hash_seed():
    """A frozenset's order changes with PYTHONHASHSEED: the key sorts it."""
    a = resultcache._canonical(frozenset({"PK201", "PK202", "PK301", "PK402"}))
    b = resultcache._canonical(frozenset({"PK402", "PK301", "PK202", "PK201"}))
    assert a == b == "set('PK201','PK202','PK301','PK402')"
    with pytest.raises(TypeError):
        resultcache._canonical(object())
    assert datacache.load_slot("scans-none") is None


def test_settings_without_a_canonical_form_mean_no_cache_not_a_failure(tmp_path, cache_on):
    cache = resultcache.ResultCache("scans", tmp_path, object())
    assert cache.key is None and cache.get("a.cu", "source", b"x") is None
    cache.put("a.cu", resultcache.content_key("source", b"x"), FileScan("a.cu", [], [], Metrics()))
    cache.save()
    assert not cache_on.exists()
