"""SARIF that GitHub code scanning can place (issue 33, item 1): paths relative to the repository
root, fingerprints that survive lines moving, rule metadata where GitHub reads it, sentences in
messages, the per-run result limit; every log valid against the SARIF 2.1.0 schema."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest

from conftest import REPO, require_tool, write_tree
from portkit import rules
from portkit.cli.app import main
from portkit.project import worktree
from portkit.report import sarif
from portkit.report.audit_load import load_record
from portkit.report.audit_model import FindingRecord

SCHEMA = json.loads((REPO / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text())
KERNEL = ("#include <cuda_runtime.h>\n"
          "__global__ void tag(int* out) { out[threadIdx.x % 32] = 1; }\n")
CMAKE = "cmake_minimum_required(VERSION 3.18)\nproject(myapp LANGUAGES CXX CUDA)\n"
PK501_TEXT = ("CUDA is a CMake language here (`project(myapp LANGUAGES CXX CUDA`); HIP is its own language. "
              "Fix: write `project(myapp LANGUAGES CXX HIP)` (CMake 3.21+) and mark the .cu sources `LANGUAGE HIP` "
              "(`set_source_files_properties(... PROPERTIES LANGUAGE HIP)`), or build them as C++ with "
              "`hip::device` linked.")
PK201_TEXT = ("`threadIdx.x % 32` assumes 32-lane warps; an AMD wavefront has 64 lanes. Fix: Use the built-in "
              "`warpSize` (a run-time value on HIP) or a constant chosen per target (`#if "
              "defined(__HIP_PLATFORM_AMD__)` 64), and review the algorithm for 64 lanes.")


def _sarif(target: Path, tmp_path: Path, name: str = "a.sarif") -> dict:
    out = tmp_path / name
    assert main(["audit", str(target), "--format", "sarif", "-o", str(out), "-q"]) == 0
    log = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    return log


def _places(log: dict) -> list[tuple[str, str, int, str]]:
    return [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             r["locations"][0]["physicalLocation"]["region"]["startLine"],
             r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"])
            for r in log["runs"][0]["results"]]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    require_tool("git", "git")
    root = write_tree(tmp_path / "repo", {"src/reduce.cu": KERNEL, "src/CMakeLists.txt": CMAKE, "README.md": "x\n"})
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def test_paths_are_relative_to_the_repository_root(repo: Path, tmp_path: Path):
    log = _sarif(repo / "src", tmp_path)
    run = log["runs"][0]
    assert _places(log) == [("PK501", "src/CMakeLists.txt", 2, "%SRCROOT%"),
                            ("PK201", "src/reduce.cu", 2, "%SRCROOT%")]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.resolve().as_uri() + "/",
                                                       "description": {"text": "the git work tree's root"}}}


def test_paths_from_a_folder_deeper_in_the_repository(repo: Path, tmp_path: Path):
    write_tree(repo, {"lib/gpu/k.cu": KERNEL})
    assert _places(_sarif(repo / "lib" / "gpu", tmp_path)) == [("PK201", "lib/gpu/k.cu", 2, "%SRCROOT%")]
    assert _places(_sarif(repo, tmp_path, "b.sarif")) == [
        ("PK201", "lib/gpu/k.cu", 2, "%SRCROOT%"), ("PK501", "src/CMakeLists.txt", 2, "%SRCROOT%"),
        ("PK201", "src/reduce.cu", 2, "%SRCROOT%")]


def test_outside_a_repository_paths_are_relative_to_the_audited_folder(tmp_path: Path):
    tree = write_tree(tmp_path / "plain" / "src", {"reduce.cu": KERNEL})
    assert worktree.root_of(tree) is None   # the test's premise: no .git above the temporary folder
    log = _sarif(tree, tmp_path)
    assert _places(log) == [("PK201", "reduce.cu", 2, "%SRCROOT%")]
    assert log["runs"][0]["originalUriBaseIds"] == {"%SRCROOT%": {
        "uri": tree.resolve().as_uri() + "/", "description": {"text": "the audited folder"}}}


def test_a_worktree_or_submodule_root_is_a_git_file(tmp_path: Path):
    """A `.git` file (gitdir: ...) marks a linked worktree or a submodule; anything else does not."""
    write_tree(tmp_path / "sub", {".git": "gitdir: ../.git/modules/sub\n", "a/k.cu": KERNEL})
    write_tree(tmp_path / "fake", {".git": "not a git file\n", "k.cu": KERNEL})
    assert worktree.relative_to_root(tmp_path / "sub" / "a") == (tmp_path.resolve() / "sub", "a")
    assert worktree.relative_to_root(tmp_path / "sub") == (tmp_path.resolve() / "sub", "")
    assert worktree.root_of(tmp_path / "fake") is None


def test_a_name_with_a_space_or_percent_is_percent_encoded(repo: Path, tmp_path: Path):
    write_tree(repo, {"src/my kernels/50%.cu": KERNEL})
    uris = [p[1] for p in _places(_sarif(repo / "src", tmp_path))]
    assert uris == ["src/CMakeLists.txt", "src/my%20kernels/50%25.cu", "src/reduce.cu"]


def test_messages_are_sentences_and_quote_the_users_code(repo: Path, tmp_path: Path):
    results = _sarif(repo / "src", tmp_path)["runs"][0]["results"]
    assert [r["message"]["text"] for r in results] == [PK501_TEXT, PK201_TEXT]
    assert "solver" in rules.of("PK501").fix   # the rule's help keeps its example; results do not quote it


def test_fingerprints_are_stable_across_runs_and_a_line_shift(repo: Path, tmp_path: Path):
    def prints(log: dict) -> list[tuple[str, str, str]]:
        return [(r["ruleId"], r["partialFingerprints"]["primaryLocationLineHash"],
                 r["partialFingerprints"]["portkitFingerprint/v1"]) for r in log["runs"][0]["results"]]

    first = _sarif(repo / "src", tmp_path, "1.sarif")
    assert prints(_sarif(repo / "src", tmp_path, "2.sarif")) == prints(first)
    (repo / "src" / "reduce.cu").write_text("// a comment\n\n\n" + KERNEL.replace("\n__global__", "\n  __global__"))
    shifted = _sarif(repo / "src", tmp_path, "3.sarif")
    assert prints(shifted) == prints(first)
    assert [p[2] for p in _places(shifted)] == [2, 5]
    assert all(len(h.split(":")[0]) == 16 and h.endswith(":1") for _, h, _ in prints(first))


def test_the_same_finding_on_identical_lines_is_counted(tmp_path: Path):
    tree = write_tree(tmp_path / "plain", {"k.cu": KERNEL + KERNEL.splitlines()[1] + "\n"})
    hashes = [r["partialFingerprints"]["primaryLocationLineHash"] for r in _sarif(tree, tmp_path)["runs"][0]["results"]]
    assert len(hashes) == 2 and hashes[0].split(":")[0] == hashes[1].split(":")[0]
    assert [h.split(":")[1] for h in hashes] == ["1", "2"]


def test_rules_carry_what_github_reads(repo: Path, tmp_path: Path):
    log = _sarif(repo / "src", tmp_path)
    driver = log["runs"][0]["tool"]["driver"]
    by_id = {r["id"]: r for r in driver["rules"]}
    assert [r["id"] for r in driver["rules"]] == [r.code for r in rules.all_rules()]
    pk201 = by_id["PK201"]
    assert pk201["properties"] == {"tags": ["portability", "warp"], "precision": "high",
                                   "problem.severity": "error", "severity": "high"}
    assert pk201["defaultConfiguration"] == {"level": "error"}
    assert pk201["helpUri"] == "https://github.com/portkit/portkit/blob/main/docs/rules.md#pk201-hardcoded-warp-size"
    assert pk201["help"]["markdown"].startswith("**What it finds**\n\n")
    assert "**Example**\n\n```\nint lane = threadIdx.x % 32;" in pk201["help"]["markdown"]
    assert pk201["help"]["markdown"].endswith("\n\n`portkit explain PK201` prints this help.")
    for rule in driver["rules"]:
        assert 0 < len(rule["shortDescription"]["text"]) <= 1024 and 0 < len(rule["fullDescription"]["text"]) <= 1024
        assert rule["help"]["text"] and len(rule["name"]) <= 255 and len(rule["properties"]["tags"]) <= 10
    text = json.dumps(log)
    assert "security-severity" not in text   # portability findings are not security alerts
    assert all(set(r["properties"]) == {"severity", "category", "effortHours"} for r in log["runs"][0]["results"])


def test_a_run_over_githubs_result_limit_keeps_the_most_severe(tmp_path: Path):
    def finding(line: int, severity: str) -> dict:
        return {"code": "PK201", "severity": severity, "category": "warp", "path": "k.cu", "line": line,
                "column": 1, "end_line": line, "end_column": 5, "message": f"m{line}", "fix": "",
                "snippet": f"s{line}", "fingerprint": f"f{line}", "platform": ""}

    base = sarif.SourceRoot("file:///r/")
    log = sarif.log([load_record(FindingRecord, finding(k, s)) for k, s in ((1, "low"), (2, "high"), (3, "medium"),
                                                                           (4, "high"))],
                    "/r", "1.0", base=base, limit=2)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    run = log["runs"][0]
    assert [r["message"]["text"] for r in run["results"]] == ["m2.", "m4."]
    assert run["properties"] == {"resultsOmitted": 2}
    assert run["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": [{
        "level": "warning", "message": {"text": "4 findings; this log carries the 2 most severe (GitHub code "
                                                "scanning accepts at most 25,000 results per run); `--format "
                                                "json` lists them all."}}]}]
    assert sarif.MAX_RESULTS == 25_000


def test_the_repositorys_own_fixtures_validate(tmp_path: Path):
    """The rule fixtures in this repository, audited from inside it: paths from the repository root."""
    if worktree.root_of(REPO) != REPO:
        pytest.skip("the repository is not a git checkout here")
    log = _sarif(REPO / "fixtures" / "rules", tmp_path)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris and all(u.startswith("fixtures/rules/") for u in uris)
    assert all((REPO / u).is_file() for u in uris if "%" not in u)


@pytest.mark.parametrize("line, fix", [
    ("project(cuda LANGUAGES CXX CUDA)  ", "write `project(cuda LANGUAGES CXX HIP)` (CMake 3.21+) and mark the .cu "
     "sources `LANGUAGE HIP` (`set_source_files_properties(... PROPERTIES LANGUAGE HIP)`), or build them as C++ "
     "with `hip::device` linked"),
    ("set_source_files_properties(k.cu PROPERTIES LANGUAGE CUDA)", "write `set_source_files_properties(k.cu "
     "PROPERTIES LANGUAGE HIP)` (CMake 3.21+, with `enable_language(HIP)`), or build the sources as C++ with "
     "`hip::device` linked"),
    ("project(x LANGUAGES CUDA " + "A" * 120 + ")", None),   # too long to quote: the rule's own fix
])
def test_pk501_words_its_fix_from_the_users_line(line: str, fix: str | None):
    from portkit.rules.PK501_cmake_cuda_language import fix_for
    assert fix_for(line) == fix
