"""The suite's workers take the longest modules first (tests/conftest.py, tools/record_test_durations.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from conftest import DURATIONS, REPO, longest_modules_first


@dataclass
class Item:
    path: Path
    name: str


def test_modules_are_handed_out_longest_first_each_whole_and_in_its_order():
    items = [Item(REPO / "tests" / module, name) for module, name in (
        ("test_a.py", "a1"), ("test_a.py", "a2"), ("test_b.py", "b1"), ("test_c.py", "c1"), ("test_c.py", "c2"),
        ("test_d.py", "d1"))]
    longest_modules_first(items, {"tests/test_c.py": 40.0, "tests/test_b.py": 3.5, "tests/test_d.py": 3.5})
    assert [i.name for i in items] == ["c1", "c2", "b1", "d1", "a1", "a2"]


def test_the_recorded_durations_are_written_by_the_script_from_pytest_output(tmp_path: Path, monkeypatch):
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import record_test_durations as record
    finally:
        sys.path.remove(str(REPO / "tools"))
    log = tmp_path / "run.log"
    log.write_text("============================= slowest durations =============================\n"
                   "12.48s call     tests/test_build_files.py::test_cuda_input_compiles_with_nvcc[cmake_cccl]\n"
                   "5.66s call     tests/test_build_files.py::test_converted_project_builds[cmake_project]\n"
                   "54.10s setup    tests/test_torch_pack.py::test_the_pack_builds\n"
                   "0.71s teardown tests/test_torch_pack.py::test_the_pack_builds\n"
                   "(3 durations < 0.005s hidden.  Use -vv to show these durations.)\n")
    monkeypatch.setattr(record, "OUT", tmp_path / "durations.json")
    assert record.main([str(log)]) == 0
    assert json.loads((tmp_path / "durations.json").read_text()) == {"tests/test_torch_pack.py": 54.8,
                                                                     "tests/test_build_files.py": 18.1}
    assert record.main([str(tmp_path / "durations.json")]) == 2      # no duration lines: refused


def test_the_committed_durations_name_only_modules_that_exist():
    recorded = json.loads(DURATIONS.read_text(encoding="utf-8"))
    assert recorded and all((REPO / module).is_file() for module in recorded)
    assert list(recorded.values()) == sorted(recorded.values(), reverse=True)


def test_the_order_holds_in_a_real_run_with_workers(tmp_path: Path):
    """With -n the collection each worker makes starts with the recorded longest module."""
    longest = next(iter(json.loads(DURATIONS.read_text(encoding="utf-8"))))
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "tests/test_suite_order.py", longest], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTEST_XDIST_WORKER": "gw0"}, timeout=600)
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    assert ids and ids[0].startswith(longest + "::") and ids[-1].startswith("tests/test_suite_order.py::"), proc.stdout
