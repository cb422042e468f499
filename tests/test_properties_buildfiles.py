"""Property tests (hypothesis) over generated build files: CMake, Makefiles, setup.py (issue 19).

Like tests/test_properties.py for CUDA sources, the generators join real tokens of each format
with what breaks hand-written readers: unbalanced parentheses and quotes, bracket arguments
`[[ ]]`, generator expressions, line continuations, make variables and recipes, `-Xcompiler`
flags, PyTorch's CUDAExtension with extra_compile_args dicts, and broken Python. For every input
and every kind of text file (portkit.commands.scan.text.scan_text):

- audit mode and convert mode raise nothing;
- every byte outside the edits is unchanged;
- converting the converted output again changes nothing (idempotence).

A fixed seed (derandomize) and a bounded number of examples keep CI fast and repeatable.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from portkit.engine.context import Options
from portkit.core.edits import apply_edits, normalize
from portkit.core.source import SourceFile
from portkit.commands.scan.text import scan_text

CMAKE = [
    "cmake_minimum_required(VERSION 3.10)\n", "project(app LANGUAGES CXX CUDA)\n", "enable_language(CUDA)\n",
    "find_package(CUDA 11.0 REQUIRED)\n", "find_package(CUDAToolkit)\n", "add_executable(", "add_library(",
    "cuda_add_executable(", "cuda_add_library(", "target_link_libraries(", "target_compile_options(",
    "set(", "list(APPEND ", "string(APPEND ", "file(GLOB ", "set_target_properties(", "set_property(TARGET ",
    "set_source_files_properties(", "cuda_add_cublas_to_target(", "add_custom_command(", "target_sources(",
    "CMAKE_CUDA_ARCHITECTURES", "CMAKE_CUDA_FLAGS", "CUDA_NVCC_FLAGS", "CUDA_SEPARABLE_COMPILATION ON",
    "PROPERTIES", "PROPERTY", "LANGUAGE CUDA", "OPTIONS", "PRIVATE", "app", "a.cu", "b.cpp", "*.cu", "80 90",
    "CUDA::cudart", "CUDA::cublas", "CUDA::cupti", "cublas", "cudart", "${CUDA_LIBRARIES}", "${CUDA_INCLUDE_DIRS}",
    "CUDA_FOUND", "cuda_std_17", "$<$<COMPILE_LANGUAGE:CUDA>:", "$<COMPILE_LANGUAGE:CUDA>", "--use_fast_math",
    "-Xcompiler", "-lcudart", "-arch=sm_80", "-gencode", "arch=compute_80,code=sm_80", "--expt-relaxed-constexpr",
    "-Xptxas", "(", ")", ")\n", '"', '" ', "[[", "]]", "[=[", "]=]", "#", "#[[", " ", "\n", "\r\n", "\\\n", ";",
    ">", "${", "}", "\\", "\t", "\xe9", "\0",
]
MAKE = [
    "NVCC", "NVCCFLAGS", "GENCODE_FLAGS", "LIBS", "CFLAGS", " = ", " := ", " ?= ", " += ", "export ", "override ",
    "nvcc", "/usr/local/cuda/bin/nvcc", "hipcc", "$(NVCC)", "${NVCC}", "$(NVCCFLAGS)", "$(CUDA_PATH)",
    "-Xcompiler", "--compiler-options", "-fPIC", "-Wall", ",", "-lcudart", "-lcublas", "-lcupti", "-lcuda",
    "-arch=sm_80", "-gencode", "arch=compute_80,code=sm_80", "-Xptxas", "-v", "-maxrregcount=64", "-rdc=true",
    "-dc", "-dlink", "-ccbin", "g++", "-c", "-o", "$@", "$<", "$^", "-I/usr/local/cuda/include",
    "-L/usr/local/cuda/lib64", "$(foreach sm,$(SMS),-gencode arch=compute_$(sm),code=sm_$(sm))",
    "NVCCFLAGS = -Xcompiler ", "\tnvcc -Xcompiler ", "NVCC ?= nvcc\n", "all:", "%.o: %.cu", "\t", "\n", "\\\n", " ", "#", "'", '"', "$(", ")", "=", "\r", "\xe9",
]
PYTHON = [
    "from setuptools import setup\n", "from torch.utils.cpp_extension import CUDAExtension, BuildExtension\n",
    "import torch\n", "import pycuda.driver\n", "from . import x\n", "import ,\n", "setup(", "CUDAExtension(",
    "name=", "'ext'", "sources=", "['a.cu', 'b.cpp']", "extra_compile_args=", "{", "}", "'nvcc'", "'cxx'", ":",
    ", ", "[", "]", "(", ")", "'-O3'", "'-arch=sm_80'", "'-Xcompiler'", "'-fPIC'", "'-lcudart'", "'--use_fast_math'",
    "'-gencode'", "'arch=compute_80,code=sm_80'", "\"-Xptxas\"", "libraries=", "'cudart'", "install_requires=", "['-Xcompiler', '-lcudart']", "{'nvcc': [",
    "'pycuda>=1'", "'tensorrt'", "TORCH_CUDA_ARCH_LIST", "os.environ['CUDA_VISIBLE_DEVICES'] = '0'\n",
    "cmdclass={'build_ext': BuildExtension}", "\n", " ", "    ", "#", '"""', "'''", "\\", "\r", "f'", "**", "\xe9",
]
TEXT = [
    "tensorrt==10.0", "torch==2.3.1+cu121", "--extra-index-url https://download.pytorch.org/whl/cu121",
    "jax[cuda12]", "cupy-cuda12x", "- pip:", "  - ", "dependencies = [", "\"pycuda>=1\"", "]", "[", "import",
    "from", "CUDA_VISIBLE_DEVICES=0", "nvcc -arch=sm_80", "-Xcompiler", "#", " ", "\n", "'", '"', "=", ";", "@",
    "\0", "\xe9",
]
KINDS = {"cmake": ("CMakeLists.txt", CMAKE), "make": ("Makefile", MAKE), "python": ("setup.py", PYTHON),
         "shell": ("build.sh", TEXT + MAKE), "requirements": ("requirements.txt", TEXT),
         "pyproject": ("pyproject.toml", TEXT + PYTHON), "conda": ("environment.yml", TEXT)}
