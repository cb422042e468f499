"""Build files: exact conversions of fixtures/build/ projects, and the converted projects build.

The CMake projects are configured and built with Debian's ROCm (CMake's HIP language through
tools/debian-rocm.cmake), the Makefile project with make + hipcc; the CUDA inputs compile with
nvcc. Unit tests below pin the nvcc flag translator and the two lexers.
"""

from __future__ import annotations

import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from portkit import api
from portkit.buildfiles import cmake_lexer
from portkit.buildfiles import make as make_migrator
from portkit.buildfiles.nvcc import Word, translate
from portkit.buildfiles.table import default_table
from portkit.cli.app import main

from conftest import CUDA_LIB_INCLUDE, NVCC, REPO, require_dir, require_rocm_libraries, require_tool

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CASES_DIR = REPO / "fixtures" / "build"
CASES = sorted(p for p in CASES_DIR.iterdir() if (p / "case.toml").is_file())
IDS = [p.name for p in CASES]
TOOLCHAIN = REPO / "tools" / "debian-rocm.cmake"
DEBIAN_HIP_LANG = Path("/usr/lib/x86_64-linux-gnu/cmake/hip-lang")


def meta(case: Path) -> dict:
    return tomllib.loads((case / "case.toml").read_text(encoding="utf-8"))


def tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def convert(source: Path, out: Path) -> api.ConvertResult:
    return api.convert_paths([source], output=out, rocm="5.2")


