"""engine/platform/facts.py: which macros a tree's directives teach as AMD selectors. HIP inside a nested
#if that chooses the platform itself, and HIP in a header only AMD branches include, teach nothing
about the enclosing feature macro (anthonix/llm.c's MULTI_GPU, found auditing the AMD port)."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree
from portkit.cli.app import main
from portkit.engine.context import Options
from portkit.engine.platform.facts import learn
from portkit.project import pipeline

ZERO = (b"#ifdef MULTI_GPU\n#ifdef BUILD_AMD\n#include <rccl/rccl.h>\n#else\n#include <nccl.h>\n#endif\n"
        b"#endif\n")


def test_hip_in_a_nested_platform_choice_teaches_that_choice_only():
    assert learn(ZERO).learned == {"BUILD_AMD"}


def test_hip_of_the_branch_itself_or_in_a_nested_if_that_chooses_nothing_still_teaches_the_branch():
    beside = ZERO.replace(b"#endif\n#endif\n", b"#endif\nhipDeviceSynchronize();\n#endif\n")
    assert learn(beside).learned == {"MULTI_GPU", "BUILD_AMD"}
    versioned = b"#ifdef USE_HIPX\n#if HIPX_VERSION >= 5\n#include <hip/hip_fp16.h>\n#endif\n#endif\n"
    assert learn(versioned).learned == {"USE_HIPX"}
    after_else = ZERO.replace(b"#include <nccl.h>\n#endif\n#endif\n",
                              b"#include <nccl.h>\n#endif\n#elif defined(OTHER)\n#include <hip/hip_runtime.h>\n#endif\n")
    assert learn(after_else).learned == {"BUILD_AMD", "OTHER"}


COMMON = ("#pragma once\n#ifdef BUILD_AMD\n#include <hip/hip_runtime.h>\n#include \"amd_common.cuh\"\n"
          "#else\n#include <cuda_runtime.h>\n#endif\n")
AMD_COMMON = "#pragma once\n#include <hip/hip_runtime.h>\n#ifdef MULTI_GPU\n#include <rccl/rccl.h>\n#endif\n"
TRAIN = ("#include \"common.h\"\nvoid step(float *d, const float *h) {\n#ifdef MULTI_GPU\n"
         "    cudaMemcpy(d, h, 4, cudaMemcpyHostToDevice);\n#endif\n}\n")


def test_an_amd_only_headers_ifs_teach_no_selector_and_the_shared_feature_code_converts(tmp_path: Path):
    """Before: MULTI_GPU was an AMD selector (amd_common.cuh's #ifdef around rccl), so train.cu's
    multi-GPU code read as AMD's, and convert left its cudaMemcpy."""
    root = write_tree(tmp_path / "port", {"common.h": COMMON, "amd_common.cuh": AMD_COMMON, "train.cu": TRAIN})
    facts = pipeline.prepare([root], Options()).facts
    assert (facts.amd_macros, facts.amd_files) == (("BUILD_AMD",), frozenset({"amd_common.cuh"}))
    assert main(["convert", str(root), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert (tmp_path / "out" / "train.cu").read_bytes() == (
        b"\n#include <hip/hip_runtime.h>\n#include \"common.h\"\nvoid step(float *d, const float *h) {\n#ifdef MULTI_GPU\n"
        b"    hipMemcpy(d, h, 4, hipMemcpyHostToDevice);\n#endif\n}\n")
