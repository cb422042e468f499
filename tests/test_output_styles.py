"""Output styles (issue 11): legacy HIP built-ins, renamed files, the single-source compatibility header.

The golden conversions live in fixtures/convert (legacy_builtins, classic_hipify_style) and are
checked byte for byte, and compiled with hipcc, by the corpus tests; here: the edges.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import NVCC, REPO, require_rocm_libraries, require_tool
from portkit import convert_text
from portkit.api import convert_paths
from portkit.cli.app import main
from portkit.rewrite import builtins
from portkit.commands.verify import VerifyOptions, verify_tree


def test_builtins_hip_rewrites_only_bare_builtins_with_a_component():
    source = ("__global__ void k(float *o, S s) {\n"
              "  o[threadIdx.x] = s.threadIdx.x + blockIdx . y + gridDim.z + blockDim.w;\n"
              "  dim3 t = threadIdx; o[0] = p->blockIdx.x;\n}\n")
    out = convert_text(source, builtins="hip").output.decode()
    assert out.splitlines()[3:5] == [
        "  o[hipThreadIdx_x] = s.threadIdx.x + hipBlockIdx_y + hipGridDim_z + blockDim.w;",
        "  dim3 t = threadIdx; o[0] = p->blockIdx.x;"]
    assert convert_text(out, builtins="hip").output.decode() == out          # idempotent
    assert convert_text(source).output.decode().count("threadIdx.x") == 2    # default: CUDA spelling kept


def test_help_says_what_the_table_says_about_deprecation(monkeypatch):
    from portkit.core.tables import builtins as builtin_table   # the table, apart from the scanner (fast --help)
    assert builtin_table.help_text() == ("the tables record no ROCm release that deprecates or drops them "
                                         "(checked: ROCm 5.2, 6.3)")
    table = {b"threadIdx": builtin_table.Builtin("threadIdx", "hipThreadIdx_", hip_deprecated=(7, 1, 0))}
    monkeypatch.setattr(builtin_table, "_load", lambda: (table, ("7.1",)))
    assert builtin_table.help_text() == "threadIdx: deprecated in ROCm 7.1"


def test_bad_builtins_value_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["convert", "x.cu", "--diff", "--builtins", "amd"])
    assert stop.value.code == 2


# --- --rename ------------------------------------------------------------------------------------

RENAME = REPO / "fixtures" / "rename" / "project"


def tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_rename_golden_names_includes_and_build_files(tmp_path: Path):
    """.cu -> .hip, .cuh -> .hip.h; the project's #include lines, the CMake sources and the
    Makefile's pattern rule and prerequisites follow."""
    result = convert_paths([RENAME / "input"], output=tmp_path / "out", rename=True, rocm="5.2")
    assert tree(tmp_path / "out") == tree(RENAME / "expected")
    assert not result.all_skipped


def test_rename_is_idempotent_and_keeps_names_without_it(tmp_path: Path):
    convert_paths([RENAME / "expected"], output=tmp_path / "again", rename=True, rocm="5.2")
    assert tree(tmp_path / "again") == tree(RENAME / "expected")
    convert_paths([RENAME / "input"], output=tmp_path / "kept", rocm="5.2")
    assert sorted(tree(tmp_path / "kept")) == sorted(tree(RENAME / "input"))


