"""PK506 through an alias (issue 56): pytorch_scatter builds `Extension = CppExtension if suffix ==
'cpu' else CUDAExtension` then `Extension(...)`, with no literal `CUDAExtension(`, so the project
was not seen as a torch extension build (no PK506, no torch_extension_build item, archetype
cuda-cpp). The rule's own cases are fixtures/rules/PK506 (tests/test_rules.py); here: what reads it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import REPO
from portkit.cli.app import main

SCATTER = REPO / "fixtures" / "rules" / "PK506" / "scatter_setup.py"
KERNEL = """#include <cuda_runtime.h>

__global__ void scatter_add(const float *src, const long *index, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&out[index[i]], src[i]);
}

void launch_scatter_add(const float *src, const long *index, float *out, int n, cudaStream_t stream) {
    scatter_add<<<(n + 255) / 256, 256, 0, stream>>>(src, index, out, n);
}
"""


def test_an_aliased_extension_is_priced_as_a_torch_extension_build(tmp_path: Path, capsys):
    root = tmp_path / "scatter"
    (root / "csrc" / "cuda").mkdir(parents=True)
    shutil.copy(SCATTER, root / "setup.py")
    (root / "csrc" / "scatter.cpp").write_text("void launch(void) {}\n")
    (root / "csrc" / "cuda" / "scatter_cuda.cu").write_text(KERNEL)
    assert main(["audit", str(root), "--format", "json", "--rocm", "6.2", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # line 13: `WITH_CUDA = torch.cuda.is_available() and CUDA_HOME is not None`, false on ROCm (setup_cuda_home.py)
    assert [(f["path"], f["line"]) for f in doc["findings"] if f["code"] == "PK506"] == [("setup.py", 13), ("setup.py", 36)]
    estimate = doc["estimate"]
    assert "cuda-extension" in estimate["signals"]
    assert estimate["archetype"]["id"] == "pytorch-cuda-extensions"
    assert "torch_extension_build" in [item["key"] for item in estimate["items"]]
