"""A tree that already builds for AMD keeps its NVIDIA build (issue 31): convert leaves the files
its AMD build compiles byte for byte, says so first, and converts them only when asked."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree
from portkit.cli.app import main

KERNEL = "#include <cuda_runtime.h>\n#include \"shared.h\"\n__global__ void k(float *p) { p[0] = 1; }\n" \
         "void run(float *p) { cudaMalloc(&p, 4); k<<<1, 1>>>(p); }\n"
SHARED = "#pragma once\n#ifdef __CUDACC__\n#define HD __host__ __device__\n#else\n#define HD\n#endif\n"
GGML_HIP = "enable_language(HIP)\nfile(GLOB SRCS \"../x-cuda/*.cu\")\nadd_library(x-hip ${SRCS})\n"


def _changed(src: Path, out: Path) -> list[str]:
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                  if p.is_file() and (not (src / p.relative_to(out)).is_file()
                                      or (src / p.relative_to(out)).read_bytes() != p.read_bytes()))


def test_an_amd_directory_that_builds_the_cuda_one_keeps_it_and_its_headers(tmp_path: Path, capsys):
    """ggml: src/ggml-hip's CMakeLists compiles ../ggml-cuda/*.cu; include/ggml.h comes with them."""
    src = write_tree(tmp_path / "src", {"x-cuda/k.cu": KERNEL, "include/shared.h": SHARED, "x-hip/CMakeLists.txt": GGML_HIP,
                                   "tools/other.cu": KERNEL.replace('#include "shared.h"\n', "")})
    assert main(["convert", str(src), "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (
        "Already builds for AMD (x-hip builds x-cuda's sources for AMD): 3 files its AMD build compiles left as "
        "they are, so its NVIDIA build keeps working. For the rest, `--compat-header FILE --in-place` keeps one "
        "source for both vendors; `portkit audit` prices what is left; `portkit check` keeps new code portable; "
        "--convert-amd-built converts them anyway.")   # first (issue 31), then the counts
    assert out.splitlines()[1] == "portkit convert: 1 file scanned (3 lines), 1 changed, 0 partially parsed, 0 skipped"
    assert _changed(src, tmp_path / "out") == ["tools/other.cu"]   # not compiled by the AMD build: converted
    assert main(["convert", str(src), "-o", str(tmp_path / "all"), "--convert-amd-built", "-q"]) == 0
    assert _changed(src, tmp_path / "all") == ["include/shared.h", "tools/other.cu", "x-cuda/k.cu", "x-hip/CMakeLists.txt"]


def test_a_root_build_that_compiles_hip_leaves_the_whole_tree(tmp_path: Path, capsys):
    """faiss: its root CMakeLists.txt enables HIP under FAISS_ENABLE_ROCM and hipifies at build time."""
    src = write_tree(tmp_path / "src", {"gpu/k.cu": KERNEL, "gpu/shared.h": SHARED,
                                   "CMakeLists.txt": "project(x LANGUAGES CXX CUDA)\nif(X_ROCM)\n  enable_language(HIP)\n"
                                                     "endif()\n"})
    assert main(["convert", str(src), "--check"]) == 0
    assert "Already builds for AMD (CMakeLists.txt:3: enable_language(HIP)): 3 files" in capsys.readouterr().out


def test_o_naming_a_file_writes_that_file_with_its_helper_header_beside_it(tmp_path: Path, capsys):
    """Issue 31: `convert main.cu -o out/main.cu` made a directory out/main.cu/ holding main.cu."""
    from conftest import REPO
    case = REPO / "fixtures" / "polyfills" / "cg_reduce"
    src = write_tree(tmp_path / "src", {"main.cu": (case / "input.cu").read_text()})
    out = tmp_path / "out" / "main.hip"
    assert main(["convert", str(src / "main.cu"), "-o", str(out), "--rocm", "5.2", "-q"]) == 0
    assert sorted(p.name for p in out.parent.iterdir()) == ["main.hip", "portkit_polyfills.h"]
    assert out.read_bytes() == (case / "expected.hip").read_bytes()
    assert (out.parent / "portkit_polyfills.h").read_bytes() == (case / "expected_polyfills.h").read_bytes()
    capsys.readouterr()
    assert main(["convert", str(src / "main.cu"), "-o", str(src / "main.cu"), "-q"]) == 2
    assert capsys.readouterr().err == f"portkit: error: {src / 'main.cu'}: the output is the input file; use --in-place\n"


def test_a_cuda_macro_the_amd_build_defines_itself_keeps_its_name(tmp_path: Path, capsys):
    """faiss's VectorResidual.cu defines CUDART_NAN_F under USE_AMD_ROCM and includes
    math_constants.h only in the #else: its uses stay CUDART_NAN_F (HIP_NAN_F is defined by a
    header the AMD build never includes). A definition only NVIDIA compiles does not count."""
    tree = write_tree(tmp_path / "src", {
        "amd.cu": "#ifdef USE_AMD_ROCM\n#define CUDART_NAN_F __int_as_float(0x7fffffff)\n#else\n"
                  "#include <math_constants.h>\n#endif\n__global__ void k(float* r) { r[0] = CUDART_NAN_F; }\n",
        "nvidia.cu": "#include <cuda_runtime.h>\n#ifdef __CUDA_ARCH__\n#define CUDART_INF_F 1\n#endif\n#include <math_constants.h>\n"
                     "__global__ void k(float* r) { r[0] = CUDART_INF_F; }\n"})
    assert main(["convert", str(tree), "-o", str(tmp_path / "out"), "-q", "--convert-amd-built"]) == 0
    assert (tmp_path / "out" / "amd.cu").read_text() == (tree / "amd.cu").read_text()
    assert (tmp_path / "out" / "nvidia.cu").read_text() == (
        "#include <hip/hip_runtime.h>\n#ifdef __HIP_DEVICE_COMPILE__\n#define HIP_INF_F 1\n#endif\n"
        "#include <hip/hip_math_constants.h>\n"
        "__global__ void k(float* r) { r[0] = HIP_INF_F; }\n")
