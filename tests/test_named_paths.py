"""Where users meet portkit (issue 51, items 1, 2 and 6): a path named on the command line is taken
though git ignores it, what is left out is said, a scan of nothing is never a clean pass, the
configuration is found from the files (not the working directory), and `pre-commit run
--all-files` checks the files instead of passing them unread."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, isolated_git, require_tool
from portkit.cli.app import main

# PTX (PK301, high) on line 2 at column 35, a plain kernel around it
KERNEL = ('#include <cuda_runtime.h>\n'
          '__global__ void k(int* o) { int v; asm volatile("mov.u32 %0, %%smid;" : "=r"(v)); o[0] = v; }\n'
          'void run(int* o) { cudaMalloc(&o, 4); k<<<1, 1>>>(o); }\n')
PTX_AT = ("PK301", 2, KERNEL.splitlines()[1].index("asm") + 1)
TEAM = ('schema = 1\nfamily = "team"\ntitle = "Our allocator"\nsource = "team.toml"\n'
        'entries = [{ cuda = "cudaMalloc", hip = "teamMalloc", kind = "function", status = "supported" }]\n')


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
def outer(tmp_path: Path, monkeypatch) -> Path:
    """A repository whose .gitignore holds `vendor/` and `*.o`; vendor/kern has its own .gitignore."""
    require_tool("git", "git")
    isolated_git(tmp_path, monkeypatch)
    root = tmp_path / "outer"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, {".gitignore": "vendor/\n*.o\n", "main.cpp": "int main() { return 0; }\n",
                 "vendor/kern/k.cu": KERNEL, "vendor/kern/.gitignore": "gen/\n",
                 "vendor/kern/gen/g.cu": KERNEL, "vendor/kern/k.o": "not code\n"})
    monkeypatch.chdir(tmp_path)
    return root


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def findings(out: str) -> list[tuple[str, str, int, int]]:
    return [(f["code"], f["path"], f["line"], f["column"]) for f in json.loads(out)["findings"]]


# 1. A named path is always taken ----------------------------------------------------------------

def test_a_named_folder_git_ignores_is_audited_and_what_it_ignores_inside_is_said(outer: Path, capsys):
    code, out, err = run(capsys, "audit", "outer/vendor/kern", "--fail-on", "high", "--format", "json",
                         "--select", "PK301")
    assert code == 1
    assert findings(out) == [(PTX_AT[0], "k.cu", PTX_AT[1], PTX_AT[2])]   # gen/g.cu is ignored inside it
    assert json.loads(out)["summary"]["files"] == 1
    assert err == "portkit: left out 1 folder and 1 file git ignores (gen/, k.o; --no-respect-gitignore takes them)\n"


def test_a_named_folder_git_ignores_is_converted(outer: Path, capsys, tmp_path: Path):
    code, _, err = run(capsys, "convert", "outer/vendor/kern", "-o", "hip", "-q")
    assert (code, err) == (0, "")
    assert sorted(p.relative_to(tmp_path / "hip").as_posix() for p in (tmp_path / "hip").rglob("*")
                  if p.is_file()) == [".gitignore", "k.cu"]
    assert b"hipMalloc(&o, 4)" in (tmp_path / "hip" / "k.cu").read_bytes()


def test_the_summary_says_what_git_ignores(outer: Path, capsys):
    code, out, err = run(capsys, "audit", "outer")
    assert code == 0 and "outer: 1 file," in out.splitlines()[0]
    assert err == "portkit: left out 1 folder git ignores (vendor/; --no-respect-gitignore takes it)\n"
    code, out, err = run(capsys, "audit", "outer", "--no-respect-gitignore", "--format", "json")
    assert (code, err) == (0, "") and json.loads(out)["summary"]["files"] == 3   # + k.cu, gen/g.cu


def test_an_empty_scan_says_so_and_fails_under_fail_on(tmp_path: Path, capsys, monkeypatch):
    write(tmp_path / "docs", {"notes.txt": "cudaMalloc is mentioned here\n"})
    monkeypatch.chdir(tmp_path)
    said = "nothing to audit: no C, C++, CUDA, build or Python file under docs\n"
    code, _, err = run(capsys, "audit", "docs", "--fail-on", "high", "-q")
    assert (code, err) == (2, "portkit: error: " + said)
    code, _, err = run(capsys, "audit", "docs", "--format", "json")
    assert (code, err) == (0, "portkit: warning: " + said)
    said = "nothing to convert: no C, C++, CUDA, build or Python file under docs\n"
    code, out, err = run(capsys, "convert", "docs", "-o", "out")
    assert (code, err) == (0, "portkit: warning: " + said) and "0 files scanned" in out
    code, _, err = run(capsys, "convert", "docs", "--check", "-q")
    assert (code, err) == (2, "portkit: error: " + said)


def test_the_readme_flow_works_where_out_is_ignored(tmp_path: Path, capsys, monkeypatch):
    """README's first command writes out/sample_project_hip; the repository's .gitignore holds /out/."""
    require_tool("git", "git")
    isolated_git(tmp_path, monkeypatch)
    clone = tmp_path / "portkit"
    shutil.copytree(REPO / "fixtures" / "sample_project", clone / "fixtures" / "sample_project")
    shutil.copy(REPO / ".gitignore", clone / ".gitignore")
    git(clone, "init", "-q", "-b", "main")
    monkeypatch.chdir(clone)
    assert main(["convert", "fixtures/sample_project", "-o", "out/sample_project_hip", "--rocm", "5.2", "-q"]) == 0
    capsys.readouterr()
    code, out, err = run(capsys, "audit", "out/sample_project_hip", "--format", "json")
    converted = sorted(p.relative_to(clone / "out/sample_project_hip").as_posix()
                       for p in (clone / "out/sample_project_hip").rglob("*") if p.is_file())
    assert (code, err) == (0, "") and len(converted) == 8
    assert json.loads(out)["summary"]["files"] == 7 == len([c for c in converted if c != "README.md"])
    if shutil.which("hipcc") is None:
        pytest.skip("hipcc (the verify half of the flow)")
    code, out, err = run(capsys, "verify", "out/sample_project_hip", "--format", "json")
    assert code in (0, 1) and "nothing to compile" not in out + err
    assert sorted(u["path"] for u in json.loads(out)["units"]) == [c for c in converted if c.endswith((".cu", ".cpp"))]


# 2. The configuration is the files', wherever the command runs --------------------------------

@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    require_tool("git", "git")
    isolated_git(tmp_path, monkeypatch)
    root = write(tmp_path / "proj", {
        "pyproject.toml": '[tool.portkit]\nmappings = ["team.toml"]\nignore = ["PK0", "PK2", "PK5"]\n',
        "team.toml": TEAM, "src/k.cu": KERNEL})
    git(root, "init", "-q", "-b", "main")
    (tmp_path / "elsewhere").mkdir()
    return root


def test_convert_from_elsewhere_applies_the_projects_mapping_file(project: Path, capsys, monkeypatch):
    monkeypatch.chdir(project.parent / "elsewhere")
    code, out, err = run(capsys, "convert", str(project / "src" / "k.cu"), "-o", "-")
    assert code == 0 and "cudaMalloc" not in out and "teamMalloc(&o, 4)" in out
    assert f"portkit: configuration: {project / 'pyproject.toml'} [tool.portkit]\n" in err


def test_audit_gives_the_same_findings_inside_and_outside_the_repository(project: Path, capsys, monkeypatch):
    monkeypatch.chdir(project)
    inside = run(capsys, "audit", "src", "--format", "json")
    monkeypatch.chdir(project.parent / "elsewhere")
    outside = run(capsys, "audit", str(project / "src"), "--format", "json")
    assert findings(inside[1]) == findings(outside[1])
    assert sorted({f[0] for f in findings(outside[1])}) == ["PK301"]   # PK0, PK2 and PK5 ignored
    monkeypatch.chdir(project)
    code, out, err = run(capsys, "audit", "src")
    assert code == 0 and err == "portkit: configuration: pyproject.toml [tool.portkit]\n"


def test_config_names_one_file(project: Path, capsys, monkeypatch):
    write(project, {"ci/portkit.toml": 'select = ["PK301"]\nfail-on = "high"\n'})
    monkeypatch.chdir(project.parent / "elsewhere")
    code, out, err = run(capsys, "audit", str(project / "src"), "--config", str(project / "ci" / "portkit.toml"),
                         "--format", "json")
    assert code == 1 and findings(out) == [(PTX_AT[0], "k.cu", PTX_AT[1], PTX_AT[2])]
    assert err == f"portkit: configuration: {project / 'ci' / 'portkit.toml'}\n"
    code, _, err = run(capsys, "audit", str(project), "--config", str(project / "missing.toml"))
    assert (code, err) == (2, f"portkit: error: {project / 'missing.toml'}: --config: no such file\n")


# 6. pre-commit --all-files is never green after checking nothing ------------------------------

@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    require_tool("git", "git")
    isolated_git(tmp_path, monkeypatch)
    for name in ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF"):
        monkeypatch.delenv(name, raising=False)
    root = write(tmp_path / "repo", {"k.cu": KERNEL, "README.md": "project\n"})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "legacy kernel")
    monkeypatch.chdir(root)
    return root


WHOLE = "no change to compare: each file whole, against the baseline"


def test_files_with_no_change_are_checked_whole_against_the_baseline(repo: Path, capsys):
    """What `pre-commit run --all-files` runs: the files as they are, none differing from HEAD."""
    code, out, err = run(capsys, "check", "k.cu", "README.md")
    assert code == 1 and err == ""
    assert out.startswith(f"k.cu:{PTX_AT[1]}:{PTX_AT[2]}: PK301 ")
    assert f"portkit check: 1 new finding at or above high ({WHOLE})." in out
    assert main(["baseline"]) == 0
    capsys.readouterr()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "baseline")
    code, out, err = run(capsys, "check", "k.cu", "README.md")
    assert (code, err) == (0, "")
    assert out.splitlines()[-1].startswith(f"portkit check: 1 file checked ({WHOLE}), no new findings at or above high; ")
