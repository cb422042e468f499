"""Sites the human AMD ports of PyTorch extensions changed that the audit missed (issue 53,
benchmarks/torch_extensions.py): each case is cut down from the extension's upstream source.

- bitsandbytes' kernels.cu: rows of instantiation macros with no semicolon make tree-sitter's
  root an ERROR node; its own atomicMax(float*, float) (HIP defines one) and its
  `#if __CUDA_ARCH__ >= 750` guards were then not reported (PK012 looked for a translation_unit
  above the definition, PK103 ran on translation_unit roots only).
- pytorch_scatter's atomics.cuh: atomicAdd on a pointer cast to `__half *` (HIP has no 16-bit
  atomicAdd at ROCm 6.2); only a pointer declared as one was seen.
- mamba's reverse_scan.cuh: `CUB_WARP_THREADS(0)`, which hipCUB does not define for AMD.
- mamba's selective-scan launches of 32 threads, whose traits give cub::BlockLoad/BlockStore
  with a warp-transpose algorithm that block size: rocPRIM asserts a multiple of 64 (PK209).
- mamba's reverse_scan.cuh: ThreadReverseScanInclusive returns T and has no return statement,
  which hip-clang's optimiser acts on (PK313); its port added `return inclusive;`.
- apex's layer_norm_cuda_kernel.cu: its host `rsqrt<float>` calls rsqrtf, which HIP declares for
  device code only (PK314); its port defines a __device__ rsqrt(float) for HIP.
- bitsandbytes' kernels.cu: the 32-thread blockwise quantisers its macro rows instantiate
  (`MAKE_kQuantizeBlockwise(half, 64, 2, 0, NF4)`: a block of BLOCK_SIZE/NUM_PER_TH = 32 threads
  for a warp-transpose cub::BlockLoad, PK209), and, for precision, the 32-thread groups of two
  kernels that only split the block (PK201 at info, no fix; its port keeps them).
- pytorch_scatter's version.cpp: `return CUDA_VERSION;`, which torch's hipify writes
  TORCH_HIP_VERSION, defined by no header an extension compiles with (PK104); its port returns
  HIP_VERSION. (The port's include of hip_version.h is not needed: torch's hipify writes
  <cuda.h> as <hip/hip_runtime.h>, which includes it.)
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from cases import load_case
from conftest import REPO
from portkit import rules
from portkit.commands.audit import ScanJob, audit_bytes
from portkit.commands.scan.walk import Options
from portkit.core.tables.mappings import parse_version
from portkit.engine.facts import ProjectFacts
from test_convert_fixtures import convert_case, tree_bytes
from test_rules import RULES_DIR, audit_file, expected

MACRO_ROWS = REPO / "fixtures" / "convert" / "macro_rows_redefined_atomic"
RULE_CASES = [RULES_DIR / "PK001" / "atomic_half_cast_flagged.cu", RULES_DIR / "PK001" / "cub_warp_threads_flagged.cu",
              RULES_DIR / "PK209" / "flagged.cu", RULES_DIR / "PK209" / "clean.cu",
              RULES_DIR / "PK209" / "macro_instantiation_flagged.cu", RULES_DIR / "PK201" / "block_split_groups.cu",
              RULES_DIR / "PK104" / "flagged.cu", RULES_DIR / "PK104" / "clean.cu",
              RULES_DIR / "PK313" / "flagged.cu", RULES_DIR / "PK313" / "clean.cu",
              RULES_DIR / "PK314" / "flagged.cu", RULES_DIR / "PK314" / "clean.cu"]


def test_macro_rows_make_an_error_root():
    """The case is what it says: without this the two tests below prove nothing."""
    from portkit.core import parse
    assert parse.parse((MACRO_ROWS / "input.cu").read_bytes()).root_node.type == "ERROR"


def test_macro_rows_findings():
    path = MACRO_ROWS / "input.cu"
    job = ScanJob(Options(audit=True, rocm=parse_version("6.2")), ProjectFacts(), enabled=rules.selected(None, None))
    scan = audit_bytes("input.cu", path.read_bytes(), "source", job)
    assert sorted((f.line, f.code, f.severity) for f in scan.findings) == [
        (1, "PK005", "info"), (6, "PK012", "info"), (17, "PK103", "medium")]


def test_macro_rows_golden(tmp_path: Path):
    """convert puts the redefinition under `#if !defined(__HIP_PLATFORM_AMD__)`, as in a file
    tree-sitter parses whole."""
    case = load_case(MACRO_ROWS)
    assert tree_bytes(convert_case(case, tmp_path / "out")) == tree_bytes(case.expected)


@pytest.mark.parametrize("path", RULE_CASES, ids=[f"{p.parent.name}/{p.name}" for p in RULE_CASES])
def test_rule_case(path: Path):
    scan = audit_file(path)
    assert Counter((f.line, f.code) for f in scan.findings) == expected(path)


def test_a_line_verdict_wins_over_the_files_in_the_benchmark():
    """bitsandbytes' kernels.cu holds PK201s of three kinds: a verdict may name its line."""
    from test_torch_extensions_bench import tx   # the benchmark module, loaded once
    finding = {"path": "csrc/kernels.cu", "line": 2570, "code": "PK201", "severity": "high"}
    other = {**finding, "line": 531}
    s = tx.score("bitsandbytes", {}, [finding, other])
    assert [(f["line"], f["checked"][0]) for f in s.candidates] == [(2570, False), (531, True)]


def test_groups_that_only_split_the_block_are_info_without_a_fix():
    """The kernels that share data by __shared__ memory and __syncthreads and do nothing at warp
    level are info; beside a shuffle, a warp-size constant or a call out of the file, high."""
    scan = audit_file(RULES_DIR / "PK201" / "block_split_groups.cu", select=frozenset({"PK201"}))
    assert [(f.line, f.severity, bool(f.autofix)) for f in scan.findings] == [
        (17, "info", False), (18, "info", False), (19, "info", False),
        (39, "info", False), (40, "info", False), (41, "info", False),
        (61, "high", True), (70, "high", True), (74, "high", True), (85, "high", True), (86, "high", True)]


def test_the_cuda_version_as_a_value_says_what_torch_writes():
    """In a source torch hipifies, CUDA_VERSION becomes TORCH_HIP_VERSION; the other names have no
    HIP spelling at all; the CUDA line of a vendor split is info."""
    scan = audit_file(RULES_DIR / "PK104" / "flagged.cu", select=frozenset({"PK104"}))
    assert [(f.line, f.severity, "TORCH_HIP_VERSION" in f.message) for f in scan.findings] == [
        (11, "medium", True), (15, "medium", False), (24, "info", True), (29, "medium", True),
        (35, "medium", False), (35, "medium", False)]
