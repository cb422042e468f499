"""The build's own switches decide what the default build compiles (docs/estimate.md, "Optional
code"): setup.py extensions under a flag (apex), Makefile blocks a plain `make` skips (llm.c's
USE_CUDNN), and the frameworks a project requires (faiss imports torch without requiring it)."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

import pytest

from portkit.api import audit_paths
from portkit.core.files import discover
from portkit.buildfiles import make_switches, setup_switches
from portkit.project import optional
from portkit.project.packages import requirements
from portkit.project.pipeline import optional_inputs

KERNEL = "__global__ void k(float *x) { x[threadIdx.x] = __shfl(x[0], 1); }\n"


def _learn(root: Path) -> optional.OptionalCode:
    _, entries, _ = discover([root])
    return optional.learn(optional_inputs(entries))


def _items(doc: dict) -> list[tuple[str, str, str, list[str]]]:
    return sorted((i["kind"], i["key"], i["optional"], i["findings"]) for i in doc["estimate"]["items"])


DEFAULT_AND_FLAG = {
    "setup.py": (
        "import sys\nfrom setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "ext_modules = [CUDAExtension('core', ['csrc/core.cu'])]\n"
        "if '--fancy' in sys.argv:\n"
        "    sys.argv.remove('--fancy')\n"
        "    ext_modules.append(CUDAExtension(name='fancy', sources=['contrib/fancy.cu', 'csrc/core.cu']))\n"
        "setup(name='pkg', ext_modules=ext_modules, install_requires=['torch'])\n"),
    "csrc/core.cu": KERNEL,
    "contrib/fancy.cu": '#include "fancy.cuh"\n' + KERNEL.replace("k(", "f("),
    "contrib/fancy.cuh": '#include "detail.cuh"\n',
    "contrib/detail.cuh": "#pragma once\n",
}


def test_a_flag_gated_extension_beside_a_default_one_is_optional(tmp_path: Path):
    root = write_tree(tmp_path, DEFAULT_AND_FLAG)
    found = _learn(root)
    # core.cu is listed by both: default; the headers only fancy.cu includes follow it, transitively
    assert found.files == {"contrib/fancy.cu": "--fancy", "contrib/fancy.cuh": "--fancy",
                           "contrib/detail.cuh": "--fancy"}
    assert found.ranges == {"setup.py": [(5, 7, "--fancy")]}
    doc = audit_paths([root])
    assert _items(doc) == [
        ("fixed", "project_tests", "", []), ("fixed", "torch_extension_build", "", []),
        ("pattern", "PK101:__shfl", "", ["csrc/core.cu:1"]), ("pattern", "PK101:__shfl", "--fancy", ["contrib/fancy.cu:2"]),
        ("unit", "validate_kernel", "", []), ("unit", "validate_kernel", "--fancy", [])]
    assert [(o["feature"], o["items"]) for o in doc["estimate"]["optional"]] == [("--fancy", 2)]
    # setup.py's own lines belong to the feature too; the CUDAExtension calls are priced by the build item
    assert [(f["line"], f["severity"]) for f in doc["findings"] if f["code"] == "PK506"] == [(4, "medium"), (7, "medium")]


EVERY_EXT_SWITCHED = {
    "setup.py": (
        "import os, sys, glob\nfrom setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "def has_flag(flag, env):\n    return flag in sys.argv or os.environ.get(env, '0') == '1'\n"
        "ext_modules = []\n"
        "if has_flag('--cuda_ext', 'X_CUDA_EXT'):\n"
        "    ext_modules.append(CUDAExtension('a', ['csrc/a.cu']))\n"
        "    ext_modules.append(CUDAExtension('b', sources=glob.glob('csrc/b*.cu')))\n"
        "if os.environ.get('X_FAST', '0') == '1':\n"
        "    ext_modules.append(CUDAExtension('fast', [os.path.join(this_dir, 'contrib', 'fast.cu'),\n"
        "                                              'contrib/fast_1.cu', 'contrib/fast_2.cu', 'contrib/fast_3.cu']))\n"
        "setup(name='pkg', ext_modules=ext_modules)\n"),
    "csrc/a.cu": KERNEL, "csrc/b1.cu": KERNEL, "csrc/b2.cu": KERNEL,
    "contrib/fast.cu": KERNEL, "contrib/fast_1.cu": KERNEL, "contrib/fast_2.cu": KERNEL, "contrib/fast_3.cu": KERNEL,
    "contrib/unlisted.cpp": "int unused;\n",   # listed by no extension, beside X_FAST's sources only
}


def test_when_every_extension_is_switched_the_largest_switch_is_the_default(tmp_path: Path):
    """--cuda_ext builds 2 extensions (3 files), X_FAST 1 (4 files): the most extensions wins (apex:
    --cuda_ext's 11 extensions, not --group_norm's 47 generated files)."""
    root = write_tree(tmp_path, EVERY_EXT_SWITCHED)
    found = _learn(root)
    assert found.files == {"contrib/fast.cu": "X_FAST", "contrib/fast_1.cu": "X_FAST",
                           "contrib/fast_2.cu": "X_FAST", "contrib/fast_3.cu": "X_FAST", "contrib/unlisted.cpp": "X_FAST"}
    assert found.ranges == {"setup.py": [(10, 12, "X_FAST")]}
    doc = audit_paths([root])
    assert _items(doc) == [
        ("fixed", "project_tests", "", []), ("fixed", "torch_extension_build", "", []),
        ("pattern", "PK101:__shfl", "", ["csrc/a.cu:1", "csrc/b1.cu:1", "csrc/b2.cu:1"]),
        ("pattern", "PK101:__shfl", "X_FAST", ["contrib/fast.cu:1", "contrib/fast_1.cu:1", "contrib/fast_2.cu:1",
                                               "contrib/fast_3.cu:1"]),
        ("unit", "validate_kernel", "", []), ("unit", "validate_kernel", "X_FAST", [])]
    assert [(o["feature"], o["items"]) for o in doc["estimate"]["optional"]] == [("X_FAST", 2)]


MAKE_CUDNN = {
    "Makefile": ("NVCC = nvcc\nNVCC_FLAGS = -O3\nNVCC_LDLIBS = -lcublas\n"
                 "# cuDNN is off unless asked for\nUSE_X ?= 0\n"
                 "ifeq ($(USE_X), 1)\n  NVCC_FLAGS += -DENABLE_X\n  NVCC_LDLIBS += -lcudnn\nendif\n"
                 "train: train.cu\n\t$(NVCC) $(NVCC_FLAGS) train.cu -o train $(NVCC_LDLIBS)\n"),
    "train.cu": ("#ifdef ENABLE_X\n#include <cudnn.h>\nvoid att() { cudnnHandle_t h; cudnnCreate(&h); }\n#endif\n"
                 + KERNEL),
}


def test_a_makefile_switch_and_the_sources_ifdef_are_one_optional_feature(tmp_path: Path):
    root = write_tree(tmp_path, MAKE_CUDNN)
    found = _learn(root)
    assert found.ranges == {"Makefile": [(7, 8, "ENABLE_X")], "train.cu": [(2, 4, "ENABLE_X")]}
    assert found.links == {"Makefile": [(3, "cublas"), (8, "cudnn")]}
    doc = audit_paths([root])
    cudnn = [(i["kind"], i["key"], i["optional"], i["findings"]) for i in doc["estimate"]["items"]
             if "cudnn" in i["key"].lower()]
    # one item: the link, the include and the calls are one library's adoption (estimate/decisions.py)
    assert sorted(cudnn) == [("dependency", "cudnn", "ENABLE_X", ["Makefile:8", "train.cu:2", "train.cu:3"])]
    assert [o["feature"] for o in doc["estimate"]["optional"]] == ["ENABLE_X"]
    assert not [i for i in doc["estimate"]["items"] if not i["optional"] and "cudnn" in i["key"].lower()]


def test_asking_for_the_feature_puts_the_makefile_block_in_the_headline(tmp_path: Path):
    _, entries, _ = discover([write_tree(tmp_path, MAKE_CUDNN)])
    found = optional.learn(optional_inputs(entries), (("ENABLE_X", None),))
    assert found.ranges == {}


@pytest.mark.parametrize("text, expected", [
    ("X ?= 0\nifeq ($(X),1)\na\nendif\n", [(3, 3, "X")]),
    ("X := 0\nifeq (1, $(X))\na\nelse\nb\nendif\n", [(3, 3, "X")]),
    ("X =\nifneq ($(X),)\na\nendif\n", [(3, 3, "X")]),
    ("X ?= 0\nifneq ($(X),)\na\nendif\n", []),                     # "0" is not empty: built by default
    ("ifdef NEVER_SET\nCFLAGS += -DWITH_Y\nendif\n", [(2, 2, "WITH_Y")]),
    ("X ?= 0\nifeq ($(X), 0)\na\nelse\nb\nendif\n", [(5, 5, "X")]),  # the else branch is the feature
    ("X ?= 1\nifeq ($(X), 1)\na\nendif\n", []),                      # on by default
    ("X ?= 0\nifeq ($(shell uname), Linux)\nifeq ($(X), 1)\na\nendif\nendif\n", [(4, 4, "X")]),
    ("X ?= 0\nifeq ($(X), 1)\nifeq ($(OS), Windows_NT)\na\nendif\nb\nendif\n", [(3, 6, "X")]),   # outermost wins
    ("X ?= 0\nifeq ($(X)$(Y), 1)\na\nendif\n", []),                # two variables: undecided
])
def test_makefile_switch_forms(text: str, expected: list):
    assert make_switches.read(text.encode()).ranges == expected


def test_a_broken_or_huge_setup_py_says_nothing():
    paths = frozenset({"a.cu"})
    assert setup_switches.learn("setup.py", b"if '--x' in sys.argv:\n  CUDAExtension('a', ['a.cu']\n", paths) == ({}, [])
    big = b"if '--x' in sys.argv:\n    CUDAExtension('a', ['a.cu'])\n" + b"#" * setup_switches.MAX_BYTES
    assert setup_switches.learn("setup.py", big, paths) == ({}, [])


def test_setup_py_is_read_never_run(tmp_path: Path):
    marker = tmp_path / "ran"
    text = (f"open({str(marker)!r}, 'w').write('x')\nif '--x' in __import__('sys').argv:\n    CUDAExtension('a', ['a.cu'])\n"
            "CUDAExtension('b', ['b.cu'])\n")
    assert setup_switches.learn("setup.py", text.encode(), frozenset({"a.cu", "b.cu"})) == (
        {"a.cu": "--x", "b.cu": ""}, [(2, 3, "--x")])
    assert not marker.exists()


@pytest.mark.parametrize("files, expected", [
    ({"pyproject.toml": '[project]\nname="p"\ndependencies=["NumPy>=1", "packaging"]\n'
                        '[project.optional-dependencies]\ntorch=["torch>=2"]\n'},
     (frozenset({"numpy", "packaging"}), (("torch", frozenset({"torch"})),))),
    ({"python/setup.py": "REQ = ['numpy']\nsetup(name='p', install_requires=REQ, extras_require={'jax': ['jax[cuda]']})\n"},
     (frozenset({"numpy"}), (("jax", frozenset({"jax"})),))),
    ({"setup.py": "setup(name='p', install_requires=read_requirements())\n",
      "pyproject.toml": '[project]\nname="p"\ndependencies=["numpy"]\n'}, (None, ())),   # computed: not known
    ({"setup.py": "setup(name='p')\n"}, (None, ())),                                      # declares nothing
    ({"examples/setup.py": "setup(install_requires=['torch'])\n", "setup.py": "setup(install_requires=[])\n"},
     (frozenset(), ())),
    ({"setup.py": "setup(install_requires=['torch'\n"}, (None, ())),                      # does not parse
])
def test_declared_requirements(tmp_path: Path, files: dict, expected: tuple):
    _, entries, _ = discover([write_tree(tmp_path, files)])
    assert requirements(entries) == expected


INTEROP = {"mypkg/__init__.py": "", "mypkg/interop.py": "import torch\n", "mypkg/k.cu": KERNEL}


@pytest.mark.parametrize("declared, signals", [
    ('dependencies = ["numpy"]\n', ["cuda-sources"]),                                      # faiss: optional interop
    ('dependencies = ["numpy"]\n[project.optional-dependencies]\ntorch = ["torch"]\n', ["cuda-sources"]),
    ('dependencies = ["numpy", "torch>=2"]\n', ["cuda-sources", "pytorch"]),
    ("", ["cuda-sources", "pytorch"]),                                                   # declares nothing: as before
])
def test_a_package_importing_a_framework_it_does_not_require(tmp_path: Path, declared: str, signals: list):
    root = write_tree(tmp_path, {**INTEROP, "pyproject.toml": '[project]\nname = "mypkg"\n' + declared})
    doc = audit_paths([root])
    assert doc["estimate"]["signals"] == signals
    pytorch = [i["key"] for i in doc["estimate"]["items"] if i["key"].startswith("pytorch")]
    # its tests are the project's (project_tests): a model validation item is for projects without CUDA sources
    assert pytorch == ([] if "pytorch" not in signals else ["pytorch_environment"])


def test_a_setup_py_glob_finds_what_comparing_every_path_finds():
    """setup.py's glob.glob looks only at the paths that begin with its literal text
    (buildfiles/tree_paths.py): the same files as _glob over every path of the tree."""
    import ast

    from portkit.buildfiles import setup_switches
    paths = frozenset(["csrc/a.cu", "csrc/ab/c.cu", "csrc/ab.cu", "csrc/b/d.cpp", "csrcx/a.cu", "x.cu", "csrc/a/b/c.cu",
                       "pkg/csrc/k.cu", "pkg/csrc/deep/k2.cu"])
    for base in ("", "pkg"):
        switches = setup_switches._Switches(ast.parse(""), base, paths)
        for pattern in ["csrc/*.cu", "csrc/a*", "*.cu", "csrc/a?.cu", "csrc/[ab].cu", "csrc/**/*.cu", "./csrc/*.cu",
                        "csrc/../x.cu", "csrc/ab/c.cu", "none/*.cu", "**/*.cu"]:
            call = ast.parse(f"glob.glob({pattern!r})", mode="eval").body
            every = sorted(p for p in paths if setup_switches._glob(f"{base}/{pattern}" if base else pattern, p))
            assert switches.files(call) == every, (base, pattern)
    switches = setup_switches._Switches(ast.parse(""), "", paths)
    assert switches.files(ast.parse("glob.glob('csrc/**/*.cu')", mode="eval").body) == [
        "csrc/a/b/c.cu", "csrc/ab/c.cu"]
