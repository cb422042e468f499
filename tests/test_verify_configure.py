"""`portkit verify --configure` (issue 48: every converted CMake configures for the HIP build, up
to a ROCm package this machine lacks, which is named).

fixtures/configure/<case>/: a CUDA project, its conversion (golden bytes), and what configuring
the conversion reports (case.toml), exactly. The configure needs CMake 3.21+ and ROCm's hip-lang
package (Debian's, through the toolchain file, or AMD's): those tests are `compile`. How CMake's
output is read (the first error, its project line, why) is tested on CMake's own words, recorded
from real trees, with no tool.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import REPO, require_tool, write_tree
from portkit import api
from portkit.cli import main
from portkit.commands.verify import cmake_errors, cmake_tool
from portkit.core.errors import PortkitError

try:
    import tomllib
except ImportError:   # Python 3.10
    import tomli as tomllib

CASES = REPO / "fixtures" / "configure"
NAMES = sorted(p.name for p in CASES.iterdir() if (p / "case.toml").is_file())


def _case(name: str) -> dict:
    return tomllib.loads((CASES / name / "case.toml").read_text(encoding="utf-8"))


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", NAMES)
def test_the_conversion_is_the_golden(name: str, tmp_path: Path):
    out = tmp_path / "out"
    api.convert_paths([CASES / name / "input"], output=out, rocm="6.2")
    assert _files(out) == _files(CASES / name / "expected")


# ------------------------------------------------------------------ configuring the fixtures

def _tools() -> cmake_tool.CMakeTool:
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    require_tool("cmake", "cmake 3.21+ (apt-get install cmake, or pip install cmake)")
    try:
        cmake = cmake_tool.select()
    except PortkitError as exc:
        pytest.skip(str(exc))
    if not (glob.glob("/usr/lib/*-linux-gnu*/cmake/hip-lang/hip-lang-config.cmake")
            or os.path.isfile(os.path.join(os.environ.get("ROCM_PATH", "/opt/rocm"), "lib/cmake/hip-lang/hip-lang-config.cmake"))):
        pytest.skip("ROCm's hip-lang CMake package not found (apt-get install libamdhip64-dev, or AMD's ROCm)")
    return cmake


def _installed(package: str) -> bool:
    return bool(glob.glob(f"/usr/lib/*-linux-gnu*/cmake/{package}/") or glob.glob(f"/opt/rocm*/lib/cmake/{package}/"))


def _configure(tree: Path, tmp_path: Path, *extra: str) -> tuple[int, dict]:
    report = tmp_path / "configure.json"
    code = main(["verify", str(tree), "--configure", "--offline", "--format", "json", "-o", str(report), *extra])
    return code, json.loads(report.read_text(encoding="utf-8"))


@pytest.mark.compile
@pytest.mark.parametrize("name", NAMES)
def test_configuring_the_converted_fixture_says_exactly_why(name: str, tmp_path: Path):
    cmake = _tools()
    case = _case(name)
    if case.get("package") and _installed(case["package"]):
        pytest.skip(f"{case['package']}'s CMake package is installed here")
    tree = tmp_path / name
    shutil.copytree(CASES / name / "expected", tree)
    code, doc = _configure(tree, tmp_path)
    used = f"{cmake.describe()}; Debian's ROCm through portkit's toolchain file (debian-rocm.cmake)"
    assert (doc["status"], doc["cmake"]["path"], doc["tool"], doc["version"]) == \
        (case["status"], cmake.path, "portkit verify --configure", 1), doc["line"]
    assert code == (0 if case["status"] == "configured" else 1)
    assert not list(tree.glob("CMakeCache.txt")) and _files(tree) == _files(CASES / name / "expected")
    if "reason" in case:
        rocm = doc["rocm"]
        assert doc["line"] == f"{tree}: does not configure for HIP: {case['reason']} ({cmake.describe()}; {rocm})"
        if rocm.startswith("Debian"):
            assert doc["line"].endswith(f"({used})")
    if case["status"] == "configured":
        assert doc["line"].startswith(f"{tree}: configures for HIP ({cmake.describe()}; ") and doc["hip"] is True
    if "hip_options" in case:
        assert doc["hip_options"] == case["hip_options"] and doc["hip"] is False
        assert f"its GPU options, off: {', '.join(case['hip_options'])} (--cmake-define NAME=ON)" in doc["line"]
    if "then" in case:
        defines = [arg for define in case["then"] for arg in ("--cmake-define", define)]
        code, doc = _configure(tree, tmp_path, *defines)
        assert (code, doc["status"], doc["hip"]) == (0, "configured", True), doc["line"]


@pytest.mark.compile
def test_the_error_names_the_package_and_the_text_is_one_line(tmp_path: Path, capsys):
    _tools()
    if _installed("hipcub"):
        pytest.skip("hipCUB's CMake package is installed here")
    tree = tmp_path / "reduce"
    shutil.copytree(CASES / "cub_reduce" / "expected", tree)
    assert main(["verify", str(tree), "--configure", "--offline"]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "CMakeLists.txt:5: find_package(hipcub): hipCUB's CMake package" in out


# ------------------------------------------------------------------ bad input

def test_a_tree_without_cmakelists_is_one_line_and_exit_2(tmp_path: Path, capsys):
    write_tree(tmp_path / "t", {"Makefile": "all:\n\thipcc -c k.hip\n", "k.hip": "int main() { return 0; }\n"})
    assert main(["verify", str(tmp_path / "t"), "--configure"]) == 2
    err = capsys.readouterr().err
    assert err == (f"portkit: error: {tmp_path / 't'}: no CMakeLists.txt at its top: --configure configures a tree's "
                   f"top-level CMake\n")
    assert main(["verify", str(tmp_path / "nothing"), "--configure"]) == 2
    assert capsys.readouterr().err.startswith(f"portkit: error: {tmp_path / 'nothing'}: no such file or directory")


def test_a_malformed_cmake_define_is_one_line_and_exit_2(tmp_path: Path, capsys):
    write_tree(tmp_path / "t", {"CMakeLists.txt": "project(t)\n"})
    assert main(["verify", str(tmp_path / "t"), "--configure", "--cmake-define", "GGML_HIP"]) == 2
    assert capsys.readouterr().err == "portkit: error: --cmake-define: 'GGML_HIP' is not NAME=VALUE (or NAME:TYPE=VALUE)\n"


# ------------------------------------------------------------------ which CMake

def _fake_cmake(folder: Path, version: str) -> Path:
    folder.mkdir(parents=True)
    path = folder / "cmake"
    path.write_text(f"#!/bin/sh\necho 'cmake version {version}'\n")
    path.chmod(0o755)
    return path


def test_the_newest_cmake_on_path_is_used_and_the_others_named(tmp_path: Path, monkeypatch):
    old = _fake_cmake(tmp_path / "debian", "3.25.1")
    new = _fake_cmake(tmp_path / "pip", "4.1.2")
    too_old = _fake_cmake(tmp_path / "ancient", "3.16.3")
    monkeypatch.setenv("PATH", os.pathsep.join(str(p.parent) for p in (too_old, old, new)))
    monkeypatch.setattr(cmake_tool.sysconfig, "get_path", lambda name: str(tmp_path / "no-scripts"))
    monkeypatch.setattr(cmake_tool.sys, "executable", str(tmp_path / "no-python" / "python"))
    chosen = cmake_tool.select()
    assert (chosen.path, chosen.version, chosen.others) == (str(new), (4, 1, 2), (f"{too_old} (3.16.3)", f"{old} (3.25.1)"))
    with pytest.raises(PortkitError, match=r"CMake 3\.16\.3 has no HIP language"):
        cmake_tool.select(str(too_old))
    monkeypatch.setenv("PATH", str(too_old.parent))
    with pytest.raises(PortkitError, match=r"^cmake: no CMake 3\.21 or newer found \(only .*ancient/cmake \(3\.16\.3\)\)"):
        cmake_tool.select()


# ------------------------------------------------------------------ CMake's words, read

_BLAS = """-- Looking for sgemm_ - not found
CMake Error at /usr/share/cmake-3.25/Modules/FindPackageHandleStandardArgs.cmake:230 (message):
  Could NOT find BLAS (missing: BLAS_LIBRARIES)
