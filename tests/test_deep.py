"""Deep mode (--engine clang): what libclang adds to the tree-sitter findings, exactly.

fixtures/deep/project is real code (nvcc compiles every unit, with -rdc=true for the nested
launch); fixtures/deep/expected/ holds the exact findings of each engine and configuration.
Deep mode needs libclang's Python bindings, an installed clang's resource headers and the CUDA
headers: missing ones skip these tests, or fail them under PORTKIT_REQUIRE_TOOLS=1 (CI).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import NVCC, REPO, require_tool
from portkit.commands.audit import AuditOptions, audit_paths
from portkit.cli.app import main
from portkit.commands.deep import engine, toolchain
from portkit.commands.deep.engine import DeepOptions
from portkit.core.errors import PortkitError
from portkit.core.tables.mappings import parse_version
from portkit.commands.scan.walk import Options

pytestmark = pytest.mark.slow   # libclang parses whole units: seconds each

DEEP = REPO / "fixtures" / "deep"
PROJECT = DEEP / "project"
EXPECTED = DEEP / "expected"


@pytest.fixture(scope="module")
def deep_default(tc):
    """The deep audit of the fixture in its default configuration, run once for the tests that
    only read it (each run parses four units with clang: tens of seconds on two cores)."""
    return audit(DeepOptions(toolchain=tc))


def audit(deep: DeepOptions | None, rocm: str = "5.2"):
    opts = AuditOptions(scan=Options(audit=True, rocm=parse_version(rocm)), deep=deep)
    return audit_paths([PROJECT], opts)


def render(findings) -> str:
    return "".join(f"{f.path}:{f.line}:{f.column} {f.code} {f.message}\n" for f in findings)


def golden(name: str) -> str:
    return (EXPECTED / name).read_text(encoding="utf-8")


@pytest.mark.compile
def test_fixture_units_compile_with_nvcc():
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    for unit in sorted((PROJECT / "src").glob("*.cu")):
        for extra in ([], ["-DUSE_PTX"]):
            subprocess.run([nvcc, "-x", "cu", "-c", str(unit), "-I", str(PROJECT / "include"), "-rdc=true",
                            "-o", os.devnull, *extra], check=True, capture_output=True)


def test_tree_sitter_findings_are_the_baseline():
    assert render(audit(None).findings) == golden("tree-sitter.txt")


def test_deep_findings(deep_default):
    result = deep_default
    assert render(result.findings) == golden("clang.txt")
    d = result.deep
    assert (d.units, d.failed, d.clang_errors) == (4, [], [])
    # the nvcc branches (`#define TILE 32`, `kWarp = 32`) are the ones clang does not take; the PTX
    # needs -DUSE_PTX
    assert d.inactive == {"src/nested.cu": [(20, 20)], "src/tiles.cu": [(7, 7)], "src/vote.cu": [(20, 22)],
                          "src/warp_constants.cu": [(13, 14)]}
    # `#if __CUDA_ARCH__ >= 700` is skipped by the host pass and taken by the device pass (sm_80)
    assert not d.inactive_line("src/tiles.cu", 25)
    assert (d.added, d.dropped_inactive) == (13, 3)
    # PK005 stays only in nested.cu, where an #if cuts a launch's <<<...>>> and tree-sitter missed it
    assert d.settled_partial == 3
    assert [(f.path, f.line) for f in result.findings if f.code == "PK005"] == [("src/nested.cu", 5)]


def test_deep_only_adds_or_refines_and_shares_fingerprints(deep_default):
    shallow = {(f.path, f.line, f.code, f.subject): f.fingerprint for f in audit(None).findings}
    deep = {(f.path, f.line, f.code, f.subject): f.fingerprint for f in deep_default.findings}
    common = shallow.keys() & deep.keys()
    # what deep mode leaves out: the PTX in `#ifdef USE_PTX` and the nvcc-only branch (not compiled
    # here), and the partial-parse notes of files where clang found every launch tree-sitter did
    assert sorted(shallow.keys() - deep.keys()) == [("src/tiles.cu", 10, "PK005", "parse-error"),
                                                    ("src/vote.cu", 6, "PK005", "parse-error"),
                                                    ("src/vote.cu", 21, "PK301", "reads hardware warp/SM ids"),
                                                    ("src/warp_constants.cu", 13, "PK201", "kWarp"),
                                                    ("src/warp_constants.cu", 14, "PK201", "WARP_CONSTANT"),
                                                    ("src/warp_constants.cu", 17, "PK005", "parse-error")]
    assert all(shallow[k] == deep[k] for k in common)


def test_a_define_makes_the_branch_active(tc):
    result = audit(DeepOptions(toolchain=tc, flags=("-DUSE_PTX",)))
    assert result.deep.inactive == {"src/nested.cu": [(20, 20)], "src/tiles.cu": [(7, 7)],
                                    "src/warp_constants.cu": [(13, 14)]}
    assert render(result.findings) == golden("clang-use-ptx.txt")


def test_compile_commands_give_the_configuration(tc, tmp_path: Path):
    entries = [{"directory": str(PROJECT), "file": str(PROJECT / "src" / name),
                "arguments": ["nvcc", "-Iinclude", "-DUSE_PTX", "-c", f"src/{name}"]}
               for name in ("vote.cu", "tiles.cu", "nested.cu", "warp_constants.cu")]
    (tmp_path / "compile_commands.json").write_text(json.dumps(entries), encoding="utf-8")
    result = audit(DeepOptions(toolchain=tc, database=tmp_path))
    assert render(result.findings) == golden("clang-use-ptx.txt")


def test_device_functions_declared_through_macros_are_device_code(deep_default):
    result = deep_default
    metrics = {s.rel: s.metrics for s in result.scans}
    # tree-sitter sees no __global__ in `KERNEL void f()`: deep mode counts them
    assert {rel: m.kernels for rel, m in metrics.items()} == \
        {"include/deep_macros.cuh": 0, "src/nested.cu": 2, "src/tiles.cu": 1, "src/vote.cu": 1,
         "src/warp_constants.cu": 1}
    assert all(m.has_device_code for rel, m in metrics.items() if rel.startswith("src/"))


def test_macro_facts_name_the_macro_and_its_definition(tc):
    root = PROJECT.resolve()
    from portkit.core.files import discover
    _, entries, _ = discover([root])
    result = engine.collect(root, entries, DeepOptions(toolchain=tc))
    uses = sorted((f["line"], f["macro"], f["name"], f["defined_in"], f["def_line"])
                  for f in result.facts["src/vote.cu"] if f["kind"] == "macro" and f["line"] == 27)
    assert uses == [
        (27, "SET_DEVICE_HEAP", "cudaDeviceSetLimit", "include/deep_macros.cuh", 18),
        (27, "SET_DEVICE_HEAP", "cudaError_t", "include/deep_macros.cuh", 10),
        (27, "SET_DEVICE_HEAP", "cudaGetErrorString", "include/deep_macros.cuh", 13),
        (27, "SET_DEVICE_HEAP", "cudaLimitMallocHeapSize", "include/deep_macros.cuh", 18),
        (27, "SET_DEVICE_HEAP", "cudaSuccess", "include/deep_macros.cuh", 11),
    ]
    launches = [(f["path"], f["line"], f["name"], f["macro"], f["device"])
                for fs in result.facts.values() for f in fs if f["kind"] == "launch"]
    assert sorted(launches) == [("src/nested.cu", 12, "child", "LAUNCH_1D", True),
                                ("src/nested.cu", 22, "child", "", False),   # the #else branch's
                                ("src/vote.cu", 28, "count_positive", "LAUNCH_1D", False)]


def test_a_crashing_parser_falls_back_to_tree_sitter(tc, monkeypatch):
    monkeypatch.setattr(engine, "WORKER", [sys.executable, "-c", "import os; os.abort()"])
    result = audit(DeepOptions(toolchain=tc))
    assert sorted(result.deep.failed) == [("src/nested.cu", "libclang crashed (SIGABRT)"),
                                          ("src/tiles.cu", "libclang crashed (SIGABRT)"),
                                          ("src/vote.cu", "libclang crashed (SIGABRT)"),
                                          ("src/warp_constants.cu", "libclang crashed (SIGABRT)")]
    assert render(result.findings) == golden("tree-sitter.txt")
    assert result.deep.notes()[0] == "src/nested.cu: libclang crashed (SIGABRT); tree-sitter only for it"


def test_a_unit_over_the_time_limit_falls_back(tc, monkeypatch):
    monkeypatch.setattr(engine, "WORKER", [sys.executable, "-c", "import time; time.sleep(30)"])
    result = audit(DeepOptions(toolchain=tc, timeout=0.5))
    assert {why for _, why in result.deep.failed} == {"clang took longer than 0.5 s (--file-timeout)"}
    assert render(result.findings) == golden("tree-sitter.txt")


def test_convert_edits_are_the_same_and_findings_name_the_macro(tc, tmp_path: Path, capsys):
    shallow, deep = tmp_path / "ts", tmp_path / "clang"
    assert main(["convert", str(PROJECT), "-o", str(shallow), "--rocm", "5.2", "-q"]) == 0
    assert main(["convert", str(PROJECT), "-o", str(deep), "--rocm", "5.2", "--engine", "clang"]) == 0
    out = capsys.readouterr()
    files = sorted(p.relative_to(shallow) for p in shallow.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(deep) for p in deep.rglob("*") if p.is_file())
    assert all((shallow / f).read_bytes() == (deep / f).read_bytes() for f in files)
    assert "src/vote.cu:27:5: PK002 cudaDeviceSetLimit -> hipDeviceSetLimit needs ROCm 5.3, the target is " \
           "ROCm 5.2 (through macro SET_DEVICE_HEAP, defined at include/deep_macros.cuh:18)" in out.out
    assert "portkit: deep mode: 4 unit(s) through clang" in out.err


def test_audit_cli_prints_the_deep_summary(tc, capsys):
    assert main(["audit", str(PROJECT), "--rocm", "5.2", "--engine", "clang", "--format", "json",
                 "-D", "USE_PTX"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    jsonschema.validate(doc, json.loads((REPO / "docs" / "audit.schema.json").read_text(encoding="utf-8")))
    engine_record = {k: v for k, v in doc["engine"].items() if k not in ("seconds", "toolchain")}
    assert engine_record == {"name": "clang", "units": 4, "files_seen": 5, "added": 13, "left_out_inactive": 2,
                             "partial_parse_settled": 3,
                             "fell_back": [], "clang_errors": 0}
    codes = sorted((f["path"], f["line"], f["code"]) for f in doc["findings"])
    assert ("src/vote.cu", 21, "PK301") in codes and ("src/tiles.cu", 11, "PK207") in codes
    assert out.err.startswith("portkit: deep mode: 4 unit(s) through clang in ")
    assert out.err.rstrip().endswith("13 finding(s) added, 2 left out in #if branches this configuration does not "
                                     "compile, 3 partial-parse note(s) settled")


@pytest.mark.parametrize("args, message", [
    (["--cuda-path", "/nonexistent"], "--cuda-path: only with --engine clang"),
    (["-I", "X"], "-p/-I: only with --engine clang"),   # -D/-U configure the default engine too
    (["--engine", "clang", "--cuda-path", "/nonexistent"],
     "--cuda-path /nonexistent: no include/cuda_runtime.h there"),
    (["--engine", "clang", "--cuda-arch", "gfx90a"], "--cuda-arch gfx90a: expected an sm_NN name"),
    (["--engine", "clang", "--clang-resource-dir", "/tmp"], "--clang-resource-dir /tmp: not a clang resource"),
    (["--engine", "clang", "-p", "/nonexistent"], "/nonexistent: no compile_commands.json there"),
])
def test_bad_deep_options_are_one_line_and_exit_2(tc, args, message, capsys):
    assert main(["audit", str(PROJECT), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_missing_bindings_say_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "clang", None)
    monkeypatch.setitem(sys.modules, "clang.cindex", None)
    with pytest.raises(PortkitError, match=r"pip install 'portkit\[deep\]'"):
        toolchain.find()


def test_resource_dirs_are_found_newest_first(tc):
    found = toolchain.installed_resource_dirs()
    assert found and [int(v) for v, _ in found] == sorted((int(v) for v, _ in found), reverse=True)
    assert tc.resource_dir == found[0][1] or not tc.libclang


INSTALLED = toolchain.installed_resource_dirs()


@pytest.mark.parametrize("resource_dir", [r for _, r in INSTALLED] or ["(none)"],
                         ids=[f"clang-{v}" for v, _ in INSTALLED] or ["none"])
def test_every_installed_clang_gives_the_same_findings(tc, resource_dir):
    """libclang before 19 reports macro-body tokens at the use site: the worker then finds them
    in the macro's text, so clang-15 (hipcc's) and clang-19 agree to the byte."""
    other = toolchain.find(resource_dir=Path(resource_dir))
    assert render(audit(DeepOptions(toolchain=other)).findings) == golden("clang.txt")


def test_the_html_report_says_which_engine_read_the_code(tc, tmp_path: Path):
    deep_html, shallow_html = tmp_path / "deep.html", tmp_path / "shallow.html"
    assert main(["audit", str(PROJECT), "--rocm", "5.2", "--engine", "clang", "--html", str(deep_html), "-q"]) == 0
    assert main(["audit", str(PROJECT), "--rocm", "5.2", "--html", str(shallow_html), "-q"]) == 0
    text = " ".join(deep_html.read_text(encoding="utf-8").split())
    assert "Read with deep mode (libclang, one preprocessor configuration): 4 units, 13 findings added, " \
           "3 left out as not compiled in this configuration." in text
    assert "Read with tree-sitter (every <code>#if</code> branch, no macro expansion)." in \
        " ".join(shallow_html.read_text(encoding="utf-8").split())


def test_a_tree_without_units_says_so(tc, tmp_path: Path):
    (tmp_path / "only.cuh").write_text("__device__ inline float twice(float x) { return 2 * x; }\n",
                                       encoding="utf-8")
    result = audit_paths([tmp_path], AuditOptions(deep=DeepOptions(toolchain=tc)))
    assert result.deep.units == 0
    assert result.deep.notes() == ["no translation unit to parse (no .cu file, no C++ file that uses CUDA, "
                                   "nothing in -p): tree-sitter findings only"]
