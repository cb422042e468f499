"""prepare's sources are read as its passes ask and kept only within a budget (project/lazy_sources.py):
the facts are the same whatever the budget, and the memory prepare holds does not grow with the
sources' bytes (issue 52, item 4: memory flat as the tree grows)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from portkit.core.files import Entry, Skipped, discover, read
from portkit.engine.context import Options
from portkit.project import lazy_sources, pipeline
from portkit.project.config import Config
from portkit.project.lazy_sources import Contents, Kept, Sources

FIXTURES = Path(__file__).parent.parent / "fixtures"
OPTIONS = Options(audit=True, polyfills=True)


def _entry(rel: str, kind: str | None = "source") -> Entry:
    return Entry(Path("/nowhere") / rel, rel, kind)


def test_kept_holds_the_first_values_that_fit_then_the_last_few_and_a_name_given_again_replaces_its_own(monkeypatch):
    monkeypatch.setattr(lazy_sources, "RECENT_BYTES", 3)
    kept = Kept(10)
    kept.put("a", b"1234", "x")
    kept.put("b", b"123456", "y")
    kept.put("c", b"1", "z")                      # past the budget: among the recent ones
    kept.put("d", b"12", "v")
    assert (kept.get("a"), kept.get("b"), kept.get("c"), kept.get("d"), kept.size) == \
        ((b"1234", "x"), (b"123456", "y"), (b"1", "z"), (b"12", "v"), 10)
    kept.put("e", b"1", "u")                      # the oldest recent one leaves
    assert (kept.get("c"), kept.get("d"), kept.get("e")) == (None, (b"12", "v"), (b"1", "u"))
    kept.put("f", b"1234", "t")                   # larger than the recent ones may be: not kept
    assert kept.get("f") is None and kept.get("d") == (b"12", "v")
    kept.put("a", b"12", "w")                     # its old bytes leave the count
    assert (kept.get("a"), kept.size) == ((b"12", "w"), 8)
    kept.put("d", b"12", "s")                     # room again: kept for good
    assert kept.get("d") == (b"12", "s") and kept.size == 10


def test_sources_read_in_order_skip_what_does_not_read_and_read_again_past_the_budget(monkeypatch):
    monkeypatch.setattr(lazy_sources, "RECENT_BYTES", 0)
    files = {"a.cu": b"a" * 8, "b.cu": None, "c.cu": b"c" * 8}
    reads: list[str] = []

    def reader(entry: Entry):
        reads.append(entry.rel)
        data = files[entry.rel]
        return (data, None) if data is not None else (None, Skipped(entry.rel, "cannot read", error=True))
    seen: list[str] = []
    entries = [_entry(rel) for rel in files]
    within = Sources(entries, reader, lambda entry, data: seen.append(entry.rel), budget=16)
    assert [(e.rel, d) for e, d in within] == [("a.cu", b"a" * 8), ("c.cu", b"c" * 8)]
    assert list(within) == list(within.only(entries))
    assert reads == ["a.cu", "b.cu", "c.cu"] and seen == ["a.cu", "c.cu"]   # once each, the unreadable one too
    reads.clear()
    past = Sources(entries, reader, budget=8)     # a.cu kept, c.cu read by every pass
    assert list(past) == list(past) and reads == ["a.cu", "b.cu", "c.cu", "c.cu"]


def test_contents_are_the_readable_sources_and_build_files_in_order(tmp_path):
    for rel, text in {"CMakeLists.txt": "project(x)\n", "a.cu": "int a;\n", "b.py": "x = 1\n",
                      "setup.py": "pass\n"}.items():
        (tmp_path / rel).write_text(text)
    _, entries, _ = discover([tmp_path], None)
    sources = Sources([e for e in entries if e.kind == "source"])
    got = list(Contents(entries, sources, lambda e: e.kind == "cmake" or e.rel == "setup.py"))
    assert got == [("CMakeLists.txt", "cmake", b"project(x)\n"), ("a.cu", "source", b"int a;\n"),
                   ("setup.py", "python", b"pass\n")]


def test_a_loop_over_names_or_build_files_reads_no_source_a_pass_read_already(tmp_path, monkeypatch):
    """optional.learn walks its files eight times, four of them for names or build files only: past
    the budget each such walk read every source again."""
    monkeypatch.setattr(lazy_sources, "RECENT_BYTES", 0)
    for rel, text in {"CMakeLists.txt": "project(x)\n", "a.cu": "int a;\n", "b.cu": "int b;\n"}.items():
        (tmp_path / rel).write_text(text)
    _, entries, _ = discover([tmp_path], None)
    reads: list[str] = []
    sources = Sources([e for e in entries if e.kind == "source"], lambda e: reads.append(e.rel) or read(e), budget=0)
    contents = Contents(entries, sources, lambda e: e.kind == "cmake")
    assert [p for p, _, _ in contents.of_kind("cmake")] == ["CMakeLists.txt"] and reads == []
    assert contents.paths() == {"CMakeLists.txt", "a.cu", "b.cu"} and reads == ["a.cu", "b.cu"]
    assert contents.paths("source") == {"a.cu", "b.cu"} and reads == ["a.cu", "b.cu"]   # known: not read again
    assert [p for p, _, _ in contents.of_kind("source")] == ["a.cu", "b.cu"] and reads == ["a.cu", "b.cu"] * 2


@pytest.mark.parametrize("root", [FIXTURES, FIXTURES / "convert" / "dual_vendor_project" / "input"], ids=lambda p: p.name)
def test_the_facts_and_the_optional_code_are_the_same_whatever_the_budget(root, monkeypatch):
    """With nothing kept every pass reads each file again: the same facts, the same defaults."""
    whole = pipeline.prepare([root], OPTIONS, Config(), optional=True, cache=False)
    monkeypatch.setattr(lazy_sources, "BUDGET", 0)
    none = pipeline.prepare([root], OPTIONS, Config(), optional=True, cache=False)
    assert none.facts == whole.facts and none.facts.amd_macros
    assert (none.optional.ranges, none.optional.files, none.optional.includes) == \
        (whole.optional.ranges, whole.optional.files, whole.optional.includes)


def _peak_of_prepare(root: Path) -> int:
    tracemalloc.start()
    try:
        pipeline.prepare([root], OPTIONS, Config(), optional=True, cache=False)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _tree(root: Path, files: int) -> Path:
    body = "".join(f"__global__ void k{i}(float *x) {{ x[threadIdx.x] += {i}.0f; }}\n" for i in range(1000))
    for i in range(files):
        path = root / f"part{i % 7}" / f"unit{i}.cu"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"#include <cuda_runtime.h>\n#ifdef USE_EXTRA\n#define EXTRA {i}\n#endif\n{body}")
    (root / "CMakeLists.txt").write_text("option(USE_EXTRA \"extra\" OFF)\n")
    return root


def test_what_prepare_holds_does_not_grow_with_the_sources_bytes(tmp_path, monkeypatch):
    """Twice the files, twice the bytes: prepare's peak grows by their facts, not by their bytes
    (it held every source through every pass: the peak grew by the bytes)."""
    monkeypatch.setattr(lazy_sources, "BUDGET", 64 << 10)
    monkeypatch.setattr(lazy_sources, "RECENT_BYTES", 16 << 10)
    small, large = _tree(tmp_path / "small", 40), _tree(tmp_path / "large", 80)
    added = sum(p.stat().st_size for p in large.rglob("*.cu")) - sum(p.stat().st_size for p in small.rglob("*.cu"))
    assert added > 2 << 20
    _peak_of_prepare(small)   # the tables and modules loaded, outside both measures
    grown = _peak_of_prepare(large) - _peak_of_prepare(small)
    assert grown < added // 4, (grown, added)
