"""The converter's rules, one behaviour per test, on small inputs with exact expected bytes."""

from __future__ import annotations

import pytest

from portkit import convert_text


def conv(src: bytes, **kw) -> bytes:
    return convert_text(src, **kw).output


def codes(src: bytes, **kw) -> list[tuple[str, int, int, str]]:
    return [(f.code, f.line, f.column, f.subject) for f in convert_text(src, **kw).findings]


def test_comments_strings_and_lookalikes_are_untouched():
    src = (b'// cudaMalloc here\n/* cudaFree */\nconst char* m = "cudaMemcpy: failed";\n'
           b"int my_cudaMalloc_wrapper = 0; int cudaMallocCount = 0;\n"
           b"struct S { int cudaMalloc; };\nint f(S s) { return s.cudaMalloc; }\n")
    result = convert_text(src)
    assert result.output == src
    assert result.edits == []


def test_string_words_that_are_exactly_a_cuda_name_convert_as_hipify_clang_does():
    """RewriteString: the run from "cu" to the next space must be a whole CUDA name; the search
    resumes after that space, so a name glued to punctuation or inside a longer word stays."""
    src = (b'const char* a = "cudaMalloc failed";\n'
           b'const char* b = "x cudaFree";\n'
           b'const char* c = "cudaFree() cudaMemcpy:";\n'
           b'const char* d = "my_cudaMemset still";\n'
           b'const char* e = u8"cudaMalloc";\n'
           b'const char* f = R"(cudaMalloc )";\n')
    assert conv(src) == (b'const char* a = "hipMalloc failed";\n'
                         b'const char* b = "x hipFree";\n'
                         b'const char* c = "cudaFree() cudaMemcpy:";\n'
                         b'const char* d = "my_hipMemset still";\n'
                         b'const char* e = u8"cudaMalloc";\n'
                         b'const char* f = R"(cudaMalloc )";\n')


def test_a_string_name_the_target_lacks_stays():
    src = b'const char* a = "cudaStreamBeginCaptureToGraph failed";\n'
    assert conv(src, rocm="5.2") == src
    assert conv(src) == b'const char* a = "hipStreamBeginCaptureToGraph failed";\n'


def test_file_without_cuda_is_identical_even_with_math_names():
    src = b"#include <math.h>\nfloat f(float x) { return sqrtf(x) + expf(x) + fmaxf(x, 1.0f); }\n"
    assert conv(src) == src


def test_macro_bodies_are_converted_but_not_their_strings():
    src = (b"#include <cstdio>\n"
           b"#define CHECK(x) do { cudaError_t e = (x); \\\n"
           b"  if (e != cudaSuccess) printf(\"cudaError: %s\\n\", cudaGetErrorString(e)); } while (0)\n"
           b"#define ALLOC cudaMalloc\n")
    assert conv(src) == (
        b"\n#include <hip/hip_runtime.h>\n#include <cstdio>\n"
        b"#define CHECK(x) do { hipError_t e = (x); \\\n"
        b"  if (e != hipSuccess) printf(\"cudaError: %s\\n\", hipGetErrorString(e)); } while (0)\n"
        b"#define ALLOC hipMalloc\n")


def test_pragma_and_error_text_is_not_code():
    src = b"#pragma message(\"uses cudaMalloc\")\n#error cudaMalloc is required\n"
    assert conv(src) == src


def test_runtime_include_goes_after_the_include_guard():
    """After the guard's `#define NAME` (hipify-clang's `#ifndef NAME` splits the guard: issue 48),
    the line break first."""
    src = b"// helpers\n#ifndef H_CUH\n#define H_CUH\n__device__ float sq(float v) { return v * v; }\n#endif\n"
    assert conv(src) == (b"// helpers\n#ifndef H_CUH\n#define H_CUH\n#include <hip/hip_runtime.h>\n\n"
                         b"__device__ float sq(float v) { return v * v; }\n#endif\n")


def test_runtime_include_goes_after_pragma_once_and_comments():
    src = b"/* license\n   text */\n// more\n#pragma once\n#include <vector>\n__global__ void k() {}\n"
    assert conv(src) == (b"/* license\n   text */\n// more\n#pragma once\n#include <hip/hip_runtime.h>\n\n"
                         b"#include <vector>\n__global__ void k() {}\n")


def test_runtime_include_respects_bom_crlf_and_missing_final_newline():
    src = b"\xef\xbb\xbf// caf\xe9\r\n__global__ void k() {}"
    assert conv(src) == b"\xef\xbb\xbf\r\n#include <hip/hip_runtime.h>\r\n// caf\xe9\r\n__global__ void k() {}"
    assert conv(b"__global__ void k() {}") == b"\n#include <hip/hip_runtime.h>\n__global__ void k() {}"


