"""Issue 46 (defects 3, 5, 6, 8): every field of a configuration, a project mapping file, a baseline
and a saved audit is checked by type and by a full-match pattern, at every depth.

First the named defects, each with its exact line; then a mutation sweep: from a valid document of
each kind, every key path (a list stands for its first item) is given other values in turn (an
integer, a float, a boolean, a string, a list, a list nested 10,000 deep, a table, the value with a
trailing newline, a superscript digit, a number of 401 and of 5,000 digits), and portkit, run
through its command line in this process, exits 0, 1 or 2 with no traceback and no "internal
error"; a 2 is one line, `portkit: error: ...`, naming the file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Iterator

import pytest

from conftest import REPO
from portkit.cli import app
from portkit.cli.app import main

SAMPLE = REPO / "fixtures" / "sample_project"
DEEP = "[" * 10000 + "]" * 10000
TOO_LONG = "9" * 5000            # int() refuses more than 4300 digits
HUGE = "1" + "0" * 400           # reads, but is past a float's range


class Raw(str):
    """Text written into the document as it is (a number or a nesting no serializer writes)."""


def toml_value(value: object) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)   # JSON's escapes are TOML's basic-string escapes
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"


def toml_doc(doc: dict) -> str:
    return "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in doc.items())


def json_doc(doc: object) -> str:
    raws: list[str] = []

    def plain(value: object) -> object:
        if isinstance(value, Raw):
            raws.append(value)
            return f"@@raw{len(raws) - 1}@@"
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return [plain(v) for v in value] if isinstance(value, list) else value
    text = json.dumps(plain(doc))
    for k, raw in enumerate(raws):
        text = text.replace(f'"@@raw{k}@@"', raw)
    return text


def key_paths(doc: object, prefix: tuple = ()) -> Iterator[tuple]:
    """Every key path of `doc` at every depth; a list's first item stands for all of them."""
    if prefix:
        yield prefix
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from key_paths(value, (*prefix, key))
    elif isinstance(doc, list) and doc:
        yield from key_paths(doc[0], (*prefix, 0))


def mutants(doc: object, path: tuple, values: list) -> Iterator[tuple[str, bool]]:
    """Replace the value at `path` in `doc` by each of `values` in turn, then (a table) rename its
    first key; yields what was done and whether a full-match check must refuse it (the value with
    a trailing newline, a key no schema has), with `doc` changed in place; restores `doc` at the end."""
    *parents, last = path
    node = doc
    for p in parents:
        node = node[p]
    original = node[last]
    own = [original + "\n"] if isinstance(original, str) else []
    for value in [*values, "\u00b2", *own]:
        node[last] = value
        yield f"{path} = {value!r:.60}", value in own
    if isinstance(original, dict) and original:
        first = next(iter(original))
        for key in ("\u00b2", first + "\n", TOO_LONG):
            node[last] = {key if k == first else k: v for k, v in original.items()}
            yield f"{path}: key {first!r} renamed {key!r:.20}", True
    node[last] = original


TOML_VALUES = [7, 1.5, True, "x", [1], Raw(DEEP), {"a": 1}, Raw(TOO_LONG), Raw(HUGE)]
JSON_VALUES = [*TOML_VALUES, None, Raw("NaN"), Raw("1e400"), -1, Raw('"\\ud800"')]   # a lone surrogate


