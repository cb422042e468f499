"""`check` and `convert --check` in CI (issue 33, item 2): check's --format json|sarif|github, -q
and --exit-zero; convert --check naming the files that would change; convert --format json."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest

from conftest import REPO, require_tool, write_tree
from portkit.cli.app import main
from portkit.report.gate import command, escape_data, escape_property

SCHEMA = json.loads((REPO / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text())
HAZARDS = ("#include <cuda_runtime.h>\n__global__ void k(int *o, int v) {\n"
           "  o[threadIdx.x % 32] = __shfl_down_sync(0xffffffff, v, 1);\n  register int r = 1;\n}\n")
PK201 = ("`threadIdx.x %25 32` assumes 32-lane warps; an AMD wavefront has 64 lanes. Fix: Use the built-in "
         "`warpSize` (a run-time value on HIP) or a constant chosen per target (`#if defined(__HIP_PLATFORM_AMD__)` "
         "64), and review the algorithm for 64 lanes.")
PK203 = ("__shfl_down_sync with mask 0xffffffff names 32 lanes; an AMD wavefront has 64 (the converter drops the "
         "mask: check that every lane takes part). Fix: Compare with the active mask of the wavefront (`__ballot(1)` "
         "in HIP, a 64-bit value), use `__all`/`__any` for \"every lane\"/\"some lane\", and drop masks HIP does not "
         "need.")
PK011 = ("`register` dropped: ISO C++17 does not allow the storage class, and hip-clang compiles C++17 by default "
         "from ROCm 6 (nvcc accepts it). Fix: Drop the keyword (`int i = threadIdx.x;`); the converter does so. A GNU "
         "explicit register variable (`register int x asm(\"r0\")`) keeps it and is left as it is.")
BLOCKS_ONE = ("portkit check: 1 new finding at or above high (staged changes). Fix it, or suppress one on its line "
              "with `// portkit: ignore[CODE] reason` (`#` in build and Python files), or accept all current "
              "findings with `portkit baseline`.")
TEXT_PK201 = ["src/k.cu:3:5: PK201 `threadIdx.x % 32` assumes 32-lane warps; an AMD wavefront has 64 lanes",
              "    fix: Use the built-in `warpSize` (a run-time value on HIP) or a constant chosen per target "
              "(`#if defined(__HIP_PLATFORM_AMD__)` 64), and review the algorithm for 64 lanes."]


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """A repository whose staged change adds a high (PK201), a medium (PK203) and a low (PK011) finding."""
    require_tool("git", "git")
    root = write_tree(tmp_path / "repo", {"src/k.cu": "#include <cuda_runtime.h>\n"})
    git(root, "init", "-q")
    git(root, "-c", "user.email=a@b", "-c", "user.name=n", "add", ".")
    git(root, "-c", "user.email=a@b", "-c", "user.name=n", "commit", "-qm", "clean")
    (root / "src" / "k.cu").write_text(HAZARDS)
    git(root, "add", ".")
    monkeypatch.chdir(root)
    return root


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    out, err = capsys.readouterr()
    return code, out, err


# ---- check --format github

def test_github_annotations_one_per_finding_by_severity(repo: Path, capsys):
    code, out, err = run(capsys, "--format", "github", "--fail-on", "info")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f"::error file=src/k.cu,line=3,col=5,title=PK201::{PK201}",
        f"::warning file=src/k.cu,line=3,col=25,title=PK203::{PK203}",
        f"::notice file=src/k.cu,line=4,col=3,title=PK011::{PK011}",
        BLOCKS_ONE.replace("1 new finding at or above high", "3 new findings at or above info")
                  .replace("Fix it,", "Fix them,"),
    ]


def test_github_properties_escape_comma_colon_percent_and_newlines(repo: Path, capsys):
    (repo / "src" / "k.cu").unlink()
    (repo / "src" / "a,b:50%.cu").write_text(HAZARDS)
    git(repo, "add", "-A")
    code, out, _ = run(capsys, "--format", "github", "-q")
    assert (code, out) == (1, f"::error file=src/a%2Cb%3A50%25.cu,line=3,col=5,title=PK201::{PK201}\n")


def test_workflow_command_escaping():
    assert escape_data("50% a,b: c\r\nd") == "50%25 a,b: c%0D%0Ad"
    assert escape_property("50% a,b: c\r\nd") == "50%25 a%2Cb%3A c%0D%0Ad"
    assert command("error", "x:y,z", file="a,b.cu", line=3, col=None, title="PK1") == \
        "::error file=a%2Cb.cu,line=3,title=PK1::x:y,z"
    assert command("notice", "m") == "::notice::m"


# ---- -q and --exit-zero

def test_quiet_prints_only_the_findings(repo: Path, capsys):
    assert run(capsys, "-q") == (1, "\n".join(TEXT_PK201) + "\n", "")


def test_text_output_is_unchanged_without_the_new_options(repo: Path, capsys):
    assert run(capsys) == (1, "\n".join(TEXT_PK201 + [BLOCKS_ONE]) + "\n", "")


def test_exit_zero_reports_but_passes(repo: Path, capsys):
    assert run(capsys, "--exit-zero") == (0, "\n".join(TEXT_PK201 + [BLOCKS_ONE]) + "\n", "")
    assert run(capsys, "--exit-zero", "--format", "github", "-q") == (0, f"::error file=src/k.cu,line=3,col=5,"
                                                                          f"title=PK201::{PK201}\n", "")


def test_exit_zero_still_exits_2_on_a_usage_error(repo: Path, capsys):
    assert run(capsys, "--exit-zero", "--diff-base", "no-such-rev") == \
        (2, "", "portkit: error: --diff-base: 'no-such-rev' is not a commit in this repository\n")


def test_a_clean_change_passes_in_every_format(repo: Path, capsys):
    (repo / "src" / "k.cu").write_text("#include <cuda_runtime.h>\nint x;\n")
    git(repo, "add", ".")
    passed = "portkit check: 1 file checked (staged changes), no new findings at or above high\n"
    assert run(capsys) == (0, passed, "")
    assert run(capsys, "--format", "github") == (0, passed, "")
    assert run(capsys, "-q") == (0, "", "")
    assert json.loads(run(capsys, "--format", "json")[1])["blocked"] is False


# ---- check --format json and sarif

def test_json_document(repo: Path, capsys):
    code, out, err = run(capsys, "--format", "json")
    doc = json.loads(out)
    assert (code, err) == (1, "")
    assert {k: v for k, v in doc.items() if k not in ("findings", "below", "tool")} == {
        "version": 1, "root": repo.as_posix(), "mode": "staged changes", "fail_on": "high", "blocked": True,
        "files": ["src/k.cu"], "known": {"accepted": 0, "untouched": 0}, "suppressions": [], "unchecked": [],
        "not_compared": 0, "summary": BLOCKS_ONE}
    assert [(f["code"], f["path"], f["line"], f["column"]) for f in doc["findings"]] == [("PK201", "src/k.cu", 3, 5)]
    assert [(f["code"], f["severity"]) for f in doc["below"]] == [("PK203", "medium"), ("PK011", "info")]
    assert "effort_hours" not in doc["findings"][0] and doc["tool"]["name"] == "portkit"


def test_json_lists_the_suppressions_a_change_adds(repo: Path, capsys):
    (repo / "src" / "k.cu").write_text(HAZARDS.replace("  o[", "  // portkit: ignore[PK201]\n  o["))
    git(repo, "add", ".")
    doc = json.loads(run(capsys, "--format", "json")[1])
    assert doc["suppressions"] == [{"path": "src/k.cu", "line": 3, "codes": ["PK201"], "reason": "",
                                    "lacks": "a reason"}]
    # a suppression without a reason hides nothing
    assert [(f["code"], f["line"]) for f in doc["findings"]] == [("PK201", 4)]


def test_sarif_from_a_subdirectory_names_files_from_the_repository_root(repo: Path, capsys, monkeypatch):
    monkeypatch.chdir(repo / "src")
    code, out, _ = run(capsys, "--format", "sarif", "--fail-on", "medium")
    log = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    results = log["runs"][0]["results"]
    assert code == 1
    assert [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
            for r in results] == [("PK201", "error", "src/k.cu"), ("PK203", "warning", "src/k.cu")]
    assert log["runs"][0]["properties"] == {"mode": "staged changes", "failOn": "medium", "resultsOmitted": 0}
    assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"


# ---- convert --check and --format json

@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "src", {
        "a.cu": "#include <cuda_runtime.h>\nvoid f(void **p) { cudaMalloc(p, 4); }\n",
        "b.cpp": "int x;\n",
        "sub/c.cu": "#include <cuda_runtime.h>\nvoid g() { cudaDeviceSynchronize(); }\n"})


def test_convert_check_names_each_file_that_would_change(tree: Path, capsys):
    assert main(["convert", str(tree), "--check"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "portkit convert: 3 files scanned (5 lines), 2 would change, 0 partially parsed, 0 skipped",
        "CUDA references: 4 found, 4 converted, 0 left (100.0% converted)",
        "",
        "would change: a.cu",
        "would change: sub/c.cu",
        "2 files would change."]


def test_convert_check_of_a_converted_tree_names_nothing(tree: Path, tmp_path: Path, capsys):
    assert main(["convert", str(tree), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert main(["convert", str(tmp_path / "out"), "--check"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "portkit convert: 3 files scanned (5 lines), 0 would change, 0 partially parsed, 0 skipped",
        "CUDA references: 0 found, 0 converted, 0 left"]
    assert main(["convert", str(tree), "--check", "-q"]) == 1
    assert capsys.readouterr().out == ""


def test_convert_json_summary(tree: Path, tmp_path: Path, capsys):
    (tree / "w.cu").write_text("__global__ void k(int *o) { o[0] = __shfl_down_sync(0xffffffff, 1, 1);"
                               " cudaDeviceSetLimit(cudaLimitDevRuntimeSyncDepth, 1); cudaMallocAsync(0, 4, 0); }\n")
    assert main(["convert", str(tree), "--check", "--format", "json", "--rocm", "5.2"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in doc.items() if k not in ("tool", "needs_person")} == {
        "version": 1, "root": tree.as_posix(), "mode": "check",
        "files": {"scanned": 4, "changed": 3, "unchanged": 1, "written": 0, "partially_parsed": 0, "skipped": 0,
                  "failed": 0},
        "changed": [{"path": "a.cu"}, {"path": "sub/c.cu"}, {"path": "w.cu"}],
        "references": {"found": 8, "converted": 6, "left": 2},
        "findings": {"total": 3, "by_code": {"PK001": 1, "PK002": 1, "PK004": 1},
                     "by_severity": {"blocker": 0, "high": 2, "medium": 1, "low": 0, "info": 0}},
        "torch_extension": None, "polyfills": None, "skipped": [], "errors": []}
    assert [(f["code"], f["path"], f["line"], f["column"]) for f in doc["needs_person"]] == [
        ("PK002", "w.cu", 1, 72), ("PK001", "w.cu", 1, 91)]   # as the text summary lists them


def test_convert_json_after_writing(tree: Path, tmp_path: Path, capsys):
    assert main(["convert", str(tree), "-o", str(tmp_path / "out"), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["mode"], doc["files"]["written"], doc["files"]["changed"]) == ("output", 3, 2)


@pytest.mark.parametrize("extra", [["--diff"], ["-o", "-"]])
def test_convert_json_needs_standard_output_to_itself(tree: Path, capsys, extra):
    target = [str(tree / "a.cu")] if "-" in extra else [str(tree)]
    assert main(["convert", *target, *extra, "--format", "json"]) == 2
    assert capsys.readouterr().err == ("portkit: error: --format json writes the summary to standard output: "
                                       "not with --diff, -o - or --verify\n")
