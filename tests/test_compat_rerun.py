"""--compat-header run again over its own output (issue 56): nothing changes and --check passes.

The first run writes a header of `#define cudaName hipName` lines and guards each CUDA #include.
Read back, that header passed for the project's own shim (its names "already ported", so the
second run mapped none), and the guarded includes, now NVIDIA's branch of an #if, gave no HIP
header: the second run would rewrite the header and --check exited 1. On fixtures/convert, 53 of
84 inputs were so at 88726b2 (ROCm 6.2), llm.c, cuCollections, nccl-tests and tiny-cuda-nn too.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import REPO
from portkit.cli.app import main

CASES = {
    "cmake_project": (REPO / "fixtures" / "build" / "cmake_project" / "input", "src/portkit_hip_compat.h"),
    "cmake_tcnn": (REPO / "fixtures" / "compat" / "cmake_tcnn" / "input", "include/tcnn/portkit_hip_compat.h"),
}
SUMMARY = re.compile(r"(\d+) CUDA names and (\d+) headers mapped")


def tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def compat(root: Path, header: str, rocm: str, mode: str, capsys) -> tuple[int, tuple[str, str]]:
    """One run; its exit code and the summary's (names, headers) counts."""
    code = main(["convert", str(root), "--compat-header", str(root / header), mode, "--rocm", rocm])
    captured = capsys.readouterr()
    return code, SUMMARY.search(captured.out + captured.err).groups()


@pytest.mark.parametrize("rocm", ["5.2", "6.2"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_second_run_writes_the_same_bytes_and_check_passes(tmp_path: Path, capsys, case: str, rocm: str):
    source, header = CASES[case]
    root = tmp_path / case
    shutil.copytree(source, root)
    code, counts = compat(root, header, rocm, "--in-place", capsys)
    assert code == 0
    first = tree(root)
    assert first != tree(source) and first[header].count(b"\n#define cuda") >= 8   # a header worth reading back
    assert compat(root, header, rocm, "--check", capsys) == (0, counts)
    assert compat(root, header, rocm, "--in-place", capsys) == (0, counts)
    assert tree(root) == first


def test_the_guarded_includes_give_their_hip_headers_again(tmp_path: Path, capsys):
    """The header deleted after the first run comes back with the same bytes: cmake_project's
    <curand.h>, guarded by then, still gives <hiprand/hiprand.h>."""
    source, header = CASES["cmake_project"]
    root = tmp_path / "project"
    shutil.copytree(source, root)
    assert compat(root, header, "6.2", "--in-place", capsys) == (0, ("20", "2"))
    first = (root / header).read_bytes()
    assert b"#include <hiprand/hiprand.h>\n" in first
    (root / header).unlink()
    assert compat(root, header, "6.2", "--in-place", capsys) == (0, ("20", "2"))
    assert (root / header).read_bytes() == first