def defaults(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    """Every option's default, its subcommands' too, as text: what a run could leave changed."""
    found = []
    for action in parser._actions:
        found.append((action.dest, repr(action.default)))
        for sub in (action.choices or {}).values() if isinstance(action, argparse._SubParsersAction) else ():
            found.extend(defaults(sub))
    return found


class Parsers:
    """portkit's parsers built once per kind (the gate commands' alone, the whole one) and reused.
    The sweeps run `portkit` ~3,800 times in this process, and building its parser (argparse and its
    gettext look-ups) was half of each run's CPU. argparse copies a list default before extending
    it, so a run leaves its parser as it was; `unchanged` checks that it did."""

    def __init__(self, build=app.build_parser):
        self.build, self.made = build, {}

    def get(self, command: str | None = None) -> argparse.ArgumentParser:
        kind = command if command in app.GATE_COMMANDS else None
        if kind not in self.made:
            parser = self.build(command)
            self.made[kind] = (parser, defaults(parser))
        return self.made[kind][0]

    def unchanged(self) -> bool:
        return all(defaults(parser) == before for parser, before in self.made.values())


@pytest.fixture(autouse=True)
def _one_parser(monkeypatch):
    """Each test's runs share its parsers; a test whose runs changed one fails."""
    parsers = Parsers()
    monkeypatch.setattr(app, "build_parser", parsers.get)
    yield
    assert parsers.unchanged(), "a run changed the parser's defaults"


def test_a_reused_parser_gives_each_run_its_own_options(capsys):
    """Two runs through one parser: the second does not see the first's list options, and a run
    that changed a default would be caught."""
    parsers = Parsers()
    parser = parsers.get("audit")
    assert parsers.get("convert") is parser and parsers.get("check") is not parser
    first = parser.parse_args(["audit", "x", "--exclude", "a", "--select", "PK2"])
    second = parser.parse_args(["audit", "x"])
    assert (first.exclude, first.select, second.exclude, second.select) == (["a"], ["PK2"], [], [])
    assert parsers.unchanged()
    audit = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["audit"]
    audit._option_string_actions["--exclude"].default.append("left over")
    assert not parsers.unchanged()


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def assert_no_internal_error(code: int, err: str, name: str, what: str) -> None:
    assert code in (0, 1, 2), (what, code, err)
    assert "Traceback" not in err and "internal error" not in err, (what, err)
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("portkit: error: ") and name in lines[0], (what, err)


# --- the project the configuration and mapping sweeps run on ---------------------------------------

TEAM = {
    "schema": 1, "family": "team", "title": "Our CUDA wrappers", "source": "src/wrappers.h",
    "roc_library": "rocTeam", "prefer_roc": False,
    "entries": [
        {"cuda": "teamCopy", "hip": "teamHipCopy", "kind": "function", "status": "partial", "note": "differs",
         "hip_since": "5.2", "hip_deprecated": "6.0", "cuda_since": "11.0", "cuda_deprecated": "12.0",
         "symbol_arg": 1, "drop_args": [3], "cast_args": {"2": "const void*"}, "insert_args": {"1": "0"},
         "default_args": {"2": "0"}, "defaults_in_hip": "6.0", "replace_args": {"1": "NULL"},
         "move_args": [{"from": 1, "before": 2, "count": 1}], "copy_args": [{"from": 1, "before": 2}],
         "roc": "rocCopy", "roc_since": "5.2", "roc_note": "arguments differ", "legacy": "teamOldCopy",
         "legacy_until": "6.0", "args_for": "hip", "arity_alias": {"4": "teamAlloc"}},
        {"cuda": "teamAlloc", "hip": "teamHipAlloc", "kind": "function", "status": "supported"},
        {"cuda": "teamOld", "hip": "teamOldHip", "kind": "function", "status": "removed", "hip_removed": "6.0",
         "cuda_removed": "12.0"},
        {"cuda": "team/cuda.h", "hip": "team/hip.h", "roc": "team/roc.h", "kind": "header", "status": "supported"},
        {"cuda": "team::cuda", "hip": "team::hip", "kind": "namespace", "status": "supported"},
        {"cuda": "teamGraph", "kind": "function", "status": "unsupported", "note": "no graphs"},
    ],
}
SOURCE = """#include <team/cuda.h>
#include <cuda_runtime.h>
__global__ void k(int *o) { o[threadIdx.x & 31] = 0; }
int main() {
    void *p = nullptr;
    teamAlloc(&p, 64);
    teamCopy(p, p, 64);
    teamCopy(p, p, 64, 0);
    teamOld(p);
    teamGraph(0);
    team::cuda::go();
    return 0;
}
"""
CONFIG = {"fail-on": "high", "select": ["PK2", "PK0"], "ignore": ["PK203"], "baseline": ".portkit-baseline.json",
          "exclude": ["third_party/**"], "rocm": "6.2", "amd-macros": ["TEAM_USE_HIP"], "mappings": ["team.toml"],
          "respect-gitignore": False}


@pytest.fixture
def team(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "team"
    (root / "src").mkdir(parents=True)
    (root / ".git").mkdir()   # the configuration search stops here
    (root / "src" / "k.cu").write_text(SOURCE)
    (root / "team.toml").write_text(toml_doc(TEAM))
    monkeypatch.chdir(root)
    return root


# --- defect 3: a mapping file's value cannot write lines into converted sources ----------------------

def _team_with(**fields) -> str:
    """The team's mapping file with fields of its records replaced: {entry index: {field: value}}."""
    doc = json.loads(json.dumps(TEAM))
    for index, values in fields.values():
        doc["entries"][index].update(values)
    return toml_doc(doc)


INJECTED = "team/hip.h>\n#define main() evil()\n#include <team/hip.h"


@pytest.mark.parametrize("fields, message", [
    ({"header": (3, {"hip": INJECTED})},
     "team.toml: entry 4 (team/cuda.h): hip header 'team/hip.h>\\n#define main() evil()\\n#include <team/hip.h' is "
     "not an include path (letters, digits, '_.+-' and '/' between them)"),
    ({"header": (3, {"hip": "team/hip.h\n"})},
     "team.toml: entry 4 (team/cuda.h): hip header 'team/hip.h\\n' is not an include path (letters, digits, '_.+-' "
     "and '/' between them)"),
    ({"header": (3, {"roc": "team/roc.h\"\n#define main() evil()"})},
     "team.toml: entry 4 (team/cuda.h): roc header 'team/roc.h\"\\n#define main() evil()' is not an include path "
     "(letters, digits, '_.+-' and '/' between them)"),
    ({"name": (1, {"hip": "teamHipAlloc\n"})},
     "team.toml: entry 2 (teamAlloc): hip name 'teamHipAlloc\\n' is not an identifier"),
    ({"cuda": (1, {"cuda": "teamAlloc\n"})}, "team.toml: entry 2 (teamAlloc\\x0a): 'teamAlloc\\n' is not an identifier"),
    ({"roc": (0, {"roc": "rocCopy\n"})}, "team.toml: entry 1 (teamCopy): roc name 'rocCopy\\n' is not a (qualified) name"),
    ({"legacy": (0, {"legacy": "teamOldCopy\n"})},
     "team.toml: entry 1 (teamCopy): legacy name 'teamOldCopy\\n' is not an identifier"),
    ({"namespace": (4, {"hip": "team::hip\n"})},
     "team.toml: entry 5 (team::cuda): hip name 'team::hip\\n' must keep the enclosing namespaces of 'team::cuda'"),
    ({"cast": (0, {"cast_args": {"2": "const void*\n"}})},
     "team.toml: entry 1 (teamCopy): cast_args must map argument numbers to pointer types such as 'const void*' or "
     "'size_t*'"),
    ({"insert": (0, {"insert_args": {"1": "0\n"}})},
     "team.toml: entry 1 (teamCopy): insert_args must map argument numbers to argument text (names or numbers, "
     "', '-separated)"),
    ({"version": (0, {"hip_since": "5.2\n"})},
     "team.toml: entry 1 (teamCopy): field 'hip_since': not a version: '5.2\\n' (expected X.Y or X.Y.Z)"),
    ({"note": (5, {"note": "no graphs\nk.cu:1:1: PK000 all clear"})},
     "team.toml: entry 6 (teamGraph): field 'note' must be one line of text (no control characters)"),
])
def test_a_mapping_value_with_a_newline_is_refused(team: Path, capsys, fields: dict, message: str):
    """`^...$` took a trailing newline, and header records were not checked at all: the converted
    file then held the mapping file's lines (`#define main() evil()`)."""
    (team / "team.toml").write_text(_team_with(**fields))
    (team / "portkit.toml").write_text('mappings = ["team.toml"]\n')
    assert run(capsys, "convert", "src", "-o", "out") == (2, "", f"portkit: error: {message}\n")
    assert not (team / "out").exists()


# --- defect 6: a malformed mapping file is one line ---------------------------------------------------

@pytest.mark.parametrize("fields, message", [
    ({"cast": (0, {"cast_args": {"\u00b2": "const void*"}})},
     "cast_args must map argument numbers to pointer types such as 'const void*' or 'size_t*'"),
    ({"cast": (0, {"cast_args": {TOO_LONG: "const void*"}})},
     "cast_args must map argument numbers to pointer types such as 'const void*' or 'size_t*'"),
    ({"alias": (0, {"arity_alias": {"\u0663": "teamAlloc"}})}, "arity_alias must map argument numbers to CUDA names"),
    ({"default": (0, {"default_args": {"\uff12": "0"}})},
     "default_args must map argument numbers to argument text (a name or a number)"),
    ({"version": (0, {"hip_since": "\u0665.2"})}, "field 'hip_since': not a version: '\u0665.2' (expected X.Y or X.Y.Z)"),
    ({"version": (0, {"hip_since": "5." + TOO_LONG})},
     f"field 'hip_since': not a version: {('5.' + TOO_LONG)[:39]!r:.40} (expected X.Y or X.Y.Z)"),
])
def test_a_malformed_mapping_record_is_one_line(team: Path, capsys, fields: dict, message: str):
    """A superscript digit passed str.isdigit() and failed int(); 5,000 digits are more than int()
    reads: both were internal errors. A full-width or Arabic-Indic digit was read as a position."""
    (team / "team.toml").write_text(_team_with(**fields))
    assert run(capsys, "convert", "src", "--diff", "--mappings", "team.toml") == (
        2, "", f"portkit: error: team.toml: entry 1 (teamCopy): {message}\n")


@pytest.mark.parametrize("text, message", [
    ("entries = " + DEEP + "\n", "nested too deeply"),
    ("schema = " + TOO_LONG + "\n", "an integer with more than 4300 digits"),
    (toml_doc({**TEAM, "schema": True}), "unsupported schema True (this portkit reads 1)"),
    (toml_doc({**TEAM, "family": "team\n"}), "'family' must be a string (one line of text)"),
    (toml_doc({**TEAM, "family": "my team"}), "family 'my team' is not a name (letters, digits, '_.+-')"),
    (toml_doc({**TEAM, "prefer_roc": "yes"}), "'prefer_roc' must be true or false"),
])
def test_a_malformed_mapping_file_is_one_line(team: Path, capsys, text: str, message: str):
    (team / "team.toml").write_text(text)
    assert run(capsys, "convert", "src", "--diff", "--mappings", "team.toml") == (
        2, "", f"portkit: error: team.toml: {message}\n")


# --- defect 5: a malformed configuration is one line -------------------------------------------------

@pytest.mark.parametrize("name, text, message", [
    ("pyproject.toml", "tool = 1\n", "`tool` must be a table ([tool]), not an integer"),
    ("pyproject.toml", "[tool]\nportkit = 5\n", "`tool.portkit` must be a table ([tool.portkit]), not an integer"),
    ("pyproject.toml", "[tool]\nportkit = [1]\n", "`tool.portkit` must be a table ([tool.portkit]), not an array"),
    ("pyproject.toml", '[tool]\nportkit = "x"\n', "`tool.portkit` must be a table ([tool.portkit]), not a string"),
    ("portkit.toml", "exclude = " + DEEP + "\n", "cannot read the configuration: nested too deeply"),
    ("pyproject.toml", "[tool.portkit]\nexclude = " + DEEP + "\n", "cannot read the configuration: nested too deeply"),
    ("portkit.toml", "select = " + TOO_LONG + "\n",
     "cannot read the configuration: an integer with more than 4300 digits"),
    ("portkit.toml", 'rocm = "6.2\\n"\n', "`rocm`: not a version: '6.2\\n' (expected X.Y or X.Y.Z)"),
    ("portkit.toml", 'rocm = "6.\u00b2"\n', "`rocm`: not a version: '6.\u00b2' (expected X.Y or X.Y.Z)"),
    ("portkit.toml", 'select = ["PKX"]\n', "`select`: PKX: matches no rule code (portkit rules lists them)"),
    ("portkit.toml", 'ignore = ["PK3;"]\n', "`ignore`: 'PK3;' is not a rule code or prefix (PK3, PK301, all)"),
    ("portkit.toml", 'amd-macros = ["TEAM_USE_HIP\\n"]\n',
     "`amd-macros` must be a list of strings, each a non-empty line of text"),
    ("portkit.toml", 'baseline = "base\\nline.json"\n',
     "`baseline` must be a relative path inside the project (no `..`, not absolute), got 'base\\nline.json'"),
])
@pytest.mark.parametrize("command", [["audit", "src", "-q"], ["check", "src/k.cu"]])
def test_a_malformed_configuration_is_one_line(team: Path, capsys, name: str, text: str, message: str,
                                               command: list[str]):
    """Each was an internal error (AttributeError, TypeError, RecursionError, ValueError), passed
    (a trailing newline), or named no file (`PKX: matches no rule code`)."""
    (team / name).write_text(text)
    assert run(capsys, *command) == (2, "", f"portkit: error: {team / name}: {message}\n")


# --- defect 8: every field of a saved audit the report reads is checked ------------------------------

@pytest.fixture(scope="module")
def saved_audit(tmp_path_factory) -> dict:
    """The sample project's audit, with every section only some trees have (a decision, deep
    mode, polyfills, an optional part, a tree that builds for AMD), so the report reads every field."""
    out = tmp_path_factory.mktemp("audit") / "audit.json"
    assert main(["audit", str(SAMPLE), "--format", "json", "-o", str(out), "-q"]) == 0
    doc = json.loads(out.read_text())
    doc["engine"] = {"name": "clang", "units": 2, "added": 1, "left_out_inactive": 0,
                     "fell_back": [{"path": "a.cu", "reason": "clang crashed"}]}
    doc["summary"]["polyfills"] = [{"name": "portkit_umin", "serves": ["umin"], "files": ["a.cu"], "note": "n"}]
    doc["summary"]["platforms"].update(builds_for_amd=True, amd_build_share=0.5,
                                       amd_implementations=[{"evidence": "k.hip beside k.cu"}])
    item = doc["estimate"]["items"][0]
    doc["estimate"]["items"].append({**item, "optional": "benchmarks"})
    doc["estimate"]["optional"] = [{"feature": "benchmarks", "person_weeks": {"p10": 0.1, "p50": 0.2, "p90": 0.3}}]
    doc["estimate"]["decisions"] = [{"label": item["label"], "alternative": "rocBLAS", "rocm_since": "6.0",
                                     "kernels": 1, "files": 1, "sites": item["count"], "blocker_sites": 1,
                                     "hours": {"p10": 1.0, "p50": 2.0, "p90": 3.0}, "optional": ""}]
    return doc


def test_a_lone_surrogate_in_a_shown_text_is_one_line(saved_audit: dict, tmp_path: Path, capsys):
    """JSON's "\\ud800" reads as a lone surrogate, which the page cannot encode (an internal error);
    a file name's undecodable byte (\\udc9b, as audit writes it) is still rendered."""
    bad = tmp_path / "bad.json"
    doc = json.loads(json.dumps(saved_audit))
    doc["findings"][0]["message"] = "x\ud800"
    bad.write_text(json.dumps(doc))
    assert run(capsys, "report", str(bad), "-o", str(tmp_path / "r.html")) == (2, "", (
        f"portkit: error: {bad}: not a valid portkit audit: findings[0].message: expected text (a lone surrogate "
        f"is none), got 'x\\ud800'\n"))
    doc["findings"][0]["message"] = "x"
    doc["findings"][0]["path"] = "k\udc9b.cu"
    bad.write_text(json.dumps(doc))
    assert run(capsys, "report", str(bad), "-o", str(tmp_path / "r.html"))[0] == 0
    assert b"k\x9b.cu" in (tmp_path / "r.html").read_bytes()


@pytest.mark.parametrize("platforms, reason", [
    ("amd", "summary.platforms: expected an object, got 'amd'"),
    (5, "summary.platforms: expected an object, got 5"),
    (True, "summary.platforms: expected an object, got True"),
    ({"builds_for_amd": "yes"}, "summary.platforms.builds_for_amd: expected true or false, got 'yes'"),
    ({"builds_for_amd": True}, "summary.platforms: missing field 'amd_build_share'"),
    ({"builds_for_amd": True, "amd_build_share": 0.5, "amd_implementations": ["x"]},
     "summary.platforms.amd_implementations[0]: expected an object, got 'x'"),
    ({"builds_for_amd": True, "amd_build_share": 10 ** 400, "amd_implementations": []},
     f"summary.platforms.amd_build_share: expected a finite number, got {HUGE[:39]}…"),
])
def test_a_malformed_platforms_field_is_one_line(saved_audit: dict, tmp_path: Path, capsys, platforms: object,
                                                 reason: str):
    """summary.platforms was not in the checked shape: a string, number or boolean there was an
    AttributeError inside the report."""
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**saved_audit, "summary": {**saved_audit["summary"], "platforms": platforms}}))
    assert run(capsys, "report", str(bad), "-o", str(tmp_path / "r.html")) == (
        2, "", f"portkit: error: {bad}: not a valid portkit audit: {reason}\n")
    assert not (tmp_path / "r.html").exists()


