"""What a command reads (issue 33, item 3): git's file set, the configuration's and the command
line's `exclude`, and the releases --rocm accepts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import isolated_git, write_tree
from portkit.cli.app import main

CUDA = "#include <cuda_runtime.h>\nvoid f() { cudaDeviceSynchronize(); }\n"
HIP = "#include <hip/hip_runtime.h>\nvoid f() { hipDeviceSynchronize(); }\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """A work tree with tracked, untracked and ignored CUDA files, one ignored yet tracked."""
    isolated_git(tmp_path, monkeypatch)
    root = write_tree(tmp_path / "repo", {
        "src/a.cu": CUDA, "src/new.cu": CUDA, "build/_deps/dep/b.cu": CUDA, ".venv/lib/c.cu": CUDA,
        "gen/skip.cu": CUDA, "gen/keep.cu": CUDA, "logs/tracked.cu": CUDA,
        ".gitignore": "build/\n.venv/\ngen/*\n!gen/keep.cu\nlogs/\n",
    })
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "src/a.cu", ".gitignore"], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-f", "logs/tracked.cu"], check=True)   # tracked, though ignored
    return root


def audited(root: Path, capsys, *args: str) -> list[str]:
    assert main(["audit", str(root), "--format", "json", *args]) == 0
    return sorted(f["path"] for f in json.loads(capsys.readouterr().out)["files"])


def converted(root: Path, out: Path, *args: str) -> list[str]:
    assert main(["convert", str(root), "-o", str(out), "-q", *args]) == 0
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())


SOURCES = ["gen/keep.cu", "logs/tracked.cu", "src/a.cu", "src/new.cu"]


def test_in_a_work_tree_every_command_takes_the_files_git_would(repo: Path, tmp_path: Path, capsys):
    assert audited(repo, capsys) == SOURCES
    assert converted(repo, tmp_path / "out") == [".gitignore", *SOURCES]
    assert (tmp_path / "out" / "src" / "new.cu").read_text() == HIP       # untracked, not ignored: converted


def test_without_respecting_gitignore_everything_under_the_paths_is_taken(repo: Path, capsys, monkeypatch):
    everything = sorted([".venv/lib/c.cu", "build/_deps/dep/b.cu", "gen/skip.cu", *SOURCES])
    assert audited(repo, capsys, "--no-respect-gitignore") == everything
    (repo / "pyproject.toml").write_text("[tool.portkit]\nrespect-gitignore = false\n")
    monkeypatch.chdir(repo)   # the configuration applies where the command runs
    assert audited(Path("."), capsys) == sorted([*everything, "pyproject.toml"])


def test_a_file_named_on_the_command_line_is_taken_even_when_ignored(repo: Path, capsys):
    assert main(["audit", str(repo / "build" / "_deps" / "dep" / "b.cu"), "--format", "json"]) == 0
    assert [f["path"] for f in json.loads(capsys.readouterr().out)["files"]] == ["b.cu"]


def test_exclude_on_the_command_line_joins_the_configurations(repo: Path, tmp_path: Path, capsys, monkeypatch):
    (repo / "pyproject.toml").write_text('[tool.portkit]\nexclude = ["gen/**"]\n')
    monkeypatch.chdir(repo)
    assert audited(Path("."), capsys, "--exclude", "src/new.cu") == ["logs/tracked.cu", "pyproject.toml", "src/a.cu"]
    out = tmp_path / "out"
    assert converted(Path("."), out, "--exclude", "src/new.cu") == sorted([".gitignore", *SOURCES, "pyproject.toml"])
    assert (out / "src" / "new.cu").read_text() == CUDA      # excluded: mirrored as it is
    assert (out / "gen" / "keep.cu").read_text() == CUDA
    assert (out / "src" / "a.cu").read_text() == HIP


def test_a_submodule_is_taken_whole(repo: Path, capsys):
    """A gitlink is one entry in git's list: what is inside it is the submodule's, and taken."""
    sub = write_tree(repo / "third_party" / "dep", {"k.cu": CUDA, "build/g.cu": CUDA})
    subprocess.run(["git", "init", "-q", str(sub)], check=True)
    subprocess.run(["git", "-C", str(sub), "add", "k.cu"], check=True)
    subprocess.run(["git", "-C", str(sub), "commit", "-q", "-m", "dep"], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "third_party/dep"], check=True, capture_output=True)
    assert audited(repo, capsys) == sorted([*SOURCES, "third_party/dep/build/g.cu", "third_party/dep/k.cu"])


def test_a_bad_exclude_is_one_line(tmp_path: Path, capsys):
    write_tree(tmp_path, {"a.cu": CUDA})
    assert main(["audit", str(tmp_path), "--exclude", ""]) == 2
    assert capsys.readouterr().err == "portkit: error: --exclude: '' is not a pattern\n"


def test_the_repositorys_git_configuration_runs_nothing(repo: Path, tmp_path: Path, capsys):
    """core.fsmonitor names a program git would run to list files: never from portkit."""
    marker = tmp_path / "ran"
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", f"touch {marker}; false"], check=True)
    assert audited(repo, capsys) == SOURCES
    assert not marker.exists()


def test_outside_a_work_tree_nothing_is_ignored(tmp_path: Path, capsys):
    root = write_tree(tmp_path / "plain", {"build/b.cu": CUDA, ".gitignore": "build/\n"})
    assert audited(root, capsys) == ["build/b.cu"]


KNOWN = "5.0, 5.1, 5.2, 5.3, 5.4, 5.5, 5.6, 5.7, 6.0, 6.1, 6.2, 6.3, 6.4, 7.0, 7.1, 7.2, or a 7.x after 7.2"


@pytest.mark.parametrize("release", ["99.1", "3.0", "4.5", "6.9", "8.0"])
def test_a_release_portkit_does_not_know_is_refused_with_those_it_does(release: str, tmp_path: Path, capsys):
    write_tree(tmp_path, {"a.cu": CUDA})
    for command in (["convert", str(tmp_path), "--diff"], ["audit", str(tmp_path)]):
        assert main([*command, "--rocm", release]) == 2
        assert capsys.readouterr().err == (f"portkit: error: --rocm {release}: not a ROCm release portkit knows "
                                           f"(known: {KNOWN})\n")


@pytest.mark.parametrize("release", ["6.2.1", "7.3", "7.13"])
def test_a_known_release_or_a_later_one_of_the_newest_major_is_accepted(release: str, tmp_path: Path, capsys):
    write_tree(tmp_path, {"a.cu": CUDA})
    assert main(["convert", str(tmp_path / "a.cu"), "-o", "-", "--rocm", release]) == 0
    assert capsys.readouterr().out == HIP


def test_convert_targets_the_configurations_rocm_as_audit_does(tmp_path: Path, capsys, monkeypatch):
    """`rocm = "5.2"` in portkit.toml: convert ignored it (it wrote ROCm 7.2's conversion, while
    audit priced 5.2's); now the flag wins, else the configuration, for the CLI and the API alike."""
    from portkit.api import convert_paths
    root = write_tree(tmp_path / "proj", {
        "portkit.toml": 'rocm = "5.2"\n',
        "v.cu": "#include <cuda_runtime.h>\n__global__ void k(unsigned *o, unsigned a, unsigned b) "
                "{ o[0] = __vadd4(a, b); }\n"})
    monkeypatch.chdir(root)
    assert main(["convert", ".", "-o", str(tmp_path / "out")]) == 0
    assert "Polyfills for ROCm 5.2: 1 name defined in portkit_polyfills.h" in capsys.readouterr().out
    assert main(["convert", ".", "-o", str(tmp_path / "out72"), "--rocm", "7.2"]) == 0
    assert "Polyfills for ROCm 7.2: 1 name defined in portkit_polyfills.h" in capsys.readouterr().out
    assert convert_paths(["."], output=tmp_path / "api").polyfills.rocm == "5.2"
    assert convert_paths(["."], output=tmp_path / "api2", config=False).polyfills.rocm == "7.2"
    assert convert_paths(["."], output=tmp_path / "api3", rocm="6.2").polyfills.rocm == "6.2"
