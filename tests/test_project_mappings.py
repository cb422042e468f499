"""Project mapping files (issue 33, item 4): a team's own records, `[tool.portkit] mappings` and
`--mappings FILE`, applied by convert, audit, check and the compat header, listed by `portkit mappings`."""

from __future__ import annotations

import csv
import io
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from conftest import isolated_git
from portkit.cli.app import main
from portkit.core.source import SourceFile
from portkit.project import config, mapping_files, pipeline
from portkit.project.settings import scan_options
from portkit.commands.scan.walk import scan_source
from portkit.core.tables.mappings import default_db
from portkit.core.tables.project_tables import ProjectTable

WRAPPERS = """\
schema = 1
family = "team"
title = "Our CUDA wrappers"
source = "src/wrappers.h"
entries = [
  { cuda = "MY_CUDA_CHECK", hip = "MY_HIP_CHECK", kind = "macro", status = "supported" },
  { cuda = "myCudaAlloc", hip = "myHipAlloc", kind = "function", status = "supported" },
  { cuda = "myCudaGraphLaunch", kind = "function", status = "unsupported", note = "our HIP layer has no graphs" },
]
"""

MAIN = """\
#include <cuda_runtime.h>
#include "wrappers.h"

int main() {
    float *d = nullptr;
    MY_CUDA_CHECK(cudaMalloc(&d, 64 * sizeof(float)));
    myCudaAlloc(&d, 64);
    myCudaGraphLaunch(0);
    MY_CUDA_CHECK(cudaFree(d));
    return 0;
}
"""

MAIN_HIP = """\
#include <hip/hip_runtime.h>
#include "wrappers.h"

int main() {
    float *d = nullptr;
    MY_HIP_CHECK(hipMalloc(&d, 64 * sizeof(float)));
    myHipAlloc(&d, 64);
    myCudaGraphLaunch(0);
    MY_HIP_CHECK(hipFree(d));
    return 0;
}
"""

ALLOC = """\
#include <cuda_runtime.h>

void *grab(size_t n) {
    void *p = nullptr;
    if (myCudaAlloc(&p, n) != cudaSuccess) return nullptr;
    return p;
}
"""

ALLOC_HIP = ALLOC.replace("cuda_runtime.h", "hip/hip_runtime.h").replace("myCudaAlloc", "myHipAlloc") \
    .replace("cudaSuccess", "hipSuccess")

PK001_LINE = "main.cu:8:5: PK001 myCudaGraphLaunch has no HIP equivalent: our HIP layer has no graphs"


def project(root: Path, config_text: str = '[tool.portkit]\nmappings = ["cuda_wrappers.toml"]\n') -> Path:
    """The tiny project: a pyproject naming the team's mapping file, and two sources using its names."""
    (root / "src").mkdir(parents=True)
    (root / "pyproject.toml").write_text(config_text)
    (root / "cuda_wrappers.toml").write_text(WRAPPERS)
    (root / "src" / "main.cu").write_text(MAIN)
    (root / "src" / "alloc.cu").write_text(ALLOC)
    return root


@pytest.fixture
def team(tmp_path: Path, monkeypatch) -> Path:
    root = project(tmp_path / "team")
    (root / ".git").mkdir()   # the configuration search stops here, never reading the test machine's
    monkeypatch.chdir(root)
    return root


# what convert and audit say first on standard error when the team's configuration applies
CONFIGURATION = "portkit: configuration: pyproject.toml [tool.portkit]\n"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


# convert --------------------------------------------------------------------------------------

def test_convert_applies_the_configured_mapping_file(team: Path, capsys):
    code, out, err = run(capsys, "convert", "src", "-o", "out", "--rocm", "6.2")
    assert (code, err) == (0, CONFIGURATION)
    assert (team / "out" / "main.cu").read_text() == MAIN_HIP
    assert (team / "out" / "alloc.cu").read_text() == ALLOC_HIP
    assert f"  {PK001_LINE}\n" in out


def test_convert_with_two_workers_writes_what_one_writes(team: Path, capsys):
    assert run(capsys, "convert", "src", "-o", "one", "-j", "1", "--rocm", "6.2")[0] == 0
    assert run(capsys, "convert", "src", "-o", "two", "-j", "2", "--rocm", "6.2")[0] == 0
    for name in ("main.cu", "alloc.cu"):
        assert (team / "two" / name).read_bytes() == (team / "one" / name).read_bytes()
    assert (team / "two" / "main.cu").read_text() == MAIN_HIP


