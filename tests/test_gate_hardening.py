"""The commit gate sees every added line whatever the repository looks like (issue 19, class 2).

Each situation builds a real git repository in tmp_path, with its own user configuration
(GIT_CONFIG_GLOBAL points into tmp_path), repository configuration and attributes, stages a file
that adds a warp-size hazard, and expects `portkit check` to block it with the exact finding, in
both the staged mode (the git hook) and the files mode (pre-commit passes the names).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import isolated_git
from portkit.api import convert_paths
from portkit.commands.audit import audit_paths
from portkit.cli.app import main
from portkit.commands.results import AuditOptions

HAZARD = "__global__ void tag(int* out) { out[threadIdx.x % 32] = 1; }\n"
COLUMN = HAZARD.index("threadIdx") + 1
MESSAGE = "PK201 `threadIdx.x % 32` assumes 32-lane warps; an AMD wavefront has 64 lanes"


def git(repo: Path, *args) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    isolated_git(tmp_path, monkeypatch)
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("project\n")
    monkeypatch.chdir(root)
    return root


def quiet_tool(tmp_path: Path) -> str:
    """A program that prints nothing: as an external diff or a textconv, it hides every change."""
    tool = tmp_path / "hide.sh"
    tool.write_text("#!/bin/sh\nexit 0\n")
    tool.chmod(0o755)
    return str(tool)


# name -> (path as bytes, user config, repository config, .gitattributes)
SITUATIONS = {
    "space in the name": (b"src/a b.cu", {}, {}, ""),
    "tab in the name": (b"src/a\tb.cu", {}, {}, ""),
    "quote in the name": (b'src/a"b.cu', {}, {}, ""),
    "backslash in the name": (b"src/a\\b.cu", {}, {}, ""),
    "newline in the name": (b"src/a\nb.cu", {}, {}, ""),
    "latin-1 name": (b"src/caf\xe9.cu", {}, {}, ""),
    "stage-like name": (b"0:k.cu", {}, {}, ""),
    "HIP file": (b"src/k.hip", {}, {}, ""),
    "user diff.noprefix": (b"src/k.cu", {"diff.noprefix": "true"}, {}, ""),
    "user diff.mnemonicPrefix": (b"src/k.cu", {"diff.mnemonicPrefix": "true"}, {}, ""),
    "user colour always": (b"src/k.cu", {"color.ui": "always", "color.diff": "always"}, {}, ""),
    "repository diff.external": (b"src/k.cu", {}, {"diff.external": "HIDE"}, ""),
    "textconv driver": (b"src/k.cu", {}, {"diff.hide.textconv": "HIDE"}, "*.cu diff=hide\n"),
    "attribute -diff": (b"src/k.cu", {}, {}, "*.cu -diff\n"),
    "attribute binary": (b"src/k.cu", {}, {}, "*.cu binary\n"),
}


def _configure(repo: Path, tmp_path: Path, user: dict, local: dict, attributes: str) -> None:
    for key, value in user.items():
        git(repo, "config", "--global", key, value.replace("HIDE", quiet_tool(tmp_path)))
    for key, value in local.items():
        git(repo, "config", key, value.replace("HIDE", quiet_tool(tmp_path)))
    if attributes:
        (repo / ".gitattributes").write_text(attributes)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "start")


def _blocked(capsys, expected: str, *args: str) -> None:
    code = main(["check", *args])
    out = capsys.readouterr()
    assert (code, out.out[:len(expected)]) == (1, expected), out.err


def _blocked_bytes(capsysbinary, expected: bytes, *args: str) -> None:
    code = main(["check", *args])
    out = capsysbinary.readouterr()
    assert (code, out.out[:len(expected)]) == (1, expected), out.err


@pytest.mark.parametrize("situation", list(SITUATIONS))
@pytest.mark.slow
def test_new_hazard_blocks_in_every_situation(repo: Path, tmp_path: Path, capsysbinary, situation: str):
    path, user, local, attributes = SITUATIONS[situation]
    _configure(repo, tmp_path, user, local, attributes)
    target = Path(os.fsdecode(repo)) / os.fsdecode(path)
    target.parent.mkdir(exist_ok=True)
    target.write_text("// new kernels\n" + HAZARD)
    git(repo, "add", "--", os.fsdecode(path))
    # the name as printed: control characters and bytes that are not UTF-8 as \xNN (issue 28, 14)
    shown = re.sub(rb"[\x00-\x1f\x7f-\xff]", lambda m: b"\\x%02x" % m.group()[0], path)
    expected = shown + f":2:{COLUMN}: {MESSAGE}\n".encode()
    _blocked_bytes(capsysbinary, expected)                          # the git hook: staged changes
    _blocked_bytes(capsysbinary, expected, os.fsdecode(path))       # pre-commit: the names given


def test_added_line_that_reads_like_a_diff_header(repo: Path, tmp_path: Path, capsys):
    """With -U0 an added line `++ /dev/null` prints as `+++ /dev/null`; it is content."""
    (repo / "k.cu").write_text("// kernels\n")
    _configure(repo, tmp_path, {}, {}, "")
    (repo / "k.cu").write_text("/*\n++ /dev/null\n*/\n// kernels\n" + HAZARD)
    git(repo, "add", "k.cu")
    _blocked(capsys, f"k.cu:5:{COLUMN}: {MESSAGE}\n")
    _blocked(capsys, f"k.cu:5:{COLUMN}: {MESSAGE}\n", "k.cu")


def test_nul_bytes_before_the_hazard(repo: Path, tmp_path: Path, capsys):
    _configure(repo, tmp_path, {}, {}, "")
    (repo / "k.cu").write_bytes(b"// \0\0 looks binary\n" + HAZARD.encode())
    git(repo, "add", "k.cu")
    _blocked(capsys, f"k.cu:2:{COLUMN}: {MESSAGE}\n")
    _blocked(capsys, f"k.cu:2:{COLUMN}: {MESSAGE}\n", "k.cu")


def test_symlink_replaced_by_a_file_with_a_hazard(repo: Path, tmp_path: Path, capsys):
    (repo / "k.cu").symlink_to("README.md")
    _configure(repo, tmp_path, {}, {}, "")
    (repo / "k.cu").unlink()
    (repo / "k.cu").write_text(HAZARD)
    git(repo, "add", "k.cu")
    _blocked(capsys, f"k.cu:1:{COLUMN}: {MESSAGE}\n")


@pytest.mark.parametrize("value", ["--output=F", "-oF", "--no-index"])
def test_diff_base_that_looks_like_an_option_never_reaches_git(repo: Path, tmp_path: Path, capsys, value: str):
    (repo / "k.cu").write_text(HAZARD)
    _configure(repo, tmp_path, {}, {}, "")
    for args in (["check", f"--diff-base={value}"], ["check", f"--diff-base={value}", "k.cu"]):
        assert main(args) == 2
        assert capsys.readouterr().err == f"portkit: error: --diff-base: {value!r} is not a revision\n"
    assert sorted(p.name for p in repo.iterdir()) == [".git", "README.md", "k.cu"]


def test_diff_base_that_names_no_commit(repo: Path, tmp_path: Path, capsys):
    _configure(repo, tmp_path, {}, {}, "")
    tree = git(repo, "rev-parse", "HEAD^{tree}").decode().strip()
    for value in ("nope", tree):
        assert main(["check", f"--diff-base={value}"]) == 2
        assert capsys.readouterr().err == f"portkit: error: --diff-base: {value!r} is not a commit in this repository\n"


def test_suppression_text_in_a_string_literal_is_not_a_suppression(repo: Path, tmp_path: Path, capsys):
    _configure(repo, tmp_path, {}, {}, "")
    line = HAZARD.replace("= 1; }", '= 1; puts("// portkit: ignore[PK201] not a comment"); }')
    (repo / "k.cu").write_text(line)
    git(repo, "add", "k.cu")
    _blocked(capsys, f"k.cu:1:{COLUMN}: {MESSAGE}\n")


def test_old_standalone_suppression_does_not_cover_a_line_added_under_it(repo: Path, tmp_path: Path, capsys):
    legacy = "__global__ void old(int* o) { o[threadIdx.x % 32] = 1; }\n"
    (repo / "k.cu").write_text("// portkit: ignore[PK201] the NVIDIA-only path\n" + legacy)
    _configure(repo, tmp_path, {}, {}, "")
    (repo / "k.cu").write_text("// portkit: ignore[PK201] the NVIDIA-only path\n" + HAZARD + legacy)
    git(repo, "add", "k.cu")
    code = main(["check"])
    assert (code, capsys.readouterr().out.splitlines()[0]) == (1, f"k.cu:2:{COLUMN}: {MESSAGE}")
    # a suppression the change adds together with the line still counts
    (repo / "k.cu").write_text("// portkit: ignore[PK201] the NVIDIA-only path\n" + legacy +
                               "// portkit: ignore[PK201] also NVIDIA-only\n" + HAZARD)
    git(repo, "add", "k.cu")
    assert main(["check"]) == 0


def test_a_file_that_cannot_be_checked_in_time_blocks(repo: Path, tmp_path: Path, capsys, monkeypatch):
    from portkit.commands import check
    from portkit.commands.workers import FileTimeout

    def too_slow(*args):
        raise FileTimeout("took longer than 60 s")
    _configure(repo, tmp_path, {}, {}, "")
    (repo / "k.cu").write_text(HAZARD)
    git(repo, "add", "k.cu")
    monkeypatch.setattr(check, "_findings", too_slow)
    assert main(["check"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == ("portkit: error: k.cu: took longer than the per-file time limit to check; not checked, "
                       "so the commit is blocked (exclude it in the configuration, or commit with --no-verify)\n")


def test_hip_and_hpp_files_are_audited_and_checked_like_cu(repo: Path, tmp_path: Path, capsys):
    _configure(repo, tmp_path, {}, {}, "")
    for name in ("k.hip", "k.hpp"):
        (repo / name).write_text(HAZARD)
    git(repo, "add", ".")
    code = main(["check"])
    assert (code, capsys.readouterr().out.splitlines()[::2][:2]) == \
        (1, [f"k.hip:1:{COLUMN}: {MESSAGE}", f"k.hpp:1:{COLUMN}: {MESSAGE}"])
    result = audit_paths([repo], AuditOptions(select=("PK201",)))
    assert [(f.path, f.line, f.code) for f in result.findings] == [("k.hip", 1, "PK201"), ("k.hpp", 1, "PK201")]


def test_a_tree_converted_with_rename_is_still_audited(tmp_path: Path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "k.cu").write_text(HAZARD)
    (src / "k.cuh").write_text(HAZARD)
    convert_paths([src], output=out, rename=".cu=.hip,.cuh=.hip.h")
    result = audit_paths([out], AuditOptions(select=("PK201",)))
    # line 3: convert adds a blank line and `#include <hip/hip_runtime.h>` above the kernel (as hipify-clang)
    assert [(f.path, f.line, f.code) for f in result.findings] == [("k.hip", 3, "PK201"), ("k.hip.h", 3, "PK201")]


@pytest.mark.parametrize("old", ["notes.txt", "vendor/k.cu"])
def test_a_file_renamed_from_one_the_gate_never_checks_is_new_everywhere(repo: Path, tmp_path: Path, capsys, old: str):
    """Commit the hazard where the gate does not look (a .txt file, an excluded path), then
    `git mv` it to a source name: the rename must not make its lines look old."""
    (repo / "pyproject.toml").write_text('[tool.portkit]\nexclude = ["vendor/**"]\n')
    (repo / "vendor").mkdir()
    (repo / old).write_text(HAZARD)
    _configure(repo, tmp_path, {}, {}, "")
    git(repo, "mv", old, "k.cu")
    _blocked(capsys, f"k.cu:1:{COLUMN}: {MESSAGE}\n")
    _blocked(capsys, f"k.cu:1:{COLUMN}: {MESSAGE}\n", "k.cu")


def test_a_hazard_added_to_a_lone_cr_file_blocks(repo: Path, tmp_path: Path, capsys):
    """git numbers lines by LF: an old-Mac (CR) file is one git line, many source lines."""
    _configure(repo, tmp_path, {}, {}, "")
    (repo / "k.cu").write_bytes(b"// old Mac line endings\r// helpers\r")
    git(repo, "add", "k.cu")
    git(repo, "commit", "-q", "-m", "cr file")
    (repo / "k.cu").write_bytes(b"// old Mac line endings\r// helpers\r" + HAZARD.encode().replace(b"\n", b"\r"))
    git(repo, "add", "k.cu")
    _blocked(capsys, f"k.cu:3:{COLUMN}: {MESSAGE}\n")
