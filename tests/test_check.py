"""portkit check / baseline / hook in real git repositories: only new code is blocked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, require_tool
from portkit.cli.app import main

LEGACY = (REPO / "fixtures" / "audit" / "archetypes" / "pytorch_cuda_ext" / "csrc" / "reduce.cu").read_text()
NEW_HAZARD = "\n__global__ void tag(int* out) { out[threadIdx.x % 32] = 1; }\n"
HAZARD_COLUMN = NEW_HAZARD.index("threadIdx")   # 1-based column on its line (the text starts with \n)
CLEAN_KERNEL = "\n__global__ void fill(float* out, int n) { int i = threadIdx.x; if (i < n) out[i] = 0.0f; }\n"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    require_tool("git", "git")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "dev")
    git(root, "config", "core.autocrlf", "false")
    (root / "src").mkdir()
    (root / "src" / "reduce.cu").write_text(LEGACY)
    (root / "README.md").write_text("project\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "legacy")
    monkeypatch.chdir(root)
    return root


def check(capsys, *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    return code, capsys.readouterr().out


def accept(repo: Path, capsys) -> None:
    assert main(["baseline"]) == 0
    capsys.readouterr()
    git(repo, "add", ".portkit-baseline.json")
    git(repo, "commit", "-qm", "baseline")


def test_baseline_file_is_sorted_stable_and_line_free(repo: Path, capsys):
    assert main(["baseline"]) == 0
    assert "7 findings in 1 files accepted" in capsys.readouterr().out
    first = (repo / ".portkit-baseline.json").read_text()
    assert main(["baseline"]) == 0
    assert (repo / ".portkit-baseline.json").read_text() == first
    assert '"line"' not in first and first.index('"PK201"') < first.index('"PK202"')


def test_legacy_in_baseline_passes_and_new_staged_hazard_blocks(repo: Path, capsys):
    accept(repo, capsys)
    (repo / "src" / "reduce.cu").write_text(LEGACY + NEW_HAZARD)
    git(repo, "add", "src/reduce.cu")
    code, out = check(capsys)
    lines = LEGACY.count("\n") + 2
    assert code == 1
    assert out.splitlines()[0] == (f"src/reduce.cu:{lines}:{HAZARD_COLUMN}: PK201 `threadIdx.x % 32` assumes 32-lane warps; "
                                   "an AMD wavefront has 64 lanes")
    assert out.splitlines()[1].startswith("    fix: Use the built-in `warpSize`")
    assert "portkit: ignore[CODE]" in out and "portkit baseline" in out


def test_without_a_baseline_untouched_legacy_lines_pass(repo: Path, capsys):
    (repo / "src" / "reduce.cu").write_text(LEGACY + CLEAN_KERNEL)
    git(repo, "add", "src/reduce.cu")
    code, out = check(capsys)
    assert code == 0
    assert out == "portkit check: 1 file checked (staged changes), no new findings at or above high; 7 known\n"


def test_legacy_moved_twenty_lines_down_and_reindented_still_passes(repo: Path, capsys):
    accept(repo, capsys)
    moved = "\n".join("// padding" for _ in range(20)) + "\n" + LEGACY.replace("\n    ", "\n      ")
    (repo / "src" / "reduce.cu").write_text(moved)
    git(repo, "add", "src/reduce.cu")
    assert check(capsys)[0] == 0


def test_copy_of_a_legacy_hazard_into_new_code_is_new(repo: Path, capsys):
    accept(repo, capsys)
    copy = "\n__global__ void copy_of_legacy(float* out) {\n    int lane = threadIdx.x % 32;\n    out[lane] = 0;\n}\n"
    (repo / "src" / "reduce.cu").write_text(LEGACY + copy)
    git(repo, "add", "src/reduce.cu")
    code, out = check(capsys)
    assert code == 1 and f"src/reduce.cu:{LEGACY.count(chr(10)) + 3}:16: PK201" in out


def test_suppressed_new_hazard_passes(repo: Path, capsys):
    accept(repo, capsys)
    suppressed = NEW_HAZARD.rstrip("\n") + "  // portkit: ignore[PK201] NVIDIA-only debug path\n"
    (repo / "src" / "reduce.cu").write_text(LEGACY + suppressed)
    git(repo, "add", "src/reduce.cu")
    assert check(capsys)[0] == 0


def test_deleting_lines_only_passes(repo: Path, capsys):
    kept = "\n".join(LEGACY.splitlines()[:-8]) + "\n"
    (repo / "src" / "reduce.cu").write_text(kept)
    git(repo, "add", "src/reduce.cu")
    assert check(capsys)[0] == 0


def test_renamed_file_passes_and_a_new_file_is_new_everywhere(repo: Path, capsys):
    git(repo, "mv", "src/reduce.cu", "src/warp_reduce.cu")
    assert check(capsys)[0] == 0
    (repo / "src" / "new_kernels.cu").write_text(NEW_HAZARD)
    git(repo, "add", "src/new_kernels.cu")
    code, out = check(capsys)
    assert code == 1 and out.startswith(f"src/new_kernels.cu:2:{HAZARD_COLUMN}: PK201")


def test_crlf_file(repo: Path, capsys):
    accept(repo, capsys)
    (repo / "src" / "reduce.cu").write_bytes((LEGACY + NEW_HAZARD).replace("\n", "\r\n").encode())
    git(repo, "add", "src/reduce.cu")
    code, out = check(capsys)
    assert code == 1   # every line changed (line endings), legacy accepted, the new one reported
    assert [line.split(":")[:2] for line in out.splitlines() if ": PK" in line] == \
        [["src/reduce.cu", str(LEGACY.count("\n") + 2)]]


def test_commit_without_cuda_files_is_a_no_op(repo: Path, capsys):
    (repo / "README.md").write_text("project\nmore\n")
    (repo / "notes.bin").write_bytes(b"\0\1\2")
    git(repo, "add", ".")
    code, out = check(capsys)
    assert (code, out) == (0, "portkit check: 0 files checked (staged changes), no new findings at or above high\n")


def test_files_mode_and_diff_base(repo: Path, capsys):
    (repo / "src" / "reduce.cu").write_text(LEGACY + NEW_HAZARD)   # not staged
    assert check(capsys)[0] == 0                                     # nothing staged
    assert check(capsys, "src/reduce.cu")[0] == 1                    # the file given: against HEAD
    git(repo, "commit", "-qam", "hazard")
    assert check(capsys, "--diff-base", "HEAD~1")[0] == 1
    assert check(capsys, "--diff-base", "HEAD")[0] == 0
    assert check(capsys, "--fail-on", "blocker", "src/reduce.cu", "--diff-base", "HEAD~1")[0] == 0


def test_configuration_in_pyproject(repo: Path, capsys):
    (repo / "pyproject.toml").write_text('[tool.portkit]\nfail-on = "blocker"\nexclude = ["vendor/**"]\n')
    (repo / "src" / "reduce.cu").write_text(LEGACY + NEW_HAZARD)
    git(repo, "add", ".")
    assert check(capsys)[0] == 0                                     # PK201 is high, below blocker
    assert check(capsys, "--fail-on", "high")[0] == 1                # the flag wins
    (repo / "pyproject.toml").write_text('[tool.portkit]\nfail_on = "high"\n')
    git(repo, "add", "pyproject.toml")   # --staged reads the policy from the index
    assert main(["check"]) == 2
    assert "unknown portkit setting fail_on" in capsys.readouterr().err


def test_hook_install_with_and_without_an_existing_hook(repo: Path, capsys):
    hook = repo / ".git" / "hooks" / "pre-commit"
    assert main(["hook", "install"]) == 0
    assert f"installed {hook}" in capsys.readouterr().out
    assert os.access(hook, os.X_OK) and "-m portkit check --staged" in hook.read_text()
    (repo / "src" / "reduce.cu").write_text(LEGACY + NEW_HAZARD)
    git(repo, "add", ".")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    blocked = subprocess.run(["git", "commit", "-qm", "hazard"], cwd=repo, capture_output=True, text=True, env=env)
    assert blocked.returncode == 1 and "PK201" in blocked.stdout + blocked.stderr
    hook.unlink()
    hook.write_text("#!/bin/sh\nexit 0\n")
    assert main(["hook", "install"]) == 2
    assert "exists and is not portkit's; use --force" in capsys.readouterr().err
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    assert main(["hook", "install", "--force"]) == 0
    assert (repo / ".git" / "hooks" / "pre-commit.portkit-backup").read_text() == "#!/bin/sh\nexit 0\n"
    assert main(["hook", "uninstall"]) == 0
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"


def test_outside_a_repository_files_are_checked_against_the_baseline(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_text(LEGACY)
    assert main(["check", "k.cu"]) == 1
    capsys.readouterr()
    assert main(["baseline", str(tmp_path)]) == 0
    assert main(["check", "k.cu"]) == 0
    assert main(["check"]) == 2
    assert "not in a git repository: name the files to check" in capsys.readouterr().err


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    """One store for every xdist worker of the run (pytest-xdist gives each worker its own base
    temp under a shared parent): pre-commit locks its store, so the hook environment is built
    once (about two CPU-minutes) instead of once per worker."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        home = tmp_path_factory.getbasetemp().parent / "pre-commit-home"
        home.mkdir(exist_ok=True)
        return home
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.mark.parametrize("content, expected", [(LEGACY + NEW_HAZARD, 1), (LEGACY + CLEAN_KERNEL, 0)])
@pytest.mark.slow
def test_real_pre_commit_framework(repo: Path, pre_commit_home: Path, content: str, expected: int):
    """`pre-commit try-repo` installs this repository's hook in its own environment and runs it."""
    pre_commit = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
    require_tool(pre_commit, "pre-commit (pip install pre-commit)")
    (repo / "src" / "reduce.cu").write_text(content)
    git(repo, "add", "src/reduce.cu")
    env = dict(os.environ, PRE_COMMIT_HOME=str(pre_commit_home), PIP_DISABLE_PIP_VERSION_CHECK="1")
    proc = subprocess.run([pre_commit, "try-repo", str(REPO), "portkit", "--files", "src/reduce.cu"],
                          cwd=repo, capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == expected, proc.stdout + proc.stderr
    if expected:
        assert f"src/reduce.cu:{LEGACY.count(chr(10)) + 2}:{HAZARD_COLUMN}: PK201" in proc.stdout


def test_first_commit_of_a_repository(tmp_path: Path, capsys, monkeypatch):
    require_tool("git", "git")
    git(tmp_path, "init", "-q")
    (tmp_path / "k.cu").write_text(NEW_HAZARD)
    git(tmp_path, "add", "k.cu")
    monkeypatch.chdir(tmp_path)
    code, out = check(capsys)
    assert code == 1 and out.startswith(f"k.cu:2:{HAZARD_COLUMN}: PK201")
    assert check(capsys, "k.cu")[0] == 1


def test_a_second_check_of_the_same_change_reuses_the_scans(repo: Path, capsys, monkeypatch, tmp_path):
    """The result cache (commands/scan/resultcache.py): the same bytes are not scanned twice, the verdict
    is the same, and a new edit is scanned."""
    from portkit.commands.scan import job   # scan_file: where every command's scan meets scan_source
    monkeypatch.delenv("PORTKIT_NO_CACHE", raising=False)
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    scanned: list[str] = []
    real = job.scan_source

    def counted(source, *args, **kwargs):   # the change's files (walk.warm_up scans a kernel of its own)
        if source.rel != "warm-up.cu":
            scanned.append(source.rel)
        return real(source, *args, **kwargs)
    monkeypatch.setattr(job, "scan_source", counted)
    accept(repo, capsys)
    (repo / "src" / "reduce.cu").write_text(LEGACY + NEW_HAZARD)
    git(repo, "add", "src/reduce.cu")
    scanned.clear()
    first = check(capsys)
    assert first[0] == 1 and scanned == ["src/reduce.cu"]
    scanned.clear()
    assert check(capsys) == first and scanned == []
    (repo / "src" / "reduce.cu").write_text(LEGACY + NEW_HAZARD + "// more\n")
    git(repo, "add", "src/reduce.cu")
    assert check(capsys)[0] == 1 and scanned == ["src/reduce.cu"]
    scanned.clear()
    assert check(capsys, "--no-cache")[0] == 1 and scanned == ["src/reduce.cu"]


SCANNER = ("portkit.commands.scan.walk", "portkit.project.pipeline", "portkit.rules.PK201_hardcoded_warp_size",
           "tree_sitter")
IMPORTED = ("import sys; from portkit.cli.app import main; code = main(['check', '--staged']); "
            f"print(code, [m for m in {SCANNER!r} if m in sys.modules])")


def test_a_change_without_sources_is_checked_without_loading_the_scanner(repo: Path):
    """Most commits touch no CUDA source: their check loads no rewriter, rule or tree-sitter
    pass (issue 34: the commit gate's start-up). A staged source loads them, as it must."""
    env = dict(os.environ, PYTHONPATH=str(REPO))   # this checkout's portkit, run in the repository
    (repo / "README.md").write_text("project\nmore\n")
    git(repo, "add", "README.md")
    run = subprocess.run([sys.executable, "-c", IMPORTED], cwd=repo, env=env, capture_output=True, text=True,
                         check=True)
    assert run.stdout.splitlines()[-1] == "0 []"
    assert "0 files checked (staged changes)" in run.stdout
    (repo / "src" / "reduce.cu").write_text(LEGACY + NEW_HAZARD)
    git(repo, "add", "src/reduce.cu")
    run = subprocess.run([sys.executable, "-c", IMPORTED], cwd=repo, env=env, capture_output=True, text=True)
    assert run.stdout.splitlines()[-1] == f"1 {list(SCANNER)!r}"