def test_the_records_travel_in_the_options_to_a_fresh_process(team: Path):
    """A worker sees the project's records through the Options it is handed, not through state of
    the process that read the files: a new interpreter, given only the pickled options, converts alike."""
    options = scan_options(rocm="6.2", mappings=mapping_files.read(config.find()))
    script = ("import pickle, sys; from portkit.core.source import SourceFile; from portkit.commands.scan.walk import scan_source; "
              "from portkit.core.edits import apply_edits; options, data = pickle.load(sys.stdin.buffer); "
              "scan = scan_source(SourceFile.from_bytes('main.cu', data), options); "
              "sys.stdout.buffer.write(apply_edits(data, scan.edits))")
    proc = subprocess.run([sys.executable, "-c", script], input=pickle.dumps((options, MAIN.encode())),
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == MAIN_HIP


def test_mappings_on_the_command_line_without_a_configuration(tmp_path: Path, monkeypatch, capsys):
    root = project(tmp_path / "plain", config_text="")
    (root / "pyproject.toml").unlink()
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    assert run(capsys, "convert", "src", "-o", "without", "--rocm", "6.2")[0] == 0
    assert "myCudaAlloc(&d, 64);" in (root / "without" / "main.cu").read_text()
    code, _, err = run(capsys, "convert", "src", "-o", "with", "--rocm", "6.2", "--mappings", "cuda_wrappers.toml")
    assert (code, err) == (0, "")
    assert (root / "with" / "main.cu").read_text() == MAIN_HIP


def test_a_project_record_takes_the_place_of_a_shipped_one(team: Path, capsys):
    (team / "allocator.toml").write_text(
        'schema = 1\nfamily = "alloc"\ntitle = "Our allocator"\nsource = "team decision"\nentries = [\n'
        '  { cuda = "cudaMalloc", hip = "teamMalloc", kind = "function", status = "supported" },\n]\n')
    code, _, err = run(capsys, "convert", "src", "-o", "out", "--rocm", "6.2", "--mappings", "allocator.toml")
    assert (code, err) == (0, CONFIGURATION)
    assert "    MY_HIP_CHECK(teamMalloc(&d, 64 * sizeof(float)));\n" in (team / "out" / "main.cu").read_text()
    assert "    MY_HIP_CHECK(hipFree(d));\n" in (team / "out" / "main.cu").read_text()


def test_compat_header_maps_the_project_names(team: Path, capsys):
    code, _, err = run(capsys, "convert", "--compat-header", "src/compat.h", "--in-place", "--rocm", "6.2", "src")
    assert (code, err) == (0, "")
    assert (team / "src" / "compat.h").read_text() == (
        "// Generated by portkit: the CUDA names this project uses, mapped to HIP (ROCm 6.2).\n"
        "// Compiled only for AMD GPUs; regenerate after changing the code, do not edit by hand:\n"
        "//   portkit convert --compat-header compat.h --in-place --rocm 6.2 .\n"
        "#pragma once\n"
        "#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)\n\n"
        "#include <hip/hip_runtime.h>\n\n"
        "// enumerators and constants\n#define cudaSuccess hipSuccess\n\n"
        "// macros\n#define MY_CUDA_CHECK MY_HIP_CHECK\n\n"
        "// functions\n#define cudaFree hipFree\n#define cudaMalloc hipMalloc\n#define myCudaAlloc myHipAlloc\n\n"
        "#endif  // AMD\n")


def test_compat_header_names_a_command_line_mapping_file_in_its_command(team: Path, capsys):
    (team / "pyproject.toml").write_text("")
    code, _, _ = run(capsys, "convert", "--compat-header", "src/compat.h", "--in-place", "--rocm", "6.2",
                     "--mappings", "cuda_wrappers.toml", "src")
    assert code == 0
    assert ("//   portkit convert --compat-header compat.h --in-place --rocm 6.2 --mappings cuda_wrappers.toml .\n"
            in (team / "src" / "compat.h").read_text())


# audit ----------------------------------------------------------------------------------------

def test_audit_reports_an_unsupported_project_record_as_pk001(team: Path, capsys):
    code, out, err = run(capsys, "audit", "src", "--format", "json", "--rocm", "6.2")
    assert (code, err) == (0, CONFIGURATION)
    doc = json.loads(out)
    found = [(f["code"], f["path"], f["line"], f["column"], f["message"]) for f in doc["findings"]]
    assert found == [("PK001", "main.cu", 8, 5, "myCudaGraphLaunch has no HIP equivalent: our HIP layer has no graphs")]
    assert doc["tool"]["mappings"]["names"] == len(default_db().names) + 3   # the tables it ran with


def test_audit_without_the_file_sees_no_project_name(team: Path, capsys):
    (team / "pyproject.toml").write_text("")
    code, out, _ = run(capsys, "audit", "src", "--format", "json", "--rocm", "6.2")
    assert code == 0 and json.loads(out)["findings"] == []


# portkit mappings -----------------------------------------------------------------------------

def test_mappings_lists_a_project_record_with_its_file(team: Path, capsys):
    assert run(capsys, "mappings", "myCudaGraphLaunch") == (0, (
        "cuda    myCudaGraphLaunch\nfamily  team\nfile    cuda_wrappers.toml\nkind    function\n"
        "status  unsupported\nnote    our HIP layer has no graphs\n"), "")


def test_mappings_coverage_marks_the_project_family(team: Path, capsys):
    code, out, _ = run(capsys, "mappings")
    assert code == 0
    row = next(line for line in out.splitlines() if "team" in line and "│" in line)
    assert [c.strip() for c in row.split("│")[1:-1]] == ["team *", "3", "2", "0", "1", "0"]
    assert out.splitlines()[-1] == "* team: from the project mapping file cuda_wrappers.toml"


def test_mappings_json_export_carries_the_file(team: Path, capsys):
    code, out, _ = run(capsys, "mappings", "--format", "json")
    doc = json.loads(out)
    assert code == 0
    assert [e for e in doc["entries"] if e["family"] == "team"] == [
        {"cuda": "MY_CUDA_CHECK", "family": "team", "file": "cuda_wrappers.toml", "kind": "macro",
         "status": "supported", "hip": "MY_HIP_CHECK"},
        {"cuda": "myCudaAlloc", "family": "team", "file": "cuda_wrappers.toml", "kind": "function",
         "status": "supported", "hip": "myHipAlloc"},
        {"cuda": "myCudaGraphLaunch", "family": "team", "file": "cuda_wrappers.toml", "kind": "function",
         "status": "unsupported", "note": "our HIP layer has no graphs"}]
    assert next(f for f in doc["families"] if f["family"] == "team") == {
        "family": "team", "title": "Our CUDA wrappers", "file": "cuda_wrappers.toml", "known": 3, "with_hip": 2,
        "with_roc": 0, "unsupported": 1, "partial": 0}


def test_mappings_csv_export_has_a_file_column_for_project_records(team: Path, capsys):
    code, out, _ = run(capsys, "mappings", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and list(rows[0])[-1] == "file"
    assert [(r["cuda"], r["file"]) for r in rows if r["file"]] == [
        ("MY_CUDA_CHECK", "cuda_wrappers.toml"), ("myCudaAlloc", "cuda_wrappers.toml"),
        ("myCudaGraphLaunch", "cuda_wrappers.toml")]


# validation: one line naming the user's file and entry, exit 2 --------------------------------

def toml_error(text: str) -> str:
    """The TOML reader's own message (its wording differs between Python releases)."""
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return str(exc)
    raise AssertionError(f"{text!r} reads")


BAD_KIND = WRAPPERS.replace('kind = "function", status = "supported"', 'kind = "fn", status = "supported"')
NO_STATUS = WRAPPERS.replace('kind = "macro", status = "supported" ', 'kind = "macro" ')
TWICE = WRAPPERS.replace("]\n", '  { cuda = "myCudaAlloc", hip = "otherAlloc", kind = "function", status = "supported" },\n]\n')
SHIPPED_FAMILY = WRAPPERS.replace('family = "team"', 'family = "runtime"')


@pytest.mark.parametrize("text, message", [
    (BAD_KIND, "cuda_wrappers.toml: entry 2 (myCudaAlloc): bad kind 'fn' (one of function, type, enum, macro, "
               "header, namespace)"),
    (NO_STATUS, "cuda_wrappers.toml: entry 1 (MY_CUDA_CHECK): missing field 'status'"),
    (TWICE, "cuda_wrappers.toml: entry 4 (myCudaAlloc): duplicate CUDA name 'myCudaAlloc' (also in "
            "cuda_wrappers.toml: entry 2)"),
    (SHIPPED_FAMILY, "cuda_wrappers.toml: family 'runtime' is a shipped family's name; give the project's records a "
                     "family of their own (e.g. 'team')"),
    ("schema = 1\n", "cuda_wrappers.toml: missing top-level key 'family'"),
    ("entries = [", f"cuda_wrappers.toml: {toml_error('entries = [')}"),
])
@pytest.mark.parametrize("command", [["convert", "src", "--diff"], ["audit", "src"], ["mappings"]])
def test_a_bad_project_mapping_file_is_one_line_and_exit_2(team: Path, capsys, text: str, message: str,
                                                            command: list[str]):
    (team / "cuda_wrappers.toml").write_text(text)
    assert run(capsys, *command) == (2, "", f"portkit: error: {message}\n")


def test_a_name_in_two_project_files_is_an_error(team: Path, capsys):
    (team / "more.toml").write_text(WRAPPERS.replace('family = "team"', 'family = "more"'))
    (team / "pyproject.toml").write_text('[tool.portkit]\nmappings = ["cuda_wrappers.toml", "more.toml"]\n')
    assert run(capsys, "convert", "src", "--diff") == (2, "", (
        "portkit: error: more.toml: entry 1 (MY_CUDA_CHECK): duplicate CUDA name 'MY_CUDA_CHECK' "
        "(also in cuda_wrappers.toml: entry 1)\n"))


def test_a_missing_project_mapping_file_is_one_line(team: Path, capsys):
    (team / "pyproject.toml").write_text('[tool.portkit]\nmappings = ["cuda/wrappers.toml"]\n')
    assert run(capsys, "audit", "src") == (2, "", (
        "portkit: error: cuda/wrappers.toml: cannot read the project mapping file named by `mappings` in "
        "pyproject.toml [tool.portkit]: No such file or directory\n"))
    assert run(capsys, "convert", "src", "--diff", "--mappings", "nowhere.toml") == (2, "", (
        "portkit: error: cuda/wrappers.toml: cannot read the project mapping file named by `mappings` in "
        "pyproject.toml [tool.portkit]: No such file or directory\n"))
    (team / "pyproject.toml").write_text("")
    assert run(capsys, "convert", "src", "--diff", "--mappings", "nowhere.toml") == (2, "", (
        "portkit: error: nowhere.toml: cannot read the project mapping file given with --mappings: "
        "No such file or directory\n"))


def test_config_paths_resolve_from_the_config_folder(team: Path, monkeypatch, capsys):
    monkeypatch.chdir(team / "src")
    code, _, err = run(capsys, "convert", ".", "-o", "../out", "--rocm", "6.2")
    assert (code, err) == (0, f"portkit: configuration: {team / 'pyproject.toml'} [tool.portkit]\n")
    assert (team / "out" / "main.cu").read_text() == MAIN_HIP


@pytest.mark.parametrize("path", ["../cuda_wrappers.toml", "/etc/passwd"])
def test_a_config_path_may_not_leave_the_project(team: Path, capsys, path: str):
    (team / "pyproject.toml").write_text(f'[tool.portkit]\nmappings = ["{path}"]\n')
    assert run(capsys, "convert", "src", "--diff") == (2, "", (
        f"portkit: error: {team / 'pyproject.toml'}: `mappings`: {path!r} must be a relative path inside the "
        f"project (no `..`, not absolute)\n"))


def test_a_config_path_may_not_go_through_a_symbolic_link(team: Path, tmp_path: Path, capsys):
    outside = tmp_path / "elsewhere.toml"
    outside.write_text(WRAPPERS)
    (team / "cuda_wrappers.toml").unlink()
    (team / "cuda_wrappers.toml").symlink_to(outside)
    assert run(capsys, "convert", "src", "--diff") == (2, "", (
        f"portkit: error: cuda_wrappers.toml: {team / 'cuda_wrappers.toml'} is a symbolic link; a mapping file "
        f"named by `mappings` in pyproject.toml [tool.portkit] is read only as a plain file inside the project "
        f"(the commit gate reads it from git, where a link is no file)\n"))


# the gate: its tree facts and its policy ---------------------------------------------------------

def test_the_gate_facts_key_changes_with_a_mapping_file(team: Path):
    cfg = config.find()
    entries = [e for e in pipeline.discover([team])[1]]

    def key(text: str) -> str:
        return pipeline._tree_key(team, entries, scan_options(mappings=(ProjectTable("m.toml", text),)), cfg)
    assert key(WRAPPERS) == key(WRAPPERS)
    assert key(WRAPPERS) != key(WRAPPERS.replace("our HIP layer has no graphs", "none"))
    assert key(WRAPPERS) != pipeline._tree_key(team, entries, scan_options(), cfg)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """The project under git, committed on main."""
    isolated_git(tmp_path, monkeypatch)
    for name in ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF"):
        monkeypatch.delenv(name, raising=False)
    root = project(tmp_path / "repo")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    monkeypatch.chdir(root)
    return root


NEW_CALL = "void later() { myCudaGraphLaunch(1); }\n"
NEW_LINE = MAIN.count("\n") + 1


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD").strip()


def test_check_blocks_a_new_use_of_an_unsupported_project_name(repo: Path, capsys):
    (repo / "src" / "main.cu").write_text(MAIN + NEW_CALL)
    git(repo, "add", "src/main.cu")
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert out.splitlines()[0] == (f"src/main.cu:{NEW_LINE}:16: PK001 myCudaGraphLaunch has no HIP equivalent: "
                                   f"our HIP layer has no graphs")


def test_check_with_mappings_on_the_command_line(repo: Path, capsys):
    (repo / "pyproject.toml").write_text("")
    commit_all(repo, "no configuration")
    (repo / "src" / "main.cu").write_text(MAIN + NEW_CALL)
    git(repo, "add", "src/main.cu")
    assert run(capsys, "check")[0] == 0
    code, out, _ = run(capsys, "check", "--mappings", "cuda_wrappers.toml")
    assert code == 1 and out.startswith(f"src/main.cu:{NEW_LINE}:16: PK001 myCudaGraphLaunch ")


def test_a_pull_request_cannot_call_its_own_name_portable(repo: Path, capsys):
    """The PR adds a call of an unsupported name and, in the same change, a record calling it
    supported: the gate applies the base's mapping file and reports the change of policy."""
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "src" / "main.cu").write_text(MAIN + NEW_CALL)
    (repo / "cuda_wrappers.toml").write_text(WRAPPERS.replace(
        'kind = "function", status = "unsupported", note = "our HIP layer has no graphs"',
        'hip = "myHipGraphLaunch", kind = "function", status = "supported"'))
    commit_all(repo, "a graph launch, and a record that lets it through")
    code, out, _ = run(capsys, "check", "--diff-base", base)
    assert code == 1
    assert [line for line in out.splitlines() if not line.startswith("    fix:")][:2] == [
        f"src/main.cu:{NEW_LINE}:16: PK001 myCudaGraphLaunch has no HIP equivalent: our HIP layer has no graphs",
        f"pyproject.toml:1:1: note: PK902 this change alters the gate's policy (mappings cuda_wrappers.toml "
        f"changed: myCudaGraphLaunch); this run applied the policy of commit {base[:12]}"]


def test_a_pull_request_adding_a_mapping_file_is_a_policy_change(repo: Path, capsys):
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "more.toml").write_text(WRAPPERS.replace('family = "team"', 'family = "more"').replace("MY_CUDA", "X")
                                    .replace("myCudaAlloc", "y").replace("myCudaGraphLaunch", "z"))
    (repo / "pyproject.toml").write_text('[tool.portkit]\nmappings = ["cuda_wrappers.toml", "more.toml"]\n')
    (repo / "src" / "alloc.cu").write_text(ALLOC + NEW_CALL)
    commit_all(repo, "another mapping file")
    code, out, _ = run(capsys, "check", "--diff-base", base)
    assert code == 1
    assert [line for line in out.splitlines() if not line.startswith("    fix:")][1] == (f"pyproject.toml:1:1: note: PK902 this change alters the gate's policy (mappings + "
                                   f"more.toml); this run applied the policy of commit {base[:12]}")


def test_the_baseline_applies_the_project_mapping_files(repo: Path, capsys):
    assert run(capsys, "baseline")[0] == 0
    accepted = json.loads((repo / ".portkit-baseline.json").read_text())
    assert [f["code"] for f in accepted["findings"]] == ["PK001"]
