"""Issue 50, the leave-one-out on port histories, second pass (docs/estimate.md, "Leave-one-out on port
histories"): causes read in the histories' own trees.

- Each history is audited in the port style its own tree shows (histories.toml `port_style`): rccl's
  2.5.0 builds for AMD only (one-way), anthonix/llm.c keeps its nvcc targets beside the hipcc ones.
- A Python package only a requirements file declares follows its imports: xformers' requirements-lra.txt
  names tensorflow for the LRA benchmark, the only code importing it (30.6 h in its headline).
- A root CMake library beside a PyTorch binding in a subdirectory keeps its CI item (tiny-cuda-nn's
  bindings/torch made every CUDA extension's "no CI of its own" apply to the whole tree).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from conftest import write_tree

from portkit.commands.audit import AuditOptions, audit_paths
from portkit.commands.scan.walk import Options
from portkit.report.model import audit_document

REPO = Path(__file__).resolve().parents[1]
CALIBRATION = REPO / "benchmarks" / "calibration"
HISTORIES = {p["name"]: p for p in tomllib.loads((CALIBRATION / "histories.toml").read_text())["project"]}
APART = "benchmarks, tests, examples and dev code"


def audit(path: Path) -> dict:
    return audit_document(audit_paths([path], AuditOptions(scan=Options(audit=True, rocm=(6, 2, 0)))))


def test_every_history_records_the_style_its_port_tree_shows():
    styles = {name: p.get("port_style") for name, p in HISTORIES.items()}
    assert styles == {"apex": "both-vendors", "TransformerEngine": "both-vendors", "bitsandbytes": "both-vendors",
                      "xformers": "both-vendors", "flash-attention": "one-way", "llm.c": "both-vendors",
                      "rccl": "one-way", "causal-conv1d": "both-vendors", "mamba": "both-vendors",
                      "faiss": "both-vendors", "pytorch_scatter": "both-vendors"}
    assert all(p.get("port_style_evidence") for p in HISTORIES.values())


def test_leave_one_out_asks_the_estimate_the_ports_own_style(tmp_path: Path, monkeypatch):
    sys.path.insert(0, str(CALIBRATION))
    import leave_one_out
    (tmp_path / "NVIDIA+nccl" / "repo").mkdir(parents=True)
    seen: list[list[str]] = []
    estimate = {"person_weeks": {"p10": 1, "p50": 2, "p90": 3}, "hours": {"p10": 30, "p50": 60, "p90": 90},
                "port_style": {"assumed": "one-way", "reason": "as asked"}, "items": []}

    def fake_run(cmd, **kwargs):
        seen.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, json.dumps({"estimate": estimate}).encode(), b"")
    monkeypatch.setattr(leave_one_out.run, "export_tree", lambda mirror, commit, dest: None)
    monkeypatch.setattr(leave_one_out, "rocm_at", lambda day, mirrors: "5.0")
    monkeypatch.setattr(leave_one_out.subprocess, "run", fake_run)
    row = leave_one_out.audit_base(HISTORIES["rccl"], tmp_path)
    assert seen[0][-6:] == ["--jobs", "2", "--rocm", "5.0", "--port-style", "one-way"]
    # the kept headline says which style it priced (it read a key the JSON never had: always "")
    assert row["port_style"] == "one-way"


def test_a_package_only_a_benchmarks_requirements_file_declares_is_the_benchmarks(tmp_path: Path):
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='pkg', packages=['pkg'], install_requires=['torch'])\n",
        "requirements.txt": "torch\n",
        "requirements-lra.txt": "tensorflow>=2.3.1\n",
        "pkg/__init__.py": "import torch\n",
        "pkg/benchmarks/lra/pathfinder.py": "import tensorflow as tf\n\nprint(tf.__version__)\n"}
    doc = audit(write_tree(tmp_path / "bench", files))
    tf = [(i["key"], i["optional"], i["findings"]) for i in doc["estimate"]["items"] if i["kind"] == "dependency"]
    # before: ("tensorflow", "", ...): the requirements line kept the 30.6 h adoption in the headline
    assert tf == [("tensorflow", APART, ["pkg/benchmarks/lra/pathfinder.py:1", "requirements-lra.txt:1"])]
    # an import in the product keeps it there
    doc = audit(write_tree(tmp_path / "product", {**files, "pkg/model.py": "import tensorflow as tf\n"}))
    tf = [(i["key"], i["optional"], i["findings"]) for i in doc["estimate"]["items"] if i["kind"] == "dependency"]
    assert tf == [("tensorflow", "", ["pkg/benchmarks/lra/pathfinder.py:1", "pkg/model.py:1",
                                      "requirements-lra.txt:1"])]


def test_a_declared_package_no_code_imports_stays_in_the_headline(tmp_path: Path):
    doc = audit(write_tree(tmp_path, {"requirements.txt": "tensorflow>=2.3.1\n", "pkg/__init__.py": "x = 1\n"}))
    assert [(i["key"], i["optional"]) for i in doc["estimate"]["items"] if i["kind"] == "dependency"] == [
        ("tensorflow", "")]


TCNN = {
    "CMakeLists.txt": ("cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES CXX CUDA)\n"
                       "add_library(k STATIC src/k.cu)\n"),
    "src/k.cu": "__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\nvoid run(float *x) { k<<<1, 32>>>(x); }\n",
    "bindings/torch/setup.py": (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "setup(name='k_torch', ext_modules=[CUDAExtension('k_torch', ['binding.cu'])],\n"
        "      cmdclass={'build_ext': BuildExtension})\n"),
    "bindings/torch/binding.cu": ("#include <torch/extension.h>\n"
                                  "__global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }\n"),
}


def test_a_root_cmake_library_beside_a_torch_binding_keeps_its_ci(tmp_path: Path):
    doc = audit(write_tree(tmp_path, TCNN))
    e = doc["estimate"]
    assert "cuda-extension" in e["signals"] and "extension-build" not in e["signals"]
    # before: no CI item, as if the binding's wheel were the library's CI
    assert [(i["key"], i["hours"]["likely"]) for i in e["items"] if i["kind"] == "fixed" and i["key"] == "ci"] == [
        ("ci", 0.55)]


def test_an_extension_the_root_builds_has_no_ci_of_its_own():
    e = audit(REPO / "fixtures" / "audit" / "torch_ext_cmake")["estimate"]
    assert "extension-build" in e["signals"]
    assert [i["key"] for i in e["items"] if i["key"] == "ci"] == []


def test_the_docs_result_paragraph_is_what_the_script_writes_from_the_kept_headlines():
    sys.path.insert(0, str(CALIBRATION))
    import leave_one_out
    kept = json.loads((REPO / "benchmarks" / "results" / "calibration_whole_trees.json").read_text())["histories"]
    docs = (REPO / "docs" / "estimate.md").read_text()
    assert f"{leave_one_out.BEGIN}\n{leave_one_out.result(kept)}\n{leave_one_out.END}" in docs
    # each kept headline says the style it priced, the one its port's tree shows
    assert {name: row["port_style"] for name, row in kept["trees"].items()} == {
        name: p["port_style"] for name, p in HISTORIES.items()}
