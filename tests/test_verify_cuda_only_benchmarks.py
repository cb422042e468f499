"""A unit built on NVBench (gunrock's benchmarks/*_bench.cu, 14 of its 39 units) stopped at
`'nvbench/nvbench.cuh' file not found` unexplained: NVBench was in no table, so audit said nothing
on the line and verify could name no cause. It is a CUDA-only library (mappings/ecosystem.toml,
id nvbench): audit reports PK401 on the #include and verify links the error to it (issue 48)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import REPO, clang19
from portkit.cli.app import main
from portkit.commands.verify import VerifyOptions, verify_tree

CASE = REPO / "fixtures" / "rules" / "PK401" / "nvbench_benchmark.cu"


@pytest.mark.compile
def test_the_nvbench_include_is_explained_by_its_pk401(pack62, tmp_path: Path):
    clang19()
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(CASE, src / "for_bench.cu")
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "--rocm", "6.2", "-q"]) in (0, 1)
    result = verify_tree(out, VerifyOptions(rocm=(6, 2, 0), rocm_headers=str(pack62), download=False, cache=False,
                                            source=src))
    (unit,) = result.units
    assert unit.status == "failed"
    (error,) = unit.errors
    assert (error.rel, error.line, error.message) == ("for_bench.cu", 5, "'nvbench/nvbench.cuh' file not found")
    assert [(f.code, f.line) for f in error.findings] == [("PK401", 5)]
    assert error.source_line == 5
