"""portkit verify: compiling converted trees with Debian's hipcc and explaining each failure.

fixtures/verify/<case>/ holds a CUDA tree (input/) and case.toml: for each [[run]], the convert
options, the verify options, and the exact outcome, one line per unit that compiled
("UNIT: compiled") and one per error ("UNIT: PATH:LINE (cuda LINE) CODES", "... CONSEQUENCE of PATH:LINE"
or "... UNEXPLAINED").
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
from portkit.project import compdb
from portkit.core.tables.mappings import parse_version
from portkit.project.buildconfig import BuildConfig, FileConfig, TreeConfig, read_make
from portkit.project.buildconfig_cmake import read_cmake
from portkit.api import convert_paths
from portkit.cli.app import main
from portkit.commands.verify import VerifyOptions, VerifyResult, verify_tree
from portkit.commands.verify.diagnostics import parse
from portkit.commands.verify.explain import line_map
from portkit.project.units import HeaderIndex, inferred_include_dirs

VERIFY = REPO / "fixtures" / "verify"
CASES = sorted(p for p in VERIFY.iterdir() if (p / "case.toml").is_file())
HIPCC = "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)"


def outcome_lines(result: VerifyResult) -> list[str]:
    lines = []
    for unit in result.units:
        if not unit.failed:
            lines.append(f"{unit.rel}: compiled")
        for e in unit.errors:
            codes = ",".join(f.code for f in e.findings) or \
                (f"CONSEQUENCE of {e.consequence_of}" if e.consequence_of else "UNEXPLAINED")
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
@pytest.mark.compile
def test_verify_case(case: Path, run: dict, tmp_path: Path):
    require_tool("hipcc", HIPCC)
    out = tmp_path / "out"
    source = case / "input"
    convert_paths([source], output=out, **_convert_kwargs(run.get("convert", [])))
    database = source / run["compile_commands"] if "compile_commands" in run else None
    result = verify_tree(out, VerifyOptions(source=source, compile_commands=database, jobs=2, **run.get("verify", {})))
    assert outcome_lines(result) == run["expected"]
    assert result.ok == all(line.endswith(": compiled") for line in run["expected"])


def _convert_kwargs(args: list[str]) -> dict:
    kwargs = {}
    for flag, value in zip(args[::2], args[1::2]):
        kwargs[{"--rocm": "rocm", "--launch-syntax": "launch_syntax"}[flag]] = value
    return kwargs


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.compile
def test_verify_inputs_compile_with_nvcc(case: Path):
    """The CUDA side of every verify case is real code (texture references excepted: CUDA 12 removed them)."""
    import re
    import subprocess
    for unit in sorted((case / "input").rglob("*.cu")):
        head = unit.read_text(encoding="utf-8").splitlines()[0]
        if head.startswith("// nvcc-skip:"):
            continue
        nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
        # the case's own build configuration (CMakeLists.txt) first, as its build would give it
        config = TreeConfig(case / "input").for_unit(unit.relative_to(case / "input").as_posix())
        flags = [*config.flags(), "-I", str(case / "input" / "include"), "-I", str(case / "input" / "config"),
                 "-DTILE=16"]
        if re.search(rb"cublas", unit.read_bytes()):
            flags += ["-I", str(require_dir(CUDA_LIB_INCLUDE, "CUDA library headers (set CUDA_LIB_INCLUDE)"))]
        proc = subprocess.run([nvcc, "-x", "cu", "-c", str(unit), "-o", os.devnull, *flags],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]


def _targets_newer_rocm(case) -> bool:
    """A case converted with `--rocm X.Y` above 5.2 (bf16, FP8, rocSPARSE stages): its output uses
    APIs the installed ROCm lacks, which no finding on the HIP code can explain."""
    args = list(case.args)
    return "--rocm" in args and parse_version(args[args.index("--rocm") + 1]) > (5, 2, 0)


def _what_verify_adds(case) -> bool:
    """The cases where verify has something to add to test_compile_fixtures.py, which compiles
    every golden with hipcc already: a ROCm library Debian lacks (explained by PK701), flags that
    only the compile database gives, and several files that include each other."""
    return bool(case.hipcc_skip or case.hipcc_flags or case.multi)


@pytest.mark.compile
def test_the_fixture_corpus_verifies_clean(tmp_path: Path):
    """The golden HIP outputs verify clean, except those whose ROCm library Debian does not ship,
    and those are explained by PK701; the units and their flags (-fgpu-rdc for one case) come
    from a compile_commands.json. Only the cases of `_what_verify_adds`: that every golden
    compiles is test_compile_fixtures.py's, case by case, and compiling them all twice cost the
    suite 80 s on 2 cores (issue 52)."""
    require_tool("hipcc", HIPCC)
    tree = tmp_path / "corpus"
    commands, skipped = [], {}
    chosen = [case for case in all_cases() if _what_verify_adds(case) and not _targets_newer_rocm(case)]
    assert {"separate_compilation_rdc", "dual_vendor_project", "cublas_sgemm"} <= {c.name for c in chosen}
    for case in chosen:
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


@pytest.mark.compile
def test_convert_verify_on_the_command_line(tmp_path: Path, capsys):
    require_tool("hipcc", HIPCC)
    out = tmp_path / "out"
    code = main(["convert", str(VERIFY / "inline_ptx" / "input"), "-o", str(out), "--rocm", "5.2", "--verify"])
    text = capsys.readouterr().out
    assert code == 1
    assert "scan.cu: failed, explained" in text
    assert "include/lane.cuh:8:16: error: invalid instruction" in text
    assert 'CUDA line 6: asm volatile("mov.u32 %0, %%smid;" : "=r"(lane));' in text
    assert "explained by PK301 inline-ptx-asm" in text
    assert "configuration of 1 unit: default (no CMakeLists.txt or Makefile read; the compiler's -std=c++11, " \
           "include directories inferred from the tree)\n" in text
    assert "1 translation unit: 0 compiled, 1 failed (1 explained by findings, 0 unexplained, 0 not reached)" in text


@pytest.mark.compile
def test_verify_json_marks_unexplained_failures(tmp_path: Path, capsys):
    require_tool("hipcc", HIPCC)
    out = tmp_path / "out"
    source = VERIFY / "unexplained" / "input"
    convert_paths([source], output=out, rocm="5.2")
    assert main(["verify", str(out), "--source", str(source), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"] | {"seconds": 0} == {"units": 1, "compiled": 0, "failed": 1, "explained": 0,
                                               "unexplained": 1, "not_reached": 0, "failed_on_decision": 0,
                                               "seconds": 0}
    unit = doc["units"][0]
    assert (unit["path"], unit["status"], unit["unexplained"]) == ("version.cu", "failed", True)
    error = unit["errors"][0]
    assert (error["path"], error["line"], error["source_line"], error["unexplained"], error["findings"]) == \
        ("version.cu", 7, 7, True, [])
    assert error["message"] == "use of undeclared identifier 'cudaStreamGetDevice'"
    assert doc["compiler"]["rocm"] == doc["target_rocm"] == "5.2"


@pytest.mark.compile
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
    (["verify", "{tmp}/missing"], "{tmp}/missing: no such file or directory (verify takes the converted tree, e.g. the -o of convert)"),
    (["verify", "{tmp}/a.cu"], "{tmp}/a.cu: not a directory (verify takes the converted tree, e.g. the -o of convert)"),
    (["verify", "{tmp}", "--offload-arch", "sm_80"], "--offload-arch: 'sm_80' is not an AMD GPU target"),
    (["verify", "{tmp}", "--timeout", "0"], "--timeout must be positive, not 0"),
    (["verify", "{tmp}", "-p", "{tmp}"], "{tmp}: no compile_commands.json there"),
    (["convert", "{tmp}", "--diff", "--verify"], "--verify needs -o OUT (a directory): it compiles the converted tree"),
])
@pytest.mark.compile
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys, args, message):
    require_tool("hipcc", HIPCC)
    (tmp_path / "a.cu").write_text("__global__ void k() {}\n")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message.replace("{tmp}", str(tmp_path)) in err, err


@pytest.mark.compile
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
    from portkit.core.files import discover
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


@pytest.mark.compile
def test_a_unit_over_the_time_limit_is_reported_not_waited_for(tmp_path: Path):
    require_tool("hipcc", HIPCC)
    (tmp_path / "slow.cu").write_text("#include <hip/hip_runtime.h>\n__global__ void k(float *x) { x[0] = 1; }\n")
    result = verify_tree(tmp_path, VerifyOptions(timeout=0.05))
    [unit] = result.units
    assert (unit.status, unit.failed, unit.explained, unit.errors) == ("timeout", True, False, [])
    assert unit.seconds < 5 and result.count("unexplained") == 1


# --- the build's configuration (CMakeLists.txt, Makefile) -----------------------------------------

BUILD_CONFIG = VERIFY / "build_config" / "input"


@pytest.mark.compile
def test_verify_names_where_the_configuration_came_from(tmp_path: Path, capsys):
    require_tool("hipcc", HIPCC)
    out = tmp_path / "out"
    convert_paths([BUILD_CONFIG], output=out, rocm="5.2")
    assert main(["verify", str(out), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["configurations"] == [{"origin": "CMake", "files": ["CMakeLists.txt"], "std": "c++17",
                                      "includes": [str(out / "include")], "defines": ["SCALE_FACTOR=3"], "assumed": [],
                                      "units": 1}]
    [unit] = doc["units"]
    assert (unit["status"], unit["flags_from"]) == ("compiled", "cmake")
    command = unit["command"]
    assert command[command.index("-std=c++17") + 1:command.index("-std=c++17") + 3] == \
        [f"-I{out / 'include'}", "-DSCALE_FACTOR=3"]
    assert command.index("-std=c++11") < command.index("-std=c++17")      # hipcc's default comes first, and loses
    assert main(["verify", str(out), "--no-build-config", "--std", "c++17", "-q"]) == 1
    assert capsys.readouterr().out == "portkit verify: 0/1 compiled, 1 failed (1 unexplained)\n"
    assert main(["verify", str(out), "--std", "c++14"]) == 1
    text = capsys.readouterr().out
    assert "configuration of 1 unit: CMake (CMakeLists.txt): -std=c++17, 1 include directory, 1 definition " \
           "(SCALE_FACTOR=3)\nstandard: -std=c++14 for every unit (--std)\n" in text
    assert "include/config.h:8:11: error: 'auto' not allowed in template parameter until C++17" in text


@pytest.mark.compile
def test_the_unit_needs_the_standard_the_directory_and_the_definition(tmp_path: Path):
    """Without CMakeLists.txt's definition the unit stops at config.h's #error; without its include
    directory (standard and definition given by hand) at the stale legacy header."""
    require_tool("hipcc", HIPCC)
    out = tmp_path / "out"
    convert_paths([BUILD_CONFIG], output=out, rocm="5.2")
    result = verify_tree(out, VerifyOptions(build_config=False, std="c++17", defines=("SCALE_FACTOR=3",)))
    assert [(e.rel, e.line) for e in result.units[0].errors] == [("src/legacy/config.h", 3), ("src/scale.cu", 7)]
    assert (result.units[0].flags_from, result.configurations) == ("tree", [])
    cmake = out / "CMakeLists.txt"
    cmake.write_text(cmake.read_text().replace("target_compile_definitions(scale PRIVATE SCALE_FACTOR=3)", ""))
    result = verify_tree(out, VerifyOptions())
    assert [(e.rel, e.line, e.message) for e in result.units[0].errors] == [
        ("include/config.h", 5, '"SCALE_FACTOR must be defined by the build"'),
        ("include/config.h", 13, "use of undeclared identifier 'SCALE_FACTOR'"),
        ("src/scale.cu", 7, "use of undeclared identifier 'scale_factor'")]


@pytest.mark.compile
def test_std_must_be_a_standard(tmp_path: Path, capsys):
    require_tool("hipcc", HIPCC)
    (tmp_path / "a.cu").write_text("__global__ void k() {}\n")
    assert main(["verify", str(tmp_path), "--std", "c++17 -DX"]) == 2
    assert capsys.readouterr().err == "portkit: error: --std: 'c++17 -DX' is not a C++ standard (c++17, gnu++20, ...)\n"


@pytest.mark.compile
def test_a_missing_third_party_header_makes_the_unit_not_reached(tmp_path: Path, capsys):
    require_tool("hipcc", HIPCC)
    (tmp_path / "solve.cu").write_text('#include <hip/hip_runtime.h>\n#include <fancysolver/solver.h>\n'
                                       '__global__ void k(float *x) { x[0] = undeclared_here; }\n')
    (tmp_path / "ok.cu").write_text("#include <hip/hip_runtime.h>\n__global__ void k(float *x) { x[0] = 1; }\n")
    (tmp_path / "gap.cu").write_text("#include <hip/hip_runtime.h>\n"
                                     "int f() { int d = 0; cudaStreamGetDevice(0, &d); return d; }\n")
    assert main(["verify", str(tmp_path), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"] | {"seconds": 0} == {"units": 3, "compiled": 1, "failed": 2, "explained": 0,
                                               "unexplained": 1, "not_reached": 1, "failed_on_decision": 0,
                                               "seconds": 0}
    solve = next(u for u in doc["units"] if u["path"] == "solve.cu")
    assert (solve["status"], solve["not_reached"], solve["explained"], solve["unexplained"]) == \
        ("not_reached", True, False, False)
    assert [(e["message"], [f["code"] for f in e["findings"]]) for e in solve["errors"]] == \
        [("'fancysolver/solver.h' file not found", ["PK702"])]
    assert main(["verify", str(tmp_path)]) == 1
    text = capsys.readouterr().out
    assert "solve.cu: not reached: a header of a library not installed here" in text
    assert "3 translation units: 1 compiled, 2 failed (0 explained by findings, 1 unexplained, 1 not reached)" in text
    assert main(["verify", str(tmp_path), "-q"]) == 1
    assert capsys.readouterr().out == "portkit verify: 1/3 compiled, 2 failed (1 unexplained, 1 not reached)\n"


def _cmake(tmp_path: Path, text: str) -> FileConfig:
    return read_cmake(text, tmp_path, tmp_path)


def test_cmake_reader_takes_standards_directories_and_definitions(tmp_path: Path):
    for d in ("inc", "src/include", "gen"):
        (tmp_path / d).mkdir(parents=True)
    config = _cmake(tmp_path, """
        set(CMAKE_CXX_STANDARD 14)
        set_property(TARGET lib PROPERTY CUDA_STANDARD 17)
        include_directories(inc missing)
        list(APPEND MY_INCLUDES "src/include")
        target_include_directories(lib PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/gen>
                                   $<INSTALL_INTERFACE:include> ${MY_INCLUDES} ${UNKNOWN_DIR})
        add_compile_definitions(A=1 $<$<CONFIG:Debug>:DEBUG_ONLY>)
        add_definitions(-DB -fPIC)
        target_compile_definitions(lib PRIVATE C V="${VERSION}" W="v1")
        if(WITH_EXTRAS)
          add_compile_definitions(EXTRA)
        elseif(USE_ROCM)
          add_compile_definitions(HIP_BUILD)
        endif()
        if(NOT USE_HIP)
          add_compile_definitions(CUDA_BUILD)
        endif()
        add_library(lib STATIC a.cu ${MORE})
    """)
    assert config.std == "c++17"
    assert config.includes == [str(tmp_path / "inc"), str(tmp_path / "gen"), str(tmp_path / "src/include")]
    assert config.defines == ["A=1", "B", "HIP_BUILD"]
    assert config.target_defines == {"lib": ["C"]}
    assert config.target_sources == {"lib": [str(tmp_path / "a.cu")]}


@pytest.mark.parametrize("line", [
    'include_directories("$(touch X)" `touch X` "a;$ENV{HOME}")',
    "target_include_directories(t PRIVATE -Ibad ../../../../../../nonexistent)",
    'add_compile_definitions("X=$(touch Y)" "Y=1 touch Z" -DZ=`id` "Q=\\"q\\"" 1BAD)',
    'set(CMAKE_CXX_FLAGS "-std=c++17;rm -rf /")',
    "set(CMAKE_CXX_STANDARD 17abc)",
])
def test_cmake_reader_drops_what_is_not_plain(tmp_path: Path, line: str):
    config = _cmake(tmp_path, line)
    std = "c++17" if "CMAKE_CXX_FLAGS" in line else None
    assert (config.std, config.includes, config.defines, config.target_defines) == (std, [], [], {})
    assert not (tmp_path / "X").exists()


def test_tree_config_merges_parents_and_keeps_targets_for_their_sources(tmp_path: Path):
    (tmp_path / "include").mkdir()
    (tmp_path / "gpu").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p)\nset(CMAKE_CUDA_STANDARD 17)\ninclude_directories(${PROJECT_SOURCE_DIR}/include)\n"
        "add_library(core gpu/listed.cu)\ntarget_compile_definitions(core PRIVATE CORE=1)\n"
        "add_library(cpu_avx512 ${SRC})\ntarget_compile_definitions(cpu_avx512 PRIVATE SIMD_AVX512)\n")
    (tmp_path / "gpu" / "CMakeLists.txt").write_text("add_library(gpu ${GLOBBED})\n"
                                                     "target_compile_definitions(gpu PRIVATE GPU=1)\n")
    tree = TreeConfig(tmp_path)
    base = ("CMake", ("CMakeLists.txt", "gpu/CMakeLists.txt"), "c++17", (str(tmp_path / "include"),))
    assert tree.for_unit("gpu/listed.cu") == BuildConfig(*base, ("CORE=1",))
    assert tree.for_unit("gpu/other.cu") == BuildConfig(*base, ("GPU=1",))
    assert tree.for_unit("top.cu") == BuildConfig("CMake", ("CMakeLists.txt",), "c++17", base[3],
                                                  ("SIMD_AVX512",))
    assert tree.for_unit("gpu/listed.cu").flags() == ("-std=c++17", f"-I{tmp_path / 'include'}", "-DCORE=1")


def test_makefile_reader_takes_flag_variables_and_recipes(tmp_path: Path):
    (tmp_path / "dev").mkdir()
    (tmp_path / "inc dir").mkdir()
    config = read_make(
        "NVCC_FLAGS = -O3 --use_fast_math -std=c++17 # -std=c++20 in a comment\n"
        'NVCC_INCLUDES += -I"dev" -I $(CUDNN_PATH) -I"inc dir"\n'
        "CFLAGS = -DFAST \\\n  -DLEVEL=2\n"
        "ifeq ($(USE_MPI),1)\n  NVCC_FLAGS += -DUSE_MPI -Iinc\nelse ifdef USE_HIP\n  NVCC_FLAGS += -DHIP_BUILD\nendif\n"
        "LDFLAGS = -L/opt/x -DNOT_A_FLAG_VAR_BUT_FLAGS\n"
        "OTHER = -DNOT_FLAGS\n"
        "train: train.cu\n\t$(NVCC) $(NVCC_FLAGS) -Icommon -DRECIPE=1 $< -o $@\n", tmp_path)
    assert config.std == "c++17"
    assert config.includes == [str(tmp_path / "dev"), str(tmp_path / "inc dir")]
    assert config.defines == ["FAST", "LEVEL=2", "HIP_BUILD", "NOT_A_FLAG_VAR_BUT_FLAGS", "RECIPE=1"]


def test_another_oss_branch_of_a_makefile_gives_no_flags(tmp_path: Path):
    """llm.c: `ifeq ($(OS), Windows_NT)` sets `/Idev` (Windows shims such as dev/unistd.h); taken, it
    made every unit include the shim instead of the system's <unistd.h> (issue 32)."""
    for name in ("dev", "linux", "posix", "win", "mac"):
        (tmp_path / name).mkdir()
    config = read_make("ifeq ($(OS), Windows_NT)\n  INCLUDES = -Idev\nelse ifeq ($(shell uname), Darwin)\n"
                       "  INCLUDES = -Imac\nelse\n  INCLUDES = -Ilinux\nendif\n"
                       "ifneq ($(OS), Windows_NT)\n  INCLUDES += -Iposix\nelse\n  INCLUDES += -Iwin\nendif\n", tmp_path)
    assert config.includes == [str(tmp_path / "linux"), str(tmp_path / "posix")]


