"""Issue 28: nothing from the audited tree runs, and the commit gate cannot be shadowed, skipped
or switched off by the change it reviews.

Each test plays the attacker or the careless teammate of one class of the review, in a real
git repository or directory under tmp_path, and names what it proves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require_tool
from portkit.cli import main
from portkit.pylaunch import module_command

PTX = '__global__ void k(int* o) { int v; asm volatile("mov.u32 %0, %%laneid;" : "=r"(v)); o[0] = v; }\n'
PTX_COLUMN = PTX.index("asm") + 1


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    require_tool("git", "git")
    user = tmp_path / "gitconfig"
    user.write_text("[user]\n\tname = dev\n\temail = dev@example.com\n[core]\n\tautocrlf = false\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF", "PRE_COMMIT_ORIGIN", "PRE_COMMIT_SOURCE"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("project\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    monkeypatch.chdir(root)
    return root


def plant(directory: Path, marker: Path) -> None:
    """Modules a hostile tree holds, each of which would leave `marker`-NAME behind if imported."""
    payload = f"import pathlib; pathlib.Path({str(marker)!r} + '-{{}}').touch()\n"
    for name in ("json", "re", "runpy", "subprocess", "portkit"):
        (directory / f"{name}.py").write_text(payload.format(name))
    for package in ("clang", "portkit"):
        (directory / package).mkdir(exist_ok=True)
        (directory / package / "__init__.py").write_text(payload.format(package + "-package"))
    (directory / "portkit" / "__main__.py").write_text(payload.format("portkit-main"))


def planted_runs(marker: Path) -> list[str]:
    return sorted(p.name for p in marker.parent.glob(marker.name + "-*"))


# 1. Python subprocesses never import from the working directory -------------------------------

@pytest.mark.parametrize("safe_path_flag", [True, False], ids=["python3.11 -P", "python3.10 bootstrap"])
def test_python_subprocess_never_imports_from_the_working_directory(tmp_path: Path, safe_path_flag: bool):
    tree = tmp_path / "tree"
    tree.mkdir()
    marker = tmp_path / "ran"
    plant(tree, marker)
    proc = subprocess.run(module_command("json.tool", safe_path_flag=safe_path_flag), cwd=tree,
                          input='{"a": 1}', capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, planted_runs(marker)) == (0, '{\n    "a": 1\n}\n', [])


def test_deep_audit_ignores_modules_planted_in_the_audited_directory(tmp_path: Path, monkeypatch, capsys):
    """The review's repro: `cd tree && echo ... > json.py && portkit audit --engine clang k.cu`."""
    from portkit.deep import toolchain
    from portkit.errors import PortkitError

    try:
        toolchain.find()
    except PortkitError as exc:
        from conftest import missing
        missing(f"deep mode toolchain: {exc}")
    tree = tmp_path / "tree"
    tree.mkdir()
    marker = tmp_path / "ran"
    plant(tree, marker)
    (tree / "k.cu").write_text(PTX)
    monkeypatch.chdir(tree)
    code = main(["audit", "--engine", "clang", "--format", "json", "k.cu"])
    doc = json.loads(capsys.readouterr().out)
    assert planted_runs(marker) == []
    assert code == 0 and doc["engine"]["units"] == 1 and doc["engine"]["fell_back"] == []
    assert [(f["code"], f["line"], f["column"]) for f in doc["findings"]] == [("PK301", 1, PTX_COLUMN)]


# 2. The installed git hook runs the installed portkit ----------------------------------------

def test_installed_hook_runs_the_installed_portkit_not_the_repository_one(repo: Path, tmp_path: Path, capsys):
    marker = tmp_path / "ran"
    plant(repo, marker)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "a portkit.py and a portkit/ of the repository's own")
    assert main(["hook", "install"]) == 0
    capsys.readouterr()
    (repo / "k.cu").write_text(PTX)
    git(repo, "add", "k.cu")
    proc = subprocess.run(["git", "commit", "-qm", "inline PTX"], cwd=repo, capture_output=True, text=True)
    assert planted_runs(marker) == []
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"k.cu:1:{PTX_COLUMN}: PK301 ")   # git sends a hook's output to stderr


# 3. The pre-commit framework passes portkit every file it would scan ----------------------------

def scanned_names() -> list[str]:
    """A file name for every suffix and name portkit scans (files.py's lists), plus the pattern
    names (requirements-*.in, environment-*.yml)."""
    from portkit import files

    names = [f"k{suffix}" for suffix in sorted(files.SOURCE_SUFFIXES | set(files.BUILD_SUFFIXES))]
    names += sorted(files.BUILD_NAMES)
    names += ["Makefile", "CMakeLists.txt", "Pipfile", "requirements.txt", "requirements-dev.in",
              "environment-gpu.yml", "kernels.def", "tables"]
    assert all(files.kind_of(n.rsplit("/", 1)[-1]) is not None for n in names[:-2])
    return names


def test_pre_commit_hook_definition_passes_every_file_portkit_scans(tmp_path: Path):
    import re

    import yaml
    from identify.identify import tags_from_path

    repo_root = Path(__file__).resolve().parent.parent
    (hook,) = yaml.safe_load((repo_root / ".pre-commit-hooks.yaml").read_text())
    files_re = re.compile(hook.get("files", ""))
    exclude_re = re.compile(hook.get("exclude", "^$"))
    dropped = []
    for name in scanned_names():   # pre-commit's filter (pre_commit.commands.run.Classifier)
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
        tags = tags_from_path(str(path))
        passes = (files_re.search(name) and not exclude_re.search(name)
                  and set(hook.get("types", ["file"])) <= tags
                  and (not hook.get("types_or") or tags & set(hook["types_or"]))
                  and not tags & set(hook.get("exclude_types", [])))
        if not passes:
            dropped.append(name)
    assert dropped == []
