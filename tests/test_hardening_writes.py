"""Issue 28, items 11, 12, 13 and 16: writes that would lose an edit, escape the tree, or go past a
protection without a word.

--in-place never replaces a file that changed after it was read (exit 2, the other files are
written); the generated polyfill header is never written through a link; audit --record never
follows a link out of the tree; --in-place leaves read-only files unless --force, and says when a
file's other hard links keep the old content.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
from pathlib import Path

import pytest

import portkit.commands.compat
import portkit.commands.convert
import portkit.commands.inplace
from conftest import REPO
from portkit.cli.app import main

CUDA = b"#include <cuda_runtime.h>\nvoid f(float **p) { cudaMalloc(p, 64); cudaFree(*p); }\n"
HIP = b"#include <hip/hip_runtime.h>\nvoid f(float **p) { hipMalloc(p, 64); hipFree(*p); }\n"
EDITED = b"#include <cuda_runtime.h>\n// saved by an editor during the run\nvoid g() { cudaDeviceReset(); }\n"
CHANGED = "changed on disk during the conversion; not rewritten (run portkit convert again)"
POLYFILLED = REPO / "fixtures" / "polyfills" / "device" / "input.cu"   # needs portkit_polyfills.h at 5.2


@pytest.fixture
def src(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    root.mkdir()
    (root / "a.cu").write_bytes(CUDA)
    (root / "b.cu").write_bytes(CUDA)
    return root


def edit_during_conversion(monkeypatch, name: str, action) -> None:
    """Run `action(path)` right after `name` was read and converted: what a save at that moment does."""
    real = portkit.commands.convert._convert_data

    def converting(entry, data, options):
        converted = real(entry, data, options)
        if entry.rel == name:
            action(entry.path)
        return converted
    monkeypatch.setattr(portkit.commands.convert, "_convert_data", converting)


# --- item 11: an edit made during the run is never overwritten ------------------------------------

@pytest.mark.parametrize("jobs", ["1", "2"])
def test_in_place_keeps_an_edit_made_during_the_run(src: Path, monkeypatch, capsys, jobs: str):
    edit_during_conversion(monkeypatch, "a.cu", lambda path: path.write_bytes(EDITED))
    assert main(["convert", str(src), "--in-place", "-q", "-j", jobs]) == 2
    assert capsys.readouterr().err == f"portkit: a.cu: {CHANGED}\n"
    assert (src / "a.cu").read_bytes() == EDITED
    assert (src / "b.cu").read_bytes() == HIP     # the other files are still written


def test_in_place_reports_the_kept_edit_in_the_summary(src: Path, monkeypatch, capsys):
    edit_during_conversion(monkeypatch, "a.cu", lambda path: path.write_bytes(EDITED))
    assert main(["convert", str(src), "--in-place"]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[-3:] == [f"error: a.cu: {CHANGED}", "", "Rewrote 1 file in place."]


def test_in_place_keeps_an_edit_made_while_the_backup_was_written(src: Path, monkeypatch, capsys):
    """The last look is just before the rename: an edit during the backup's flush is kept, and the
    backup this run made of the older bytes is removed (it is no backup of the file as it is)."""
    real = portkit.commands.inplace.publish_new

    def publish(data, final, like):
        real(data, final, like)
        like.write_bytes(EDITED)
    monkeypatch.setattr(portkit.commands.inplace, "publish_new", publish)
    assert main(["convert", str(src / "a.cu"), "--in-place", "--backup", "-q"]) == 2
    assert capsys.readouterr().err == f"portkit: a.cu: {CHANGED}\n"
    assert (src / "a.cu").read_bytes() == EDITED
    assert sorted(p.name for p in src.iterdir()) == ["a.cu", "b.cu"]


def test_in_place_with_rename_keeps_an_edit_made_during_the_run(src: Path, monkeypatch, capsys):
    edit_during_conversion(monkeypatch, "a.cu", lambda path: path.write_bytes(EDITED))
    assert main(["convert", str(src), "--in-place", "--rename", "-q"]) == 2
    assert capsys.readouterr().err == f"portkit: a.cu: {CHANGED}\n"
    assert sorted(p.name for p in src.iterdir()) == ["a.cu", "b.hip"]
    assert (src / "a.cu").read_bytes() == EDITED


def test_compat_header_in_place_keeps_an_edit_made_during_the_run(src: Path, monkeypatch, capsys):
    compat = portkit.commands.compat
    real = compat._compat_entry

    def scanning(entry, data, job):
        scanned = real(entry, data, job)
        if entry.rel == "a.cu":
            entry.path.write_bytes(EDITED)
        return scanned
    monkeypatch.setattr(compat, "PER_FILE", dataclasses.replace(compat.PER_FILE, scan=scanning))
    assert main(["convert", str(src), "--compat-header", str(src / "compat.h"), "--in-place", "-q"]) == 2
    assert capsys.readouterr().err == f"portkit: a.cu: {CHANGED}\n"
    assert (src / "a.cu").read_bytes() == EDITED
    assert (src / "b.cu").read_bytes().startswith(b"#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)\n")


# --- item 12: the generated header is never written through a link --------------------------------

def _polyfilled_tree(tmp_path: Path) -> tuple[Path, Path]:
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    tree.mkdir()
    outside.mkdir()
    shutil.copy(POLYFILLED, tree / "k.cu")
    return tree, outside


def _refused(path: Path) -> str:
    return (f"portkit: error: {path}: is a symbolic link; a generated file is never written through or over one "
            f"(remove it, or convert with --no-polyfills)\n")


def test_polyfill_header_is_never_written_through_a_dangling_link_in_the_tree(tmp_path: Path, capsys):
    tree, outside = _polyfilled_tree(tmp_path)
    os.symlink("../outside/evil.h", tree / "portkit_polyfills.h")
    assert main(["convert", str(tree), "--in-place", "--rocm", "5.2"]) == 2
    assert capsys.readouterr().err == _refused(tree / "portkit_polyfills.h")
    assert list(outside.iterdir()) == []
    assert (tree / "k.cu").read_bytes() == POLYFILLED.read_bytes()   # refused before any write
    assert os.readlink(tree / "portkit_polyfills.h") == "../outside/evil.h"


def test_polyfill_header_is_never_written_through_a_link_in_the_output(tmp_path: Path, capsys):
    """A link to a header portkit generated once, elsewhere: not ours to overwrite from here."""
    tree, outside = _polyfilled_tree(tmp_path)
    generated = b"// Generated by portkit: CUDA names ROCm 6.0 lacks, defined for the code that uses them.\n"
    (outside / "portkit_polyfills.h").write_bytes(generated)
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(outside / "portkit_polyfills.h", out / "portkit_polyfills.h")
    assert main(["convert", str(tree), "-o", str(out), "--rocm", "5.2", "-q"]) == 2
    assert capsys.readouterr().err == _refused(out / "portkit_polyfills.h")
    assert (outside / "portkit_polyfills.h").read_bytes() == generated
    assert sorted(p.name for p in out.iterdir()) == ["portkit_polyfills.h"]


def test_polyfill_header_link_planted_during_the_run_is_not_followed(tmp_path: Path, monkeypatch, capsys):
    tree, outside = _polyfilled_tree(tmp_path)
    edit_during_conversion(monkeypatch, "k.cu",
                           lambda path: os.symlink("../outside/evil.h", path.parent / "portkit_polyfills.h"))
    assert main(["convert", str(tree), "--in-place", "--rocm", "5.2", "-q"]) == 2
    assert capsys.readouterr().err == _refused(tree / "portkit_polyfills.h")
    assert list(outside.iterdir()) == []
    assert os.readlink(tree / "portkit_polyfills.h") == "../outside/evil.h"


# --- item 13: audit --record never follows a link out of the tree ---------------------------------

@pytest.mark.parametrize("link, to", [
    (".portkit", "../outside"),                                     # the directory
    (".portkit/history.sqlite", "../../outside/history.sqlite"),    # the database, dangling
    (".portkit/history.sqlite-journal", "../../outside/victim"),    # SQLite's journal beside it
], ids=["directory", "database", "journal"])
def test_record_never_follows_a_link_out_of_the_tree(tmp_path: Path, capsys, link: str, to: str):
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / ".portkit").mkdir(parents=True)
    outside.mkdir()
    (outside / "victim").write_bytes(b"a file of the user's\n")
    (tree / "k.cu").write_bytes(CUDA)
    if link == ".portkit":
        (tree / ".portkit").rmdir()
    os.symlink(to, tree / link)
    assert main(["audit", str(tree), "--record", "-q"]) == 2
    assert capsys.readouterr().err == (f"portkit: error: {tree / link}: is a symbolic link; the history is never "
                                       f"written through one (remove it, or give --history a path outside the tree)\n")
    assert sorted(p.name for p in outside.iterdir()) == ["victim"]
    assert (outside / "victim").read_bytes() == b"a file of the user's\n"


def test_record_outside_the_tree_is_the_users_choice(tmp_path: Path, capsys):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "k.cu").write_bytes(CUDA)
    (tmp_path / "mine").mkdir()
    os.symlink(tmp_path / "mine", tmp_path / "histories")
    assert main(["audit", str(tree), "--record", "-q", "--history", str(tmp_path / "histories" / "h.sqlite")]) == 0
    assert capsys.readouterr().err == ""
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["h.sqlite"]


# --- item 16: read-only files and hard links --------------------------------------------------------

def test_in_place_leaves_a_read_only_file_with_a_note_unless_forced(src: Path, capsys):
    (src / "a.cu").chmod(0o444)
    assert main(["convert", str(src), "--in-place"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "portkit convert: 2 files scanned (4 lines), 2 changed, 0 partially parsed, 1 skipped"
    assert out[-4:] == ["Skipped (1):", "  a.cu: read-only: not rewritten (make it writable, or convert with --force)",
                        "", "Rewrote 1 file in place."]
    assert (src / "a.cu").read_bytes() == CUDA
    assert (src / "b.cu").read_bytes() == HIP
    assert main(["convert", str(src), "--in-place", "--force", "-q"]) == 0
    assert capsys.readouterr().err == ""
    assert (src / "a.cu").read_bytes() == HIP
    assert stat.S_IMODE((src / "a.cu").stat().st_mode) == 0o444


def test_compat_header_in_place_leaves_a_read_only_file_with_a_note_unless_forced(src: Path, capsys):
    (src / "a.cu").chmod(0o444)
    command = ["convert", str(src), "--compat-header", str(src / "compat.h"), "--in-place"]
    assert main(command) == 0
    assert capsys.readouterr().out.splitlines() == [
        "portkit convert --compat-header: 2 CUDA names and 1 headers mapped for ROCm 7.2; 1 sources got guarded "
        "includes; header written",
        "note: a.cu: read-only: not rewritten (make it writable, or convert with --force)"]
    assert (src / "a.cu").read_bytes() == CUDA
    assert main([*command, "--force", "-q"]) == 0
    assert (src / "a.cu").read_bytes().startswith(b"#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)\n")
    assert stat.S_IMODE((src / "a.cu").stat().st_mode) == 0o444


@pytest.mark.parametrize("mode", [["--diff"], ["--compat-header", "h.h", "--check"]], ids=["convert", "compat"])
def test_force_only_applies_with_in_place(src: Path, capsys, mode: list[str]):
    assert main(["convert", str(src), *mode, "--force"]) == 2
    assert capsys.readouterr().err == "portkit: error: --force only applies with --in-place\n"


def test_in_place_notes_that_other_hard_links_keep_the_old_content(src: Path, tmp_path: Path, capsys):
    os.link(src / "a.cu", tmp_path / "elsewhere.cu")
    assert main(["convert", str(src), "--in-place"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-3:] == ["note: a.cu: rewritten as a new file; its 1 other hard link keeps the old content (link it "
                        "again if both should change)", "", "Rewrote 2 files in place."]
    assert (src / "a.cu").read_bytes() == HIP
    assert (tmp_path / "elsewhere.cu").read_bytes() == CUDA   # never written outside the tree
    assert (src / "a.cu").stat().st_nlink == 1


def test_an_unchanged_file_is_copied_whole_by_the_kernel_or_the_plain_way(tmp_path, monkeypatch):
    """convert mirrors an unchanged file with copy_file_range (issue 34); where the kernel copies
    nothing or refuses (another file system, an old kernel), the plain copy gives the same bytes."""
    import errno
    import os
    from portkit.core import output
    from portkit.core.files import open_regular
    source = tmp_path / "data.bin"
    source.write_bytes(bytes(range(256)) * 5000)
    source.chmod(0o640)
    behaviours = {"kernel": None,
                  "refused": lambda *a: (_ for _ in ()).throw(OSError(errno.EXDEV, "cross-device")),
                  "nothing": lambda *a: 0,
                  # ten bytes copied, then nothing: the file seems to have shrunk
                  "partly": lambda fd_in, fd_out, count, off_in, off_out:
                      os.pwrite(fd_out, os.pread(fd_in, 10, off_in), off_out) if off_in == 0 else 0}
    for name, fake in behaviours.items():
        if fake is not None:
            monkeypatch.setattr(os, "copy_file_range", fake)
        target = tmp_path / f"out-{name}.bin"
        fd = open_regular(source)
        try:
            output.atomic_copy(target, fd, mode_from=source)
        finally:
            os.close(fd)
        assert target.read_bytes() == source.read_bytes(), name
        assert target.stat().st_mode & 0o777 == 0o640
        monkeypatch.undo()
