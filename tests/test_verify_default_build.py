"""verify compiles the project's default AMD build (issue 48, gunrock's last two errors):

- a folder added only under `if(OPT)` of an option() that build has OFF by default is left out and
  said so (gunrock's `add_subdirectory(benchmarks)` under ESSENTIALS_BUILD_BENCHMARKS, declared OFF
  in both branches of its NVIDIA switch): benchmarks/for.cu linked essentials only inside
  `if(SOURCE MATCHES "for.cu")` in a foreach loop and stopped at `sm_SM_TARGET`;
- a `*_sync` warp function the project's own AMD code calls (gunrock's queue.hxx under
  `#if defined(__HIP_PLATFORM_AMD__)`), which the ROCm 6.2 headers declare only with
  HIP_ENABLE_WARP_SYNC_BUILTINS (by default from ROCm 7.0), is PK002 naming the define, what
  convert writes, and the release.

The case is fixtures/verify_real/default_amd_build (gunrock, reduced; fixtures/verify_real/README.md).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import NVCC, REPO, clang19, require_tool
from portkit import api
from portkit.cli.app import main
from portkit.project.buildconfig import TreeConfig
from portkit.project.buildconfig_cmake import read_cmake

CASE = REPO / "fixtures" / "verify_real" / "default_amd_build" / "input"
SHFL_SYNC_AT_6_2 = (
    "__shfl_sync is declared at ROCm 6.2 only with -DHIP_ENABLE_WARP_SYNC_BUILTINS (the *_sync warp "
    "functions, 64-bit masks; declared by default from ROCm 7.0): define it for the build, call __shfl "
    "without the mask (what convert writes at --rocm 6.2), or build with ROCm 7.0 or newer")
SYNCWARP_AT_6_2 = (
    "__syncwarp needs ROCm 7.0 (HIP 7.0 adds it, with 64-bit masks), the compiler is ROCm 6.2: build with ROCm "
    "7.0 or newer, or call portkit_syncwarp (the polyfill convert writes for it)")
OFF_BY_DEFAULT = ("add_subdirectory(benchmarks) only under ESSENTIALS_BUILD_BENCHMARKS, OFF by default "
                  "(verify compiles the default build)")


def test_a_folder_only_an_option_off_by_default_adds_is_left_out():
    tree = TreeConfig(CASE)
    assert tree.left_out_why("benchmarks/for.cu") == ("CMakeLists.txt:52", OFF_BY_DEFAULT)
    assert tree.left_out_why("examples/async_bfs.cu") is None


@pytest.mark.parametrize("text,out", [
    # OFF by default, plain or ${}, declared or defaulted without a value
    ('option(BUILD_BENCH "b" OFF)\nif(BUILD_BENCH)\n  add_subdirectory(sub)\nendif()\n', True),
    ('option(BUILD_BENCH "b")\nif(${BUILD_BENCH})\n  add_subdirectory(sub)\nendif()\n', True),
    # OFF in the else() of the NVIDIA switch, ON only under the NVIDIA condition (gunrock's tests)
    ('if(${USE_NVIDIA})\n  option(BUILD_T "t" ON)\nelse()\n  option(BUILD_T "t" OFF)\nendif()\n'
     'if(BUILD_T)\n  add_subdirectory(sub)\nendif()\n', True),
    # ON by default, ON under a condition the build may take, or set ON: a build the project has
    ('option(BUILD_BENCH "b" ON)\nif(BUILD_BENCH)\n  add_subdirectory(sub)\nendif()\n', False),
    ('if(WITH_MPI)\n  option(BUILD_BENCH "b" ON)\nelse()\n  option(BUILD_BENCH "b" OFF)\nendif()\n'
     'if(BUILD_BENCH)\n  add_subdirectory(sub)\nendif()\n', False),
    ('option(BUILD_BENCH "b" OFF)\nif(WITH_MPI)\n  set(BUILD_BENCH ON)\nendif()\n'
     'if(BUILD_BENCH)\n  add_subdirectory(sub)\nendif()\n', False),
    ('set(BUILD_BENCH ON)\noption(BUILD_BENCH "b" OFF)\nif(BUILD_BENCH)\n  add_subdirectory(sub)\nendif()\n', False),
    # the option a port turns on (faiss's FAISS_ENABLE_ROCM is OFF by default), a negated or
    # compound condition, the else() of the option, an option never declared
    ('option(FAISS_ENABLE_ROCM "r" OFF)\nif(FAISS_ENABLE_ROCM)\n  add_subdirectory(sub)\nendif()\n', False),
    ('option(USE_CUDA "c" OFF)\nif(USE_CUDA)\n  add_subdirectory(sub)\nendif()\n', False),
    ('option(BUILD_BENCH "b" OFF)\nif(NOT BUILD_BENCH)\n  add_subdirectory(sub)\nendif()\n', False),
    ('option(BUILD_BENCH "b" OFF)\nif(BUILD_BENCH AND X)\n  add_subdirectory(sub)\nendif()\n', False),
    ('option(BUILD_BENCH "b" OFF)\nif(BUILD_BENCH)\nelse()\n  add_subdirectory(sub)\nendif()\n', False),
    ('if(BUILD_BENCH)\n  add_subdirectory(sub)\nendif()\n', False),
])
def test_which_options_leave_a_folder_out(tmp_path: Path, text: str, out: bool):
    left = read_cmake(text, tmp_path, tmp_path).left_out_dirs
    assert (str(tmp_path / "sub") in left) is out


def test_a_warp_sync_function_behind_its_define():
    """At ROCm 6.2 the *_sync warp functions need HIP_ENABLE_WARP_SYNC_BUILTINS; ROCm 7.0 declares
    them by default, and before 6.2 they do not exist (no define brings them)."""
    from portkit.commands.verify.opt_in import behind_define
    message = "use of undeclared identifier '__shfl_sync'"
    assert behind_define("__shfl_sync", message, (6, 2, 0), "__shfl") == SHFL_SYNC_AT_6_2
    assert behind_define("__shfl_sync", message, (7, 0, 0), "__shfl") is None
    assert behind_define("__shfl_sync", message, (6, 1, 0), "__shfl") is None
    assert behind_define("__syncwarp", "use of undeclared identifier '__syncwarp'", (6, 2, 0), None) is None


def test_convert_writes_the_mask_less_name_at_rocm_6_2():
    """convert and verify agree: convert never writes a *_sync name that 6.2 declares only with the
    define; it writes the HIP name every release has."""
    text = "__device__ int f(unsigned m, int v) { return __shfl_sync(m, v, 0) + __shfl_xor_sync(m, v, 1); }\n"
    out = api.convert_text(text, filename="k.cu", rocm="6.2").output.decode()
    assert "return __shfl(v, 0) + __shfl_xor(v, 1); }" in out


@pytest.mark.compile
def test_gunrocks_default_amd_build_at_rocm_6_2(pack62, tmp_path, capsys):
    clang19()
    out = tmp_path / "out"
    assert main(["convert", str(CASE), "-o", str(out), "--rocm", "6.2", "-q"]) in (0, 1)
    capsys.readouterr()
    main(["verify", str(out), "--rocm", "6.2", "--rocm-headers", str(pack62), "--no-cache"])
    lines = [re.sub(r" \(\d+\.\d s\)$| in \d+\.\d s$", "", line) for line in capsys.readouterr().out.splitlines()]
    start = lines.index("examples/async_bfs.cu: failed, explained")
    assert lines[start:] == [
        "examples/async_bfs.cu: failed, explained",
        "  include/gunrock/queue.hxx:14:3: error: use of undeclared identifier '__syncwarp'",
        "    explained by PK002 needs-newer-rocm: " + SYNCWARP_AT_6_2,
        "  include/gunrock/queue.hxx:16:7: error: use of undeclared identifier '__shfl_sync'",
        "    explained by PK002 needs-newer-rocm: " + SHFL_SYNC_AT_6_2,
        f"skipped: benchmarks/for.cu: not compiled: the project's AMD build leaves it out (CMakeLists.txt:52: "
        f"{OFF_BY_DEFAULT})",
        "",
        "1 translation unit: 0 compiled, 1 failed (1 explained by findings, 0 unexplained, 0 not reached)",
        # the name is ROCm 7.0's by default: the ROCm release the port targets is the decision
        "failed only on a decision: 1 of the 1 failed units reached (newer_rocm: 1); compiled or failed on a "
        "decision: 1 of 1 reached units (100%)"]
    # the define declares __shfl_sync at 6.2; __syncwarp is HIP 7.0's own (the release, still)
    main(["verify", str(out), "--rocm", "6.2", "--rocm-headers", str(pack62), "--no-cache",
          "-D", "HIP_ENABLE_WARP_SYNC_BUILTINS"])
    lines = [re.sub(r" \(\d+\.\d s\)$| in \d+\.\d s$", "", line) for line in capsys.readouterr().out.splitlines()]
    start = lines.index("examples/async_bfs.cu: failed, explained")
    assert lines[start:start + 4] == [
        "examples/async_bfs.cu: failed, explained",
        "  include/gunrock/queue.hxx:14:3: error: use of undeclared identifier '__syncwarp'",
        "    explained by PK002 needs-newer-rocm: " + SYNCWARP_AT_6_2,
        f"skipped: benchmarks/for.cu: not compiled: the project's AMD build leaves it out (CMakeLists.txt:52: "
        f"{OFF_BY_DEFAULT})"]


@pytest.mark.compile
@pytest.mark.parametrize("unit", ["examples/async_bfs.cu", "benchmarks/for.cu"])
def test_the_cases_cuda_compiles_with_nvcc(unit: str):
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    proc = subprocess.run([nvcc, "-x", "cu", "-std=c++17", "-Iinclude", "-c", unit, "-o", "/dev/null"], cwd=CASE,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