# --- baseline fields -------------------------------------------------------------------------------

BASELINE = {"tool": "portkit", "version": 1, "findings": [
    {"path": "src/k.cu", "code": "PK201", "fingerprint": "0123456789abcdef", "count": 1, "snippet": "x & 31"}]}


@pytest.mark.parametrize("change, reason", [
    ({"fingerprint": "0123456789abcdef\n"}, "findings[0].fingerprint: expected 16 hexadecimal digits, got "
                                            "'0123456789abcdef\\n'"),
    ({"code": "PK201\n"}, "findings[0].code: expected a rule code (PK301), got 'PK201\\n'"),
    ({"path": 7}, "findings[0].path: expected a string, got 7"),
    ({"cont": 2}, "findings[0]: unknown key 'cont'"),
])
def test_a_malformed_baseline_field_is_one_line(team: Path, capsys, change: dict, reason: str):
    baseline = {**BASELINE, "findings": [{**BASELINE["findings"][0], **change}]}
    (team / ".portkit-baseline.json").write_text(json.dumps(baseline))
    assert run(capsys, "check", "src/k.cu") == (2, "", (
        f"portkit: error: {team / '.portkit-baseline.json'}: not a portkit baseline ({reason}); write one with "
        f"`portkit baseline`\n"))


def test_a_baseline_version_of_true_is_not_1(team: Path, capsys):
    (team / ".portkit-baseline.json").write_text(json.dumps({**BASELINE, "version": True}))
    assert run(capsys, "check", "src/k.cu") == (2, "", (
        f"portkit: error: {team / '.portkit-baseline.json'}: not a portkit baseline (version True, expected 1); "
        f"write one with `portkit baseline`\n"))