def test_a_system_header_is_never_taken_from_a_shim_in_the_tree(tmp_path: Path):
    """`#include <unistd.h>` with the tree's own dev/unistd.h (a Windows shim): the system's, so no
    include directory is inferred for it; a quoted include of the same name still resolves."""
    from portkit.core.files import discover
    for rel, text in {"main.cu": '#include <unistd.h>\n#include <helper.h>\n', "dev/unistd.h": "",
                      "inc/helper.h": '#include "unistd.h"\n', "inc/unistd.h": ""}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    root, entries, _ = discover([tmp_path])
    assert inferred_include_dirs(HeaderIndex(root, entries), "main.cu") == ["inc"]


@pytest.mark.parametrize("text", [
    "CFLAGS = -I$(touch X) -D$(shell touch X)=1\n",
    "CFLAGS = '-I`touch X`' -DA=$$(id) -D'B=1;touch X'\n",
    'NVCCFLAGS = -I"/tmp/$(HOME)" -std=c++17;touch -std=$(STD)\n',
    "all:\n\tcc -I../../../../../../../../nonexistent -D 'X Y' -std=c++17x\n",
])
def test_makefile_reader_drops_what_is_not_plain(tmp_path: Path, text: str):
    config = read_make(text, tmp_path)
    assert (config.std, config.includes, config.defines) == (None, [], [])
    assert not (tmp_path / "X").exists()