Call Stack (most recent call first):
  /usr/share/cmake-3.25/Modules/FindPackageHandleStandardArgs.cmake:600 (_FPHSA_FAILURE_MESSAGE)
  /usr/share/cmake-3.25/Modules/FindBLAS.cmake:1346 (find_package_handle_standard_args)
  faiss/CMakeLists.txt:743 (find_package)


-- Configuring incomplete, errors occurred!
"""


def test_an_error_in_a_module_is_placed_at_the_projects_call(tmp_path: Path):
    """CMake prints `Call Stack` unindented inside the error: the frames after it are the error's."""
    write_tree(tmp_path, {"CMakeLists.txt": "add_subdirectory(faiss)\n", "faiss/CMakeLists.txt": "\n" * 800})
    stop = cmake_errors.first_stop(_BLAS, tmp_path, {})
    assert (stop.kind, stop.path, stop.line, stop.command, stop.package, stop.provider) == \
        ("missing_package", "faiss/CMakeLists.txt", 743, "find_package", "BLAS", None)
    assert stop.message == "Could NOT find BLAS (missing: BLAS_LIBRARIES)"


def test_a_rocm_package_is_named_with_what_provides_it(tmp_path: Path):
    output = ("CMake Error at CMakeLists.txt:24 (find_package):\n"
              "  By not providing \"Findrccl.cmake\" in CMAKE_MODULE_PATH this project has\n"
              "  asked CMake to find a package configuration file provided by \"rccl\", but\n"
              "  CMake did not find one.\n\n")
    write_tree(tmp_path, {"CMakeLists.txt": "\n" * 30})
    stop = cmake_errors.first_stop(output, tmp_path, {})
    assert (stop.kind, stop.path, stop.line, stop.package, stop.provider) == \
        ("missing_package", "CMakeLists.txt", 24, "rccl", ("RCCL", "rccl-dev", ""))
    assert cmake_errors.provider("rocthrust") == ("rocThrust", "rocthrust-dev", "")
    assert cmake_errors.provider("hipsparse") == ("hipSPARSE", "hipsparse-dev", "libhipsparse-dev")


