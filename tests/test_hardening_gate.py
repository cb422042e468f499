"""Issue 28: nothing from the audited tree runs, and the commit gate cannot be shadowed, skipped
or switched off by the change it reviews.

Each test plays the attacker or the careless teammate of one class of the review, in a real
git repository or directory under tmp_path, and names what it proves.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import isolated_git, missing, require_tool
from portkit.cli.app import main
from portkit.core.pylaunch import module_command

PTX = '__global__ void k(int* o) { int v; asm volatile("mov.u32 %0, %%smid;" : "=r"(v)); o[0] = v; }\n'
PTX_COLUMN = PTX.index("asm") + 1


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    isolated_git(tmp_path, monkeypatch)
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
    from portkit.commands.deep import toolchain
    from portkit.core.errors import PortkitError

    try:
        toolchain.find()
    except PortkitError as exc:
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
    from portkit.core import files

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


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD").strip()


def check(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


PTX_LINE = f"k.cu:1:{PTX_COLUMN}: PK301 "


# 4. The baseline is never read or written outside the root ---------------------------------

def test_baseline_is_never_written_through_a_committed_symlink(repo: Path, tmp_path: Path, capsys):
    victim = tmp_path / "bashrc"
    victim.write_text("keep me\n")
    (repo / ".portkit-baseline.json").symlink_to(victim)
    commit_all(repo, "a baseline that points at the user's file")
    assert main(["baseline"]) == 2
    assert capsys.readouterr().err == (
        f"portkit: error: {repo}/.portkit-baseline.json: is a symbolic link; the baseline is never read "
        f"or written through one (replace it with the file itself)\n")
    assert victim.read_text() == "keep me\n"


@pytest.mark.parametrize("how", ["--staged", "work tree"])
def test_a_file_past_the_size_limit_blocks_the_commit_unread(repo: Path, capsys, how: str):
    """70 MB of comment lines (a few hundred KB in git): the gate read the staged blob whole (4.7 GB
    at its peak, 24 s) and let it through; now its size is asked first and the commit is blocked."""
    (repo / "k.cu").write_text(PTX)
    with open(repo / "big.cu", "wb") as big:
        big.write(b"// x\n" * (14 << 20))
    git(repo, "add", "k.cu", "big.cu")
    args = ["check", "--staged"] if how == "--staged" else ["check", "big.cu", "k.cu"]
    assert main(args) == 2
    reason = "larger than 64 MiB, not read" if how == "--staged" else "cannot read: larger than 64 MiB, not read"
    assert capsys.readouterr().err == f"portkit: error: big.cu: {reason}\n"


def test_a_baseline_link_planted_during_the_audit_is_not_followed(repo: Path, tmp_path: Path, capsys, monkeypatch):
    """The path is checked for links before the audit, which takes a while; a link planted in
    between (by anything else running in the tree) is refused at the write, never followed."""
    from portkit.commands import audit

    victim = tmp_path / "bashrc"
    victim.write_text("keep me\n")
    real = audit.audit_paths

    def audit_then_plant(*args, **kwargs):
        result = real(*args, **kwargs)
        (repo / ".portkit-baseline.json").symlink_to(victim)
        return result

    monkeypatch.setattr(audit, "audit_paths", audit_then_plant)
    assert main(["baseline"]) == 2
    assert capsys.readouterr().err == (
        f"portkit: error: {repo}/.portkit-baseline.json: is a symbolic link; a generated file is never written "
        f"through or over one (the baseline is never written through one; remove it)\n")
    assert victim.read_text() == "keep me\n"


@pytest.mark.parametrize("where", ["../victim.json", "ABSOLUTE", "sub/../../victim.json"])
def test_baseline_path_from_the_configuration_stays_inside_the_root(repo: Path, tmp_path: Path, capsys, where: str):
    where = str(tmp_path / "victim.json") if where == "ABSOLUTE" else where
    (repo / "portkit.toml").write_text(f"baseline = {where!r}\n")
    assert main(["baseline"]) == 2
    assert capsys.readouterr().err == (
        f"portkit: error: {repo}/portkit.toml: `baseline` must be a relative path inside the project "
        f"(no `..`, not absolute), got {where!r}\n")
    assert not (tmp_path / "victim.json").exists()


def test_check_never_reads_a_baseline_outside_the_root(repo: Path, tmp_path: Path, capsys):
    (tmp_path / "outside.json").write_text('{"tool": "portkit", "version": 1, "findings": []}\n')
    (repo / "k.cu").write_text(PTX)
    git(repo, "add", "k.cu")
    assert check(capsys, "--baseline", "../outside.json") == (
        2, "", f"portkit: error: ../outside.json: the baseline must be inside the project root {repo}; "
               f"not read or written\n")


# 5. CI: pre-commit's --from-ref/--to-ref, and --all-files ---------------------------------------

def pull_request(repo: Path) -> tuple[str, str]:
    """main holds a clean kernel; the branch `pr` adds inline PTX to it: (main's id, pr's id)."""
    (repo / "k.cu").write_text("__global__ void k(int* o) { o[0] = 1; }\n")
    base = commit_all(repo, "clean kernel")
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "k.cu").write_text(PTX)
    return base, commit_all(repo, "inline PTX")


def test_pre_commit_from_and_to_ref_gate_the_pull_request(repo: Path, capsys, monkeypatch):
    base, head = pull_request(repo)
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", head)
    code, out, _ = check(capsys, "k.cu")
    assert code == 1 and out.startswith(PTX_LINE)
    assert f"(changes against the merge base of {base} and {head})" in out


def test_all_files_with_nothing_to_compare_checks_each_file_whole(repo: Path, capsys):
    """`pre-commit run --all-files`: no file differs from HEAD, so each is checked whole against the
    baseline (there is none here), never passed unread."""
    pull_request(repo)
    code, out, err = check(capsys, "k.cu", "README.md")
    assert (code, err) == (1, "") and out.startswith(PTX_LINE)
    assert out.splitlines()[-1].startswith("portkit check: 1 new finding at or above high (no change to compare: "
                                           "each file whole, against the baseline).")


def readme_pre_commit_config() -> str:
    """The `.pre-commit-config.yaml` docs/gate.md gives (the README links there)."""
    readme = (Path(__file__).resolve().parent.parent / "docs" / "gate.md").read_text(encoding="utf-8")
    start = readme.index("```yaml\nrepos:\n  - repo: local") + len("```yaml\n")
    return readme[start:readme.index("```", start)]


@pytest.mark.slow
def test_readme_pre_commit_snippet_works_in_ci(repo: Path, capsys):
    """The README's `.pre-commit-config.yaml`, as written, with portkit on PATH: the CI recipe
    (`--from-ref/--to-ref`) blocks the pull request's PTX; `--all-files` checks each file whole."""
    pre_commit = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
    require_tool(pre_commit, "pre-commit (pip install pre-commit)")
    (repo / ".pre-commit-config.yaml").write_text(readme_pre_commit_config())
    commit_all(repo, "pre-commit configuration")
    base, head = pull_request(repo)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               PRE_COMMIT_HOME=str(repo.parent / "pre-commit-home"))
    ci = subprocess.run([pre_commit, "run", "--from-ref", base, "--to-ref", head], cwd=repo, env=env,
                        capture_output=True, text=True, timeout=300)
    assert ci.returncode == 1 and PTX_LINE in ci.stdout, ci.stdout + ci.stderr
    everything = subprocess.run([pre_commit, "run", "--all-files"], cwd=repo, env=env,
                                capture_output=True, text=True, timeout=300)
    assert everything.returncode == 1, everything.stdout + everything.stderr   # the PTX, checked whole
    assert PTX_LINE in everything.stdout and "nothing to compare" not in everything.stdout


