"""A PyTorch extension's sources stay CUDA after convert: torch hipifies them at build time, so
convert writes there only the edits torch's hipify cannot make (commands/torch_sources.py).

fixtures/convert_torch/causal_conv1d is reduced from causal-conv1d before its ROCm port: the
expected tree is the golden output of a plain `portkit convert -o`, byte for byte; the sources
still compile with nvcc; `--extension-sources hip` converts them as before.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import REPO, require_tool
from portkit.commands.convert import configured, convert_paths
from portkit.commands.torch_sources import torch_spans
from portkit.commands.torch_split import TorchSplit
from portkit.core.files import discover
from portkit.project import torch_extension
from portkit.project.config import Config

CASE = REPO / "fixtures" / "convert_torch" / "causal_conv1d"
FILES = ("csrc/causal_conv1d_common.h", "csrc/causal_conv1d_fwd.cu", "setup.py")


def _convert(tmp_path: Path, **fields):
    out = tmp_path / "out"
    return out, convert_paths([CASE / "input"], configured(Config(), output=out, jobs=1, cache=False, **fields))


def test_the_extension_s_sources_and_the_headers_they_include_are_torch_s():
    _, entries, _ = discover([CASE / "input"], None, [])
    assert torch_extension.learn(entries) == {
        "csrc/causal_conv1d_common.h": "setup.py:12: included from csrc/causal_conv1d_fwd.cu",
        "csrc/causal_conv1d_fwd.cu": "setup.py:12: CUDAExtension"}


def test_convert_writes_only_what_torch_s_hipify_cannot_make(tmp_path):
    out, result = _convert(tmp_path)
    for rel in FILES:
        assert (out / rel).read_bytes() == (CASE / "expected" / rel).read_bytes(), rel
    accounts = {o.entry.rel: o.torch for o in result.outcomes if o.torch is not None}
    # the header's __shfl_xor_sync has no HIP form nvcc compiles; torch renames its includes
    assert accounts["csrc/causal_conv1d_common.h"] == TorchSplit(0, 3, (
        (12, "__shfl_xor_sync"), (12, "__shfl_xor_sync argument 1"),
        (21, "__shfl_xor_sync"), (21, "__shfl_xor_sync argument 1")))
    # the kernel's const void* cast is written; torch's map lacks cub::BLOCK_LOAD_WARP_TRANSPOSE
    assert accounts["csrc/causal_conv1d_fwd.cu"] == TorchSplit(2, 10, ((12, "cub"),))


def test_extension_sources_hip_converts_them_as_any_source(tmp_path):
    out, result = _convert(tmp_path, extension_sources="hip")
    assert result.torch_sources == frozenset()
    text = (out / "csrc/causal_conv1d_fwd.cu").read_text()
    assert "#include <hipcub/block/block_load.hpp>" in text and "hipStream_t stream" in text
    assert "__shfl_xor(x, OFFSET)" in (out / "csrc/causal_conv1d_common.h").read_text()


def test_the_words_torch_renames_are_its_map_s_whole_words():
    data = b" cudaStream_t s; my_cudaMalloc(); cub::BlockLoad<x> cub::Foo;\n"
    assert [data[a:b] for a, b in torch_spans(data)] == [b"cudaStream_t", b"cub::BlockLoad"]


@pytest.mark.compile
def test_the_golden_sources_compile_with_nvcc(tmp_path):
    require_tool("nvcc", "nvcc (the fixture is CUDA)")
    done = subprocess.run(["nvcc", "-c", str(CASE / "expected" / "csrc/causal_conv1d_fwd.cu"), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
