"""Issue 46, defects 4, 7, 9 and 10: what portkit writes is consistent, stays in the tree, fits the
file system's names, and never loses a hook.

--rename never writes a reference to a name that was not written (a file skipped before, during or
after the scan keeps its name, and so does every #include and build-file line naming it); every
path portkit writes is checked with its links resolved (--compat-header, -o); a legal 253- or
255-byte file name converts (the temporary name is cut to fit); `hook install --force` never
replaces a kept hook.
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

import portkit.commands.convert
import portkit.commands.inplace
import portkit.core.output
from conftest import require_tool
from portkit.cli.app import main

A_CU = b'#include "b.cuh"\n#include <cuda_runtime.h>\nvoid f(float **p) { cudaMalloc(p, 64); }\n'
A_HIP_KEPT = b'#include "b.cuh"\n#include <hip/hip_runtime.h>\nvoid f(float **p) { hipMalloc(p, 64); }\n'
A_HIP_RENAMED = A_HIP_KEPT.replace(b'"b.cuh"', b'"b.hip.h"')
B_CUH = b"#pragma once\n#include <cuda_runtime.h>\ninline void g() { cudaDeviceReset(); }\n"
B_HIP = b"#pragma once\n#include <hip/hip_runtime.h>\ninline void g() { hipDeviceReset(); }\n"
CMAKE = b"add_library(x a.cu b.cuh)\n"
CMAKE_KEPT = b"add_library(x a.hip b.cuh)\nset_source_files_properties(a.hip PROPERTIES LANGUAGE HIP)\n"
CHANGED = "changed on disk during the conversion; not rewritten (run portkit convert again)"
CUDA = b"#include <cuda_runtime.h>\nvoid f(float **p) { cudaMalloc(p, 64); cudaFree(*p); }\n"
HIP = b"#include <hip/hip_runtime.h>\nvoid f(float **p) { hipMalloc(p, 64); hipFree(*p); }\n"


@pytest.fixture
def src(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    root.mkdir()
    (root / "a.cu").write_bytes(A_CU)
    (root / "b.cuh").write_bytes(B_CUH)
    return root


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def convert(src: Path, mode: str, tmp_path: Path, *more: str) -> tuple[int, Path]:
    """convert --rename -q in `mode`; the folder the result is in."""
    if mode == "in-place":
        return main(["convert", str(src), "--in-place", "--rename", "-q", *more]), src
    return main(["convert", str(src), "-o", str(tmp_path / "out"), "--rename", "-q", *more]), tmp_path / "out"


# --- defect 4: --rename never writes a reference to a name that was not written ---------------------

def test_a_read_only_header_keeps_its_name_and_so_do_its_includes(src: Path, capsys):
    (src / "b.cuh").chmod(0o444)   # a mode that grants writing to nobody: refused for root too
    assert main(["convert", str(src), "--in-place", "--rename"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  b.cuh: read-only: not rewritten (make it writable, or convert with --force)" in out
    assert names(src) == ["a.hip", "b.cuh"]
    assert (src / "a.hip").read_bytes() == A_HIP_KEPT
    assert (src / "b.cuh").read_bytes() == B_CUH


@pytest.mark.parametrize("mode", ["in-place", "output"])
@pytest.mark.parametrize("header", [b"x\0y cudaMalloc\n", b"\xff\xfe#\0i\0"], ids=["binary", "utf-16"])
def test_a_header_the_scan_skips_keeps_its_name_and_so_do_its_includes(src: Path, tmp_path: Path, capsys,
                                                                      mode: str, header: bytes):
    (src / "b.cuh").write_bytes(header)
    (src / "CMakeLists.txt").write_bytes(CMAKE)
    code, where = convert(src, mode, tmp_path)
    assert (code, capsys.readouterr().err) == (0, "")   # a note, as without --rename
    assert names(where) == ["CMakeLists.txt", "a.hip", "b.cuh"]
    assert (where / "a.hip").read_bytes() == A_HIP_KEPT
    assert (where / "b.cuh").read_bytes() == header
    assert (where / "CMakeLists.txt").read_bytes() == CMAKE_KEPT


@pytest.mark.parametrize("mode", ["in-place", "output"])
def test_a_header_that_fails_to_convert_keeps_its_name_and_so_do_its_includes(src: Path, tmp_path: Path, capsys,
                                                                             monkeypatch, mode: str):
    real = portkit.commands.convert._convert_data

    def converting(entry, data, job):
        if entry.rel == "b.cuh":
            raise RecursionError
        return real(entry, data, job)
    monkeypatch.setattr(portkit.commands.convert, "_convert_data", converting)
    code, where = convert(src, mode, tmp_path)
    assert (code, capsys.readouterr().err) == (2, "portkit: b.cuh: nested too deeply to convert: left as it is\n")
    assert names(where) == ["a.hip", "b.cuh"]
    assert (where / "a.hip").read_bytes() == A_HIP_KEPT
    assert (where / "b.cuh").read_bytes() == B_CUH


def test_a_named_link_is_refused_and_its_includes_keep_its_name(src: Path, tmp_path: Path, capsys):
    real = tmp_path / "real.cuh"
    (src / "b.cuh").rename(real)
    (src / "b.cuh").symlink_to(real)
    assert main(["convert", str(src / "a.cu"), str(src / "b.cuh"), "--in-place", "--rename", "-q"]) == 2
    assert capsys.readouterr().err == "portkit: b.cuh: a symbolic link is not renamed; rename its target instead\n"
    assert names(src) == ["a.hip", "b.cuh"]
    assert (src / "a.hip").read_bytes() == A_HIP_KEPT
    assert os.readlink(src / "b.cuh") == str(real) and real.read_bytes() == B_CUH


def test_a_header_edited_during_the_run_keeps_its_name_and_a_written_include_is_put_back(src: Path, capsys,
                                                                                        monkeypatch):
    """a.cu is renamed and written first, naming b.hip.h; b.cuh, saved by an editor meanwhile, is
    not written: a.hip is written again naming b.cuh, and the build file, written after, names it."""
    (src / "CMakeLists.txt").write_bytes(CMAKE)
    edited = b"// saved by an editor during the run\n" + B_CUH
    real = portkit.commands.convert._convert_data

    def converting(entry, data, job):
        converted = real(entry, data, job)
        if entry.rel == "b.cuh" and data == B_CUH:
            entry.path.write_bytes(edited)
        return converted
    monkeypatch.setattr(portkit.commands.convert, "_convert_data", converting)
    assert main(["convert", str(src), "--in-place", "--rename", "-q"]) == 2
    assert capsys.readouterr().err == f"portkit: b.cuh: {CHANGED}\n"
    assert names(src) == ["CMakeLists.txt", "a.hip", "b.cuh"]
    assert (src / "a.hip").read_bytes() == A_HIP_KEPT
    assert (src / "b.cuh").read_bytes() == edited
    assert (src / "CMakeLists.txt").read_bytes() == CMAKE_KEPT


def test_a_header_whose_write_fails_keeps_its_name_and_so_do_its_includes(src: Path, capsys, monkeypatch):
    real = portkit.commands.inplace.replace_unchanged

    def replacing(target, data, path, expected):
        if target.name == "b.hip.h":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(target, data, path, expected)
    monkeypatch.setattr(portkit.commands.inplace, "replace_unchanged", replacing)
    assert main(["convert", str(src), "--in-place", "--rename", "-q"]) == 2
    assert capsys.readouterr().err == "portkit: b.cuh: cannot write: No space left on device\n"
    assert names(src) == ["a.hip", "b.cuh"]
    assert (src / "a.hip").read_bytes() == A_HIP_KEPT
    assert (src / "b.cuh").read_bytes() == B_CUH


def test_a_header_the_configuration_excludes_is_the_one_beside_its_includer(tmp_path: Path, capsys, monkeypatch):
    """x/a.cu includes x/b.cuh, which is excluded (kept as it is); y/b.cuh, renamed, has the same
    name: the include still names x/b.cuh, the file the compiler finds."""
    for folder in ("x", "y"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "b.cuh").write_bytes(B_CUH)
    (tmp_path / "x" / "a.cu").write_bytes(A_CU)
    (tmp_path / "pyproject.toml").write_text('[tool.portkit]\nexclude = ["x/b.cuh"]\n')
    monkeypatch.chdir(tmp_path)
    assert main(["convert", ".", "--in-place", "--rename", "-q"]) == 0
    assert (names(tmp_path / "x"), names(tmp_path / "y")) == (["a.hip", "b.cuh"], ["b.hip.h"])
    assert (tmp_path / "x" / "a.hip").read_bytes() == A_HIP_KEPT
    assert (tmp_path / "y" / "b.hip.h").read_bytes() == B_HIP


@pytest.mark.parametrize("mode", ["in-place", "output"])
def test_a_new_name_too_long_for_the_file_system_is_not_taken(src: Path, tmp_path: Path, capsys, mode: str):
    long = "b" * 250 + ".cuh"                      # 254 bytes; as .hip.h 256, one more than a name may have
    (src / "b.cuh").rename(src / long)
    (src / "a.cu").write_bytes(A_CU.replace(b"b.cuh", long.encode()))
    code, where = convert(src, mode, tmp_path)
    assert (code, capsys.readouterr().err) == (0, "")
    assert names(where) == ["a.hip", long]
    assert (where / "a.hip").read_bytes() == A_HIP_KEPT.replace(b"b.cuh", long.encode())
    assert (where / long).read_bytes() == B_HIP


def test_in_place_rename_with_diff_prints_the_diff_and_writes_every_file(src: Path, capsys):
    assert main(["convert", str(src), "--in-place", "--rename", "--diff", "-q"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('--- a/a.cu\n+++ b/a.hip\n@@ -1,3 +1,3 @@\n-#include "b.cuh"\n')
    assert "--- a/b.cuh\n+++ b/b.hip.h\n" in out
    assert names(src) == ["a.hip", "b.hip.h"]
    assert (src / "a.hip").read_bytes() == A_HIP_RENAMED and (src / "b.hip.h").read_bytes() == B_HIP


# --- defect 7: every path portkit writes is checked with its links resolved -------------------------

def test_compat_header_through_a_linked_folder_is_refused(tmp_path: Path, capsys):
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    tree.mkdir()
    outside.mkdir()
    (tree / "k.cu").write_bytes(CUDA)
    (tree / "inc").symlink_to(outside, target_is_directory=True)
    header = tree / "inc" / "compat.h"
    assert main(["convert", str(tree), "--compat-header", str(header), "--in-place", "-q"]) == 2
    assert capsys.readouterr().err == (
        f"portkit: error: {header}: would be written outside {tree} (its folder is {outside}, through a symbolic "
        f"link); not written (choose another --compat-header)\n")
    assert list(outside.iterdir()) == [] and (tree / "k.cu").read_bytes() == CUDA


def test_compat_header_that_is_a_link_is_refused(tmp_path: Path, capsys):
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    tree.mkdir()
    outside.mkdir()
    (tree / "k.cu").write_bytes(CUDA)
    (tree / "compat.h").symlink_to(outside / "compat.h")   # dangling: nothing says it is not portkit's
    assert main(["convert", str(tree), "--compat-header", str(tree / "compat.h"), "--in-place", "-q"]) == 2
    assert capsys.readouterr().err == (
        f"portkit: error: {tree / 'compat.h'}: is a symbolic link; a generated file is never written through or "
        f"over one (choose another --compat-header)\n")
    assert list(outside.iterdir()) == [] and (tree / "k.cu").read_bytes() == CUDA


def test_output_file_that_is_a_link_is_refused(tmp_path: Path, capsys):
    tree, out = tmp_path / "tree", tmp_path / "out"
    tree.mkdir()
    out.mkdir()
    (tree / "k.cu").write_bytes(CUDA)
    (out / "mine.cu").write_bytes(b"// the user's\n")
    (out / "k.cu").symlink_to(out / "mine.cu")
    assert main(["convert", str(tree), "-o", str(out), "-q"]) == 2
    assert capsys.readouterr().err == (
        f"portkit: error: {out / 'k.cu'}: is a symbolic link; a generated file is never written through or over "
        f"one (stopped: choose an output directory without links out of it)\n")
    assert os.readlink(out / "k.cu") == str(out / "mine.cu") and (out / "mine.cu").read_bytes() == b"// the user's\n"


# --- defect 9: a legal long file name converts --------------------------------------------------------

@pytest.mark.parametrize("length", [253, 255])
@pytest.mark.parametrize("mode", ["in-place", "output"])
def test_a_file_name_of_253_or_255_bytes_converts(tmp_path: Path, capsys, length: int, mode: str):
    tree = tmp_path / "tree"
    tree.mkdir()
    name = "k" * (length - 3) + ".cu"
    (tree / name).write_bytes(CUDA)
    args = ["--in-place"] if mode == "in-place" else ["-o", str(tmp_path / "out")]
    assert main(["convert", str(tree), *args, "-q"]) == 0
    assert capsys.readouterr().err == ""
    where = tree if mode == "in-place" else tmp_path / "out"
    assert names(where) == [name] and (where / name).read_bytes() == HIP


@pytest.mark.parametrize("name", ["k" * 255, "é" * 127 + "k", "a\nb.cu", "a.cu\n"])
def test_temporary_names_fit_and_are_recognised(name: str):
    made = portkit.core.output.temp_name(name, "0123abcd")
    assert len(os.fsencode(made)) <= 255 and portkit.core.output.is_temp_name(made)
    assert made.startswith("." + name[:20])


def test_a_stale_temporary_file_with_a_line_break_in_its_name_is_swept(tmp_path: Path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "k.cu").write_bytes(CUDA)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tree / f".a\nb.cu.portkit-tmp-{dead.pid}-k3j4h5gd"
    stale.write_bytes(CUDA)
    assert main(["convert", str(tree), "--in-place", "-q"]) == 0
    assert names(tree) == ["k.cu"]


# --- defect 10: hook install --force never loses the user's hook --------------------------------------

@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    require_tool("git", "git")
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    monkeypatch.chdir(tmp_path / "repo")
    return tmp_path / "repo"


def test_a_second_forced_install_keeps_the_first_backup(repo: Path, capsys):
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-commit").write_bytes(b"#!/bin/sh\necho original\n")
    assert main(["hook", "install", "--force"]) == 0
    (hooks / "pre-commit").write_bytes(b"#!/bin/sh\necho another tool\n")   # what stood there since
    assert main(["hook", "install", "--force"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == f"portkit hook: kept the existing hook as {hooks / 'pre-commit.portkit-backup.1'}"
    assert (hooks / "pre-commit.portkit-backup").read_bytes() == b"#!/bin/sh\necho original\n"
    assert (hooks / "pre-commit.portkit-backup.1").read_bytes() == b"#!/bin/sh\necho another tool\n"
    assert main(["hook", "uninstall"]) == 0   # the newest comes back; the original is still kept
    assert (hooks / "pre-commit").read_bytes() == b"#!/bin/sh\necho another tool\n"
    assert (hooks / "pre-commit.portkit-backup").read_bytes() == b"#!/bin/sh\necho original\n"


def test_a_hook_that_mentions_portkit_is_not_taken_for_portkits(repo: Path, capsys):
    hook = repo / ".git" / "hooks" / "pre-commit"
    mine = b"#!/bin/sh\n# set up with: portkit hook install --force, then merged by hand\nmake lint\n"
    hook.write_bytes(mine)
    assert main(["hook", "install"]) == 2
    assert capsys.readouterr().err == (f"portkit: error: {hook} exists and is not portkit's; use --force to replace "
                                       f"it (it is kept as pre-commit.portkit-backup)\n")
    assert hook.read_bytes() == mine
    assert main(["hook", "install", "--force"]) == 0
    assert (hook.parent / "pre-commit.portkit-backup").read_bytes() == mine