# --- the mutation sweep ------------------------------------------------------------------------------

def sweep(capsys, doc: object, target: Path, write, commands: list[list[str]], values: list, name: str,
          free=lambda path: False) -> int:
    """Every mutation of every key path of `doc`, written to `target` by `write` and run with each
    command: no internal error, and exit 2 for what a full match refuses, except where `free(path)`
    (text that may hold anything, a table portkit does not read); returns how many runs there were.
    `doc` itself is valid: each mutation is the only thing wrong."""
    target.write_text(write(doc))
    for command in commands:
        code, _, err = run(capsys, *command)
        assert code in (0, 1) and "error" not in err, (command, err)
    runs = 0
    for path in list(key_paths(doc)):
        for what, refuse in mutants(doc, path, values):
            target.write_text(write(doc))
            for command in commands:
                code, _, err = run(capsys, *command)
                assert_no_internal_error(code, err, name, f"{' '.join(command)}: {what}")
                assert code == 2 or not refuse or free(path), (f"{' '.join(command)}: {what} was taken", err)
                runs += 1
    return runs


@pytest.mark.parametrize("name", ["portkit.toml", "pyproject.toml"])
def test_sweep_configuration(team: Path, capsys, name: str):
    (team / ".portkit-baseline.json").write_text(json.dumps(BASELINE))
    doc = json.loads(json.dumps(CONFIG))
    if name == "pyproject.toml":
        doc = {"project": {"name": "team", "dependencies": ["torch"]}, "tool": {"portkit": doc}}
    runs = sweep(capsys, doc, team / name, toml_doc, [["audit", ".", "-q"], ["check", "src/k.cu"]], TOML_VALUES, name,
                 free=lambda path: path[0] == "project" or path == ("tool",))
    assert runs > 200