def test_host_api_use_without_any_include_gets_the_runtime_header():
    src = b"void f(float** p) { cudaMalloc(p, 4); }\n"
    assert conv(src) == b"\n#include <hip/hip_runtime.h>\nvoid f(float** p) { hipMalloc(p, 4); }\n"


def test_runtime_api_header_is_enough_for_host_code():
    src = b"#include <cuda_runtime_api.h>\nvoid f(float** p) { cudaMalloc(p, 4); }\n"
    assert conv(src) == b"#include <hip/hip_runtime_api.h>\nvoid f(float** p) { hipMalloc(p, 4); }\n"


def test_duplicate_includes_collapse_but_not_across_branches():
    src = (b"#include <cuda.h>\n#include <cuda_runtime.h>\n#include <cuda_runtime_api.h>\n"
           b"#ifdef A\n#include <cuda_runtime.h>\n#else\n#include <cuda.h>\n#endif\n")
    assert conv(src) == (b"#include <hip/hip_runtime.h>\n\n#include <hip/hip_runtime_api.h>\n"
                         b"#ifdef A\n#include <hip/hip_runtime.h>\n#else\n#include <hip/hip_runtime.h>\n#endif\n")


def test_existing_hip_include_wins_over_a_converted_duplicate():
    src = b"#include <hip/hip_runtime.h>\n#include <cuda_runtime.h>\n__global__ void k() {}\n"
    assert conv(src) == b"#include <hip/hip_runtime.h>\n\n__global__ void k() {}\n"


def test_runtime_header_is_moved_ahead_of_other_hip_headers():
    """ROCm's hip_cooperative_groups.h needs hip_runtime.h first; nvcc includes it implicitly."""
    src = (b"#include <cooperative_groups.h>\n#include <cuda_runtime.h>\n"
           b"namespace cg = cooperative_groups;\n__global__ void k() { cg::this_thread_block().sync(); }\n")
    assert conv(src) == (b"\n#include <hip/hip_runtime.h>\n#include <hip/hip_cooperative_groups.h>\n\n"
                         b"namespace cg = cooperative_groups;\n__global__ void k() { cg::this_thread_block().sync(); }\n")


def test_library_headers_and_quoted_includes():
    src = b'#include "cublas_v2.h"\n#include <curand_kernel.h>\n#include "my_cuda_utils.h"\n'
    assert conv(src) == b'#include "hipblas/hipblas.h"\n#include <hiprand/hiprand_kernel.h>\n#include "my_cuda_utils.h"\n'


def test_symbol_arguments_are_wrapped():
    src = (b"#include <cuda_runtime.h>\n__constant__ float c[4];\nvoid f(float* h, void** p) {\n"
           b"  cudaMemcpyToSymbol(c, h, sizeof(c));\n  cudaMemcpyFromSymbol(h, c, sizeof(c));\n"
           b"  cudaGetSymbolAddress(p, c);\n}\n")
    assert conv(src) == (b"#include <hip/hip_runtime.h>\n__constant__ float c[4];\nvoid f(float* h, void** p) {\n"
                         b"  hipMemcpyToSymbol(HIP_SYMBOL(c), h, sizeof(c));\n"
                         b"  hipMemcpyFromSymbol(h, HIP_SYMBOL(c), sizeof(c));\n"
                         b"  hipGetSymbolAddress(p, HIP_SYMBOL(c));\n}\n")


def test_warp_sync_mask_is_dropped_with_a_finding():
    src = (b"#include <cuda_runtime.h>\n__device__ float r(float v) {\n"
           b"  v += __shfl_down_sync(0xffffffffu, v, 16);\n  return __shfl_sync(0xffffffffu, v, 0, 32);\n}\n")
    out = convert_text(src, rocm="5.2")
    assert out.output == (b"#include <hip/hip_runtime.h>\n__device__ float r(float v) {\n"
                          b"  v += __shfl_down(v, 16);\n  return __shfl(v, 0, 32);\n}\n")
    assert [(f.code, f.line, f.column, f.subject) for f in out.findings] == [
        ("PK004", 3, 8, "__shfl_down_sync"), ("PK004", 4, 10, "__shfl_sync")]


def test_target_release_leaves_newer_names_and_reports_them():
    src = b"#include <cuda_runtime.h>\nvoid f() { cudaDeviceSetLimit(cudaLimitMallocHeapSize, 1024); }\n"
    assert conv(src, rocm="5.2") == b"#include <hip/hip_runtime.h>\nvoid f() { cudaDeviceSetLimit(hipLimitMallocHeapSize, 1024); }\n"
    assert codes(src, rocm="5.2") == [("PK002", 2, 12, "cudaDeviceSetLimit")]
    assert conv(src) == b"#include <hip/hip_runtime.h>\nvoid f() { hipDeviceSetLimit(hipLimitMallocHeapSize, 1024); }\n"
    assert codes(src) == []


