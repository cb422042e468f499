"""Issue 53: false positives the PyTorch-extension measurement found (benchmarks/results/torch_extensions.md).

- pytorch_scatter's `#include "cuda/scatter_cuda.h"` names its own csrc/cuda/ header, not libcu++'s
  <cuda/...>: an include that reaches a file of the tree from its file's folder or one above is the
  project's (project/own_headers.py); fixtures/audit/own_headers.
- Its utils.cuh defines `__shfl_up_sync`/`__shfl_down_sync` overloads for at::Half: a definition or
  declaration named like CUDA's function is the project's (no finding, not renamed); the calls stay
  reported (fixtures/rules/PK004/own_shfl_overloads*.cu, fixtures/convert/own_shfl_overloads).
- CUBLAS_GEMM_DEFAULT_TENSOR_OP is HIPBLAS_GEMM_DEFAULT (fixtures/rules/PK001,
  fixtures/convert/cublas_gemm_tensor_op).
"""

from __future__ import annotations

import json
from pathlib import Path

from portkit.cli.app import main
from portkit.commands.convert import convert_bytes
from portkit.engine.context import Options
from portkit.engine.facts import ProjectFacts

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "fixtures" / "audit" / "own_headers"


def _audit(path: Path, tmp_path: Path) -> list[tuple[str, str, int]]:
    out = tmp_path / "audit.json"
    main(["audit", str(path), "--format", "json", "-o", str(out), "--no-cache", "-q"])
    return sorted((f["code"], f["path"], f["line"]) for f in json.loads(out.read_text())["findings"]
                  if f["severity"] not in ("info", "low"))


def _codes(name: str, source: bytes, facts: ProjectFacts) -> list[tuple[str, int]]:
    scan, _ = convert_bytes(name, source, Options(audit=True), facts=facts)
    return sorted((f.code, f.line) for f in scan.findings)


def test_the_projects_cuda_folder_is_its_own_and_libcuxx_stays_libcuxx(tmp_path: Path):
    """csrc/scatter.cpp's "cuda/scatter_cuda.h" and the same include from csrc/cuda/ (reached from
    csrc/): no finding. <cuda/atomic>, which no folder from csrc/cuda/ up holds: libcu++'s PK401,
    and its cuda:: uses PK001."""
    assert _audit(CASE, tmp_path) == [
        ("PK001", "csrc/cuda/atomic_user.cu", 8), ("PK001", "csrc/cuda/atomic_user.cu", 9),
        ("PK401", "csrc/cuda/atomic_user.cu", 1),
    ]


def test_an_include_is_the_projects_only_where_a_folder_above_reaches_it():
    """The facts' own headers, asked from the including file: its folder, then each folder above;
    a sibling folder's file or an absolute path is not reached."""
    facts = ProjectFacts(own_headers=frozenset({"csrc/cuda/scatter_cuda.h"}))
    include = b'#include "cuda/scatter_cuda.h"\n'
    assert _codes("csrc/scatter.cpp", include, facts) == []
    assert _codes("csrc/ops/deep/x.cpp", include, facts) == []       # -Icsrc from further down
    assert _codes("tools/x.cpp", include, facts) == [("PK401", 1)]   # csrc/ is not above tools/
    assert _codes("csrc/scatter.cpp", include, ProjectFacts()) == [("PK401", 1)]   # no facts: as before
    assert _codes("csrc/scatter.cpp", b"#include <cuda/atomic>\n", facts) == [("PK401", 1)]
    # a bare name only beside the includer: tiny-cuda-nn's <mma.h> two folders below its own mma.h is NVIDIA's
    mma = ProjectFacts(own_headers=frozenset({"include/tcnn/mma.h"}))
    assert _codes("include/tcnn/optimizers/shampoo.h", b"#include <mma.h>\n", mma) == [("PK401", 1)]
    assert _codes("include/tcnn/x.h", b'#include "mma.h"\n', mma) == []


def test_a_definition_named_like_a_shuffle_is_neither_reported_nor_renamed():
    """A declaration or definition of `__shfl_up_sync` (an overload for the project's type) keeps its
    name; a call converts with its mask dropped and stays PK004."""
    source = (b"struct H { float x; };\n"
              b"__device__ H __shfl_up_sync(unsigned m, H v, unsigned d);\n"
              b"__device__ H __shfl_down_sync(unsigned m, H v, unsigned d) { return v; }\n"
              b"__global__ void k(float *o, unsigned m) { o[0] = __shfl_up_sync(m, o[0], 1); }\n")
    assert _codes("k.cu", source, ProjectFacts()) == [("PK004", 4)]
    _, converted = convert_bytes("k.cu", source, Options(), facts=ProjectFacts())
    text = converted if isinstance(converted, bytes) else converted.data
    assert b"H __shfl_up_sync(unsigned m" in text and b"H __shfl_down_sync(unsigned m" in text
    assert b"__shfl_up(o[0], 1)" in text


def test_the_default_tensor_op_gemm_is_hipblas_default():
    """apex's and bitsandbytes' CUBLAS_GEMM_DEFAULT_TENSOR_OP: HIPBLAS_GEMM_DEFAULT, no finding;
    a numbered tensor-op algorithm has no counterpart (PK001)."""
    assert _codes("g.cu", b"int a = CUBLAS_GEMM_DEFAULT_TENSOR_OP;\n", ProjectFacts()) == []
    assert _codes("g.cu", b"int a = CUBLAS_GEMM_ALGO0_TENSOR_OP;\n", ProjectFacts()) == [("PK001", 1)]