SETTINGS = settings(max_examples=300, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CONVERT = Options(offload_arch=("gfx90a", "gfx942"))


def files(kind: str):
    return st.lists(st.sampled_from(KINDS[kind][1]), max_size=60).map("".join).map(
        lambda text: text.encode("utf-8", "surrogatepass"))


def scan(kind: str, data: bytes, options: Options):
    return scan_text(SourceFile.from_bytes(KINDS[kind][0], data), kind, options)


def check_kind(kind: str, data: bytes) -> None:
    for f in scan(kind, data, Options(audit=True)).findings:
        assert 1 <= f.line and f.column >= 1
    edits = list(normalize(scan(kind, data, CONVERT).edits))    # sorted, never overlapping
    out = apply_edits(data, edits)
    pos = at = 0
    for edit in edits:                                          # untouched bytes, in order
        gap = data[pos:edit.start]
        assert out[at:at + len(gap)] == gap
        at += len(gap) + len(edit.text)
        pos = edit.end
    assert out[at:] == data[pos:]
    assert apply_edits(out, scan(kind, out, CONVERT).edits) == out    # idempotent


@SETTINGS
@given(files("cmake"))
def test_cmake(data: bytes):
    check_kind("cmake", data)


@SETTINGS
@given(files("make"))
def test_makefile(data: bytes):
    check_kind("make", data)


@SETTINGS
@given(files("python"))
def test_setup_py(data: bytes):
    check_kind("python", data)


@SETTINGS
@given(st.sampled_from(["shell", "requirements", "pyproject", "conda"]).flatmap(
    lambda kind: st.tuples(st.just(kind), files(kind))))
def test_other_text_files(case: tuple[str, bytes]):
    check_kind(*case)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.sampled_from(sorted(KINDS)), st.binary(max_size=300))
def test_arbitrary_bytes_in_any_text_kind(kind: str, data: bytes):
    check_kind(kind, data)
