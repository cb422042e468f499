"""Every convert mode on real temporary trees, through the real command line."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from portkit.cli.app import main

CUDA = b"""#include <cuda_runtime.h>
__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }
int main() {
  float* d = nullptr;
  cudaMalloc(&d, 64 * sizeof(float));
  scale<<<1, 64>>>(d, 2.0f);
  cudaDeviceSynchronize();
  cudaFree(d);
  return 0;
}
"""
HIP = CUDA.replace(b"cuda_runtime.h", b"hip/hip_runtime.h").replace(b"cudaMalloc", b"hipMalloc") \
    .replace(b"cudaDeviceSynchronize", b"hipDeviceSynchronize").replace(b"cudaFree", b"hipFree")
PLAIN = b"// no CUDA here: cudaMalloc in a comment\nint add(int a, int b) { return a + b; }\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.cu").write_bytes(CUDA)
    (src / "b.cpp").write_bytes(PLAIN)
    (src / "notes.txt").write_bytes(b"cudaMalloc is mentioned here\n")
    (src / "sub" / "c.cuh").write_bytes(b"#pragma once\n__device__ inline float sq(float v) { return v * v; }\n")
    return src


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_output_mirrors_the_tree(tree: Path, tmp_path: Path, capsys):
    out = tmp_path / "out"
    assert main(["convert", str(tree), "-o", str(out)]) == 0
    got = files(out)
    assert sorted(got) == ["a.cu", "b.cpp", "notes.txt", "sub/c.cuh"]
    assert got["a.cu"] == HIP
    assert got["b.cpp"] == PLAIN
    assert got["notes.txt"] == b"cudaMalloc is mentioned here\n"
    assert got["sub/c.cuh"] == b"#pragma once\n#include <hip/hip_runtime.h>\n\n__device__ inline float sq(float v) { return v * v; }\n"
    assert files(tree)["a.cu"] == CUDA  # the input is untouched
    summary = capsys.readouterr().out
    assert "3 files scanned (14 lines), 2 changed, 0 partially parsed, 0 skipped" in summary
    assert "CUDA references: 4 found, 4 converted, 0 left (100.0% converted)" in summary


def test_in_place_with_backup_keeps_mode_and_first_original(tree: Path):
    target = tree / "a.cu"
    os.chmod(target, 0o751)
    assert main(["convert", str(tree), "--in-place", "--backup", "-q"]) == 0
    assert target.read_bytes() == HIP
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert (tree / "a.cu.orig").read_bytes() == CUDA
    assert not (tree / "b.cpp.orig").exists()  # unchanged files are not rewritten
    changed = CUDA.replace(b"64 *", b"32 *")
    target.write_bytes(changed)
    # the real original survives a second run, and the new content is not converted without a backup
    assert main(["convert", str(tree), "--in-place", "--backup", "-q"]) == 2
    assert (tree / "a.cu.orig").read_bytes() == CUDA
    assert target.read_bytes() == changed
    assert not [p for p in tree.rglob("*portkit-tmp*")]


def test_diff_prints_and_writes_nothing(tree: Path, capsys):
    before = files(tree)
    assert main(["convert", str(tree / "a.cu"), "--diff"]) == 0
    captured = capsys.readouterr()
    assert files(tree) == before
    assert captured.out.startswith("--- a/a.cu\n+++ b/a.cu\n@@ -1,10 +1,10 @@\n-#include <cuda_runtime.h>\n+#include <hip/hip_runtime.h>\n")
    assert "-  cudaDeviceSynchronize();\n-  cudaFree(d);\n+  hipDeviceSynchronize();\n+  hipFree(d);\n" in captured.out
    assert "portkit convert" in captured.err  # the summary stays off stdout


def test_check_exit_codes(tree: Path, tmp_path: Path):
    assert main(["convert", str(tree), "--check", "-q"]) == 1
    out = tmp_path / "out"
    assert main(["convert", str(tree), "-o", str(out), "-q"]) == 0
    assert main(["convert", str(out), "--check", "-q"]) == 0


def test_stdout_output_for_one_file(tree: Path, capfdbinary):
    assert main(["convert", str(tree / "a.cu"), "-o", "-", "-q"]) == 0
    assert capfdbinary.readouterr().out == HIP


def test_jobs_give_identical_output(tree: Path, tmp_path: Path):
    for i in range(8):
        (tree / f"k{i}.cu").write_bytes(CUDA.replace(b"scale", f"scale{i}".encode()))
    assert main(["convert", str(tree), "-o", str(tmp_path / "one"), "-q"]) == 0
    assert main(["convert", str(tree), "-o", str(tmp_path / "two"), "-q", "--jobs", "2"]) == 0
    assert files(tmp_path / "one") == files(tmp_path / "two")


@pytest.mark.parametrize("args, message", [
    (["missing.cu", "--check"], "portkit: error: missing.cu: no such file or directory\n"),
    (["{src}", "-o", "{src}/out"], "portkit: error: {src}/out: the output directory is inside the input tree {src}; choose a directory outside it\n"),
    (["{src}", "-o", "{tmp}/o", "--in-place"], "portkit: error: -o/--output and --in-place cannot be used together\n"),
    (["{src}"], "portkit: error: choose an output: -o OUT, --in-place, --diff or --check\n"),
    (["{src}", "--check", "--rocm", "five"], "portkit: error: --rocm: not a version: 'five' (expected X.Y or X.Y.Z)\n"),
    (["{src}", "--check", "--backup"], "portkit: error: --backup only applies with --in-place\n"),
    (["{src}", "-o", "-"], "portkit: error: -o - (standard output) takes exactly one input file\n"),
])
def test_bad_input_is_one_line_and_exit_2(tree: Path, tmp_path: Path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    fill = {"src": str(tree), "tmp": str(tmp_path)}
    assert main(["convert"] + [a.format(**fill) for a in args]) == 2
    captured = capsys.readouterr()
    assert captured.err == message.format(**fill)


def test_binary_file_is_skipped_with_a_note(tree: Path, tmp_path: Path, capsys):
    (tree / "blob.cu").write_bytes(b"\x7fELF\0\0cudaMalloc\0")
    assert main(["convert", str(tree), "-o", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "blob.cu").read_bytes() == b"\x7fELF\0\0cudaMalloc\0"
    assert "blob.cu: binary file: not converted" in capsys.readouterr().out


def test_unreadable_file_is_reported_and_the_run_continues(tree: Path, tmp_path: Path, capsys, monkeypatch):
    import portkit.core.files
    real = portkit.core.files.read_regular

    def read_regular(path, follow=False):
        if path.name == "b.cpp":
            raise PermissionError(13, "Permission denied")
        return real(path, follow)
    monkeypatch.setattr(portkit.core.files, "read_regular", read_regular)
    assert main(["convert", str(tree), "-o", str(tmp_path / "out")]) == 2
    assert (tmp_path / "out" / "a.cu").read_bytes() == HIP
    assert "error: b.cpp: cannot read: Permission denied" in capsys.readouterr().out


def test_left_references_are_listed_with_file_and_line(tmp_path: Path, capsys):
    src = tmp_path / "limit.cu"
    src.write_bytes(b"#include <cuda_runtime.h>\nvoid f() {\n  cudaDeviceSetLimit(cudaLimitStackSize, 4096);\n}\n")
    assert main(["convert", str(src), "--check", "--rocm", "5.2"]) == 1
    out = capsys.readouterr().out
    assert ("limit.cu:3:3: PK002 cudaDeviceSetLimit -> hipDeviceSetLimit needs ROCm 5.3, "
            "the target is ROCm 5.2") in out


def test_no_traceback_from_the_installed_command(tmp_path: Path):
    proc = subprocess.run([sys.executable, "-m", "portkit", "convert", str(tmp_path / "nope"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr == f"portkit: error: {tmp_path / 'nope'}: no such file or directory\n"
