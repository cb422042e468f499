"""Issue 50, the leave-one-out on port histories: the fixed costs of a PyTorch CUDA extension port and
the NCCL -> RCCL swap, each priced once (docs/estimate.md, "Leave-one-out on port histories").

- A root setup.py building a CUDA extension needs no dual-vendor build, even with a root CMakeLists.txt
  beside it (pytorch_scatter's C++ API build, which its AMD port left alone).
- An extension's environment, CI and CUDAExtension call are inside fixed.torch_extension_build, which
  is measured on the ports' build-only commit days; its tests are fixed.project_tests.
- A PyTorch project with CUDA sources runs its own tests (project_tests), not a second model validation.
- NCCL -> RCCL: convert writes the package, link and header swap; what is left costs a drop-in's adoption.
"""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from portkit.commands.audit import AuditOptions, audit_paths
from portkit.commands.scan.walk import Options
from portkit.report.model import audit_document

REPO = Path(__file__).resolve().parents[1]
EXT = REPO / "fixtures" / "audit" / "torch_ext_cmake"
DONE = REPO / "fixtures" / "audit" / "done"


def audit(path: Path) -> dict:
    return audit_document(audit_paths([path], AuditOptions(scan=Options(audit=True, rocm=(6, 2, 0)))))


def headline(doc: dict) -> list[tuple]:
    return [(i["kind"], i["key"], i["hours"]["likely"], i["findings"]) for i in doc["estimate"]["items"]
            if not i["optional"]]


def test_an_extension_beside_a_root_cmake_build_is_priced_once():
    doc = audit(EXT)
    assert doc["estimate"]["signals"] == ["build-files", "cuda-extension", "cuda-sources", "extension-build", "pytorch"]
    # before: + dual_vendor_build 8.25 (the root CMakeLists.txt chose the style), pytorch_environment 6.0,
    # pytorch_validation 4.0, ci 0.55 and PK506 0.5 (the CUDAExtension call at setup.py:9)
    assert headline(doc) == [
        ("fixed", "torch_extension_build", 12.0, []),
        ("dependency", "cuda-runtime", 2.0, ["csrc/cuda/segsum_cuda.cu:2", "csrc/segsum.cpp:2"]),
        ("fixed", "project_tests", 0.25, []),
        ("pattern", "PK501", 0.25, ["CMakeLists.txt:3"]),
        ("unit", "validate_kernel", 0.25, []),
        ("unit", "review_converted_ref", 0.05, [])]
    # the call is still reported; its work is the build item's
    assert [(f["code"], f["path"], f["line"], f["severity"]) for f in doc["findings"]] == [
        ("PK501", "CMakeLists.txt", 3, "medium"), ("PK506", "setup.py", 9, "medium")]
    assert doc["estimate"]["port_style"]["one_way"] == doc["estimate"]["port_style"]["both_vendors"]


def test_a_pytorch_package_with_cuda_sources_runs_its_own_tests(tmp_path: Path):
    """bitsandbytes' layout: a Makefile builds the CUDA library, the Python package imports torch."""
    tree = write_tree(tmp_path, {
        "Makefile": "lib:\n\tnvcc -shared -Xcompiler -fPIC -o libk.so csrc/k.cu\n",
        "csrc/k.cu": "__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n",
        "pkg/__init__.py": "import torch\n",
        "setup.py": "from setuptools import setup\nsetup(name='pkg', packages=['pkg'], install_requires=['torch'])\n"})
    keys = [k for _, k, _, _ in headline(audit(tree))]
    assert [k for k in keys if k.startswith("pytorch") or k in ("project_tests", "ci")] == [
        "pytorch_environment", "ci", "project_tests"]


def test_a_pytorch_project_without_cuda_sources_keeps_its_validation(tmp_path: Path):
    tree = write_tree(tmp_path, {"model.py": "import torch\nnet = torch.nn.Linear(4, 4).cuda()\n"})
    keys = [k for _, k, _, _ in headline(audit(tree))]
    assert [k for k in keys if k.startswith("pytorch")] == ["pytorch_environment", "pytorch_validation"]


def test_the_nccl_swap_costs_a_drop_in_adoption():
    """fixtures/audit/done finds NCCL with CMake's find_package, which convert rewrites to rccl."""
    swap = [i for i in audit(DONE)["estimate"]["items"] if i["key"] == "communication_library"]
    assert [(i["kind"], i["count"], i["hours"], i["findings"]) for i in swap] == [
        ("decision", 1, {"low": 1.0, "likely": 2.0, "high": 6.0}, ["CMakeLists.txt"])]