# 6. The change under review does not set its own policy -----------------------------------------

@pytest.mark.parametrize("policy, note", [
    ('[tool.portkit]\nignore = ["PK"]\n', "ignore + PK"),
    ('[tool.portkit]\nselect = ["PK9"]\n', "select + PK9"),
    ('[tool.portkit]\nexclude = ["k.cu"]\n', "exclude + k.cu"),
    ('[tool.portkit]\nfail-on = "blocker"\n', "fail-on default -> blocker"),
    ("BASELINE", "1 more finding accepted in .portkit-baseline.json"),
])
def test_a_pull_request_cannot_switch_its_own_gate_off(repo: Path, capsys, policy: str, note: str):
    base, _ = pull_request(repo)
    if policy == "BASELINE":
        assert main(["baseline"]) == 0      # accepts the PR's own PTX
        path = ".portkit-baseline.json"
    else:
        (repo / "pyproject.toml").write_text(policy)
        path = "pyproject.toml"
    commit_all(repo, "and switch the gate off")
    capsys.readouterr()
    code, out, _ = check(capsys, "--diff-base", base)
    assert code == 1 and out.startswith(PTX_LINE), out
    assert (f"{path}:1:1: note: PK902 this change alters the gate's policy ({note}); this run applied "
            f"the policy of commit {base[:12]}\n") in out


