"""The estimate as work items (docs/estimate.md): patterns priced once, optional code apart,
project costs scaled by the project, the sum of the items is the estimate, the headline wording."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO
from portkit.project import optional
from portkit.estimate.scope import NOT_PRODUCT, Scope
from portkit.commands.audit import AuditOptions, audit_paths
from portkit.cli.app import main
from portkit.report.model import audit_document, conversion_headline
from portkit.report.audit_load import load_record
from portkit.report.audit_model import Summary
from portkit.commands.scan.walk import Options

SAMPLE = REPO / "fixtures" / "sample_project"


def audit(path: Path, **scan) -> dict:
    return audit_document(audit_paths([path], AuditOptions(scan=Options(audit=True, rocm=(5, 2, 0), **scan))))


def items(doc: dict, feature: str = "") -> dict[str, dict]:
    return {i["key"]: i for i in doc["estimate"]["items"] if i["optional"] == feature}


def test_the_sum_of_the_items_is_the_estimate_exactly():
    e = audit(SAMPLE)["estimate"]
    for p in ("p10", "p50", "p90"):
        assert round(sum(i[p] for i in e["items"] if not i["optional"]), 1) == e["hours"][p]
    # the sample has its own CMakeLists.txt: the headline keeps both vendors (issue 50), 13.1 h P50 of it
    assert e["hours"] == {"p10": 16.2, "p50": 27.7, "p90": 45.9, "mean": 29.6}


def test_a_build_convert_migrates_costs_no_build_item_and_project_costs_scale():
    """The sample's CMakeLists is migrated by convert: its findings are patterns, no project cost."""
    e = audit(SAMPLE)["estimate"]
    fixed = {i["key"]: (i["facts"], i["hours"]) for i in e["items"] if i["kind"] == "fixed"}
    assert fixed == {
        "ci": ({"cuda_files": 6}, {"low": 0.325, "likely": 0.65, "high": 1.95}),
        "cuda_toolchain": ({"cuda_kloc": 0.2}, {"low": 0.275, "likely": 0.55, "high": 1.65}),
        "project_tests": ({"cuda_kloc": 0.2}, {"low": 0.15, "likely": 0.3, "high": 0.9}),
    }


def test_one_api_used_85_times_is_one_item_with_a_per_site_cost(tmp_path: Path):
    body = "".join(f"  v = __shfl_down_sync(0xffffffffu, v, {i % 5 + 1});\n" for i in range(85))
    (tmp_path / "k.cu").write_text(f"__global__ void k(float *p) {{\n  float v = p[0];\n{body}  p[0] = v;\n}}\n")
    item = items(audit(tmp_path))["PK203:__shfl_down_sync"]
    assert (item["kind"], item["count"], item["hours"]) == ("pattern", 85, {"low": 0.94, "likely": 2.35, "high": 9.4})
    assert item["findings"][:2] == ["k.cu:3", "k.cu:4"] and len(item["findings"]) == 85


LLMC_LIKE = {
    "train.cu": "#include <cuda_runtime.h>\n#ifdef ENABLE_CUDNN\n#include \"cudnn_att.h\"\n#endif\n"
                "#include \"mfu.h\"\n__global__ void k(float *p) { p[0] = 1; }\n"
                "int main() { float *p; cudaMalloc(&p, 4); k<<<1, 1>>>(p); }\n",
    "cudnn_att.h": "void attention();\n",
    "cudnn_att.cpp": "#include \"cudnn_att.h\"\n#include <cudnn.h>\nvoid attention() { cudnnHandle_t h; cudnnCreate(&h); }\n",
    "mfu.h": "#if __has_include(<nvml.h>)\n#define USE_NVML 1\n#include <nvml.h>\n#else\n#define USE_NVML 0\n#endif\n"
             "#if USE_NVML\nint clocks() { nvmlInit(); return 0; }\n#endif\n",
}


def test_optional_features_are_priced_apart(tmp_path: Path):
    for name, text in LLMC_LIKE.items():
        (tmp_path / name).write_text(text)
    doc = audit(tmp_path)
    e = doc["estimate"]
    # one item per library: its adoption and its sites' PK001 findings are the same work (decisions.py)
    assert [(o["feature"], o["items"]) for o in e["optional"]] == [("ENABLE_CUDNN", 1), ("nvml.h", 1)]
    cudnn, nvml = items(doc, "ENABLE_CUDNN")["cudnn"], items(doc, "nvml.h")["nvml"]
    assert (cudnn["findings"], cudnn["hours"]["likely"]) == (["cudnn_att.cpp:2", "cudnn_att.cpp:3"], 120.0)
    assert (nvml["findings"], nvml["hours"]["likely"]) == (["mfu.h:3", "mfu.h:8"], 8.0)
    assert "cudnn" not in items(doc) and "nvml" not in items(doc)
    assert e["changes"][0].startswith("porting the optional ENABLE_CUDNN code adds ")
    with_cudnn = audit(tmp_path, defines=(("ENABLE_CUDNN", None),))
    assert "cudnn" in items(with_cudnn) and [o["feature"] for o in with_cudnn["estimate"]["optional"]] == ["nvml.h"]