def test_names_without_hip_equivalent_are_kept_and_reported():
    src = b"#include <cuda_runtime.h>\nvoid f() { cudaInitDevice(0, 0, 0); }\n"
    assert conv(src) == b"#include <hip/hip_runtime.h>\nvoid f() { cudaInitDevice(0, 0, 0); }\n"
    assert codes(src) == [("PK001", 2, 12, "cudaInitDevice")]


LAUNCHES = (b"#include <cuda_runtime.h>\n"
            b"template <typename T, int N> __global__ void k(T* a) {}\n__global__ void z() {}\n"
            b"void f(float* d, cudaStream_t s) {\n"
            b"  k<float, 4><<<dim3(2, 2), 64, 128, s>>>(d);\n"
            b"  z<<<1, 1>>>();\n"
            b"  z <<< 1, 1, 0 >>> ( );\n"
            b"}\n")


def test_launches_are_kept_by_default():
    assert conv(LAUNCHES) == LAUNCHES.replace(b"cuda_runtime.h", b"hip/hip_runtime.h").replace(
        b"cudaStream_t", b"hipStream_t")


def test_launches_to_hipLaunchKernelGGL():
    assert conv(LAUNCHES, launch_syntax="hip") == (
        b"#include <hip/hip_runtime.h>\n"
        b"template <typename T, int N> __global__ void k(T* a) {}\n__global__ void z() {}\n"
        b"void f(float* d, hipStream_t s) {\n"
        b"  hipLaunchKernelGGL(HIP_KERNEL_NAME(k<float, 4>), dim3(2, 2), dim3(64), 128, s, d);\n"
        b"  hipLaunchKernelGGL(z, dim3(1), dim3(1), 0, 0);\n"
        b"  hipLaunchKernelGGL(z, dim3(1), dim3(1), 0, 0);\n"
        b"}\n")


def test_launch_inside_a_macro_body():
    src = b"#define LAUNCH(k, n, ...) k<<<((n) + 255) / 256, 256>>>(__VA_ARGS__)\n"
    assert conv(src, launch_syntax="hip") == (
        b"\n#include <hip/hip_runtime.h>\n"
        b"#define LAUNCH(k, n, ...) hipLaunchKernelGGL(k, dim3(((n) + 255) / 256), dim3(256), 0, 0, __VA_ARGS__)\n")


def test_error_region_is_converted_and_reported():
    src = (b"#include <cuda_runtime.h>\nvoid f(float* p, int x) {\n#if A\n  if (x) { cudaFree(p);\n"
           b"#else\n  if (!x) { cudaMemset(p, 0, 4);\n#endif\n  }\n}\n")
    out = convert_text(src)
    assert out.output == src.replace(b"cuda_runtime.h", b"hip/hip_runtime.h").replace(
        b"cudaFree", b"hipFree").replace(b"cudaMemset", b"hipMemset")
    assert out.metrics.partially_parsed
    assert [(f.code, f.line) for f in out.findings] == [("PK005", 2)]


@pytest.mark.parametrize("src", [LAUNCHES, b"\xef\xbb\xbf#include <cuda.h>\r\nint x;\r\n"])
def test_converting_twice_changes_nothing(src):
    once = conv(src, launch_syntax="hip")
    assert conv(once, launch_syntax="hip") == once


def test_str_input_and_metrics():
    out = convert_text("#include <cuda_runtime.h>\nvoid f(void** p) { cudaMalloc(p, 1); cudaFoo(); }\n")
    assert out.output == b"#include <hip/hip_runtime.h>\nvoid f(void** p) { hipMalloc(p, 1); cudaFoo(); }\n"
    assert (out.metrics.refs_found, out.metrics.refs_converted, out.metrics.refs_left) == (2, 2, 0)


def test_typed_pointers_and_kernels_are_cast_for_hip_void_signatures():
    src = (b"#include <cuda_runtime.h>\n__global__ void k(float* p) {}\nvoid f(float* h) {\n"
           b"  cudaFuncAttributes a; cudaFuncGetAttributes(&a, k);\n"
           b"  float* d; size_t pitch; cudaMallocPitch(&d, &pitch, 64, 4);\n"
           b"  cudaHostGetDevicePointer((void**)&d, h, 0);\n}\n")
    assert conv(src) == (
        b"#include <hip/hip_runtime.h>\n__global__ void k(float* p) {}\nvoid f(float* h) {\n"
        b"  hipFuncAttributes a; hipFuncGetAttributes(&a, reinterpret_cast<const void*>(k));\n"
        b"  float* d; size_t pitch; hipMallocPitch(reinterpret_cast<void**>(&d), &pitch, 64, 4);\n"
        b"  hipHostGetDevicePointer((void**)&d, h, 0);\n}\n")