def test_a_staged_policy_change_is_reported(repo: Path, capsys):
    (repo / "pyproject.toml").write_text('[tool.portkit]\nignore = ["PK3"]\n')
    (repo / "k.cu").write_text(PTX)
    git(repo, "add", "-A")
    assert check(capsys) == (0, "pyproject.toml:1:1: note: PK902 this change alters the gate's policy "
                                "(ignore + PK3); this run applied the policy of the index\n"
                                "portkit check: 2 files checked (staged changes), no new findings at or "
                                "above high, 1 below high\n", "")


# 7. Suppressions: old ones do not cover changed code; new ones need codes and a reason --------------

MULTILINE_ASM = ("__global__ void k(int* o) {\n"
                 "  // portkit: ignore[PK301] reviewed: a plain barrier\n"
                 "  asm volatile(\n"
                 '      "bar.sync 0;"\n'
                 '      ::: "memory");\n'
                 "  o[0] = 1;\n"
                 "}\n")


def test_an_old_suppression_stops_covering_a_multiline_asm_whose_body_changed(repo: Path, capsys):
    (repo / "k.cu").write_text(MULTILINE_ASM)
    commit_all(repo, "a reviewed barrier")
    (repo / "k.cu").write_text(MULTILINE_ASM.replace('"bar.sync 0;"', '"wgmma.fence.sync.aligned;"'))
    git(repo, "add", "k.cu")
    code, out, _ = check(capsys)
    assert code == 1 and out.startswith("k.cu:3:3: PK301 "), out


@pytest.mark.parametrize("comment, lacks", [
    ("// portkit: ignore[PK301]", "a reason"),
    ("// portkit: ignore fine", "codes"),
    ("/* portkit: ignore */", "codes and a reason"),
])
def test_a_new_suppression_without_codes_or_reason_hides_nothing(repo: Path, capsys, comment: str, lacks: str):
    (repo / "k.cu").write_text(PTX.rstrip("\n") + f"  {comment}\n")
    git(repo, "add", "k.cu")
    code, out, _ = check(capsys)
    assert code == 1 and out.startswith(PTX_LINE), out
    codes = "PK301" if "[PK301]" in comment else "every code"
    assert (f"k.cu:1: note: this change adds a suppression of {codes} without {lacks}: it hides nothing "
            f"(give the codes and the reason: `portkit: ignore[PK301] why it is safe`)\n") in out


def test_a_new_suppression_with_codes_and_reason_is_listed(repo: Path, capsys):
    (repo / "k.cu").write_text(PTX.rstrip("\n") + "  // portkit: ignore[PK301] NVIDIA-only debug path\n")
    git(repo, "add", "k.cu")
    assert check(capsys) == (0, "k.cu:1: note: this change adds a suppression of PK301 (NVIDIA-only debug path)\n"
                                "portkit check: 1 file checked (staged changes), no new findings at or above "
                                "high\n", "")


# 8. --diff-base: files git does not track are new ----------------------------------------------

def test_diff_base_treats_an_untracked_file_as_new(repo: Path, capsys):
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "k.cu").write_text(PTX)          # never added
    for args in (("--diff-base", base, "k.cu"), ("--diff-base", base)):
        code, out, _ = check(capsys, *args)
        assert code == 1 and out.startswith(PTX_LINE), (args, out)


# 9. A finding's platform region is part of what the baseline accepted ---------------------------

def test_deleting_the_amd_guard_around_a_baselined_hazard_makes_it_new(repo: Path, capsys):
    (repo / "k.cu").write_text(f"#ifndef __HIP_PLATFORM_AMD__\n{PTX}#endif\n")
    assert main(["baseline"]) == 0
    commit_all(repo, "NVIDIA-only PTX, accepted")
    capsys.readouterr()
    (repo / "k.cu").write_text(PTX)
    git(repo, "add", "k.cu")
    code, out, _ = check(capsys)
    assert code == 1 and out.startswith(PTX_LINE), out


