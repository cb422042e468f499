"""Issue 53: a build branch is not an AMD implementation. "Already builds for AMD" needs evidence
about the code: AMD sources of its own, the HIP API in its sources (an AMD #if branch, a shim
header), or, for a setup.py whose torch hipifies the sources at build time, nothing above low left
for a person. Otherwise the audit says what the branch lacks, in text, JSON and HTML."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_tree
from portkit.api import audit_paths
from portkit.cli.app import main

# an extension's setup.py whose ROCm branch only adds a macro (issue 53's case)
SETUP = ("import torch\nfrom setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension, BuildExtension\n"
         "macros = []\nif torch.version.hip:\n    macros.append(('USE_ROCM', None))\n"
         "setup(name='ext', ext_modules=[CUDAExtension('ext', ['csrc/k.cu'], define_macros=macros)],\n"
         "      cmdclass={'build_ext': BuildExtension})\n")
# two constructs torch's hipify cannot make compile: labeled_partition (PK001), std::array::at (PK310)
BROKEN = ("#include <array>\n#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
          "__global__ void k(float* out, const int* labels) {\n"
          "    auto part = cg::labeled_partition(cg::coalesced_threads(), labels[threadIdx.x]);\n"
          "    std::array<float, 2> w{1.0f, 2.0f};\n"
          "    out[threadIdx.x] = w.at(threadIdx.x & 1) * part.size();\n}\n")
PLAIN = ("#include <cuda_runtime.h>\n__global__ void k(float* out) { out[threadIdx.x] *= 2.0f; }\n"
         "void run(float* out, cudaStream_t s) { k<<<1, 64, 0, s>>>(out); cudaStreamSynchronize(s); }\n")
CMAKE = ("cmake_minimum_required(VERSION 3.21)\nproject(demo LANGUAGES CXX CUDA)\nif(DEMO_HIP)\n"
         "  enable_language(HIP)\n  add_compile_definitions(DEMO_USE_HIP)\nendif()\nadd_library(demo src/k.cu)\n")
MAKE = ("NVCC ?= nvcc\nHIPCC ?= hipcc\nall: k.o\nk.o: k.cu\n\t$(NVCC) -c k.cu -o k.o\n"
        "hip: k.cu\n\t$(HIPCC) -x hip -DUSE_HIP -c k.cu -o k_hip.o\n")


def _platforms(doc: dict) -> tuple:
    p = doc["summary"]["platforms"]
    return p["builds_for_amd"], p["amd_branch_only"], p["amd_branch_unbuilt"]


def test_a_setup_py_branch_that_adds_a_macro_is_not_an_amd_build(tmp_path: Path):
    root = write_tree(tmp_path / "ext", {"setup.py": SETUP, "csrc/k.cu": BROKEN})
    doc = audit_paths([root])
    assert sorted((f["path"], f["line"], f["code"]) for f in doc["findings"] if f["severity"] not in ("info", "low")) == [
        ("csrc/k.cu", 5, "PK001"), ("csrc/k.cu", 7, "PK310"), ("setup.py", 7, "PK506")]
    assert _platforms(doc) == (False, True, 2)
    text = tmp_path / "audit.txt"
    main(["audit", str(root), "-o", str(text), "--html", str(tmp_path / "a.html")])
    want = ("Not yet built for AMD: the build has an AMD branch (setup.py:5: if torch.version.hip:); "
            "2 constructs in its sources do not compile for AMD. The estimate prices the port.")
    assert want in " ".join(text.read_text().split())
    assert "Already builds for AMD" not in text.read_text()
    assert "2 constructs in its sources do not compile for AMD" in (tmp_path / "a.html").read_text()


def test_the_same_branch_over_sources_hipify_converts_builds_for_amd(tmp_path: Path):
    doc = audit_paths([write_tree(tmp_path, {"setup.py": SETUP, "csrc/k.cu": PLAIN})])
    assert _platforms(doc) == (True, False, 0)


def test_cmake_and_make_hip_branches_over_cuda_only_sources_are_not_amd_builds(tmp_path: Path):
    for name, build, source in (("cm", "CMakeLists.txt", "src/k.cu"), ("mk", "Makefile", "k.cu")):
        doc = audit_paths([write_tree(tmp_path / name, {build: CMAKE if build == "CMakeLists.txt" else MAKE,
                                                        source: PLAIN})])
        assert _platforms(doc) == (False, True, 0), name
        shim = {build: CMAKE if build == "CMakeLists.txt" else MAKE, source: "#include \"common.h\"\n" + PLAIN,
                source.replace("k.cu", "common.h"): "#pragma once\n#ifdef DEMO_USE_HIP\n#include <hip/hip_runtime.h>\n"
                "#define cudaStream_t hipStream_t\n#define cudaStreamSynchronize hipStreamSynchronize\n#else\n"
                "#include <cuda_runtime.h>\n#endif\n"}
        ported = audit_paths([write_tree(tmp_path / (name + "_hip"), shim)])
        assert _platforms(ported) == (True, False, 0), name