def test_a_missing_submodule_is_named_from_gitmodules(tmp_path: Path):
    output = ("CMake Error at CMakeLists.txt:108 (add_subdirectory):\n"
              "  add_subdirectory given source \"third_party/spdlog\" which is not an existing\n  directory.\n\n"
              "CMake Error at CMakeLists.txt:337 (message):\n  Intel OpenMP runtime libiomp5 not found\n\n")
    write_tree(tmp_path, {"CMakeLists.txt": "\n" * 340, "third_party/cxxopts/README": "x\n",
                          ".gitmodules": '[submodule "third_party/spdlog"]\n\tpath = third_party/spdlog\n'
                                         '[submodule "third_party/cxxopts"]\n\tpath = third_party/cxxopts\n'})
    from portkit.commands.verify.configure import submodules
    present = submodules(tmp_path, None)
    assert present == {"third_party/spdlog": False, "third_party/cxxopts": True}
    stop = cmake_errors.first_stop(output, tmp_path, present)
    assert (stop.kind, stop.path, stop.line, stop.needs) == ("needs_submodule", "CMakeLists.txt", 108, "third_party/spdlog")


def test_a_file_missing_after_a_download_of_the_same_file_is_the_network(tmp_path: Path):
    """cuCollections: file(DOWNLOAD) fails without a word; the include after it is what CMake reports."""
    write_tree(tmp_path, {"CMakeLists.txt": (
        "cmake_minimum_required(VERSION 3.23.1 FATAL_ERROR)\n\n"
        "if(NOT EXISTS ${CMAKE_CURRENT_BINARY_DIR}/CUCO_RAPIDS.cmake)\n"
        "    file(DOWNLOAD https://raw.githubusercontent.com/rapidsai/rapids-cmake/branch-24.10/RAPIDS.cmake\n"
        "         ${CMAKE_CURRENT_BINARY_DIR}/CUCO_RAPIDS.cmake)\n"
        "endif()\n"
        "include(${CMAKE_CURRENT_BINARY_DIR}/CUCO_RAPIDS.cmake)\n\n"
        "include(rapids-cmake)\n")})
    output = "CMake Error at CMakeLists.txt:9 (include):\n  include could not find requested file:\n\n    rapids-cmake\n\n"
    stop = cmake_errors.first_stop(output, tmp_path, {})
    assert (stop.kind, stop.path, stop.line, stop.needs) == (
        "needs_network", "CMakeLists.txt", 9,
        "CMakeLists.txt:4 file(DOWNLOAD) https://raw.githubusercontent.com/rapidsai/rapids-cmake/branch-24.10/RAPIDS.cmake")
    # the same missing include with no download above it is the project's own error
    (tmp_path / "CMakeLists.txt").write_text("\n" * 8 + "include(rapids-cmake)\n")
    assert cmake_errors.first_stop(output, tmp_path, {}).kind == "failed"


def test_a_cmake_too_old_says_which_version_it_needs(tmp_path: Path):
    output = ("CMake Error at CMakeLists.txt:27 (cmake_minimum_required):\n"
              "  CMake 3.28 or higher is required.  You are running version 3.25.1\n\n\n"
              "-- Configuring incomplete, errors occurred!\n")
    write_tree(tmp_path, {"CMakeLists.txt": "\n" * 30})
    stop = cmake_errors.first_stop(output, tmp_path, {})
    assert (stop.kind, stop.path, stop.line, stop.command, stop.needs) == \
        ("needs_cmake", "CMakeLists.txt", 27, "cmake_minimum_required", "3.28")
