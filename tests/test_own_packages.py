"""A project is never priced as its own dependency (issue 30, cause 3): apex's tests import apex,
flash-attention's import flash_attn, and neither is a CUDA-only package to replace there. Nor is
a C++/CUDA project a PyTorch project because a script beside it imports torch (cause 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from portkit.api import audit_paths
from portkit.core.files import discover
from portkit.project.packages import own_packages

TEST = "import torch\nimport apex\nfrom apex.optimizers import FusedAdam\n"


def _items(doc: dict) -> list[tuple[str, str, float]]:
    return [(i["kind"], i["key"], i["hours"]["likely"]) for i in doc["estimate"]["items"]]


def _tree(root: Path, own: bool) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_fused.py").write_text(TEST)
    if own:
        (root / "apex").mkdir()
        (root / "apex" / "__init__.py").write_text("import torch\nfrom .optimizers import FusedAdam\n")
        (root / "setup.py").write_text('from setuptools import setup\nsetup(name="apex", packages=["apex"])\n')
    return root


def test_a_package_importing_itself_is_not_its_own_dependency(tmp_path: Path):
    doc = audit_paths([_tree(tmp_path / "apex-repo", own=True)])
    assert doc["findings"] == []
    assert _items(doc) == [("fixed", "pytorch_environment", 6.0), ("fixed", "pytorch_validation", 4.0)]


def test_another_project_importing_it_still_depends_on_it(tmp_path: Path):
    doc = audit_paths([_tree(tmp_path / "user", own=False)])
    assert [(f["path"], f["line"], f["code"]) for f in doc["findings"]] == [("tests/test_fused.py", 2, "PK601")]
    # a tree of tests and nothing else is priced whole (estimate/scope.py)
    assert _items(doc) == [("dependency", "apex", 24.0), ("fixed", "pytorch_environment", 6.0),
                           ("fixed", "pytorch_validation", 4.0), ("pattern", "PK601:apex", 0.25)]


KERNEL = "__global__ void scale(float *x, float a, int n)\n{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" \
         "    if (i < n)\n        x[i] *= a;\n}\n"


def _signals(root: Path, files: dict) -> list[str]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return audit_paths([root])["estimate"]["signals"]


def test_a_reference_script_importing_torch_does_not_make_a_pytorch_project(tmp_path: Path):
    """llm.c: train.cu, and train_gpt2.py (the PyTorch reference) at the root."""
    assert _signals(tmp_path, {"train.cu": KERNEL, "train_gpt2.py": "import torch\n",
                               "dev/convert.py": "import torch\n"}) == ["cuda-sources"]


@pytest.mark.parametrize("files", [
    {"mypkg/__init__.py": "import torch\n", "mypkg/ops.cu": KERNEL},          # its own package imports torch
    {"src/mypkg/layers.py": "import torch\n", "src/mypkg/__init__.py": ""},   # the src/ layout
    {"setup.py": "from torch.utils.cpp_extension import CUDAExtension\nsetup(ext_modules=[CUDAExtension('k', ['k.cu'])])\n",
     "k.cu": KERNEL},                                                         # a CUDA extension build
])
def test_a_product_that_imports_torch_is_a_pytorch_project(tmp_path: Path, files: dict):
    assert "pytorch" in _signals(tmp_path, files)


@pytest.mark.parametrize("files, expected", [
    ({"flash_attn/__init__.py": "", "csrc/x.cu": ""}, {"flash-attn"}),
    ({"src/My_Pkg/__init__.py": ""}, {"my-pkg"}),
    ({"pyproject.toml": '[project]\nname = "Tiny.CUDA_NN"\n'}, {"tiny-cuda-nn"}),
    ({"pyproject.toml": "[project\nname = 'broken'\n"}, set()),            # does not read: names nothing
    ({"setup.py": "setup(name='apex')\n", "apex/sub/__init__.py": ""}, {"apex"}),   # only top-level packages
    ({"tests/helpers/__init__.py": "", "docs/conf.py": ""}, set()),         # a nested package names nothing
])
def test_the_packages_a_tree_provides(tmp_path: Path, files: dict, expected: set):
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    _, entries, _ = discover([tmp_path])
    assert own_packages(entries) == expected


SETUP_WITH_ENV = ('import os\nfrom setuptools import setup\n'
                  'if os.environ.get("NVIDIA_PRODUCT_NAME", "") == "PyTorch":\n    print("NGC")\n'
                  'setup(name="ssm", packages=["ssm"], install_requires=["torch", "einops"],\n'
                  '      extras_require={"monitor": ["pynvml>=11"]})\n')


def test_a_setup_py_string_outside_its_requirements_is_not_a_package(tmp_path: Path):
    """mamba's setup.py reads the NVIDIA_PRODUCT_NAME variable: that is not the nvidia-* wheels'
    package (a high PK601 and an item of its own), while its declared extra pynvml still is."""
    (tmp_path / "ssm").mkdir()
    (tmp_path / "ssm" / "__init__.py").write_text("import torch\n")
    (tmp_path / "setup.py").write_text(SETUP_WITH_ENV)
    doc = audit_paths([tmp_path])
    assert [(f["path"], f["line"], f["code"], f["snippet"]) for f in doc["findings"]] == [
        ("setup.py", 6, "PK601", 'extras_require={"monitor": ["pynvml>=11"]})')]


GUARDED = ("import torch\ntry:\n    from flash_attn import flash_attn_with_kvcache\nexcept ImportError:\n"
           "    flash_attn_with_kvcache = None\n")


def test_an_import_the_code_runs_without_is_priced_apart(tmp_path: Path):
    """mamba's mha.py falls back when flash_attn is missing: not the headline's 30 h."""
    (tmp_path / "ssm").mkdir()
    (tmp_path / "ssm" / "__init__.py").write_text("")
    (tmp_path / "ssm" / "mha.py").write_text(GUARDED)
    (tmp_path / "ssm" / "monitor.py").write_text("import pynvml\n")
    doc = audit_paths([tmp_path])
    assert [(f["path"], f["line"], f["code"]) for f in doc["findings"]] == [("ssm/mha.py", 3, "PK601"),
                                                                          ("ssm/monitor.py", 1, "PK601")]
    optional = {i["key"]: i["optional"] for i in doc["estimate"]["items"] if i["kind"] == "dependency"}
    assert optional == {"flash-attn": "Python imports the code runs without (try/except ImportError)",
                        "nvml": ""}
    assert [o["feature"] for o in doc["estimate"]["optional"]] == [
        "Python imports the code runs without (try/except ImportError)"]


@pytest.mark.parametrize("handler, guarded", [
    ("except ImportError:", ((2, 2),)), ("except (OSError, ModuleNotFoundError):", ((2, 2),)),
    ("except:", ((2, 2),)), ("except Exception as exc:", ((2, 2),)), ("except builtins.ImportError:", ((2, 2),)),
    ("except ValueError:", ()), ("finally:", ()),
])
def test_which_try_blocks_let_the_code_run_without_an_import(handler: str, guarded: tuple):
    from portkit.engine.optional_imports import guarded_lines
    assert guarded_lines(f"try:\n    import pynvml\n{handler}\n    pass\n".encode()) == guarded


def test_a_file_that_does_not_parse_guards_nothing():
    from portkit.engine.optional_imports import guarded_lines
    assert guarded_lines(b"try:\n    import pynvml\nexcept ImportError, e:\n    pass\n") == ()


NCCL_TEMPLATE = ("#ifndef NCCL_H_\n#define NCCL_H_\n#include <cuda_runtime.h>\n#define NCCL_MAJOR ${nccl:Major}\n"
                 "typedef struct ncclComm* ncclComm_t;\ntypedef enum { ncclSuccess = 0 } ncclResult_t;\n"
                 "ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags);\n"
                 "ncclResult_t ncclCommStream(ncclComm_t comm, cudaStream_t stream);\n#endif\n")
NCCL_SOURCE = ('#include "nccl.h"\nncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {\n'
               '  cudaDeviceSynchronize();\n  return ncclSuccess;\n}\n')


def _nccl(root: Path, template: bool) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "init.cc").write_text(NCCL_SOURCE)
    if template:
        (root / "src" / "nccl.h.in").write_text(NCCL_TEMPLATE)
    return root


def test_a_tree_that_generates_a_librarys_header_is_that_library(tmp_path: Path):
    """NCCL writes its own nccl.h from src/nccl.h.in: `#include "nccl.h"` stays (it was RCCL's
    rccl/rccl.h), the template is the code the include reaches (converted like any header), and
    NCCL's names are its own API, not "no HIP equivalent" in RCCL."""
    from portkit.cli.app import main
    root = _nccl(tmp_path / "nccl", template=True)
    assert main(["convert", str(root), "-o", str(tmp_path / "out"), "-q"]) == 0
    # the HIP runtime header comes first: init.cc calls the runtime, and nccl.h is not read for it
    assert (tmp_path / "out" / "src" / "init.cc").read_text() == "\n#include <hip/hip_runtime.h>\n" + NCCL_SOURCE.replace(
        "cudaDeviceSynchronize", "hipDeviceSynchronize")
    assert (tmp_path / "out" / "src" / "nccl.h.in").read_text() == NCCL_TEMPLATE.replace(
        "<cuda_runtime.h>", "<hip/hip_runtime.h>").replace("cudaStream_t", "hipStream_t")
    doc = audit_paths([root])
    assert doc["findings"] == []
    assert "nccl" not in {i["key"] for i in doc["estimate"]["items"]}


