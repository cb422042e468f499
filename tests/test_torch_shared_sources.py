"""A source a PyTorch extension and another build of the tree both compile is converted (issue 48).

tiny-cuda-nn's bindings/torch/setup.py builds its bindings with the root's src/*.cu, and its root
CMakeLists.txt builds the same src/*.cu as a library: convert left them CUDA for torch's
build-time hipify, and the converted tree's CMake build for HIP, which has no hipify step, could
not build. Now a file is the extension's alone only when no CMake target compiles it and no unit
of one includes it (project/torch_extension.py); the extension's own files stay CUDA.

fixtures/verify_real/tcnn_two_builds/expected is the golden output of a plain `portkit convert -o`
of its input, byte for byte.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, require_tool
from portkit.commands.convert import configured, convert_paths
from portkit.core.files import discover
from portkit.engine.options import Options
from portkit.project import torch_extension
from portkit.project.config import Config
from portkit.project.pipeline import learn

CASE = REPO / "fixtures" / "verify_real" / "tcnn_two_builds"
FILES = ("CMakeLists.txt", "bindings/torch/bindings.cpp", "bindings/torch/setup.py", "include/tiny-cuda-nn/common.h",
         "include/tiny-cuda-nn/encoding.h", "include/tiny-cuda-nn/vec.h", "samples/CMakeLists.txt",
         "samples/mlp_learning_an_image.cu", "src/encoding.cu")


def test_only_what_no_cmake_target_compiles_is_the_extension_s():
    # src/encoding.cu is a CMake target's source; the three headers are included by its units
    _, entries, _ = discover([CASE / "input"], None, [])
    assert torch_extension.learn(entries) == {"bindings/torch/bindings.cpp": "bindings/torch/setup.py:18: CUDAExtension"}


def test_convert_converts_the_shared_sources_and_leaves_the_extension_s_own(tmp_path):
    out = tmp_path / "out"
    result = convert_paths([CASE / "input"], configured(Config(), output=out, jobs=1, cache=False))
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == list(FILES)
    for rel in FILES:
        assert (out / rel).read_bytes() == (CASE / "expected" / rel).read_bytes(), rel
    assert result.torch_sources == frozenset({"bindings/torch/bindings.cpp"})


def test_audit_s_facts_agree():
    # audit's scan reads the facts pipeline.learn gives for its options (commands/audit.py)
    _, entries, _ = discover([CASE / "input"], None, [])
    assert learn(entries, Options(audit=True)).torch_sources == frozenset({"bindings/torch/bindings.cpp"})


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_cmake_unit_s_header_of_the_same_name_elsewhere_leaves_the_extension_s_header_its_own(tmp_path):
    # the CMake tool's "common.h" is tools/common.h; the extension's csrc/common.h stays torch's
    root = _tree(tmp_path, {
        "setup.py": "from torch.utils.cpp_extension import CUDAExtension\nCUDAExtension('x', ['csrc/a.cu'])\n",
        "csrc/a.cu": '#include "common.h"\n', "csrc/common.h": "#pragma once\n",
        "CMakeLists.txt": "project(t LANGUAGES CXX CUDA)\nadd_executable(tool tools/main.cu)\n",
        "tools/main.cu": '#include "common.h"\n', "tools/common.h": "#pragma once\n"})
    _, entries, _ = discover([root], None, [])
    assert torch_extension.learn(entries) == {"csrc/a.cu": "setup.py:2: CUDAExtension",
                                              "csrc/common.h": "setup.py:2: included from csrc/a.cu"}


@pytest.mark.compile
def test_the_golden_cmake_units_compile_with_hipcc(tmp_path):
    require_tool("hipcc", "hipcc (the golden is HIP)")
    for unit in ("src/encoding.cu", "samples/mlp_learning_an_image.cu"):
        done = subprocess.run(["hipcc", "-x", "hip", "--offload-arch=gfx90a", "-std=c++17", "-DTCNN_HALF_PRECISION=1",
                               "-I", str(CASE / "expected" / "include"), "-c", str(CASE / "expected" / unit),
                               "-o", str(tmp_path / "u.o")], capture_output=True, text=True,
                              env={**os.environ, "HIP_PLATFORM": "amd"})
        assert done.returncode == 0, (unit, done.stderr)
