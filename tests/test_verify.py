"""portkit verify: compiling converted trees with Debian's hipcc and explaining each failure.

fixtures/verify/<case>/ holds a CUDA tree (input/) and case.toml: for each [[run]], the convert
options, the verify options, and the exact outcome, one line per unit that compiled
("UNIT: compiled") and one per error ("UNIT: PATH:LINE (cuda LINE) CODES" or "... UNEXPLAINED").
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from cases import all_cases
from conftest import CUDA_LIB_INCLUDE, NVCC, REPO, require_dir, require_rocm_libraries, require_tool
from portkit import compdb
from portkit.api import convert_paths
from portkit.cli import main
from portkit.verify import VerifyOptions, VerifyResult, verify_tree
from portkit.verify.diagnostics import parse
from portkit.verify.explain import line_map
from portkit.units import HeaderIndex, inferred_include_dirs

VERIFY = REPO / "fixtures" / "verify"
CASES = sorted(p for p in VERIFY.iterdir() if (p / "case.toml").is_file())
HIPCC = "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)"


def outcome_lines(result: VerifyResult) -> list[str]:
    lines = []
    for unit in result.units:
        if not unit.failed:
            lines.append(f"{unit.rel}: compiled")
        for e in unit.errors:
            codes = ",".join(f.code for f in e.findings) or "UNEXPLAINED"
            cuda = f" (cuda {e.source_line})" if e.source_line is not None else ""
            lines.append(f"{unit.rel}: {e.rel}:{e.line}{cuda} {codes}")
        if unit.failed and not unit.errors:
            lines.append(f"{unit.rel}: {unit.status} UNEXPLAINED")
    return lines


def runs():
    for case in CASES:
        meta = tomllib.loads((case / "case.toml").read_text(encoding="utf-8"))
        for index, run in enumerate(meta["run"]):
            yield pytest.param(case, run, id=f"{case.name}-{index + 1}")


@pytest.mark.parametrize("case,run", list(runs()))
def test_verify_case(case: Path, run: dict, tmp_path: Path):
    require_tool("hipcc", HIPCC)
    out = tmp_path / "out"
    source = case / "input"
    convert_paths([source], output=out, **_convert_kwargs(run.get("convert", [])))
    database = source / run["compile_commands"] if "compile_commands" in run else None
    result = verify_tree(out, VerifyOptions(source=source, compile_commands=database, jobs=2))
    assert outcome_lines(result) == run["expected"]
    assert result.ok == all(line.endswith(": compiled") for line in run["expected"])


def _convert_kwargs(args: list[str]) -> dict:
    kwargs = {}
    for flag, value in zip(args[::2], args[1::2]):
        kwargs[{"--rocm": "rocm", "--launch-syntax": "launch_syntax"}[flag]] = value
    return kwargs


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_verify_inputs_compile_with_nvcc(case: Path):
    """The CUDA side of every verify case is real code (texture references excepted: CUDA 12 removed them)."""
    import re
    import subprocess
    for unit in sorted((case / "input").rglob("*.cu")):
        head = unit.read_text(encoding="utf-8").splitlines()[0]
        if head.startswith("// nvcc-skip:"):
            continue
        nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
        flags = ["-I", str(case / "input" / "include"), "-I", str(case / "input" / "config"), "-DTILE=16"]
        if re.search(rb"cublas", unit.read_bytes()):
            flags += ["-I", str(require_dir(CUDA_LIB_INCLUDE, "CUDA library headers (set CUDA_LIB_INCLUDE)"))]
        proc = subprocess.run([nvcc, "-x", "cu", "-c", str(unit), "-o", os.devnull, *flags],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]


def test_the_fixture_corpus_verifies_clean(tmp_path: Path):
    """Every golden HIP output compiles, except those whose ROCm library Debian does not ship,
    and those are explained by PK701; the units and their flags (-fgpu-rdc for one case) come
    from a compile_commands.json."""
    require_tool("hipcc", HIPCC)
    tree = tmp_path / "corpus"
    commands, skipped = [], {}
    for case in all_cases():
        base = tree / case.name
        for path in case.expected_files():
            target = base / path.relative_to(case.expected if case.multi else case.expected.parent)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            if target.suffix in (".hip", ".cu", ".cpp", ".cc"):
                commands.append({"directory": str(base), "file": str(target),
                                 "arguments": ["hipcc", *case.hipcc_flags, "-I.", "-c", str(target)]})
        if case.hipcc_skip:
            skipped[case.name] = case.hipcc_skip
    require_rocm_libraries(tree / name for name in os.listdir(tree) if name not in skipped)
    (tree / "compile_commands.json").write_text(json.dumps(commands))
    result = verify_tree(tree, VerifyOptions(compile_commands=tree, jobs=2))
    assert len(result.units) == len(commands) and not result.unmatched
    assert result.units and not result.count("unexplained"), "\n".join(outcome_lines(result))
    failed = {u.rel.split("/")[0] for u in result.units if u.failed}
    assert failed == set(skipped), "\n".join(outcome_lines(result))
    for unit in result.units:
        if unit.failed:
            assert [f.code for e in unit.errors for f in e.findings] == ["PK701"], unit.rel


def test_convert_verify_on_the_command_line(tmp_path: Path, capsys):
    require_tool("hipcc", HIPCC)
    out = tmp_path / "out"
    code = main(["convert", str(VERIFY / "inline_ptx" / "input"), "-o", str(out), "--rocm", "5.2", "--verify"])
    text = capsys.readouterr().out
    assert code == 1
    assert "scan.cu: failed, explained" in text
    assert "include/lane.cuh:7:16: error: invalid instruction" in text
    assert 'CUDA line 6: asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));' in text
    assert "explained by PK301 inline-ptx-asm" in text
    assert "1 translation unit: 0 compiled, 1 failed (1 explained by findings, 0 unexplained)" in text


def test_verify_json_marks_unexplained_failures(tmp_path: Path, capsys):
    require_tool("hipcc", HIPCC)
    out = tmp_path / "out"
    source = VERIFY / "unexplained" / "input"
    convert_paths([source], output=out, rocm="5.2")
    assert main(["verify", str(out), "--source", str(source), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"] | {"seconds": 0} == {"units": 1, "compiled": 0, "failed": 1, "explained": 0,
                                               "unexplained": 1, "seconds": 0}
    unit = doc["units"][0]
    assert (unit["path"], unit["status"], unit["unexplained"]) == ("version.cu", "failed", True)
    error = unit["errors"][0]
    assert (error["path"], error["line"], error["source_line"], error["unexplained"], error["findings"]) == \
        ("version.cu", 7, 7, True, [])
    assert error["message"] == "use of undeclared identifier 'CUDART_VERSION'"
    assert doc["compiler"]["rocm"] == doc["target_rocm"] == "5.2"


def test_verify_compiles_clean_tree_and_exits_0(tmp_path: Path, capsys):
    require_tool("hipcc", HIPCC)
    out = tmp_path / "out"
    source = VERIFY / "compile_commands" / "input"
    convert_paths([source], output=out, rocm="5.2")
    assert main(["verify", str(out), "-D", "TILE=8", "-q"]) == 0
    assert capsys.readouterr().out == "portkit verify: 1/1 compiled, 0 failed (0 unexplained)\n"


# --- errors: one line, exit 2 ------------------------------------------------------------------

def test_missing_compiler_says_what_to_install(tmp_path: Path, capsys):
    (tmp_path / "a.cu").write_text("__global__ void k() {}\n")
    assert main(["verify", str(tmp_path), "--compiler", "no-such-hipcc"]) == 2
    err = capsys.readouterr().err
    assert err == ("portkit: error: no-such-hipcc: compiler not found; install one: apt-get install hipcc "
                   "libamdhip64-dev rocm-device-libs (Debian/Ubuntu), or a ROCm release from "
                   "https://rocm.docs.amd.com\n")


@pytest.mark.parametrize("args,message", [
    (["verify", "{tmp}/missing"], "{tmp}/missing: not a directory (verify takes the converted tree, e.g. the -o of convert)"),
    (["verify", "{tmp}", "--offload-arch", "sm_80"], "--offload-arch: 'sm_80' is not an AMD GPU target"),
    (["verify", "{tmp}", "--timeout", "0"], "--timeout must be positive, not 0"),
    (["verify", "{tmp}", "-p", "{tmp}"], "{tmp}: no compile_commands.json there"),
    (["convert", "{tmp}", "--diff", "--verify"], "--verify needs -o OUT (a directory): it compiles the converted tree"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys, args, message):
    require_tool("hipcc", HIPCC)
    (tmp_path / "a.cu").write_text("__global__ void k() {}\n")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message.replace("{tmp}", str(tmp_path)) in err, err


def test_nothing_to_compile_is_an_error(tmp_path: Path, capsys):
    require_tool("hipcc", HIPCC)
    (tmp_path / "notes.txt").write_text("no sources\n")
    assert main(["verify", str(tmp_path)]) == 2
    assert "nothing to compile" in capsys.readouterr().err


# --- the pieces ----------------------------------------------------------------------------------

def test_diagnostics_keep_notes_and_drop_host_device_duplicates():
    output = (
        "a.cu:4:16: error: invalid instruction\n"
        "<inline asm>:1:2: note: instantiated into assembly here\n"
        "a.cu:9:3: warning: unused variable 'x' [-Wunused-variable]\n"
        "/usr/include/hip/amd_detail/x.h:10:5: error: no matching function for call to 'f'\n"
        "a.cu:12:7: note: in instantiation of function template specialization requested here\n"
        "a.cu:4:16: error: invalid instruction\n"
        "fatal error: too many errors emitted, stopping now [-ferror-limit=]\n"
        "clang-15: error: lld failed with exit code 1 (use -v to see invocation)\n"
        "2 errors generated when compiling for gfx90a.\n")
    found = parse(output)
    assert [(d.path, d.line, d.column, d.severity, d.message) for d in found] == [
        ("a.cu", 4, 16, "error", "invalid instruction"),
        ("/usr/include/hip/amd_detail/x.h", 10, 5, "error", "no matching function for call to 'f'"),
        (None, 0, 0, "error", "lld failed with exit code 1 (use -v to see invocation)"),
    ]
    assert found[1].notes == [("a.cu", 12, 7, "in instantiation of function template specialization requested here")]
    assert found[1].subject == "f"


def test_line_map_follows_inserted_and_rewritten_lines():
    cuda = [b"// c", b"__global__ void k() {}", b"int main() {", b"  cudaDeviceSynchronize();", b"}"]
    hip = [b"// c", b"#include <hip/hip_runtime.h>", b"__global__ void k() {}", b"int main() {",
           b"  hipDeviceSynchronize();", b"}"]
    assert line_map(cuda, hip) == {1: 1, 3: 2, 4: 3, 5: 4, 6: 5}


def test_compile_commands_keep_preprocessor_flags_only(tmp_path: Path):
    toolkit = tmp_path / "cuda" / "include"
    toolkit.mkdir(parents=True)
    (toolkit / "cuda_runtime.h").write_text("")
    args = ["-DA=1", "-D", "B", "--define-macro=C", "-U", "D", "-Iinc", "-I", "/abs", f"-I{toolkit}",
            "--include-path=more", "-isystem", "sys", "-include", "pre.h", "--std=c++17", "-gencode",
            "arch=compute_80,code=sm_80", "-Xcompiler", "-fPIC", "-O3", "-rdc=true", "-dc", "-c", "x.cu"]
    assert compdb.preprocessor_flags(args, tmp_path) == [
        "-DA=1", "-DB", "-DC", "-UD", f"-I{tmp_path}/inc", "-I/abs", f"-I{tmp_path}/more",
        "-isystem", f"{tmp_path}/sys", "-include", f"{tmp_path}/pre.h", "-std=c++17", "-fgpu-rdc"]


def test_include_directories_are_inferred_from_the_nearest_header(tmp_path: Path):
    from portkit.files import discover
    for rel, text in {"app/main.cu": '#include <helper.h>\n#include "local.h"\n#include <util/math.h>\n#include <vector>\n',
                      "app/local.h": "", "app/inc/helper.h": '#include "deep/util.h"\n', "app/inc/deep/util.h": "",
                      "common/inc/helper.h": "", "common/inc/util/math.h": ""}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    root, entries, _ = discover([tmp_path])
    index = HeaderIndex(root, entries)
    # two helper.h: the one sharing more directories with the unit wins; "local.h" and
    # "deep/util.h" resolve next to their includer; <vector> is the compiler's
    assert inferred_include_dirs(index, "app/main.cu") == ["app/inc", "common/inc"]


def test_a_unit_over_the_time_limit_is_reported_not_waited_for(tmp_path: Path):
    require_tool("hipcc", HIPCC)
    (tmp_path / "slow.cu").write_text("#include <hip/hip_runtime.h>\n__global__ void k(float *x) { x[0] = 1; }\n")
    result = verify_tree(tmp_path, VerifyOptions(timeout=0.05))
    [unit] = result.units
    assert (unit.status, unit.failed, unit.explained, unit.errors) == ("timeout", True, False, [])
    assert unit.seconds < 5 and result.count("unexplained") == 1
