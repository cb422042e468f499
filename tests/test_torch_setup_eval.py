"""A setup.py that builds its extensions' sources in loops, from globs, through aliases (issue 53).

fixtures/torch_setup/scatter_loop is rusty1s/pytorch_scatter at 18d3759089 (the base of its ROCm
port): its setup.py verbatim, and the sources of its `scatter` and `version` extensions verbatim.
Its get_extensions() loops over `product(glob.glob(osp.join('csrc', '*.cpp')), suffices)`, takes
`osp.join('csrc', 'cpu', f'{name}_cpu.cpp')` and `..._cuda.cu` where `osp.exists`, and calls
`Extension(...)` after `Extension = CppExtension if suffix == 'cpu' else CUDAExtension`: read as
a pattern, nothing of it was the extension's, so torch's build-time hipify step went unseen.
project/torch_extension_eval.py evaluates such files without running them.
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest

from conftest import REPO
from portkit.core.files import discover
from portkit.project import amd_paths, torch_extension

SCATTER = REPO / "fixtures" / "torch_setup" / "scatter_loop"
KERNEL = "__global__ void k(float *x) { x[threadIdx.x] += 1.0f; }\n"


def test_pytorch_scatter_s_loop_gives_each_cuda_extension_its_sources():
    _, entries, _ = discover([SCATTER], None, [])
    cuda, by = "setup.py:82: CUDAExtension", "setup.py:82: included from csrc/"
    assert torch_extension.learn(entries) == {
        "csrc/cpu/index_info.h": by + "cpu/scatter_cpu.cpp",
        "csrc/cpu/reducer.h": by + "cpu/scatter_cpu.cpp",
        "csrc/cpu/scatter_cpu.cpp": cuda,
        "csrc/cpu/scatter_cpu.h": by + "cpu/scatter_cpu.cpp",
        "csrc/cpu/utils.h": by + "cpu/scatter_cpu.cpp",
        "csrc/cuda/atomics.cuh": by + "cuda/reducer.cuh",
        "csrc/cuda/reducer.cuh": by + "cuda/scatter_cuda.cu",
        "csrc/cuda/scatter_cuda.cu": cuda,
        "csrc/cuda/scatter_cuda.h": by + "cuda/scatter_cuda.cu",
        "csrc/cuda/utils.cuh": by + "cuda/scatter_cuda.cu",
        "csrc/extensions.h": by + "scatter.h",
        "csrc/macros.h": by + "version.cpp",
        "csrc/scatter.cpp": cuda,
        "csrc/scatter.h": by + "version.cpp",
        "csrc/utils.h": by + "scatter.cpp",
        "csrc/version.cpp": cuda,
    }


def test_the_build_s_hipify_step_is_the_aliased_extension_call():
    _, entries, _ = discover([SCATTER], None, [])
    assert amd_paths.hipify_step(entries) == (
        "setup.py:82: extension = Extension( (torch hipifies a CUDAExtension's sources when it builds on ROCm)")


def test_each_extension_gets_only_its_own_sources():
    from portkit.project.torch_extension_eval import extension_calls
    tree = ast.parse((SCATTER / "setup.py").read_bytes())
    files = {str(p.relative_to(SCATTER)) for p in SCATTER.rglob("*") if p.is_file()}
    # one call site, evaluated once per (main, suffix): the CppExtension ones are not torch's hipify's
    assert extension_calls(tree, "setup.py", files) == [(82, "CUDAExtension", [
        "csrc/scatter.cpp", "csrc/cpu/scatter_cpu.cpp", "csrc/cuda/scatter_cuda.cu", "csrc/version.cpp"])]


SHAPES = {
    "comprehension over glob": ("""
import glob, os
from torch.utils.cpp_extension import CUDAExtension
srcs = [os.path.join('csrc', os.path.basename(f)) for f in sorted(glob.glob('csrc/*.cu'))]
ext = CUDAExtension('x', sources=srcs + ['csrc/api.cpp'])  # the call
""", ["csrc/a.cu", "csrc/b.cu", "csrc/api.cpp"]),
    "listdir filter and this_dir": ("""
import os
from torch.utils import cpp_extension
this_dir = os.path.dirname(os.path.abspath(__file__))
d = os.path.join(this_dir, 'csrc')
ext = cpp_extension.CUDAExtension('x', [os.path.join(d, f) for f in os.listdir(d) if f.endswith(('.cu', '.cpp'))])  # the call
""", ["csrc/a.cu", "csrc/api.cpp", "csrc/b.cu"]),
    "os.walk and append in a helper": ("""
