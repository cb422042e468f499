"""--compat-header's CMake (issue 48, item 7's last bullet): the HIP build is an option beside the
CUDA build, as ggml (GGML_HIP) and faiss (FAISS_ENABLE_ROCM) do it, and the NVIDIA build is the
one it was: with the option OFF CMake runs the original lines, byte for byte.

fixtures/compat/cmake_tcnn/ is reduced from NVlabs/tiny-cuda-nn's CMakeLists.txt and samples/;
expected/ is `portkit convert . --compat-header include/tcnn/portkit_hip_compat.h --in-place --rocm 5.2`.
The configure tests run CMake on both sides: with nvcc, the original and the option-OFF build must
configure to the same targets, sources, flags and cache (CMake's file API); with Debian's ROCm
(tools/debian-rocm.cmake), the option-ON build configures and builds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, require_tool
from portkit import api
from portkit.buildfiles.cmake_dual import dual, option_name
from portkit.cli.app import main
from portkit.commands.compat import compat_paths
from portkit.commands.scan.job import Job, scan_file
from portkit.core.source import SourceFile
from portkit.project.settings import resolve

CASE = REPO / "fixtures" / "compat" / "cmake_tcnn"
HEADER = "include/tcnn/portkit_hip_compat.h"
OPTION = "TINY_CUDA_NN_USE_HIP"
TOOLCHAIN = REPO / "tools" / "debian-rocm.cmake"
CMAKE_FILES = ("CMakeLists.txt", "samples/CMakeLists.txt")


def tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def compat(root: Path, *more: str) -> int:
    return main(["convert", str(root), "--compat-header", str(root / HEADER), "--in-place", "--rocm", "5.2", "-q",
                 *more])


def evaluate(text: str, option: str, on: bool) -> str:
    """The lines CMake runs with the option ON or OFF: the option() line gone, each if(option) block
    replaced by the branch taken (a textual evaluation of only the blocks portkit writes)."""
    out: list[str] = []
    state: list[bool] = []   # inside a block of ours: keep this branch's lines?
    depth = 0                # other if() blocks inside a branch of ours
    for line in text.splitlines(keepends=True):
        word = line.strip()
        if state and depth == 0 and word in ("else()", "endif()"):
            if word == "else()":
                state[-1] = not state[-1]
            else:
                state.pop()
            continue
        if word in (f"if({option})", f"if(NOT {option})"):
            state.append(on == (word == f"if({option})"))
            continue
        if word.startswith(f"option({option} "):
            continue
        if state:
            depth += word.lower().startswith(("if(", "if (")) - word.lower().startswith(("endif(", "endif ("))
        if not state or state[-1]:
            out.append(line)
    return "".join(out)


def _without_minimum(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("cmake_minimum_required(")]


def _dual(text: str, option: str = "P_USE_HIP") -> str:
    data = text.encode()
    scan = scan_file(SourceFile.from_bytes("CMakeLists.txt", data), "cmake", Job(resolve(rocm="6.2")))
    out = dual(data, scan.edits, option).output
    return text if out is None else out.decode()


# ------------------------------------------------------------------ goldens and text


def test_golden_tree(tmp_path: Path):
    """The whole tree: sources with guarded includes, the generated header, and both CMake files
    with their HIP build under TINY_CUDA_NN_USE_HIP (declared once, in the top CMakeLists.txt)."""
    root = tmp_path / "tcnn"
    shutil.copytree(CASE / "input", root)
    assert compat(root) == 0
    assert tree(root) == tree(CASE / "expected")


def test_option_off_runs_the_original_lines_byte_for_byte():
    for rel in CMAKE_FILES:
        written = (CASE / "expected" / rel).read_text()
        assert evaluate(written, OPTION, on=False) == (CASE / "input" / rel).read_text(), rel
    assert (CASE / "expected" / "CMakeLists.txt").read_text().count(f"option({OPTION} ") == 1
    assert f"option({OPTION} " not in (CASE / "expected" / "samples" / "CMakeLists.txt").read_text()


def test_option_on_runs_what_the_hip_only_conversion_writes():
    """The HIP branches are the HIP-only migration's lines; only the raised minimum moves into the
    first block (the NVIDIA build keeps its 3.18 and its policies)."""
    for rel in CMAKE_FILES:
        text = (CASE / "input" / rel).read_text()
        hip_only = api.convert_text(text, filename="CMakeLists.txt", rocm="5.2").output.decode()
        on = evaluate((CASE / "expected" / rel).read_text(), OPTION, on=True)
        assert _without_minimum(on) == _without_minimum(hip_only), rel
    assert "cmake_minimum_required(VERSION 3.21)" in evaluate((CASE / "expected" / "CMakeLists.txt").read_text(),
                                                              OPTION, on=True)


def test_running_again_changes_no_cmake_file(tmp_path: Path):
    root = tmp_path / "tcnn"
    shutil.copytree(CASE / "expected", root)
    result = compat_paths([root], root / HEADER, resolve(rocm="5.2"))
    assert result.builds == []


def test_no_build_files_leaves_cmake_as_it_is(tmp_path: Path):
    root = tmp_path / "tcnn"
    shutil.copytree(CASE / "input", root)
    assert compat(root, "--no-build-files") == 0
    for rel in CMAKE_FILES:
        assert (root / rel).read_bytes() == (CASE / "input" / rel).read_bytes()


def test_one_block_per_region_and_whole_control_blocks():
    """Changed commands with only comments or blank lines between them share a block; an edited
    if() takes its block to endif(); an if() whose every branch changes is wrapped whole; a
    command the HIP build drops is under if(NOT option); the rest is untouched."""
    text = ("project(p CXX CUDA)\n"
            "# tuning\n"
            "\n"
            "set(CMAKE_CUDA_STANDARD 17)\n"
            "set(KEEP 1)\n"
            "if(CMAKE_CUDA_COMPILER_LOADED)\n"
            "  message(STATUS x)\n"
            "endif()\n"
            "if(MSVC)\n"
            "  set(CMAKE_CUDA_FLAGS \"-Xcompiler=/bigobj\")\n"
            "else()\n"
            "  set(CMAKE_CUDA_FLAGS \"-Xcompiler=-fPIC\")\n"
            "endif()\n"
            "set(KEEP 2)\n"
            "set(CMAKE_CUDA_SEPARABLE_COMPILATION OFF)\n")
    assert _dual(text) == ("if(P_USE_HIP)\n"
                           "project(p CXX HIP)\n"
                           "# tuning\n"
                           "\n"
                           "set(CMAKE_HIP_STANDARD 17)\n"
                           "else()\n"
                           "project(p CXX CUDA)\n"
                           "# tuning\n"
                           "\n"
                           "set(CMAKE_CUDA_STANDARD 17)\n"
                           "endif()\n"
                           "set(KEEP 1)\n"
                           "if(P_USE_HIP)\n"
                           "if(CMAKE_HIP_COMPILER_LOADED)\n"
                           "  message(STATUS x)\n"
                           "endif()\n"
                           "if(MSVC)\n"
                           "  set(CMAKE_HIP_FLAGS \"/bigobj\")\n"
                           "else()\n"
                           "  set(CMAKE_HIP_FLAGS \"-fPIC\")\n"
                           "endif()\n"
                           "else()\n"
                           "if(CMAKE_CUDA_COMPILER_LOADED)\n"
                           "  message(STATUS x)\n"
                           "endif()\n"
                           "if(MSVC)\n"
                           "  set(CMAKE_CUDA_FLAGS \"-Xcompiler=/bigobj\")\n"
                           "else()\n"
                           "  set(CMAKE_CUDA_FLAGS \"-Xcompiler=-fPIC\")\n"
                           "endif()\n"
                           "endif()\n"
                           "set(KEEP 2)\n"
                           "if(NOT P_USE_HIP)\n"
                           "set(CMAKE_CUDA_SEPARABLE_COMPILATION OFF)\n"
                           "endif()\n")


def test_line_ends_and_a_last_line_without_one_are_kept():
    assert _dual("project(p CXX CUDA)\r\nset(A 1)\r\nenable_language(CUDA)") == (
        "if(P_USE_HIP)\r\nproject(p CXX HIP)\r\nelse()\r\nproject(p CXX CUDA)\r\nendif()\r\nset(A 1)\r\n"
        "if(P_USE_HIP)\r\nenable_language(HIP)\r\nelse()\r\nenable_language(CUDA)\r\nendif()")


def test_option_names_follow_the_project():
    assert [option_name(n) for n in ("tiny-cuda-nn", "cuco", "9lives", "")] == [
        "TINY_CUDA_NN_USE_HIP", "CUCO_USE_HIP", "_9LIVES_USE_HIP", "PROJECT_USE_HIP"]


# ------------------------------------------------------------------ configure with CMake


def _file_api_model(src: Path, build: Path, args: list[str], env=None) -> dict:
    """Configure, then read CMake's file API: every target (sources, languages, compile and link
    flags, defines, includes) and the cache, with the two trees' paths and backtraces (line
    numbers, which the inserted lines move) taken out."""
    query = build / ".cmake" / "api" / "v1" / "query"
    query.mkdir(parents=True)
    for kind in ("codemodel-v2", "cache-v2"):
        (query / kind).write_text("")
    proc = subprocess.run(["cmake", "-S", str(src), "-B", str(build), *args], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    reply = build / ".cmake" / "api" / "v1" / "reply"
    index = json.loads(next(reply.glob("index-*.json")).read_text())

    def clean(x):
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in ("backtrace", "backtraceGraph", "jsonFile")}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x.replace(str(build), "<BUILD>").replace(str(src), "<SRC>") if isinstance(x, str) else x

    model = {}
    for obj in index["objects"]:
        data = json.loads((reply / obj["jsonFile"]).read_text())
        if obj["kind"] == "codemodel":
            for conf in data["configurations"]:
                for target in conf["targets"]:
                    model[f"target {target['name']}"] = clean(json.loads((reply / target["jsonFile"]).read_text()))
                model["directories"] = clean(conf["directories"])
        elif obj["kind"] == "cache":
            model["cache"] = {e["name"]: clean(e["value"]) for e in data["entries"]}
    return model


@pytest.mark.compile
def test_option_off_configures_the_nvidia_build_as_the_original(tmp_path: Path):
    require_tool("cmake", "cmake (apt-get install cmake)")
    require_tool(os.environ.get("NVCC", "nvcc"), "nvcc (CUDA toolkit)")
    shutil.copytree(CASE / "input", tmp_path / "s" / "original")
    shutil.copytree(CASE / "expected", tmp_path / "s" / "dual")
    original = _file_api_model((tmp_path / "s" / "original").resolve(), (tmp_path / "b" / "original").resolve(), [])
    off = _file_api_model((tmp_path / "s" / "dual").resolve(), (tmp_path / "b" / "dual").resolve(), [])
    assert off["cache"].pop(OPTION) == "OFF"
    assert sorted(original) == ["cache", "directories", "target mlp_learning_an_image", "target tiny-cuda-nn"]
    assert off == original


@pytest.mark.compile
def test_option_on_configures_and_builds_with_debian_rocm(tmp_path: Path):
    cmake = require_tool("cmake", "cmake (apt-get install cmake)")
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    if not Path("/usr/lib/x86_64-linux-gnu/cmake/hip-lang").is_dir():
        pytest.skip("Debian's hip-lang CMake package (apt-get install libamdhip64-dev) not found")
    env = dict(os.environ, HIP_PLATFORM="amd")
    build = tmp_path / "build"
    proc = subprocess.run([cmake, "-S", str(CASE / "expected"), "-B", str(build), f"-D{OPTION}=ON",
                           f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN}"], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    proc = subprocess.run([cmake, "--build", str(build)], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (build / "samples" / "mlp_learning_an_image").is_file()