def test_libcuxx_names_are_the_libcuxx_items_sites(tmp_path: Path):
    """`cuda::std::atomic_ref` is a PK001 on the `cuda` namespace record (table family "libcu"), and
    the include a PK401 of the library libcudacxx: one library, one item (it was two, the uses
    priced again beside the adoption that already counts them: mamba's P50 59.2 -> 53.1 h)."""
    (tmp_path / "k.cu").write_text("#include <cuda/std/atomic>\n#include <cuda_runtime.h>\n"
                                   "__global__ void k(int *o) { cuda::std::atomic_ref<int> a(*o); a.fetch_add(1); }\n")
    doc = audit(tmp_path)
    assert [(f["code"], f["line"]) for f in doc["findings"]] == [("PK401", 1), ("PK001", 3)]
    assert [(i["key"], i["kind"], i["findings"]) for i in doc["estimate"]["items"] if i["findings"]] == [
        ("libcudacxx", "dependency", ["k.cu:1", "k.cu:3"]), ("cuda-runtime", "dependency", ["k.cu:2"])]


def test_a_dependency_used_only_in_benchmarks_is_optional(tmp_path: Path):
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "bench_tf.py").write_text("import tensorflow as tf\n")
    (tmp_path / "k.cu").write_text("__global__ void k(float *p) { p[0] = 1; }\n")
    doc = audit(tmp_path)
    assert items(doc, NOT_PRODUCT)["tensorflow"]["findings"] == ["benchmarks/bench_tf.py:1"]
    assert "tensorflow" not in items(doc)


def test_optional_ranges_read_the_if_structure():
    data = (b"#ifdef ENABLE_X\na\n#else\nb\n#endif\n#if defined(USE_Y) || 0\nc\n#endif\n"
            b"#ifndef ENABLE_X\nd\n#endif\n#if WITH_Z\n#if __has_include(<nvml.h>)\ne\n#endif\n#endif\n")
    assert optional.file_ranges(data, frozenset(), frozenset()) == [
        (2, 3, "ENABLE_X"), (7, 8, "USE_Y"), (13, 16, "WITH_Z")]
    assert optional.file_ranges(data, frozenset(), frozenset({"WITH_Z", "USE_Y"})) == [
        (2, 3, "ENABLE_X"), (14, 15, "nvml.h")]


def test_cmake_options_off_by_default_are_features():
    files = [("CMakeLists.txt", "cmake", b'option(FAISS_ENABLE_CUVS "cuVS" OFF)\noption(GPU "gpu" ON)\n'),
             ("a.cu", "source", b"#ifdef FAISS_ENABLE_CUVS\nx\n#endif\n#ifdef GPU\ny\n#endif\n")]
    assert optional.learn(files).ranges == {"a.cu": [(2, 3, "FAISS_ENABLE_CUVS")]}


def test_the_headline_never_says_automatically_beside_high_findings():
    summary = audit(SAMPLE)["summary"]
    assert summary["headline"] == conversion_headline(load_record(Summary, summary)).text == (
        "58 of 58 CUDA references (100.0%) converted mechanically; 4 findings need a person "
        "(high severity or worse); blockers: 0")


def test_explain_estimate_prints_every_item_and_the_total(capsys):
    assert main(["audit", str(SAMPLE), "--rocm", "5.2", "--explain-estimate"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Work items (hours; their sum is the estimate)\n")
    assert [line.split() for line in out.splitlines() if line.startswith(" total ")] == [
        ["total", "│", "│", "16.2", "│", "27.7", "│", "45.9", "│"]]
    assert "src/reduce.cu:18" in out and "cuda_kloc 0.2" in out


def _finding(code: str, subject: str = "", path: str = "CMakeLists.txt") -> "Finding":
    from portkit import rules
    from portkit.core.findings import Finding
    rule = rules.get(code)
    return Finding(code, rule.name, rule.severity, rule.category, path, 1, 1, 1, 2, "m", subject=subject)


def test_the_estimate_classifies_findings_by_rule_metadata_not_by_code(monkeypatch):
    """A rule's declared fields (engine/rule.py) drive the estimate: flip one and its findings move."""
    from dataclasses import replace

    from portkit import rules
    from portkit.estimate import workitems

    env = _finding("PK507")   # cuda-visible-devices: a build-group code that is no build file
    assert "build-files" not in workitems.signals([], [env])
    assert workitems.facts([], [env], Scope())["build_files_left"] == 0
    monkeypatch.setitem(rules.by_code(), "PK507", replace(rules.get("PK507"), build_file=True, build_left=True))
    assert "build-files" in workitems.signals([], [env])
    assert workitems.facts([], [env], Scope())["build_files_left"] == 1
    trt = _finding("PK701", subject="tensorrt")
    assert "tensorrt" not in workitems.signals([], [trt])
    monkeypatch.setitem(rules.by_code(), "PK701", replace(rules.get("PK701"), package=True))
    assert "tensorrt" in workitems.signals([], [trt])


def test_the_declared_estimate_fields_keep_the_old_code_groups():
    """build_file: the build group but PK507; build_left: PK508; package: PK601; rewrite: PK402;
    convert's summary: PK001/2/3/7 left, PK005 partially parsed."""
    from portkit import rules
    declared = lambda field, value=True: {r.code for r in rules.all_rules() if getattr(r, field) == value}  # noqa: E731
    assert declared("build_file") == {r.code for r in rules.all_rules() if r.group == "build"} - {"PK507"}
    assert declared("build_left") == {"PK508"}
    assert declared("package") == {"PK601"}
    assert declared("rewrite") == {"PK402"}
    assert declared("outcome", "left") == {"PK001", "PK002", "PK003", "PK007"}
    assert declared("outcome", "partially-parsed") == {"PK005"}
