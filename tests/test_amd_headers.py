"""engine/platform/amd_headers.py: a header only AMD branches include is AMD code as a whole (anthonix/llm.c's
llmc/amd_common.cuh, included from `#ifdef BUILD_AMD` in cuda_common.h)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_tree
from portkit.cli.app import main

COMMON = ("#ifndef COMMON_H\n#define COMMON_H\n#ifdef BUILD_AMD\n#include <hip/hip_runtime.h>\n"
          "#include \"llmc/amd_common.cuh\"\n#else\n#include <cuda_runtime.h>\n#endif\n#endif\n")
AMD_COMMON = ("#pragma once\n#include <hip/hip_fp16.h>\n"
              "#define __stcs(ptr, val) patched_stcs(ptr, val)\n"
              "static __device__ __forceinline__ void patched_stcs(float *addr, float val) {\n"
              "    __builtin_nontemporal_store(val, addr);\n}\n"
              "template <typename T>\n"
              "static __device__ __forceinline__ T __shfl_xor_sync(unsigned mask, T var, int lane, int width = warpSize) {\n"
              "    return __shfl_xor(var, lane, width);\n}\n")
KERNEL = ("#include \"llmc/common.h\"\n"
          "__global__ void k(float *o, float v) { __stcs(o + threadIdx.x, __shfl_xor_sync(0xffffffff, v, 1)); }\n")


def _findings(root: Path, capsys) -> tuple[list[tuple[str, str, int]], int]:
    assert main(["audit", str(root), "--rocm", "6.2", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    return [(f["code"], f["path"], f["line"]) for f in doc["findings"]], doc["summary"]["platforms"]["refs_already_ported"]


def test_a_header_only_amd_branches_include_is_amd_code_and_what_it_defines_is_ported(tmp_path: Path, capsys):
    """Before: PK004/PK101 on the port's own __shfl_xor_sync in amd_common.cuh, and PK001 on every
    `__stcs` of the shared kernel, which the header defines for AMD (anthonix/llm.c: 53 -> 31 h)."""
    root = write_tree(tmp_path / "port", {"llmc/common.h": COMMON, "llmc/amd_common.cuh": AMD_COMMON, "k.cu": KERNEL})
    assert _findings(root, capsys) == ([("PK203", "k.cu", 2)], 5)


def test_a_header_the_shared_code_includes_too_stays_shared(tmp_path: Path, capsys):
    """Shared code includes the header too, so it is no AMD code and what it uses of CUDA is reported;
    line 8 defines the port's own __shfl_xor_sync template, a declarator, not a use of CUDA's, so no
    PK004 there (since b9aef28), while its body's mask-less __shfl_xor (line 9) stays PK101."""
    both = COMMON.replace("#endif\n#endif\n", "#endif\n#include \"llmc/amd_common.cuh\"\n#endif\n")
    root = write_tree(tmp_path / "mixed", {"llmc/common.h": both, "llmc/amd_common.cuh": AMD_COMMON, "k.cu": KERNEL})
    assert _findings(root, capsys) == ([("PK001", "k.cu", 2), ("PK203", "k.cu", 2), ("PK001", "llmc/amd_common.cuh", 3),
                                        ("PK101", "llmc/amd_common.cuh", 9)], 0)
