"""A macro a setup.py gives its CUDA extensions by default is the build being ported, not an
optional feature (issue 50; project/setup_defines.py).

pytorch_scatter's csrc/*.cpp reach their CUDA kernels under `#ifdef WITH_CUDA`, and its setup.py
gives WITH_CUDA to every CUDAExtension its loop builds (`define_macros += [('WITH_CUDA', None)]`
when the suffix is 'cuda'). optional.py read WITH_CUDA, #defined nowhere and given with no -D, as
an optional feature, so the kernels the port is about were priced as "porting the optional
WITH_CUDA code adds ...". fixtures/torch_setup/scatter_loop is that setup.py verbatim with the
sources of two of its extensions (its README).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO, write_tree
from portkit.api import audit_paths
from portkit.core.files import discover
from portkit.project import optional
from portkit.project.pipeline import optional_inputs

SCATTER = REPO / "fixtures" / "torch_setup" / "scatter_loop"

# compiles with `nvcc -c` as it is and with -DWITH_X
KERNEL = ("__global__ void k(float *x) { x[threadIdx.x] += 1.0f; }\n"
          "#ifdef WITH_X\n"
          "void launch(float *x) { k<<<1, 32>>>(x); }\n"
          "#endif\n")
HEAD = ("import os\nimport sys\nimport torch\nfrom setuptools import setup\n"
        "from torch.utils.cpp_extension import CppExtension, CUDAExtension, IS_HIP_EXTENSION\n")
CALL = "ext = CUDAExtension('k', ['csrc/k.cu'], define_macros=macros, extra_compile_args=flags)\n"
OPTIONAL = {"csrc/k.cu": [(3, 4, "WITH_X")]}


def _learn(root: Path) -> optional.OptionalCode:
    _, entries, _ = discover([root])
    return optional.learn(optional_inputs(entries))


def _items(doc: dict) -> list[tuple[str, str, str, list[str]]]:
    return sorted((i["kind"], i["key"], i["optional"], i["findings"]) for i in doc["estimate"]["items"])


def test_pytorch_scatter_s_with_cuda_is_the_build_being_ported():
    found = _learn(SCATTER)
    # scatter.cpp's and version.cpp's `#ifdef WITH_CUDA` (and `#ifdef WITH_PYTHON`) were optional
    assert (found.ranges, found.files) == ({}, {})
    doc = audit_paths([SCATTER])
    assert doc["estimate"]["optional"] == []
    assert _items(doc) == [
        ("dependency", "cuda-driver", "", ["csrc/version.cpp:10"]),
        ("fixed", "project_tests", "", []),
        ("fixed", "torch_extension_build", "", []),
        ("pattern", "PK001", "", ["csrc/cuda/atomics.cuh:144"]),
        # its `#if __CUDA_ARCH__ < 700` loop, where the human port sent ROCm (rewrite/guard_fallbacks.py)
        ("pattern", "PK103", "", ["csrc/cuda/atomics.cuh:138"]),
        ("pattern", "PK104:CUDA_VERSION", "", ["csrc/version.cpp:26"]),   # `return CUDA_VERSION;` (5fdc463)
        ("pattern", "PK505", "", ["setup.py:67"]),
        ("pattern", "PK506:CUDA_HOME", "", ["setup.py:17"]),   # `... and CUDA_HOME is not None`: no GPU build on ROCm
        ("pattern", "PK506:__shfl_down_sync", "", ["csrc/cuda/utils.cuh:18"]),
        ("pattern", "PK506:__shfl_up_sync", "", ["csrc/cuda/utils.cuh:12"]),
        ("unit", "review_converted_ref", "", []),
        ("unit", "validate_kernel", "", []),
    ]


def test_pytorch_scatter_s_macros_on_linux_cuda_only():
    from portkit.project.setup_defines import default_macros
    paths = frozenset(str(p.relative_to(SCATTER)) for p in SCATTER.rglob("*") if p.is_file())
    # not USE_ROCM (`if torch.version.hip:`), torchscatter_EXPORTS (win32), _LIBCPP_DISABLE_AVAILABILITY (darwin)
    assert default_macros("setup.py", (SCATTER / "setup.py").read_bytes(), paths) == {
        "WITH_PYTHON", "WITH_CUDA", "AT_PARALLEL_OPENMP"}


GIVEN = [
    ("define_macros", "macros = [('WITH_X', None)]\nflags = {}\n"),
    ("define_macros_value", "macros = []\nmacros += [('WITH_X', '1')]\nflags = {}\n"),
    ("nvcc_flag", "macros = []\nflags = {'cxx': ['-O3'], 'nvcc': ['-O3', '-DWITH_X=1']}\n"),
    ("cxx_flag_list", "macros = []\nflags = ['-O3', '-DWITH_X']\n"),
    ("split_flag", "macros = []\nflags = {'nvcc': ['-D', 'WITH_X']}\n"),
    ("cuda_side_of_vendor_test", "macros = []\nflags = {}\nif torch.version.hip:\n    macros.append(('USE_ROCM', None))\n"
                                 "else:\n    macros.append(('WITH_X', None))\n"),
    ("not_hip_extension", "macros = []\nflags = {}\nif not IS_HIP_EXTENSION:\n    macros.append(('WITH_X', None))\n"),
    ("cuda_available_holds", "macros = []\nflags = {}\nif torch.cuda.is_available():\n    macros += [('WITH_X', None)]\n"),
    ("linux", "macros = []\nflags = {}\nif sys.platform.startswith('linux') and os.name != 'nt':\n"
              "    macros += [('WITH_X', None)]\n"),
]
LEFT_OPTIONAL = [
    ("env_switch", "macros = []\nflags = {}\nif os.getenv('WITH_X', '0') == '1':\n    macros += [('WITH_X', None)]\n"),
    ("argv_switch", "macros = []\nflags = {}\nif '--x' in sys.argv:\n    flags = {'nvcc': ['-DWITH_X']}\n"),
    ("switch_variable", "use_x = False\nif '--x' in sys.argv:\n    use_x = True\nmacros = []\nflags = {}\n"
                        "if use_x:\n    macros.append(('WITH_X', None))\n"),
    ("rocm_side", "macros = []\nflags = {}\nif torch.version.hip:\n    macros.append(('WITH_X', None))\n"),
    ("windows", "macros = []\nflags = {}\nif sys.platform == 'win32':\n    macros += [('WITH_X', None)]\n"),
    ("cpu_extension_only", "macros = []\nflags = {}\n"
                           "cpu = CppExtension('c', ['csrc/c.cpp'], define_macros=[('WITH_X', None)])\n"),
    ("named_not_given", "macros = []\nflags = {}\nwanted = os.environ.get('WITH_X')\n"),
]


@pytest.mark.parametrize("case, text", GIVEN, ids=[c for c, _ in GIVEN])
def test_a_macro_the_default_cuda_build_gives_is_no_feature(tmp_path: Path, case: str, text: str):
    root = write_tree(tmp_path, {"setup.py": HEAD + text + CALL, "csrc/k.cu": KERNEL})
    assert _learn(root).ranges == {}


@pytest.mark.parametrize("case, text", LEFT_OPTIONAL, ids=[c for c, _ in LEFT_OPTIONAL])
def test_a_macro_only_a_switch_or_another_build_gives_stays_optional(tmp_path: Path, case: str, text: str):
    root = write_tree(tmp_path, {"setup.py": HEAD + text + CALL, "csrc/k.cu": KERNEL,
                                 "csrc/c.cpp": "int c() { return 0; }\n"})
    assert _learn(root).ranges == OPTIONAL


def test_the_switch_every_cuda_extension_needs_is_the_default_build(tmp_path: Path):
    """apex's shape: every CUDA extension under `--cuda_ext`, which is then the default build
    (setup_switches._default), so what it gives is given; a smaller switch's macro is not."""
    text = (HEAD + "exts = []\n"
            "if '--cuda_ext' in sys.argv:\n"
            "    exts.append(CUDAExtension('k', ['csrc/k.cu'], extra_compile_args={'nvcc': ['-DWITH_X']}))\n"
            "if '--fancy' in sys.argv:\n"
            "    exts.append(CUDAExtension('f', ['csrc/f.cu'], define_macros=[('WITH_FANCY', None)]))\n")
    fancy = KERNEL.replace("k(", "f(").replace("WITH_X", "WITH_FANCY")
    root = write_tree(tmp_path, {"setup.py": text, "csrc/k.cu": KERNEL, "csrc/f.cu": fancy})
    found = _learn(root)
    assert found.files == {"csrc/f.cu": "--fancy"}
    # k.cu's `#ifdef WITH_X` is default; f.cu's WITH_FANCY is still its own switch's
    assert found.ranges == {"setup.py": [(9, 10, "--fancy")], "csrc/f.cu": [(3, 4, "WITH_FANCY")]}


@pytest.mark.parametrize("text", [b"ext = CUDAExtension('k', ['csrc/k.cu'], define_macros=[('WITH_X', None)]\n",
                                  b"x = " + b"1 + " * 20000 + b"1\nCUDAExtension('k', ['csrc/k.cu'], "
                                  b"define_macros=[('WITH_X', None)])\n"], ids=["unbalanced", "deep"])
def test_a_broken_or_deep_setup_py_gives_nothing(text: bytes):
    from portkit.project.setup_defines import default_macros
    assert default_macros("setup.py", text, frozenset({"csrc/k.cu"})) == frozenset()
