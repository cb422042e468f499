"""optional.learn's learning kept between runs (project/optional_cache.py): a re-run reads no CMake
file and no source's `#if` structure again unless its bytes, or what decides it, changed; the
code it learns is the same cold, warm, with the cache off, after an edit, and from a corrupt slot.

The tree is fixtures/audit/cmake_switches (tests/test_cmake_switches.py: faiss's CMake layout),
copied, with a branch of its own added to gpu/Select.cu under ENABLE_SELECT_FAST, a name nothing
defines: optional until a header defines it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import REPO
from portkit.buildfiles import cmake_switches
from portkit.core import datacache
from portkit.core.tables import ecosystem
from portkit.engine.context import Options
from portkit.project import optional, pipeline
from portkit.project.config import Config

TREE = REPO / "fixtures" / "audit" / "cmake_switches"
OPTIONS = Options(audit=True)
BRANCH = b"\n#ifdef ENABLE_SELECT_FAST\nint select_fast_only;\n#endif\n"


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PORTKIT_NO_CACHE", raising=False)
    root = Path(shutil.copytree(TREE, tmp_path / "tree"))
    select = root / "gpu" / "Select.cu"
    select.write_bytes(select.read_bytes() + BRANCH)
    return root


@pytest.fixture
def calls(monkeypatch) -> dict[str, int]:
    """How often this run interpreted the CMake files and read a source's #if structure."""
    counts = {"cmake": 0, "ranges": 0}
    real_cmake, real_ranges = cmake_switches.learn, optional.file_ranges

    def cmake(*args, **kwargs):
        counts["cmake"] += 1
        return real_cmake(*args, **kwargs)

    def ranges(*args, **kwargs):
        counts["ranges"] += 1
        return real_ranges(*args, **kwargs)
    monkeypatch.setattr(cmake_switches, "learn", cmake)
    monkeypatch.setattr(optional, "file_ranges", ranges)
    return counts


def _run(root: Path, calls: dict[str, int], cache: bool = True) -> tuple[optional.OptionalCode, dict[str, int]]:
    """The optional code `portkit audit` learns, and the work this run did for it."""
    before = dict(calls)
    found = pipeline.prepare([root], OPTIONS, Config(), optional=True, cache=cache).optional
    return found, {k: calls[k] - before[k] for k in calls}


def _sources(root: Path) -> int:
    return sum(1 for p in root.rglob("*") if p.suffix in (".cu", ".h"))


def test_cold_warm_and_off_learn_the_same_and_warm_reads_nothing_again(tree, calls):
    cold, cold_work = _run(tree, calls)
    warm, warm_work = _run(tree, calls)
    off, off_work = _run(tree, calls, cache=False)
    assert cold == warm == off
    assert cold.ranges["gpu/Select.cu"] == [(13, 14, "ENABLE_SELECT_FAST")]
    assert cold.files["gpu/Cagra.cu"] == "IDX_ENABLE_CUVS"
    # cold and off: the CMake files twice (once more without the test switch), every source's
    # branches once, and Flat.cu's once more (_derived: it names USE_NVIDIA_CUVS, the -D the
    # option's block adds); warm: nothing
    assert cold_work == off_work == {"cmake": 2, "ranges": _sources(tree) + 1}
    assert warm_work == {"cmake": 0, "ranges": 0}


def test_a_define_added_in_a_header_makes_another_files_branch_default(tree, calls):
    _run(tree, calls)
    header = tree / "gpu" / "impl" / "CuvsUtils.h"
    header.write_bytes(header.read_bytes() + b"\n#define ENABLE_SELECT_FAST 1\n")
    warm, work = _run(tree, calls)
    off, _ = _run(tree, calls, cache=False)
    assert warm == off
    assert "gpu/Select.cu" not in warm.ranges
    # the flags every branch is read under changed (a name is defined now): every source again,
    # the CMake files not (their texts, the paths and the -D names are the same)
    assert work == {"cmake": 0, "ranges": _sources(tree) + 1}


def test_one_source_changed_is_read_alone(tree, calls):
    _run(tree, calls)
    flat = tree / "gpu" / "Flat.cu"
    flat.write_bytes(flat.read_bytes() + b"\n#ifdef WITH_FLAT_TRACE\nint flat_trace;\n#endif\n")
    warm, work = _run(tree, calls)
    assert warm == _run(tree, calls, cache=False)[0]
    assert warm.ranges["gpu/Flat.cu"][-1][2] == "WITH_FLAT_TRACE"
    assert work == {"cmake": 0, "ranges": 2}   # its branches, and once more in _derived (it names a flag)


def test_a_cmake_edit_relearns_the_switches(tree, calls):
    _run(tree, calls)
    top = tree / "CMakeLists.txt"
    top.write_text(top.read_text().replace('option(IDX_ENABLE_CUVS "Enable cuVS for GPU indexes." OFF)',
                                           'option(IDX_ENABLE_CUVS "Enable cuVS for GPU indexes." ON)'))
    warm, work = _run(tree, calls)
    assert warm == _run(tree, calls, cache=False)[0]
    assert "gpu/Cagra.cu" not in warm.files and warm.files["gpu/impl/Fast.cu"] == "IDX_USE_FAST"
    assert work["cmake"] == 2


def test_corrupt_slots_and_entries_are_learned_again(tree, calls):
    expected, _ = _run(tree, calls)
    (cmake_slot,) = datacache.cache_dir().glob("cmake-*.json")
    cmake_slot.write_bytes(b"not json")
    (facts_slot,) = datacache.cache_dir().glob("filefacts-*.json")
    plain = datacache.load_slot(facts_slot.stem)
    plain["files"]["gpu/Select.cu"][1]["op"]["includes"] = [["line one", None]]   # a digest that matches, a bad row
    datacache.store_slot(facts_slot.stem, plain)
    found, work = _run(tree, calls)
    assert found == expected
    assert work == {"cmake": 2, "ranges": 1}   # Select.cu names no flag: its branches alone
    assert _run(tree, calls) == (expected, {"cmake": 0, "ranges": 0})   # written back whole


def test_claims_is_header_found():
    """own_headers.py asks Ecosystem.claims of every tail of every path: header() is not None."""
    eco = ecosystem.default()
    names = [h for lib in eco.libraries for h in lib.headers]
    asked = names + [h + "x.h" for h in names] + [h.rstrip("/") for h in names] + [h[1:] for h in names] + \
        ["x/" + h for h in names] + ["ggml.h", "common.cuh", "cuda", ""]
    assert any(eco.claims(n) for n in asked) and not all(eco.claims(n) for n in asked)
    assert [eco.claims(n) for n in asked] == [eco.header(n) is not None for n in asked]
