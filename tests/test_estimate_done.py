"""Issue 50, items 1-3: the tests "done" runs are in the headline, what breaks the AMD build is one
decision item each, and the headline names its port style beside the other style's price.

fixtures/audit/done is a small CMake library after real ones (cuCollections' tests/ under a
BUILD_TESTS switch, tiny-cuda-nn's compiler-chosen qualifier macro, a CUB scan, NCCL found by CMake,
a CUDA-only library built in the tree); its .cu files compile with nvcc (-I include).
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO
from portkit.cli.app import main
from portkit.commands.audit import AuditOptions, audit_paths
from portkit.commands.scan.walk import Options
from portkit.core.files import discover
from portkit.core.findings import Finding
from portkit.core.tables import ecosystem
from portkit.engine.context import Metrics
from portkit.estimate import effort, workitems
from portkit.estimate.scope import NOT_PRODUCT, Scope
from portkit.project import product
from portkit.report.model import audit_document

DONE = REPO / "fixtures" / "audit" / "done"


def audit(path: Path, **scan) -> dict:
    return audit_document(audit_paths([path], AuditOptions(scan=Options(audit=True, rocm=(6, 2, 0), **scan))))


def items(doc: dict) -> list[tuple]:
    return [(i["kind"], i["key"], i["optional"], i["count"], i["hours"]["likely"], i["findings"])
            for i in doc["estimate"]["items"] if i["kind"] in ("decision", "unit")]


def test_the_tests_the_test_command_builds_are_in_the_headline():
    """tests/CMakeLists.txt registers test_scan with CTest (behind SCANLIB_BUILD_TESTS): its kernel
    is checked in the headline; examples/demo.cu stays apart. Before: both were "not included"."""
    _, entries, _ = discover([DONE])
    assert product.own_build(entries) == product.OwnBuild("CMakeLists.txt", ("tests/",))
    doc = audit(DONE)
    units = {(i["key"], i["optional"]): i["facts"] for i in doc["estimate"]["items"] if i["kind"] == "unit"}
    assert units[("validate_kernel", "")] == {"kernels": 2, "files": 2}          # src/scan.cu, tests/test_scan.cu
    assert units[("validate_kernel", NOT_PRODUCT)] == {"kernels": 1, "files": 1}  # examples/demo.cu
    assert doc["estimate"]["scope"] == (
        "Done means the converted code compiles for AMD GPUs and passes the project's own tests there (the tests "
        "its test command builds are included: tests/); examples, benchmarks and docs are priced apart; "
        "performance tuning is not included.")


def test_a_makefile_test_target_and_a_root_cmake_name_the_tests_they_build(tmp_path: Path):
    """gunrock's `test: release` runs build_release/bin/unittests; a root CMakeLists that registers
    tests/util_test.cu; a Python test and a benchmark are not built by either."""
    (tmp_path / "unittests").mkdir()
    (tmp_path / "unittests" / "unittests.cu").write_text("int main() { return 0; }\n")
    (tmp_path / "Makefile").write_text("release:\n\tcmake --build build_release\n\n"
                                       "test: release\n\t./build_release/bin/unittests\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "util_test.cu").write_text("int main() { return 0; }\n")
    (tmp_path / "tests" / "test_api.py").write_text("def test_api():\n    pass\n")
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "bench_scan.cu").write_text("int main() { return 0; }\n")
    (tmp_path / "CMakeLists.txt").write_text("enable_testing()\nadd_executable(util_test tests/util_test.cu)\n"
                                             "add_test(NAME util_test COMMAND util_test)\n")
    _, entries, _ = discover([tmp_path])
    built = product.own_build(entries)
    assert built == product.OwnBuild("CMakeLists.txt", ("tests/util_test.cu", "unittests/"))
    assert [p for p in ("tests/util_test.cu", "tests/test_api.py", "bench/bench_scan.cu") if built.runs(p)] == [
        "tests/util_test.cu"]


def test_each_build_breaking_construct_is_one_decision_item():
    """The qualifier macro convert rewrites (include/scanlib.h:4), NCCL found by CMake (RCCL), the
    CUDA-only cub subdirectory (PK510) and the dual-vendor build: one item each, with its sites."""
    doc = audit(DONE)
    decisions = [i for i in items(doc) if i[0] == "decision"]
    assert decisions == [
        ("decision", "cuda_only_subdirectory", "", 1, 8.0, ["CMakeLists.txt:7"]),
        ("decision", "dual_vendor_build", "", 3, 8.5, ["CMakeLists.txt"]),
        ("decision", "communication_library", "", 1, 2.0, ["CMakeLists.txt"]),
        ("decision", "qualifier_macros", "", 1, 1.0, ["include/scanlib.h:4"])]
    assert [(d["id"], d["sites"], d["blocker_sites"]) for d in doc["estimate"]["decisions"]] == [
        ("communication_library", 1, 0), ("cuda_only_subdirectory", 1, 0), ("qualifier_macros", 1, 0)]
    keys = {i["key"] for i in doc["estimate"]["items"]}
    assert "nccl" not in keys and not any(k.startswith("PK510") for k in keys)   # not priced twice
    assert "build_system" not in keys   # PK510's CMakeLists.txt is no build file left: the decision prices it


def test_library_internals_are_one_decision_not_a_drop_in():
    """Findings about cub::Dispatch* (the library-internals findings of issue 48) are the sites of one
    `library_internals` decision: 6 h likely for the first, 1.5 h for each further one."""
    files = [("src/sort.cu", Metrics(lines=40, kernels=1, refs_found=3, refs_converted=3, has_device_code=True,
                                     libraries={"cub"}))]
    found = [Finding(code="PK001", name="no-hip-equivalent", severity="high", category="api", path="src/sort.cu",
                     line=line, column=5, end_line=line, end_column=30, message="m", subject=subject)
             for line, subject in ((12, "cub::DispatchRadixSort"), (20, "cub::DispatchSegmentedRadixSort"))]
    e = workitems.estimate(files, found, ecosystem.default(), effort.default_model(), found=Scope.of(files))
    internals = [i for i in e.items if i.key == "library_internals"]
    assert [(i.kind, i.count, i.hours, i.findings) for i in internals] == [
        ("decision", 2, (2.5, 7.5, 20.0), ("src/sort.cu:12", "src/sort.cu:20"))]
    assert not [i for i in e.items if i.key.startswith("PK001")]
    assert [d["id"] for d in e.decisions] == ["library_internals"]


def test_the_port_style_is_stated_and_both_prices_given(capsys, tmp_path: Path):
    """A tree with its own build keeps both vendors by default; --port-style one-way moves the
    dual-vendor build out of the headline into "Not included"."""
    doc = audit(DONE)
    style = doc["estimate"]["port_style"]
    assert (style["assumed"], style["reason"], style["one_way"]["p50"], style["both_vendors"]["p50"]) == (
        "both-vendors", "the tree has its own build (CMakeLists.txt): maintainers keep both vendors", 0.98, 1.38)
    assert doc["estimate"]["person_weeks"]["p50"] == style["both_vendors"]["p50"]
    assert main(["audit", str(DONE), "--rocm", "6.2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert ("Port style: both vendors (a build option, a shim header and guards), 1.4 person-weeks (P50), since the "
            "tree has its own build (CMakeLists.txt): maintainers keep both vendors; one-way: 1.0 "
            "(--port-style one-way)") in lines
    assert main(["audit", str(DONE), "--rocm", "6.2", "--html", str(tmp_path / "r.html"), "-q"]) == 0
    assert ('<p class="small" id="port-style">Port style: both vendors (a build option, a shim header and guards), '
            '1.4 person-weeks') in (tmp_path / "r.html").read_text()
    one = audit(DONE, port_style="one-way")["estimate"]
    assert one["person_weeks"]["p50"] == 0.98
    assert [(i["key"], i["optional"]) for i in one["items"] if i["key"] == "dual_vendor_build"] == [
        ("dual_vendor_build", "both-vendors build (a build option, a shim header and guards: --port-style "
                              "both-vendors)")]
    assert one["changes"][0].startswith("keeping both vendors (a build option, a shim header and guards) adds 0.4")


def test_a_tree_without_a_build_is_a_one_way_port(tmp_path: Path):
    (tmp_path / "kern.cu").write_bytes((DONE / "examples" / "demo.cu").read_bytes())
    e = audit(tmp_path)["estimate"]
    assert (e["port_style"]["assumed"], e["port_style"]["reason"]) == (
        "one-way", "the tree has no build system of its own at its root")
    assert e["port_style"]["both_vendors"]["p50"] > e["port_style"]["one_way"]["p50"] == e["person_weeks"]["p50"]
    assert "dual_vendor_build" not in {i["key"] for i in e["items"]}


def test_the_port_style_comes_from_the_configuration_and_a_bad_one_is_one_line(tmp_path: Path, capsys):
    tree = tmp_path / "tree"
    tree.mkdir()
    for rel in ("CMakeLists.txt", "src/scan.cu", "include/scanlib.h"):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_bytes((DONE / rel).read_bytes())
    (tree / "portkit.toml").write_text('port-style = "one-way"\n')
    assert main(["audit", str(tree), "--format", "json", "-o", str(tmp_path / "a.json")]) == 0
    assert json.loads((tmp_path / "a.json").read_text())["estimate"]["port_style"]["assumed"] == "one-way"
    assert main(["audit", str(tree), "--port-style", "both-vendors", "--format", "json",
                 "-o", str(tmp_path / "b.json")]) == 0
    assert json.loads((tmp_path / "b.json").read_text())["estimate"]["port_style"]["assumed"] == "both-vendors"
    (tree / "portkit.toml").write_text('port-style = "both"\n')
    capsys.readouterr()
    assert main(["audit", str(tree)]) == 2
    assert capsys.readouterr().err.strip().endswith('`port-style` must be "one-way" or "both-vendors"')