def test_partial_mappings_convert_with_a_note():
    src = b"#include <cuda_runtime.h>\nvoid f(int* p, cudaMemLocation l) { cudaMemAdvise(p, 4, cudaMemAdviseSetReadMostly, l); }\n"
    assert [(f.code, f.line, f.subject) for f in convert_text(src).findings if f.code == "PK004"] == [
        ("PK004", 2, "cudaMemAdvise")]


def test_call_arity_selects_the_hip_api():
    """CUDA 12's three-argument cudaGraphInstantiate is HIP's hipGraphInstantiateWithFlags."""
    src = (b"#include <cuda_runtime.h>\nvoid f(cudaGraph_t g, cudaGraphExec_t* e) {\n"
           b"  cudaGraphInstantiate(e, g, 0);\n  cudaGraphInstantiate(e, g, nullptr, nullptr, 0);\n}\n")
    assert conv(src, rocm="5.2") == (
        b"#include <hip/hip_runtime.h>\nvoid f(hipGraph_t g, hipGraphExec_t* e) {\n"
        b"  hipGraphInstantiateWithFlags(e, g, 0);\n  hipGraphInstantiate(e, g, nullptr, nullptr, 0);\n}\n")


def test_cudart_cb_is_reported_with_what_to_do():
    src = b"#include <cuda_runtime.h>\nvoid CUDART_CB done(void* data) {}\n"
    finding, parse_note = convert_text(src).findings  # tree-sitter cannot parse the macro there
    assert (parse_note.code, parse_note.line) == ("PK005", 2)
    assert (finding.code, finding.line, finding.column, finding.subject) == ("PK001", 2, 6, "CUDART_CB")
    assert finding.message == ("CUDART_CB has no HIP equivalent: HIP callbacks take no calling-convention "
                               "macro: delete CUDART_CB (it is empty on Linux).")


def test_roc_prefers_the_roc_libraries_where_the_tables_have_them():
    src = (b"#include <cublas_v2.h>\n#include <curand.h>\n"
           b"void f(cublasHandle_t h, curandGenerator_t* g, cudaStream_t s) {\n"
           b"  cublasSetStream(h, s);\n  curandCreateGenerator(g, CURAND_RNG_PSEUDO_DEFAULT);\n}\n")
    # cudaStream_t is a runtime name, so the runtime header comes first in both styles
    assert conv(src, prefer_roc=True) == (
        b"\n#include <hip/hip_runtime.h>\n#include <rocblas/rocblas.h>\n#include <rocrand/rocrand.h>\n"
        b"void f(rocblas_handle h, rocrand_generator* g, hipStream_t s) {\n"
        b"  rocblas_set_stream(h, s);\n  rocrand_create_generator(g, ROCRAND_RNG_PSEUDO_DEFAULT);\n}\n")
    assert conv(src) == (
        b"\n#include <hip/hip_runtime.h>\n#include <hipblas/hipblas.h>\n#include <hiprand/hiprand.h>\n"
        b"void f(hipblasHandle_t h, hiprandGenerator_t* g, hipStream_t s) {\n"
        b"  hipblasSetStream(h, s);\n  hiprandCreateGenerator(g, HIPRAND_RNG_PSEUDO_DEFAULT);\n}\n")


def test_same_name_with_different_behaviour_is_noted_not_changed():
    src = (b"#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
           b"__device__ void f() { auto t = cg::this_thread(); t.sync(); }\n")
    out = convert_text(src)
    assert out.output == (b"\n#include <hip/hip_runtime.h>\n#include <hip/hip_cooperative_groups.h>\n"
                          b"namespace cg = cooperative_groups;\n"
                          b"__device__ void f() { auto t = cg::this_thread(); t.sync(); }\n")
    assert [(f.code, f.line, f.column, f.subject) for f in out.findings] == [("PK004", 3, 36, "this_thread")]


def test_kernels_are_counted_once_per_definition_not_per_prototype():
    source = ("__global__ void k(float*);\n"
              "template <typename T> __global__ void t(T* x) { x[0] = 0; }\n"
              "__global__ void k(float* x) { x[0] = 1; }\n")
    assert convert_text(source).metrics.kernels == 2


def test_includes_hip_needs_not_are_deleted_up_to_the_path_as_hipify_clang_does():
    """device_launch_parameters.h maps to "": `#...>` goes, the rest of the line stays; a
    duplicate runtime include goes the same way, and the delimiters are kept."""
    src = (b'#include "cuda_runtime.h"\n#include "device_launch_parameters.h" // dlp\n'
           b"#include <cuda.h>\n#include <curand_normal.h>\n__global__ void k() {}\n")
    assert conv(src) == (b'#include "hip/hip_runtime.h"\n // dlp\n\n#include <hiprand/hiprand_kernel.h>\n'
                         b"__global__ void k() {}\n")