def test_a_tree_that_only_uses_the_library_keeps_depending_on_it(tmp_path: Path):
    from portkit.cli.app import main
    root = _nccl(tmp_path / "user", template=False)
    assert main(["convert", str(root), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert (tmp_path / "out" / "src" / "init.cc").read_text() == "\n#include <hip/hip_runtime.h>\n" + NCCL_SOURCE.replace(
        "cudaDeviceSynchronize", "hipDeviceSynchronize").replace('"nccl.h"', '"rccl/rccl.h"')
    doc = audit_paths([root])
    assert [(f["path"], f["line"], f["code"]) for f in doc["findings"]] == [("src/init.cc", 2, "PK001")]


TE_SETUP = ('from setuptools import setup\nsetup(name="transformer_engine", packages=["transformer_engine"],\n'
            '      extras_require={"pytorch": ["transformer_engine_torch==2.4"]})\n')
TE_TEST = ("#include <transformer_engine/activation.h>\n"
           "__global__ void gelu(float *o) { o[threadIdx.x] = 0.5f; }\n")


def _te(root: Path, own: bool) -> Path:
    files = {"tests/cpp/test_act.cu": TE_TEST,
             "transformer_engine/common/include/transformer_engine/activation.h": "#pragma once\nvoid nvte_gelu();\n"}
    if own:
        files |= {"transformer_engine/__init__.py": "", "setup.py": TE_SETUP}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_transformer_engine_is_not_its_own_dependency(tmp_path: Path):
    """ROCm's Transformer Engine fork: its tests include <transformer_engine/...> (its own headers)
    and its setup.py's extras name its own transformer_engine_torch; neither is "adopt the ROCm
    counterpart of Transformer Engine" (30.6 h on the fork, 2026-11-28)."""
    doc = audit_paths([_te(tmp_path / "te", own=True)])
    assert doc["findings"] == []
    assert "transformer-engine" not in {i["key"] for i in doc["estimate"]["items"]}


def test_a_project_using_transformer_engine_still_depends_on_it(tmp_path: Path):
    doc = audit_paths([_te(tmp_path / "user", own=False)])
    assert [(f["path"], f["line"], f["code"]) for f in doc["findings"] if f["code"] == "PK401"] == [
        ("tests/cpp/test_act.cu", 1, "PK401")]