def test_an_untouched_baselined_hazard_stays_known(repo: Path, capsys):
    (repo / "k.cu").write_text(f"#ifndef __HIP_PLATFORM_AMD__\n{PTX}#endif\n")
    assert main(["baseline"]) == 0
    commit_all(repo, "NVIDIA-only PTX, accepted")
    (repo / "k.cu").write_text(f"#ifndef __HIP_PLATFORM_AMD__\n{PTX}#endif\n// a comment\n")
    git(repo, "add", "k.cu")
    capsys.readouterr()
    assert check(capsys) == (0, "portkit check: 1 file checked (staged changes), no new findings at or "
                                "above high; 1 known\n", "")


# 15. check on pathological input: a clear message, never a traceback ------------------------------

@pytest.mark.parametrize("include", ["", "#include <cuda_runtime.h>\n"])
def test_check_of_deeply_nested_ifs_checks_the_file(repo: Path, capsys, include: str):
    # 3,000 nested #ifs: the runtime header's insertion point looked for an #include inside them
    # by recursion, and Python's limit stopped it (the file went unchecked, the commit blocked)
    depth = 3000
    (repo / "k.cu").write_text("#if A\n" * depth + include + PTX + "#endif\n" * depth)
    git(repo, "add", "k.cu")
    code, out, err = check(capsys)
    line = depth + 1 + bool(include)
    assert (code, err) == (1, "")
    assert f"k.cu:{line}:{PTX_COLUMN}: PK301 " in out


def test_a_file_too_deep_to_check_blocks_with_a_message(repo: Path, capsys, monkeypatch):
    import portkit.commands.check as check_command

    def too_deep(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")
    monkeypatch.setattr(check_command, "_split", too_deep)
    (repo / "k.cu").write_text(PTX)
    git(repo, "add", "k.cu")
    assert check(capsys) == (2, "", "portkit: error: k.cu: is nested too deeply to check; not checked, so the "
                                    "commit is blocked (exclude it in the configuration, or commit with "
                                    "--no-verify)\n")


# 18. git never runs the repository's core.fsmonitor program ---------------------------------------

def test_check_never_runs_the_repository_fsmonitor(repo: Path, tmp_path: Path, capsys):
    marker = tmp_path / "fsmonitor-ran"
    monitor = tmp_path / "monitor.sh"
    monitor.write_text(f"#!/bin/sh\ntouch '{marker}'\nexit 1\n")
    monitor.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(monitor))
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "k.cu").write_text(PTX)
    git(repo, "-c", "core.fsmonitor=false", "add", "k.cu")
    for args in ((), ("k.cu",), ("--diff-base", base)):
        assert check(capsys, *args)[0] == 1, args
    assert main(["baseline"]) == 0
    assert not marker.exists()


def test_a_committed_policy_in_a_subdirectory_applies_there(repo: Path, capsys, monkeypatch):
    (repo / "sub").mkdir()
    (repo / "sub" / "portkit.toml").write_text('ignore = ["PK3"]\n')
    commit_all(repo, "sub's policy")
    (repo / "sub" / "k.cu").write_text(PTX)
    git(repo, "add", "sub/k.cu")
    monkeypatch.chdir(repo / "sub")
    assert check(capsys) == (0, "portkit check: 1 file checked (staged changes), no new findings at or above "
                                "high\n", "")
    monkeypatch.chdir(repo)
    assert check(capsys)[0] == 1


# 14. check's output never sends a control character from the tree to the terminal ----------------

def test_check_output_escapes_control_characters_from_names_and_code(repo: Path, capsysbinary):
    name = "k\x1b[2J.cu"
    (repo / name).write_text('__global__ void k() { asm volatile("\x1b]0;pwned\x07 bar.sync 0;"); }\n')
    git(repo, "add", "--", name)
    assert main(["check"]) == 1
    out = capsysbinary.readouterr().out
    assert out.startswith(b"k\\x1b[2J.cu:1:23: PK301 inline PTX (barrier): `\\x1b]0` ")
    assert not any(byte < 0x20 and byte != 0x0a for byte in out)