@pytest.mark.compile
def test_renamed_project_compiles_and_builds_with_make(tmp_path: Path):
    hipcc = require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    result = verify_tree(RENAME / "expected", VerifyOptions(jobs=2))
    assert [(u.rel, u.status) for u in result.units] == [("src/histogram.hip", "compiled"), ("src/main.hip", "compiled")]
    project = tmp_path / "project"
    shutil.copytree(RENAME / "expected", project)
    make = require_tool("make", "make (apt-get install make)")
    proc = subprocess.run([make, "-C", str(project), f"NVCC={hipcc} --offload-arch=gfx90a"], capture_output=True,
                          text=True, env=dict(os.environ, HIP_PLATFORM="amd"), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (project / "histogram").is_file()


def test_a_taken_name_is_reported_and_never_overwritten(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cu").write_text("#include \"a.cuh\"\n__global__ void k() {}\n")
    (src / "a.cuh").write_text("#pragma once\n")
    (src / "a.hip").write_text("// the team's own HIP file\n")
    (src / "b.cu").write_text("#include \"a.cuh\"\n__global__ void j() {}\n")
    result = convert_paths([src], output=tmp_path / "out", rename=True)
    assert [(s.rel, s.reason, s.error) for s in result.all_skipped] == [
        ("a.cu", "not renamed to a.hip: a.hip exists (the file keeps its name; rename one of them by hand)", False)]
    out = tree(tmp_path / "out")
    assert sorted(out) == ["a.cu", "a.hip", "a.hip.h", "b.hip"]
    assert out["a.hip"] == b"// the team's own HIP file\n"
    assert out["b.hip"].startswith(b'\n#include <hip/hip_runtime.h>\n#include "a.hip.h"\n')


def test_rename_in_place_writes_the_new_name_then_removes_the_old(tmp_path: Path):
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "k.cu").chmod(0o640)
    convert_paths([tmp_path], in_place=True, rename=".cu=.hip")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.hip"]
    assert (tmp_path / "k.hip").stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("argv,message", [
    (["--rename-map", ".cu=.hip"], "--rename-map needs --rename"),
    (["--rename", "--rename-map", "cu=hip"], "--rename-map: 'cu=hip' is not OLD=NEW with two different suffixes"),
    (["--rename", "--rename-map", ".cu=.hip,.cu=.hpp"], "--rename-map: a suffix is given twice"),
])
def test_bad_rename_options_are_one_line_errors(tmp_path: Path, capsys, argv, message):
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    assert main(["convert", str(tmp_path), "-o", str(tmp_path.parent / "o"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_rename_to_stdout_is_refused(tmp_path: Path, capsys):
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    assert main(["convert", str(tmp_path / "k.cu"), "-o", "-", "--rename"]) == 2
    assert "--rename writes files under new names" in capsys.readouterr().err


@pytest.mark.compile
def test_rename_fixture_input_compiles_with_nvcc():
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    for unit in sorted((RENAME / "input" / "src").glob("*.cu")):
        proc = subprocess.run([nvcc, "-x", "cu", "-I", str(RENAME / "input" / "include"), "-c", str(unit),
                               "-o", os.devnull], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]


# --- --compat-header -----------------------------------------------------------------------------

COMPAT = REPO / "fixtures" / "compat" / "project"
HEADER = "include/portkit_hip_compat.h"


def compat_in_place(tree_root: Path, capsys=None) -> int:
    return main(["convert", str(tree_root), "--compat-header", str(tree_root / HEADER), "--in-place",
                 "--rocm", "5.2", "-q"])


def test_compat_header_golden_and_idempotent(tmp_path: Path):
    project = tmp_path / "project"
    shutil.copytree(RENAME / "input", project)
    assert compat_in_place(project) == 0
    sources = {k: v for k, v in tree(project).items() if k != "Makefile"}   # CMake: the HIP build as an option
    assert sources == tree(COMPAT / "expected")
    assert tree(project)["Makefile"] == (RENAME / "input" / "Makefile").read_bytes()
    assert compat_in_place(project) == 0                                   # again: nothing changes
    assert {k: v for k, v in tree(project).items() if k in sources} == sources
    assert main(["convert", str(project), "--compat-header", str(project / HEADER), "--check", "--rocm", "5.2",
                 "-q"]) == 0


def test_compat_header_maps_every_name_used_and_none_unused():
    import re
    from portkit.core.tables.mappings import default_db
    header = (COMPAT / "expected" / HEADER).read_text()
    defined = set(re.findall(r"^#define (\w+)", header, re.M))
    code = " ".join(p.read_text() for p in (RENAME / "input").rglob("*.cu*"))
    names = default_db().names
    used = {t for t in re.findall(r"\b\w+\b", code) if t in names and names[t].hip not in (None, t)}
    assert defined == used == {"cudaFree", "cudaMalloc", "cudaMemcpy", "cudaMemcpyDeviceToHost",
                               "cudaMemcpyHostToDevice", "cudaMemset", "cudaStream_t"}


@pytest.mark.compile
def test_the_same_sources_compile_with_nvcc_and_for_amd(tmp_path: Path):
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    hipcc = require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    for unit in sorted((COMPAT / "expected" / "src").glob("*.cu")):
        include = ["-I", str(COMPAT / "expected" / "include")]
        for cmd, env in (([nvcc, "-x", "cu", *include, "-c", str(unit), "-o", os.devnull], None),
                         ([hipcc, "-x", "hip", "--offload-arch=gfx90a", *include, "-c", str(unit), "-o", os.devnull],
                          dict(os.environ, HIP_PLATFORM="amd"))):
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
            assert proc.returncode == 0, f"{cmd[0]} {unit.name}\n{proc.stderr[-3000:]}"


@pytest.mark.compile
def test_compat_header_builds_the_conversion_corpus_for_amd(tmp_path: Path):
    """Every golden conversion case (the CUDA inputs) compiles for AMD through its generated header,
    except the ones the mode lists as needing a source edit, and those fail where it says."""
    import json

    from cases import all_cases
    from portkit.commands.compat import compat_paths
    from portkit.commands.convert import atomic_write
    from portkit.core.tables.mappings import parse_version
    from portkit.commands.scan.walk import Options
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    corpus, commands, manual = tmp_path / "corpus", [], {}
    for case in all_cases():
        if case.hipcc_skip or set(case.args) - {"--no-polyfills"}:
            continue   # (the compat-header mode writes no polyfill header: --no-polyfills changes nothing here)
        base = corpus / case.name
        for path in case.input_files():
            target = base / path.relative_to(case.input if case.multi else case.input.parent)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            if target.suffix in (".cu", ".cpp", ".cc") or target.name.startswith("input."):
                commands.append({"directory": str(base), "file": str(target),
                                 "arguments": ["hipcc", *case.hipcc_flags, "-I.", "-c", str(target)]})
        result = compat_paths([base], base / "portkit_hip_compat.h", Options(rocm=parse_version("5.2")))
        for f in result.files:
            if f.output is not None:
                atomic_write(f.entry.path, f.output)
            for line, what in f.manual:
                manual.setdefault(case.name, []).append((f.entry.rel, line))
        (base / "portkit_hip_compat.h").write_bytes(result.header_text)
    require_rocm_libraries([corpus])
    (corpus / "compile_commands.json").write_text(json.dumps(commands))
    verified = verify_tree(corpus, VerifyOptions(compile_commands=corpus, jobs=2))
    failed = {u.rel.split("/")[0] for u in verified.units if u.failed}
    # driver_api's hand edit (CUDA 13's cuCtxCreate loses its parameters argument) is in its
    # `#if CUDA_VERSION >= 13000` branch, which the AMD build does not compile; shared_header_cudacc's
    # (`#ifdef __CUDACC__`, false for hipcc) changes which branch AMD takes, not whether it compiles, as
    # compiler_macro_branches's do (its header's `#ifdef __CUDACC__` and `#ifndef __NVCC__`: the generated
    # header defines __CUDACC__ above them, so AMD compiles their CUDA branches through its names)
    compile_anyway = {"driver_api", "shared_header_cudacc", "compiler_macro_branches"}
    assert failed == set(manual) - compile_anyway == {
        "call_argument_rewrites", "func_attributes", "graph_explicit_nodes", "graph_stream_capture", "launch_kernel_api",
        "shared_memory_dynamic", "strict_cxx", "ffs_ambiguous", "minmax_mixed_types", "nvrtc_compile_options",
        "qualifier_macros", "cuda_toolkit_static_assert", "cuda_arch_static_assert", "device_printf",
        "macro_rows_redefined_atomic", "redefined_atomics_adjacent", "inline_ptx_exact", "deviceptr_arithmetic"}
    assert compile_anyway <= set(manual)
    assert verified.count("compiled") == len(verified.units) - len(failed) >= 50
    # qualifier_macros's listed lines are its header's tests (hd_macros.h:6 leaves PROJ_HOST_DEVICE empty under
    # hipcc): the error is the kernel's call of the helper that stays a host function
    elsewhere = {"qualifier_macros/blend.cu": (("hd_macros.h", 6), 15, "no matching function for call to 'proj_lerp'")}
    for unit in verified.units:
        if unit.rel in elsewhere:
            listed, line, message = elsewhere[unit.rel]
            assert listed in manual[unit.rel.split("/")[0]]
            assert (unit.errors[0].rel, unit.errors[0].line, unit.errors[0].message) == (unit.rel, line, message)
        elif unit.failed:   # the first error is on a line the mode listed
            case, rel = unit.rel.split("/", 1)
            assert (rel, unit.errors[0].line) in manual[case] or any(line == 0 for _, line in manual[case]), unit.rel


@pytest.mark.parametrize("argv,message", [
    (["-o", "{tmp}/o"], "--compat-header keeps the sources where they are: use it with --in-place, --diff or --check"),
    (["--in-place", "--rename"], "--compat-header leaves the CUDA code as it is"),
])
def test_compat_header_usage_errors(tmp_path: Path, capsys, argv, message):
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    args = [a.replace("{tmp}", str(tmp_path.parent)) for a in argv]
    assert main(["convert", str(tmp_path), "--compat-header", str(tmp_path / "c.h"), *args]) == 2
    assert message in capsys.readouterr().err


def test_compat_header_outside_the_tree_is_refused(tmp_path: Path, capsys):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text("__global__ void k() {}\n")
    assert main(["convert", str(tmp_path / "src"), "--compat-header", str(tmp_path / "c.h"), "--check"]) == 2
    assert "must be inside the converted tree" in capsys.readouterr().err