def test_every_kind_of_build_file_has_a_case():
    kinds = {meta(c)["build"] for c in CASES}
    assert {"cmake", "make", "python"} <= kinds


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_golden(case: Path, tmp_path: Path):
    assert main(["convert", str(case / "input"), "-o", str(tmp_path / "out"), "--rocm", "5.2", "-q"]) == 0
    assert tree(tmp_path / "out") == tree(case / "expected")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_findings_are_exact(case: Path, tmp_path: Path):
    result = convert(case / "input", tmp_path / "out")
    got = [f"{f.path}:{f.line} {f.code}" for f in sorted(result.findings, key=lambda f: f.sort_key())
           if f.code in ("PK508", "PK509")]
    assert got == meta(case)["findings"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_idempotent(case: Path, tmp_path: Path):
    """Converting the expected output again changes nothing and reports no new choice."""
    result = convert(case / "expected", tmp_path / "again")
    assert tree(tmp_path / "again") == tree(case / "expected")
    assert not [f for f in result.findings if f.code == "PK509"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_audit_reports_what_convert_leaves(case: Path):
    """The audit of the CUDA project names every line convert leaves for a person (PK508 or the
    more specific PK401), and reports none of convert's choices (PK509)."""
    doc = api.audit_paths([case / "input"], rocm="5.2")
    audit_lines = {(f["path"], f["line"]) for f in doc["findings"] if f["code"] in ("PK508", "PK401", "PK402")}
    left = {(e.split(":")[0], int(e.split(":")[1].split()[0])) for e in meta(case)["findings"] if e.endswith("PK508")}
    assert left <= audit_lines
    assert not [f for f in doc["findings"] if f["code"] == "PK509"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.compile
def test_cuda_input_compiles_with_nvcc(case: Path):
    units = sorted((case / "input").rglob("*.cu"))
    if not units:
        pytest.skip("no CUDA sources")
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    includes = []
    if any(b"curand" in u.read_bytes() for u in units):
        includes = ["-I", str(require_dir(CUDA_LIB_INCLUDE, "CUDA library headers (set CUDA_LIB_INCLUDE)"))]
    for unit in units:
        run([nvcc, "-x", "cu", "-c", str(unit), "-o", os.devnull, "-I", str(unit.parent), *includes,
             *meta(case).get("nvcc_flags", [])])


@pytest.mark.parametrize("case", [c for c in CASES if meta(c)["build"] in ("cmake", "make")],
                         ids=[c.name for c in CASES if meta(c)["build"] in ("cmake", "make")])
@pytest.mark.compile
def test_converted_project_builds(case: Path, tmp_path: Path):
    build = meta(case)["build"]
    project = tmp_path / case.name
    shutil.copytree(case / "expected", project)
    env = dict(os.environ, HIP_PLATFORM="amd")
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    require_rocm_libraries([project])
    if build == "cmake":
        cmake = require_tool("cmake", "cmake (apt-get install cmake)")
        configure = [cmake, "-S", str(project), "-B", str(project / "build")]
        if DEBIAN_HIP_LANG.is_dir():
            configure.append(f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN}")
        run(configure, env=env)
        run([cmake, "--build", str(project / "build"), "-j", "2"], env=env)
    else:
        run([require_tool("make", "make (apt-get install make)"), "-C", str(project), "-j", "2"], env=env)
    for output in meta(case)["outputs"]:
        assert (project / output).is_file(), f"{output} was not built"


def test_converted_setup_py_is_valid_python(tmp_path: Path):
    for case in CASES:
        for script in (case / "expected").rglob("*.py"):
            py_compile.compile(str(script), cfile=str(tmp_path / "x.pyc"), doraise=True)


def run(cmd: list[str], env: dict | None = None) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"


# ------------------------------------------------------------------ the nvcc flag translator

def words(text: str) -> list[Word]:
    out, pos = [], 0
    for part in text.split(" "):
        out.append(Word(part, pos, pos + len(part)))
        pos += len(part) + 1
    return out


def translated(text: str, targets: tuple[str, ...] = ("gfx90a",), context: bool = True) -> str:
    """Apply the translator's changes to a space-separated command line, as a string."""
    ws = words(text)
    result = [w.text for w in ws]
    for change in sorted(translate(ws, default_table(), targets, context).changes, key=lambda c: -c.first):
        if change.words is not None:
            result[change.first:change.last] = change.words
    return " ".join(result)


@pytest.mark.parametrize("nvcc, hipcc", [
    ("-O3 -arch=sm_80", "-O3 --offload-arch=gfx90a"),
    ("-arch sm_70 -code sm_70", "--offload-arch=gfx90a"),
    ("-gencode arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90", "--offload-arch=gfx90a"),
    ("--use_fast_math -lineinfo -G", "-ffast-math -gline-tables-only -g"),
    ("-rdc=true -c a.cu", "-fgpu-rdc -c a.cu"),
    ("-rdc=false -c a.cu", "-c a.cu"),
    ("-dc a.cu", "-fgpu-rdc -c a.cu"),
    ("-Xcompiler -fPIC,-Wall -Xcompiler=-fopenmp", "-fPIC -Wall -fopenmp"),
    ("--expt-relaxed-constexpr --extended-lambda -ccbin g++-12", ""),
    ("-Xptxas -v -maxrregcount=32", "-Xptxas -v -maxrregcount=32"),
    ("-lcudart -lcublas -lcurand -lcufft -lnccl", "-lamdhip64 -lhipblas -lhiprand -lhipfft -lrccl"),
    ("--default-stream per-thread", "-fgpu-default-stream=per-thread"),
    ("-Xlinker -rpath=/x", "-Wl,-rpath=/x"),
])
def test_nvcc_flags(nvcc: str, hipcc: str):
    assert translated(nvcc) == hipcc


def test_several_targets_and_reports():
    assert translated("-arch=sm_80", ("gfx90a", "gfx942")) == "--offload-arch=gfx90a --offload-arch=gfx942"
    result = translate(words("-Xptxas -v --new-nvcc-option -O2 -I/x -DN=1"), default_table(), ("gfx90a",))
    assert [(c.code, c.subject) for c in result.changes] == [("PK508", "-Xptxas -v"), ("PK508", "--new-nvcc-option")]


def test_ambiguous_options_change_only_where_nvcc_reads_them():
    assert translated("-G -c -keep", context=False) == "-G -c -keep"
    assert translated("-G -c -keep") == "-g -c -save-temps"
    assert not translate(words("--unknown"), default_table(), ("gfx90a",), nvcc_context=False).changes


# ------------------------------------------------------------------ lexers

def test_cmake_lexer_reads_quotes_brackets_comments_and_nested_parens():
    text = ('set(A "x;y" [[b)r]] # c)\n  B)\n#[[ cuda_add_library(no) ]]\n'
            'if((NOT X) AND Y)\nfoo (a\\ b)\n')
    cmds = cmake_lexer.commands(text)
    assert [c.name for c in cmds] == ["set", "if", "foo"]
    assert [(a.kind, a.value) for a in cmds[0].args] == [("unquoted", "A"), ("quoted", "x;y"),
                                                          ("bracket", "b)r"), ("unquoted", "B")]
    assert [a.text for a in cmds[1].args] == ["(", "NOT", "X", ")", "AND", "Y"]
    assert cmds[2].values() == ["a\\ b"]


def test_make_words_keep_references_and_quotes_whole():
    line = 'X := $(foreach s,$(SMS),-gencode a=$(s)) "-a b" -c \\\n  -d'
    assert [w.text for w in make_migrator._words(line, 0)] == [
        "X", ":=", "$(foreach s,$(SMS),-gencode a=$(s))", '"-a b"', "-c", "-d"]


def test_makefile_continuation_and_recipe_context():
    out = api.convert_text("NVCC = nvcc\nFLAGS = -O2 \\\n  -arch=sm_80\nall:\n\t$(NVCC) $(FLAGS) -G -o app app.cu\n"
                           "\tg++ -G -o x x.o\n", filename="Makefile", rocm="5.2").output.decode()
    assert out == ("NVCC = hipcc\nFLAGS = -O2 \\\n  --offload-arch=gfx90a\nall:\n\t$(NVCC) $(FLAGS) -g -o app app.cu\n"
                   "\tg++ -G -o x x.o\n")


def test_offload_arch_is_validated_and_used(tmp_path: Path, capsys):
    (tmp_path / "CMakeLists.txt").write_text("set(CMAKE_CUDA_ARCHITECTURES 80)\n")
    assert main(["convert", str(tmp_path), "--diff", "--offload-arch", "gfx942,gfx90a:xnack+"]) == 0
    assert '+set(CMAKE_HIP_ARCHITECTURES "gfx942;gfx90a:xnack+")' in capsys.readouterr().out
    assert main(["convert", str(tmp_path), "--diff", "--offload-arch", "sm_80"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'sm_80' is not an AMD GPU target" in err[0]


def test_no_build_files_leaves_them(tmp_path: Path):
    src = CASES_DIR / "make_project" / "input"
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "--no-build-files", "-q"]) == 0
    assert (tmp_path / "out" / "Makefile").read_bytes() == (src / "Makefile").read_bytes()


def test_library_names_follow_the_target_rocm():
    """hiprtc has its own CMake package from ROCm 5.4; before, it is part of amdhip64 (hip::host)."""
    text = "find_package(CUDAToolkit REQUIRED)\ntarget_link_libraries(app PRIVATE CUDA::nvrtc)\n"
    old = api.convert_text(text, filename="CMakeLists.txt", rocm="5.2").output.decode()
    new = api.convert_text(text, filename="CMakeLists.txt", rocm="6.0").output.decode()
    assert old == "find_package(hip REQUIRED)\ntarget_link_libraries(app PRIVATE hip::host)\n"
    assert new == ("find_package(hip REQUIRED)\nfind_package(hiprtc REQUIRED)\n"
                   "target_link_libraries(app PRIVATE hiprtc::hiprtc)\n")


def test_cmake_options_nvcc_reads_only_and_custom_nvcc_steps():
    text = ("target_compile_options(app PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>)\n"
            "target_compile_options(app PRIVATE -O2 $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)\n"
            "list(APPEND GENCODE \"-gencode=arch=compute_${a},code=sm_${a}\")\n"
            "add_custom_command(OUTPUT k.fatbin COMMAND ${CMAKE_CUDA_COMPILER} -fatbin -o k.fatbin k.cu)\n")
    out = api.convert_text(text, filename="CMakeLists.txt", rocm="5.2")
    assert out.output.decode() == ("target_compile_options(app PRIVATE -O2)\n"
                                   "list(APPEND GENCODE \"--offload-arch=gfx90a\")\n"
                                   "add_custom_command(OUTPUT k.fatbin COMMAND ${CMAKE_HIP_COMPILER} -fatbin -o k.fatbin k.cu)\n")
    assert [(f.line, f.code) for f in out.findings] == [(1, "PK509"), (2, "PK509"), (3, "PK509"), (4, "PK508"),
                                                        (4, "PK508")]


def test_project_variables_named_cuda_are_left_alone():
    text = 'set(CUDA_PTX_FILE "${CMAKE_BINARY_DIR}/k.ptx")\nmessage(${CUDA_PTX_FILE} ${CUDAToolkit_VERSION})\n'
    out = api.convert_text(text, filename="CMakeLists.txt", rocm="5.2")
    assert out.output.decode() == text
    assert [(f.line, f.code, f.subject) for f in out.findings] == [(2, "PK508", "CUDAToolkit_VERSION")]


def test_cuda_architectures_never_reach_the_hip_list_and_ccbin_goes_with_its_value(tmp_path: Path):
    """Issue 31, as in ggml's CMake: an appended CUDA architecture (`120a-real`) was written into
    CMAKE_HIP_ARCHITECTURES, and `-ccbin ${CMAKE_CUDA_HOST_COMPILER}` left the compiler path behind."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text("__global__ void k() {}\n")
    (src / "CMakeLists.txt").write_text(
        "project(demo LANGUAGES CXX CUDA)\n"
        "set(CMAKE_CUDA_ARCHITECTURES 70 80)\n"
        "if (CUDAToolkit_VERSION VERSION_GREATER_EQUAL \"12.8\")\n"
        "    list(APPEND CMAKE_CUDA_ARCHITECTURES 120a-real)\n"
        "endif()\n"
        "add_library(k k.cu)\n"
        "list(APPEND NVCC_CMD -ccbin ${CMAKE_CUDA_HOST_COMPILER} -O3)\n")
    result = convert(src, tmp_path / "out")
    assert (tmp_path / "out" / "CMakeLists.txt").read_text() == (
        "project(demo LANGUAGES CXX HIP)\n"
        "set(CMAKE_HIP_ARCHITECTURES gfx90a)\n"
        "if (CUDAToolkit_VERSION VERSION_GREATER_EQUAL \"12.8\")\n"
        "endif()\n"
        "add_library(k k.cu)\n"
        "set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\n"
        "list(APPEND NVCC_CMD -O3)\n")
    assert [(f.code, f.line) for f in result.findings if f.path == "CMakeLists.txt"] == [
        ("PK509", 2), ("PK509", 4), ("PK509", 7), ("PK508", 7)]