def test_sweep_project_mapping_file(team: Path, capsys):
    (team / "portkit.toml").write_text('mappings = ["team.toml"]\n')
    doc = json.loads(json.dumps(TEAM))
    code, out, _ = run(capsys, "convert", "src", "--diff")
    assert code == 0 and "+    teamHipAlloc(&p, 64);" in out and "+#include <team/hip.h>" in out
    runs = sweep(capsys, doc, team / "team.toml", toml_doc, [["convert", "src", "--diff"], ["audit", ".", "-q"]],
                 TOML_VALUES, "team.toml")
    assert runs > 1000


def test_sweep_baseline(team: Path, capsys):
    """Only a finding's path and snippet are free text: a file name or a line may hold a newline."""
    doc = json.loads(json.dumps(BASELINE))
    runs = sweep(capsys, doc, team / ".portkit-baseline.json", json_doc, [["check", "src/k.cu"]], JSON_VALUES,
                 ".portkit-baseline.json", free=lambda path: path[-1] in ("path", "snippet"))
    assert runs > 100


def test_sweep_audit_json(saved_audit: dict, tmp_path: Path, capsys):
    """The report's text fields are free text; its numbers, lists and objects are checked."""
    doc = json.loads(json.dumps(saved_audit))
    target = tmp_path / "audit.json"
    target.write_text(json.dumps(doc))
    assert run(capsys, "report", str(target), "-o", str(tmp_path / "r.html"))[0] == 0
    page = (tmp_path / "r.html").read_text()
    assert "Already builds for AMD: 50% of the product" in page and "k.hip beside k.cu" in page
    runs = sweep(capsys, doc, target, json_doc, [["report", str(target), "-o", str(tmp_path / "r.html")]],
                 JSON_VALUES, str(target), free=lambda path: True)
    assert runs > 3000


