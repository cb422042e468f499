"""Issue 50, item 4: causes the leave-one-out on port histories found (docs/estimate.md, "Leave-one-out
on port histories"): a compile unit only an optional Makefile block builds is that feature's, and a
Triton kernel costs what the ports measured (benchmarks/calibration/triton_edits.py), not a day."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from portkit.buildfiles import make_switches
from portkit.commands.audit import AuditOptions, audit_paths
from portkit.commands.scan.walk import Options
from portkit.core.files import discover
from portkit.estimate import scope
from portkit.project import optional
from portkit.project.pipeline import optional_inputs
from portkit.report.model import audit_document

# llm.c before cudnn_att.h existed (karpathy/llm.c b554d4d): the cuDNN frontend file is compiled
# only through NVCC_CUDNN, empty unless USE_CUDNN=1; its functions are declared in train.cu under
# the same #ifdef, so no header ties the file to the feature.
MAKE_UNIT = {
    "Makefile": (
        "NVCC = nvcc\nNVCC_FLAGS = -O3\nNVCC_LDLIBS = -lcublas\nNVCC_CUDNN =\n"
        "USE_X ?= 0\n"
        "ifeq ($(USE_X), 1)\n  NVCC_FLAGS += -DENABLE_X\n  NVCC_LDLIBS += -lcudnn\n  NVCC_CUDNN = att.o\nendif\n"
        "train: train.cu $(NVCC_CUDNN)\n\t$(NVCC) $(NVCC_FLAGS) train.cu $(NVCC_CUDNN) -o train $(NVCC_LDLIBS)\n"
        "$(NVCC_CUDNN): att.cpp\n\t$(NVCC) -c $(NVCC_FLAGS) att.cpp -o $@\n"
        "clean:\n\trm -f train $(NVCC_CUDNN)\n"),
    "att.cpp": ("#include <cudnn.h>\n#include <cuda_runtime.h>\n"
                "static cudnnHandle_t handle;\n"
                "void create_att() { cudnnCreate(&handle); }\n"
                "void destroy_att() { cudnnDestroy(handle); }\n"),
    "train.cu": ("#ifdef ENABLE_X\nvoid create_att();\n#else\nvoid create_att() {}\n#endif\n"
                 "__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n"
                 "int main() { create_att(); k<<<1, 32>>>(nullptr); return 0; }\n"),
}


def _learn(root: Path) -> optional.OptionalCode:
    _, entries, _ = discover([root])
    return optional.learn(optional_inputs(entries))


def audit(path: Path) -> dict:
    return audit_document(audit_paths([path], AuditOptions(scan=Options(audit=True, rocm=(6, 2, 0)))))


def test_a_unit_only_an_optional_makefile_block_builds_is_that_feature():
    read = make_switches.read(MAKE_UNIT["Makefile"].encode())
    assert read.ranges == [(7, 9, "ENABLE_X")]
    # named in the block through NVCC_CUDNN, and elsewhere only by NVCC_CUDNN's own rule and recipe
    assert read.units == {"att": "ENABLE_X"}


def test_a_unit_a_default_rule_names_stays_in_the_default_build():
    text = MAKE_UNIT["Makefile"].replace("train: train.cu $(NVCC_CUDNN)", "train: train.cu att.o")
    assert make_switches.read(text.encode()).units == {}
    # a variable the default build sets is no switch's carrier
    text = MAKE_UNIT["Makefile"].replace("NVCC_CUDNN =\n", "NVCC_CUDNN = att.o\n", 1)
    assert make_switches.read(text.encode()).units == {}


def test_the_optional_unit_and_its_library_leave_the_headline(tmp_path: Path):
    root = write_tree(tmp_path, MAKE_UNIT)
    assert _learn(root).files == {"att.cpp": "ENABLE_X"}
    doc = audit(root)
    cudnn = sorted((i["kind"], i["key"], i["optional"], i["findings"]) for i in doc["estimate"]["items"]
                   if "cudnn" in i["key"].lower())
    # the link and the file's calls are one optional item; nothing of cuDNN in the headline
    assert cudnn == [("dependency", "cudnn", "ENABLE_X", ["Makefile:8", "att.cpp:1", "att.cpp:3", "att.cpp:4", "att.cpp:5"])]
    assert [o["feature"] for o in doc["estimate"]["optional"]] == ["ENABLE_X"]


TRITON = {
    "requirements.txt": "torch\ntriton\n",
    "pkg/__init__.py": "",
    "pkg/norm.py": (
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef _fwd(X, Y, N, BLOCK: tl.constexpr):\n"
        "    cols = tl.arange(0, BLOCK)\n    x = tl.load(X + cols, mask=cols < N)\n"
        "    tl.store(Y + cols, x * 2, mask=cols < N)\n\n\n"
        "@triton.jit\ndef _bwd(DY, DX, N, BLOCK: tl.constexpr):\n"
        "    cols = tl.arange(0, BLOCK)\n    dy = tl.load(DY + cols, mask=cols < N)\n"
        "    tl.store(DX + cols, dy * 2, mask=cols < N)\n\n\n"
        "def double(x: torch.Tensor) -> torch.Tensor:\n    y = torch.empty_like(x)\n"
        "    _fwd[(1,)](x, y, x.numel(), BLOCK=1024)\n    return y\n"),
    "pkg/act.py": (
        "import triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef _relu(X, N, BLOCK: tl.constexpr):\n"
        "    cols = tl.arange(0, BLOCK)\n    x = tl.load(X + cols, mask=cols < N)\n"
        "    tl.store(X + cols, tl.maximum(x, 0), mask=cols < N)\n"),
}


def test_a_triton_kernel_costs_a_kernel_check_not_a_day_of_retuning(tmp_path: Path):
    doc = audit(write_tree(tmp_path, TRITON))
    triton = [(i["key"], i["count"], i["hours"], i["optional"]) for i in doc["estimate"]["items"]
              if i["key"] == "validate_triton_kernel"]
    # 3 kernels in 2 files: the first of each file [0.06, 0.25, 1], norm.py's second at half
    assert triton == [("validate_triton_kernel", 3, {"low": 0.15, "likely": 0.625, "high": 2.5}, "")]


# bitsandbytes at its port's base: <mma.h> included at the top, every WMMA use under
# `#if __CUDA_ARCH__ >= 750`, which the AMD build never takes (its port commented the include out)
WMMA_GUARDED = {
    "gemm.cu": (
        "#include <mma.h>\n#include <cuda_fp16.h>\n"
        "__global__ void gemm(const half *a, const half *b, float *c) {\n"
        "#if __CUDA_ARCH__ >= 750\n"
        "  using namespace nvcuda;\n"
        "  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;\n"
        "  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;\n"
        "  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;\n"
        "  wmma::fill_fragment(fc, 0.0f);\n"
        "  wmma::load_matrix_sync(fa, a, 16);\n  wmma::load_matrix_sync(fb, b, 16);\n"
        "  wmma::mma_sync(fc, fa, fb, fc);\n"
        "  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);\n"
        "#endif\n}\n"),
}


def _wmma(doc: dict) -> list[tuple]:
    return sorted((i["kind"], i["key"], i["optional"], i["findings"][0]) for i in doc["estimate"]["items"]
                  if "wmma" in i["key"].lower())


def test_a_library_used_only_in_nvidia_only_code_is_not_adopted_in_the_headline(tmp_path: Path):
    doc = audit(write_tree(tmp_path, WMMA_GUARDED))
    # the adoption goes with the guarded uses, priced with the NVIDIA-only code; what the AMD build
    # needs is the include dropped or guarded, its own 0.5 h pattern
    assert _wmma(doc) == [("dependency", "wmma", scope.NVIDIA_ONLY, "gemm.cu:1"), ("pattern", "PK401:wmma", "", "gemm.cu:1")]
    assert [o["feature"] for o in doc["estimate"]["optional"]] == [scope.NVIDIA_ONLY]


def test_a_library_used_in_shared_code_is_adopted_in_the_headline(tmp_path: Path):
    unguarded = {"gemm.cu": WMMA_GUARDED["gemm.cu"].replace("#if __CUDA_ARCH__ >= 750\n", "").replace("#endif\n", "")}
    assert _wmma(audit(write_tree(tmp_path, unguarded))) == [("dependency", "wmma", "", "gemm.cu:1")]


def test_a_pytorch_extension_build_costs_what_the_histories_measured(tmp_path: Path):
    ext = {
        "setup.py": ("from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
                     "setup(name='pkg', ext_modules=[CUDAExtension('pkg_cuda', ['csrc/scale.cu'])],\n"
                     "      cmdclass={'build_ext': BuildExtension}, install_requires=['torch'])\n"),
        "csrc/scale.cu": "__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }\n",
    }
    doc = audit(write_tree(tmp_path, ext))
    build = [(i["key"], i["hours"], i["optional"]) for i in doc["estimate"]["items"] if i["key"] == "torch_extension_build"]
    # 0, 1, 2, 2 and 4 build-only commit days in the five extension ports that keep their days
    assert build == [("torch_extension_build", {"low": 0.0, "likely": 12.0, "high": 24.0}, "")]