import os
from torch.utils.cpp_extension import CUDAExtension as CE
def find(root):
    out = []
    for here, dirs, files in os.walk(root):
        for f in files:
            if f.endswith('.cu'):
                out.append(os.path.join(here, f))
    return out
setup(ext_modules=[CE(name='x', sources=find('csrc'))])  # the call
""", ["csrc/a.cu", "csrc/b.cu", "csrc/kernels/c.cu"]),
    "pathlib rglob": ("""
from pathlib import Path
from torch.utils.cpp_extension import CUDAExtension
ROOT = Path(__file__).parent
ext = CUDAExtension('x', sources=[str(p) for p in (ROOT / 'csrc').rglob('*.cu')])  # the call
""", ["csrc/a.cu", "csrc/b.cu", "csrc/kernels/c.cu"]),
    "recursive glob, vendor branch": ("""
import glob, torch
from torch.utils.cpp_extension import CUDAExtension
if torch.version.hip:
    srcs = glob.glob('csrc/**/*.cu', recursive=True)
else:
    srcs = ['csrc/a.cu']
CUDAExtension('x', srcs)  # the call
""", ["csrc/a.cu", "csrc/b.cu", "csrc/kernels/c.cu"]),
    "a branch known false": ("""
from torch.utils.cpp_extension import CUDAExtension
DEBUG = False
srcs = ['csrc/a.cu']
if DEBUG:
    srcs += ['csrc/b.cu']
CUDAExtension('x', srcs)  # the call
""", ["csrc/a.cu"]),
    "torch's load, f-string names": ("""
from torch.utils.cpp_extension import load
names = ['a', 'b']
mod = load('x', [f'csrc/{n}.cu' for n in names] + ['csrc/api.cpp'])  # the call
""", ["csrc/a.cu", "csrc/b.cu", "csrc/api.cpp"]),
}
FILES = {"csrc/a.cu", "csrc/b.cu", "csrc/api.cpp", "csrc/kernels/c.cu", "csrc/notes.txt"}


def _tree(root: Path, setup: str) -> list:
    root.mkdir(parents=True)
    (root / "setup.py").write_text(setup)
    for rel in FILES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(KERNEL if rel.endswith(".cu") else "int api(void) { return 0; }\n")
    return discover([root], None, [])[1]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_common_shapes_of_source_lists_are_read(shape: str, tmp_path: Path):
    text, expected = SHAPES[shape]
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.endswith("# the call"))
    assert torch_extension.learn(_tree(tmp_path / "p", text)) == {
        rel: f"setup.py:{line}: {'load' if 'load(' in text else 'CUDAExtension'}" for rel in expected}


def test_learn_resolves_evaluated_sources_under_the_setup_py_s_folder(tmp_path: Path):
    root = tmp_path / "proj"
    (root / "ext" / "csrc" / "kernels").mkdir(parents=True)
    (root / "ext" / "setup.py").write_text(SHAPES["os.walk and append in a helper"][0])
    for name in ("a.cu", "kernels/c.cu"):
        (root / "ext" / "csrc" / name).write_text(KERNEL)
    (root / "main.cu").write_text(KERNEL)
    _, entries, _ = discover([root], None, [])
    assert torch_extension.learn(entries) == {"ext/csrc/a.cu": "ext/setup.py:11: CUDAExtension",
                                              "ext/csrc/kernels/c.cu": "ext/setup.py:11: CUDAExtension"}


HOSTILE = {
    "endless loop": "while True:\n    pass\n",
    "a huge range": "for i in range(10**12):\n    x = [i] * 10**9\n",
    "a huge string": "s = 'x' * 10**12\nt = '%0999999999d' % 1\nu = '{:>999999999}'.format(1)\n",
    "recursion": "def f(n):\n    return f(n + 1)\nf(0)\n",
    "a file write": "open(__file__ + '.touched', 'w').write('x')\nimport os\nos.remove(__file__)\n",
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_the_reader_never_runs_the_file_and_stays_bounded(case: str, tmp_path: Path):
    text = ("from torch.utils.cpp_extension import CUDAExtension\n" + HOSTILE[case]
            + "CUDAExtension('x', ['csrc/a.cu'])\n")
    entries = _tree(tmp_path / "p", text)
    start = time.monotonic()
    found = torch_extension.learn(entries)
    assert time.monotonic() - start < 5
    assert (tmp_path / "p" / "setup.py").read_text() == text and not (tmp_path / "p" / "setup.py.touched").exists()
    assert found == {"csrc/a.cu": f"setup.py:{len(text.splitlines())}: CUDAExtension"}