# --- the same class in the files of the audited tree (outside the configuration) ------------------

@pytest.mark.parametrize("text", [
    '[project]\nname = "x"\ndependencies = ' + DEEP + "\n",
    '[project]\nname = "x"\nversion = ' + TOO_LONG + "\n",
])
def test_a_pyproject_in_the_tree_that_does_not_read_declares_nothing(tmp_path: Path, capsys, text: str):
    """The project's own package names are read from its pyproject.toml: nesting 10,000 deep was
    an internal error (RecursionError), a 5,000-digit number another (ValueError)."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "k.cu").write_text("__global__ void k(float *x) { x[threadIdx.x] = 0; }\n")
    (tree / "pyproject.toml").write_text(text)
    # the configuration is found from the files, and portkit.toml is looked for first: the broken
    # pyproject.toml is then read only for the package names (as configuration it is an error, exit 2)
    (tree / "portkit.toml").write_text("")
    assert run(capsys, "audit", str(tree), "-q") == (0, "", "")


def test_a_compile_database_nested_too_deeply_is_one_line(tmp_path: Path):
    from portkit.core.errors import PortkitError
    from portkit.project import compdb
    database = tmp_path / "compile_commands.json"
    database.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(PortkitError) as caught:
        compdb.load(database)
    assert str(caught.value) == f"{database}: cannot read the compilation database: nested too deeply"


@pytest.mark.parametrize("kind, value", [("define", "TEAM=1\n"), ("std", "c++17\n")])
def test_a_build_file_value_with_a_newline_never_reaches_the_compiler(kind: str, value: str):
    """`^...$` took the trailing newline: -D"TEAM=1\n" would put a line of its own into clang's
    predefined macros."""
    from portkit.project.buildvalues import FileConfig
    config = FileConfig()
    config.add_define(value) if kind == "define" else config.add_std(value)
    assert (config.defines, config.std) == ([], None)
