"""Issue 48: what stopped tiny-cuda-nn once its submodules were supplied, each a general cause.

- A static_assert on the CUDA toolkit's release (src/common_host.cu:44, `__CUDACC_VER_MAJOR__`):
  hip-clang defines none of those macros, so convert keeps the assertion for nvcc builds
  (rewrite/toolkit_asserts.py; fixtures/convert/cuda_toolkit_static_assert), and reports what it
  cannot guard as PK103 naming the macro, which verify links to `use of undeclared identifier`.
- `call to '__test' is ambiguous` (encodings/grid.h:162): clang's HIP <cmath> fma template deduced
  for a call on __half; verify explains it by PK703 at the call (fixtures/verify/half_math_template).
- benchmarks/real_builds.py says which submodules were supplied by hand and goes on past a file
  convert gave up on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cases import load_case
from conftest import REPO, require_tool
from portkit.api import convert_paths
from portkit.cli.app import main
from portkit.commands.verify import VerifyOptions, verify_tree
from portkit.commands.verify.diagnostics import Diagnostic, Located

CASE = load_case(REPO / "fixtures" / "convert" / "cuda_toolkit_static_assert")
HALF = REPO / "fixtures" / "verify" / "half_math_template"
sys.path.insert(0, str(REPO / "benchmarks"))
import real_builds  # noqa: E402


def _convert(source: Path, out: Path) -> bytes:
    assert main(["convert", str(source), "-o", str(out), "-q", *CASE.convert_args()]) == 0
    return (out / source.name).read_bytes()


def _audit(path: Path, capsys) -> list[tuple[str, int, str, str]]:
    main(["audit", str(path), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    return [(f["code"], f["line"], f["severity"], f["message"].split(",")[0]) for f in doc["findings"]
            if f["code"] == "PK103"]


def test_toolkit_static_assert_is_kept_for_nvcc(tmp_path: Path):
    assert _convert(CASE.input, tmp_path / "out") == CASE.expected.read_bytes()


def test_arch_static_assert_is_kept_for_nvcc(tmp_path: Path):
    """`__CUDA_ARCH__ >= TCNN_MIN_GPU_ARCH * 10`: nvcc's architecture against a configuration constant,
    in the device pass convert opens to hip-clang (tiny-cuda-nn's common.h:87, 9 units)."""
    arch = load_case(REPO / "fixtures" / "convert" / "cuda_arch_static_assert")
    assert _convert(arch.input, tmp_path / "out") == arch.expected.read_bytes()
    assert _convert(arch.expected, tmp_path / "again") == arch.expected.read_bytes()


def test_toolkit_static_assert_guard_is_written_once(tmp_path: Path):
    assert _convert(CASE.expected, tmp_path / "again") == CASE.expected.read_bytes()


def test_toolkit_static_assert_is_reported_on_its_line(capsys):
    assert _audit(CASE.input, capsys) == [("PK103", 9, "info", "static_assert on the CUDA toolkit's release (__CUDACC_VER_MAJOR__")]


@pytest.mark.parametrize("line", [
    b'\tstatic_assert(CUDART_VERSION >= 10020, "CUDA 10.2"); return n;',          # shares its line
    b'\tstatic_assert(CUDART_VERSION >= 10020 && sizeof(int) == 4, "CUDA 10.2"); return n;',
    b'\tstatic_assert(CUDART_VERSION >= 10020 && n_bits == 32, "not only the toolkit");',
])
def test_a_toolkit_assert_it_cannot_guard_is_left_and_named(tmp_path: Path, capsys, line: bytes):
    source = tmp_path / "left.cu"
    source.write_bytes(b"#include <cuda_runtime.h>\nconstexpr int n_bits = 32;\nint f(int n) {\n" + line
                       + b"\n\treturn n;\n}\n")
    converted = _convert(source, tmp_path / "out")
    assert b"__HIP_PLATFORM_AMD__" not in converted
    assert _audit(source, capsys) == [("PK103", 4, "medium", "static_assert on CUDART_VERSION")]


def test_a_macro_the_file_defines_is_its_own(tmp_path: Path, capsys):
    source = tmp_path / "own.cu"
    source.write_bytes(b"#include <cuda_runtime.h>\n#ifndef CUDART_VERSION\n#define CUDART_VERSION 12000\n#endif\n"
                       b"static_assert(CUDART_VERSION >= 10020, \"CUDA 10.2\");\n")
    assert _convert(source, tmp_path / "out").count(b"__HIP_PLATFORM_AMD__") == 0


def _ambiguous(notes: list[str], path: str = "/usr/lib/llvm-19/lib/clang/19/include/__clang_hip_cmath.h",
               message: str = "call to '__test' is ambiguous") -> Located:
    diagnostic = Diagnostic("error", message, path, 398, 20, [("grid.cu", 17, 12, n) for n in notes])
    return Located(diagnostic, "grid.cu", 17, 12)


NOTES = ["in instantiation of template class '__hip::__numeric_type<__half>' requested here",
         "in instantiation of default argument for '__promote_imp<__half, tcnn::tvec<__half, 2>>' required here",
         "while substituting deduced template arguments into function template 'fma' [with __T1 = __half]"]


def cmath_ambiguity(located: Located):
    from portkit.commands.verify.toolchain import cmath_ambiguity as read   # new in this change
    return read(located)


def test_the_cmath_trait_error_names_the_call_and_the_type():
    code, subject, message = cmath_ambiguity(_ambiguous(NOTES))
    assert (code, subject) == ("PK703", "fma")
    assert message.startswith("fma() called with __half: ")


@pytest.mark.parametrize("located", [
    _ambiguous(NOTES, path="include/vec.h"),                              # not clang's header
    _ambiguous(NOTES, message="call to 'fma' is ambiguous"),              # another error
    _ambiguous(NOTES[1:]),                                                # no __numeric_type instantiation
    _ambiguous(NOTES[:2]),                                                # no call being deduced
])
def test_other_errors_are_not_the_cmath_trait(located: Located):
    assert cmath_ambiguity(located) is None


@pytest.mark.compile
def test_verify_explains_the_cmath_trait_at_the_call(tmp_path: Path):
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    convert_paths([HALF / "input"], output=tmp_path / "out", rocm="5.2")
    result = verify_tree(tmp_path / "out", VerifyOptions(source=HALF / "input", jobs=1))
    [unit] = result.units
    assert [(e.rel, e.line, e.source_line, [f.code for f in e.findings]) for e in unit.errors] == \
        [("grid.cu", 17, 15, ["PK703"])]


def test_real_builds_names_the_submodules_supplied_by_hand(tmp_path: Path):
    tree = tmp_path / "proj"
    for folder in ("deps/fmt/include", "deps/cmrc", "deps/cutlass/include", "deps/checked_out"):
        (tree / folder).mkdir(parents=True)
    (tree / "deps/fmt/include/format.h").write_text("", encoding="utf-8")
    (tree / "deps/cutlass/include/cutlass.h").write_text("", encoding="utf-8")
    (tree / "deps/checked_out/.git").write_text("gitdir: ../../.git/modules/x\n", encoding="utf-8")
    (tree / ".gitmodules").write_text("".join(f'[submodule "{n}"]\n\tpath = deps/{n}\n\turl = https://x/{n}\n'
                                              for n in ("fmt", "cmrc", "cutlass", "checked_out")), encoding="utf-8")
    assert real_builds.submodules(tree) == ["submodules supplied by hand (not in the snapshot): deps/fmt, deps/cutlass",
                                            "submodules empty: deps/cmrc"]
    (tmp_path / "plain").mkdir()
    assert real_builds.submodules(tmp_path / "plain") == []


def test_real_builds_goes_on_past_a_file_convert_gave_up_on():
    def done(code: int, stderr: str):
        return subprocess.CompletedProcess([], code, "", stderr)
    timed_out = "portkit: deps/cute/mma_sm90_gmma.hpp: took longer than 60 s to scan: left as it is (--file-timeout)\n"
    assert real_builds._timed_out(done(2, timed_out)) == ["deps/cute/mma_sm90_gmma.hpp"]
    assert real_builds._timed_out(done(2, timed_out + "portkit: error: something else\n")) == []
    assert real_builds._timed_out(done(1, timed_out)) == []


# tiny-cuda-nn's layout, cut down: its top CMakeLists.txt adds dependencies/fmt, includes cmrc's
# CMakeRC.cmake, lists src/*.cu itself (src/CMakeLists.txt is a leftover nothing adds) and uses only
# dependencies/cutlass's include/ folders; CUTLASS's tests are a project of their own.
TOP = """cmake_minimum_required(VERSION 3.18)
project(tiny-cuda-nn LANGUAGES CXX CUDA)
if (NOT EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/dependencies/cutlass/CMakeLists.txt")
	message(FATAL_ERROR "Some tiny-cuda-nn dependencies are missing.")
endif()
add_subdirectory("dependencies/fmt")
include("${CMAKE_CURRENT_SOURCE_DIR}/dependencies/cmrc/CMakeRC.cmake")
file(GLOB CUDA_HEADERS "${CUDA_INCLUDE}/cuda_fp16*")
add_library(tiny-cuda-nn STATIC src/common_host.cu)
target_include_directories(tiny-cuda-nn PUBLIC "dependencies/cutlass/include")
"""
GITMODULES = "".join(f'[submodule "dependencies/{n}"]\n\tpath = dependencies/{n}\n\turl = https://github.com/x/{n}\n'
                     for n in ("cutlass", "fmt", "cmrc"))


def _tree(root: Path, top: str = TOP, extra: dict[str, str] | None = None) -> Path:
    files = {"CMakeLists.txt": top, ".gitmodules": GITMODULES, "src/CMakeLists.txt": "set(SOURCES common.cu)\n",
             "src/common_host.cu": "", "dependencies/cmrc/CMakeRC.cmake": "function(cmrc_add_resources)\nendfunction()\n",
             "dependencies/fmt/CMakeLists.txt": "project(FMT CXX)\nadd_library(fmt src/format.cc)\n",
             "dependencies/cutlass/CMakeLists.txt": "project(CUTLASS)\nadd_subdirectory(test)\n",
             "dependencies/cutlass/test/CMakeLists.txt": "add_executable(t unit/gemm.cu)\n",
             "dependencies/cutlass/test/unit/gemm.cu": "", "python/CMakeLists.txt": "project(bindings)\n",
             "python/bindings.cu": "", **(extra or {})}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_a_submodule_no_add_subdirectory_reaches_is_no_unit(tmp_path: Path):
    from portkit.project.buildconfig import TreeConfig
    tree = TreeConfig(_tree(tmp_path))
    assert tree.left_out_why("dependencies/cutlass/test/unit/gemm.cu") == \
        ("CMakeLists.txt", "no add_subdirectory reaches dependencies/cutlass, a git submodule's own project")
    assert tree.left_out_why("src/common_host.cu") is None       # listed by the top file itself
    assert tree.left_out_why("python/bindings.cu") is None       # the tree's own folder: another build's top


@pytest.mark.parametrize("top", [
    TOP + 'add_subdirectory(dependencies/cutlass)\n',
    TOP + 'add_subdirectory(${CUTLASS_DIR})\n',                                             # a folder it cannot read
    TOP + 'function(add_dep name)\n\tadd_subdirectory(dependencies/${name})\nendfunction()\n',
    TOP + 'ExternalProject_Add(cutlass SOURCE_DIR "${CMAKE_CURRENT_SOURCE_DIR}/dependencies/cutlass")\n',
    TOP + 'file(GLOB_RECURSE ALL_CU "${CMAKE_CURRENT_SOURCE_DIR}/dependencies/*.cu")\n',
    TOP + 'add_executable(gemm_test dependencies/cutlass/test/unit/gemm.cu)\n',
    TOP + 'include(cmake/deps.cmake)\n',
])
def test_a_submodule_the_build_may_reach_stays_a_unit(tmp_path: Path, top: str):
    from portkit.project.buildconfig import TreeConfig
    tree = TreeConfig(_tree(tmp_path, top, {"cmake/deps.cmake": "add_subdirectory(dependencies/cutlass)\n"}))
    assert tree.left_out_why("dependencies/cutlass/test/unit/gemm.cu") is None


def test_a_unit_the_build_leaves_out_gets_no_include_search(tmp_path: Path):
    """The search walks every include of every unit; CUTLASS's 696 in tiny-cuda-nn took minutes."""
    from portkit.core.files import discover
    from portkit.project.units import tree_units
    root = _tree(tmp_path, extra={"src/common_host.cu": '#include "tiny-cuda-nn/common.h"\n',
                                  "include/tiny-cuda-nn/common.h": "#pragma once\n",
                                  "dependencies/cutlass/test/unit/gemm.cu": '#include "tiny-cuda-nn/common.h"\n'})
    root, entries, _ = discover([root])
    sources = {e.rel: e.path.read_bytes() for e in entries}
    units = {u.rel: u.flags for u in tree_units(root, entries, sources, unbuilt=lambda rel: "cutlass" in rel)}
    assert units["src/common_host.cu"] == (f"-I{root / 'include'}",)   # the include search as before
    assert units["dependencies/cutlass/test/unit/gemm.cu"] == ()


def test_a_quoted_system_header_makes_no_tree_folder_an_include_directory(tmp_path: Path):
    """CUTLASS's layout/tensor.h `#include "assert.h"`: its test/unit/nvrtc/stdlib (NVRTC's stand-ins
    for assert.h and stdint.h) became an include directory, and tiny-cuda-nn's CUTLASS units stopped
    at `typedef redefinition` in that stdint.h."""
    from portkit.core.files import discover
    from portkit.project.units import HeaderIndex, inferred_include_dirs
    for rel, text in {"src/mlp.cu": '#include "cutlass/tensor.h"\n', "include/cutlass/tensor.h": '#include "assert.h"\n',
                      "include/cutlass/helper.h": "", "test/nvrtc/stdlib/assert.h": "",
                      "test/nvrtc/stdlib/stdint.h": ""}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    root, entries, _ = discover([tmp_path])
    assert inferred_include_dirs(HeaderIndex(root, entries), "src/mlp.cu") == ["include"]


@pytest.mark.parametrize("rel,explained", [
    ("dependencies/cutlass/include/cutlass/complex.h", True),      # `cuFloatComplex`, CUTLASS's own
    ("dependencies/cutlass/include/cute/arch/copy_sm90.hpp", True),  # `__brkpt`, CuTe's SM90 copy atoms
    ("include/tiny-cuda-nn/cutlass_matmul.h", False),              # the project's own file: its findings
    ("src/complex.h", False),
])
def test_an_error_inside_a_library_with_no_drop_in_is_its_decision(rel: str, explained: bool):
    """With tiny-cuda-nn's submodules supplied its CUTLASS units reach CUTLASS itself."""
    from portkit.commands.verify.blocked_library import inside_blocked_library   # the file's path says it
    located = Located(Diagnostic("error", "unknown type name 'cuFloatComplex'", rel, 780, 3), rel, 780, 3)
    found = inside_blocked_library(located)
    assert (found is not None) == explained
    if explained:
        assert found[:2] == ("PK402", "CUTLASS") and f"inside CUTLASS's own headers ({rel})" in found[2]


class _OneFile:
    """verify's facts of one converted file: its findings and lines (explain.Facts.of)."""

    def __init__(self, findings, lines):
        from portkit.commands.verify.explain import FileFacts
        self.file = FileFacts(findings, lines)

    def of(self, rel):
        return self.file


@pytest.mark.parametrize("rel,codes", [
    ("dependencies/cutlass/include/cute/arch/util.hpp", ["PK402"]),   # CuTe's own code: replaced with CUTLASS
    ("include/tiny-cuda-nn/common_device.h", ["PK001"]),              # the project's own line: its finding
])
def test_a_finding_inside_a_library_with_no_drop_in_gives_way_to_its_decision(rel: str, codes: list[str]):
    """tiny-cuda-nn's CUTLASS units: cute/arch/util.hpp:109 `use of undeclared identifier
    '__cvta_generic_to_shared'` carries a PK001 on its line, a name ROCm lacks; but CuTe is replaced,
    not ported name by name, so the unit fails on the CUTLASS decision (PK402), not on a gap."""
    from portkit.commands.verify.explain import explain
    from portkit.core.findings import Finding
    pk001 = Finding(code="PK001", name="no-hip-equivalent", severity="high", category="api", path=rel, line=2,
                    column=12, end_line=2, end_column=36, message="m", subject="__cvta_generic_to_shared")
    lines = [b"#pragma once\n", b"  return (__cvta_generic_to_shared(ptr));\n"]
    located = Located(Diagnostic("error", "use of undeclared identifier '__cvta_generic_to_shared'", rel, 2, 12),
                      rel, 2, 12)
    assert [f.code for f in explain(located, "src/fully_fused_mlp.cu", _OneFile([pk001], lines))] == codes


ARCH = REPO / "fixtures" / "verify" / "arch_guarded_overload"


@pytest.mark.compile
def test_verify_names_the_guard_that_hides_the_overload(tmp_path: Path):
    """tiny-cuda-nn's encodings/grid.h:256 `no matching function for call to 'atomic_add_gmem'`: its
    __half overload in vec.h is under `__CUDA_ARCH__ >= 600`, a file neither the unit nor the error's."""
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    convert_paths([ARCH / "input"], output=tmp_path / "out", rocm="5.2")
    result = verify_tree(tmp_path / "out", VerifyOptions(source=ARCH / "input", jobs=1))
    [unit] = result.units
    [error] = unit.errors
    assert (error.rel, error.line, error.source_line, [f.code for f in error.findings]) == ("grid.cu", 15, 13, ["PK103"])
    assert "`#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 600" in error.findings[0].message
    # line 28 of the converted vec.h: the polyfill header's include (portkit_atomicAdd, the __half2 call) is line 5
    assert "(include/vec.h:28)" in error.findings[0].message


SHIM = REPO / "fixtures" / "verify" / "own_shim_newer_hip_name"


@pytest.mark.compile
def test_verify_names_the_projects_own_define_of_a_newer_hip_name(tmp_path: Path):
    """LightGBM's cuda_rocm_interop.h `#define cudaHostAllocPortable hipHostAllocPortable`: a HIP name
    newer than the release, written by the project's own AMD port, was unexplained (verify/project_shim.py)."""
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    convert_paths([SHIM / "input"], output=tmp_path / "out", rocm="5.2")
    result = verify_tree(tmp_path / "out", VerifyOptions(source=SHIM / "input", jobs=1))
    [unit] = result.units
    [error] = unit.errors
    [finding] = error.findings
    assert (finding.code, finding.subject, finding.message) == (
        "PK002", "hipHostAllocPortable",
        "hipHostAllocPortable is the project's own #define of cudaHostAllocPortable (include/interop.h:10), its "
        "AMD port's name, which ROCm 5.2 does not declare: ROCm 5.2's name for cudaHostAllocPortable is "
        "hipHostMallocPortable: write that in the #define, or build with the newer ROCm the project's AMD build expects")
