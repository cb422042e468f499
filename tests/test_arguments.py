"""Call-argument rewrites (portkit/rewrite/arguments.py): exact bytes, exact findings, and the
table fields that drive them (hipify-clang's FuncArgCasts and FuncOverloads, as data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from portkit import convert_text
from portkit.api import scan_options
from portkit.core.edits import apply_edits
from portkit.core.errors import MappingError
from portkit.core.tables.mappings import load_tables, tables_dir
from portkit.commands.scan.walk import scan_source
from portkit.core.source import SourceFile

HEAD = b"#include <cuda_runtime.h>\n"
HIP_HEAD = b"#include <hip/hip_runtime.h>\n"


def conv(body: bytes, rocm: str | None = "5.2") -> tuple[bytes, list[tuple]]:
    out = convert_text(HEAD + body, rocm=rocm)
    assert out.output.startswith(HIP_HEAD)
    return out.output[len(HIP_HEAD):], [(f.code, f.line, f.column, f.message) for f in out.findings]


def test_stream_wait_event_gets_flags_only_where_hip_has_no_default():
    body = b"void f(cudaStream_t s, cudaEvent_t e) { cudaStreamWaitEvent(s, e); cudaStreamWaitEvent(s, e, 0); }\n"
    assert conv(body, "5.2") == (b"void f(hipStream_t s, hipEvent_t e) { hipStreamWaitEvent(s, e, 0); "
                                 b"hipStreamWaitEvent(s, e, 0); }\n", [])
    # rocm-6.1.0's hip_runtime_api.h declares flags __dparm(0): hipify-clang's output is right there
    assert conv(body, "6.1") == (b"void f(hipStream_t s, hipEvent_t e) { hipStreamWaitEvent(s, e); "
                                 b"hipStreamWaitEvent(s, e, 0); }\n", [])


def test_symbol_copies_get_cuda_template_defaults_and_hip_symbol():
    body = (b"__constant__ float c[4];\nvoid f(float* h) {\n  cudaMemcpyToSymbolAsync(c, h, 16);\n"
            b"  cudaMemcpyFromSymbolAsync(h, c, 16, 4);\n}\n")
    assert conv(body)[0] == (b"__constant__ float c[4];\nvoid f(float* h) {\n"
                             b"  hipMemcpyToSymbolAsync(HIP_SYMBOL(c), h, 16, 0, hipMemcpyHostToDevice);\n"
                             b"  hipMemcpyFromSymbolAsync(h, HIP_SYMBOL(c), 16, 4, hipMemcpyDeviceToHost);\n}\n")


def test_malloc_host_flags_added_to_the_two_argument_form_only():
    body = b"void f(float** p) { cudaMallocHost(p, 64); cudaMallocHost(p, 64, cudaHostAllocMapped); }\n"
    assert conv(body) == (b"void f(float** p) { hipHostMalloc(p, 64, hipHostMallocDefault); "
                          b"hipHostMalloc(p, 64, hipHostMallocMapped); }\n", [])


def test_overloads_chosen_by_argument_count():
    body = (b"void f(cudaEvent_t* e, cudaGraphExec_t* x, cudaGraph_t g) {\n  cudaEventCreate(e);\n"
            b"  cudaEventCreate(e, cudaEventBlockingSync);\n  cudaGraphInstantiate(x, g);\n"
            b"  cudaGraphInstantiate(x, g, 0);\n}\n")
    assert conv(body)[0] == (b"void f(hipEvent_t* e, hipGraphExec_t* x, hipGraph_t g) {\n  hipEventCreate(e);\n"
                             b"  hipEventCreateWithFlags(e, hipEventBlockingSync);\n"
                             b"  hipGraphInstantiateWithFlags(x, g, 0);\n  hipGraphInstantiateWithFlags(x, g, 0);\n}\n")


def test_graph_memcpy_node_symbol_arguments():
    body = (b"__device__ int d;\nvoid f(cudaGraphNode_t* n, cudaGraph_t g, cudaGraphExec_t x, int* h) {\n"
            b"  cudaGraphAddMemcpyNodeFromSymbol(n, g, 0, 0, h, d, 4, 0, cudaMemcpyDeviceToHost);\n"
            b"  cudaGraphMemcpyNodeSetParamsFromSymbol(*n, h, d, 4, 0, cudaMemcpyDeviceToHost);\n"
            b"  cudaGraphExecMemcpyNodeSetParamsFromSymbol(x, *n, h, d, 4, 0, cudaMemcpyDeviceToHost);\n}\n")
    assert conv(body)[0] == (
        b"__device__ int d;\nvoid f(hipGraphNode_t* n, hipGraph_t g, hipGraphExec_t x, int* h) {\n"
        b"  hipGraphAddMemcpyNodeFromSymbol(n, g, 0, 0, h, HIP_SYMBOL(d), 4, 0, hipMemcpyDeviceToHost);\n"
        b"  hipGraphMemcpyNodeSetParamsFromSymbol(*n, h, HIP_SYMBOL(d), 4, 0, hipMemcpyDeviceToHost);\n"
        b"  hipGraphExecMemcpyNodeSetParamsFromSymbol(x, *n, h, HIP_SYMBOL(d), 4, 0, hipMemcpyDeviceToHost);\n}\n")


def test_driver_entry_point_gets_the_hip_version_and_a_status_pointer():
    body = b"void f(void** fn) { cudaGetDriverEntryPoint(\"cuInit\", fn, 0); }\n"
    assert conv(body, rocm=None)[0] == (
        b"void f(void** fn) { hipGetProcAddress(\"hipInit\", fn, 603, 0, nullptr); }\n")


def test_occupancy_callback_is_dropped_with_a_finding():
    src = (b"#include <cuda.h>\nvoid f(CUfunction k, int* g, int* b) {\n"
           b"  cuOccupancyMaxPotentialBlockSize(g, b, k, 0, 128, 0);\n}\n")
    out = convert_text(src, rocm="5.2")
    assert out.output == (b"#include <hip/hip_runtime.h>\nvoid f(hipFunction_t k, int* g, int* b) {\n"
                          b"  hipModuleOccupancyMaxPotentialBlockSize(g, b, k, 128, 0);\n}\n")
    assert [(f.code, f.line, f.column, f.subject) for f in out.findings] == [
        ("PK004", 3, 3, "cuOccupancyMaxPotentialBlockSize")]


def test_arguments_out_of_view_are_reported_not_guessed():
    body = (b"#define SYM_ARGS c, h, 16\n__constant__ float c[4];\nvoid f(float* h) {\n"
            b"  cudaMemcpyToSymbolAsync(SYM_ARGS);\n  auto alloc = cudaMallocHost;\n}\n")
    out, findings = conv(body)
    assert out == (b"#define SYM_ARGS c, h, 16\n__constant__ float c[4];\nvoid f(float* h) {\n"
                   b"  hipMemcpyToSymbolAsync(SYM_ARGS);\n  auto alloc = hipHostMalloc;\n}\n")
    assert findings == [
        ("PK004", 5, 3, "cudaMemcpyToSymbolAsync -> hipMemcpyToSymbolAsync: this call shows 1 argument where 3 "
         "are expected (a macro may expand to several); rewrite the arguments by hand: wrap argument 1 in "
         "HIP_SYMBOL(); pass 0 as argument 4 (a CUDA default HIP lacks); pass hipMemcpyHostToDevice as argument 5 "
         "(a CUDA default HIP lacks)"),
        ("PK004", 6, 16, "cudaMallocHost -> hipHostMalloc: it is not called here, so its arguments are not in "
         "view; rewrite the arguments by hand: pass hipHostMallocDefault as argument 3 (a CUDA default HIP lacks)")]


def test_calls_in_macro_arguments_and_bodies_are_rewritten():
    body = (b"#define CK(x) (x)\n#define SYNC(s, e) cudaStreamWaitEvent(s, e)\n"
            b"void f(cudaStream_t s, cudaEvent_t e) { CK(cudaStreamWaitEvent(s, e)); SYNC(s, e); }\n")
    assert conv(body) == (b"#define CK(x) (x)\n#define SYNC(s, e) hipStreamWaitEvent(s, e, 0)\n"
                          b"void f(hipStream_t s, hipEvent_t e) { CK(hipStreamWaitEvent(s, e, 0)); SYNC(s, e); }\n",
                          [])


def test_thrust_cuda_policies_become_thrust_hip_but_other_cuda_namespaces_stay():
    src = (b"#include <thrust/execution_policy.h>\nvoid f(cudaStream_t s) {\n"
           b"  auto a = thrust::cuda::par.on(s);\n  auto b = ::thrust::cuda::par_nosync;\n"
           b"  auto c = at::cuda::getCurrentCUDAStream();\n}\n")
    out = convert_text(src, rocm="5.2").output
    from portkit.rewrite.nvidia_thrust import helper   # thrust::hip on HIP's NVIDIA platform (test_nvidia_thrust.py)
    assert out == (b"\n#include <hip/hip_runtime.h>\n" + helper(b"\n", include=False)
                   + b"#include <thrust/execution_policy.h>\nvoid f(hipStream_t s) {\n"
                   b"  auto a = thrust::hip::par.on(s);\n  auto b = ::thrust::hip::par_nosync;\n"
                   b"  auto c = at::cuda::getCurrentCUDAStream();\n}\n")


HEADER = 'schema = 1\nfamily = "{family}"\ntitle = "t"\nsource = "s"\n'
ROC_ENTRY = ('{ cuda = "cuxSolve", roc = "rocx_solve", roc_since = "5.0", kind = "function", status = "unsupported", '
             'args_for = "roc", insert_args = { 6 = "rocx_auto" }, replace_args = { 4 = "rocx_force" }, '
             'move_args = [{ from = 1, before = 3 }], copy_args = [{ from = 5, before = 2 }] }')


def test_roc_only_rewrites_are_data(tmp_path: Path):
    """e_move/e_add_var/e_replace/e_add_const for the roc libraries need no code: one synthetic entry."""
    (tmp_path / "cux.toml").write_text(HEADER.format(family="cux") + f"prefer_roc = true\nentries = [\n{ROC_ENTRY},\n]\n")
    db = load_tables(tmp_path)
    src = b"void f() { cuxSolve(h, a, b, POLICY, n); }\n"
    for prefer_roc, expected in ((True, b"void f() { rocx_solve(n, a, h, b, rocx_force, n, rocx_auto); }\n"),
                                 (False, src)):
        scan = scan_source(SourceFile.from_bytes("x.cu", src), scan_options(rocm="5.2", prefer_roc=prefer_roc), db)
        assert apply_edits(src, scan.edits) == expected


@pytest.mark.parametrize("fields, message", [
    ('default_args = { 3 = "a, b" }', "default_args must map argument numbers to argument text (a name or a number)"),
    ('insert_args = { x = "0" }', "insert_args must map argument numbers to argument text (names or numbers, ', '-separated)"),
    ('cast_args = { 1 = "int" }', "cast_args must map argument numbers to pointer types such as 'const void*' or 'size_t*'"),
    ('move_args = [{ from = 1 }]', "move_args must be a list of { from, before, count } records of positive integers"),
    ('defaults_in_hip = "6.1"', "defaults_in_hip without default_args"),
    ('args_for = "miopen"', "args_for must be 'hip' or 'roc'"),
])
def test_bad_argument_fields_are_errors(tmp_path: Path, fields: str, message: str):
    entry = f'{{ cuda = "cudaFoo", hip = "hipFoo", kind = "function", status = "supported", hip_since = "1.0", {fields} }}'
    (tmp_path / "runtime.toml").write_text(HEADER.format(family="runtime") + f"entries = [\n{entry},\n]\n")
    with pytest.raises(MappingError) as err:
        load_tables(tmp_path)
    assert str(err.value) == f"mappings/runtime.toml: entry 1 (cudaFoo): {message}"


def test_qualified_namespace_must_keep_its_enclosing_namespaces(tmp_path: Path):
    entry = '{ cuda = "thrust::cuda", hip = "rocthrust::hip", kind = "namespace", status = "supported", hip_since = "2.5" }'
    (tmp_path / "thrust.toml").write_text(HEADER.format(family="thrust") + f"entries = [\n{entry},\n]\n")
    with pytest.raises(MappingError) as err:
        load_tables(tmp_path)
    assert str(err.value) == ("mappings/thrust.toml: entry 1 (thrust::cuda): hip name 'rocthrust::hip' must keep "
                              "the enclosing namespaces of 'thrust::cuda'")


SOLVES = (b"void f(cusparseHandle_t h, cusparseSpMatDescr_t A, cusparseDnMatDescr_t B, cusparseDnVecDescr_t x,\n"
          b"       cusparseSpSMDescr_t sm, cusparseSpSVDescr_t sv, float* a) {\n"
          b"    cusparseSpSM_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, a, A, B, B, CUDA_R_32F, CUSPARSE_SPSM_ALG_DEFAULT, sm);\n"
          b"    cusparseSpSV_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, a, A, x, x, CUDA_R_32F, CUSPARSE_SPSV_ALG_DEFAULT, sv);\n"
          b"}\n")


def test_pasted_arguments_in_a_macro_body_are_counted_by_their_commas():
    """Issue 31: `cudaEventCreate(&t##_start)` became the two-argument hipEventCreateWithFlags (the
    parser split `##_start` off as an ERROR node, a second argument)."""
    body = (b"#define A(t) cudaEventCreate(&t##_start)\n"
            b"#define B(t) cudaEventCreate(&t##_stop, cudaEventDisableTiming)\n"
            b"#define C(v) __shfl_down_sync(0xffffffff, v##_x, 1, 16)\n")
    assert conv(body) == (b"#define A(t) hipEventCreate(&t##_start)\n"
                          b"#define B(t) hipEventCreateWithFlags(&t##_stop, hipEventDisableTiming)\n"
                          b"#define C(v) __shfl_down(v##_x, 1, 16)\n",
                          [("PK004", 4, 14, "__shfl_down_sync -> __shfl_down: The mask is dropped, which is only correct "
                            "when the whole warp takes part; an AMD wavefront has 64 lanes, and ROCm 6.2+ *_sync "
                            "variants need 64-bit masks.")])


def test_hipsparse_triangular_solves_get_their_buffer_argument_or_the_hand_edit():
    """Issue 31: cuSPARSE's solves take no work buffer; hipSPARSE's SpSV_solve did until 6.0 (and read
    it), SpSM_solve does on every release, unused from 6.2 (its changelog: pass nullptr)."""
    src = b"#include <cusparse.h>\n" + SOLVES
    sm = (b"    hipsparseSpSM_solve(h, HIPSPARSE_OPERATION_NON_TRANSPOSE, HIPSPARSE_OPERATION_NON_TRANSPOSE, a, A, B, B, "
          b"HIP_R_32F, HIPSPARSE_SPSM_ALG_DEFAULT, sm")
    sv = b"    hipsparseSpSV_solve(h, HIPSPARSE_OPERATION_NON_TRANSPOSE, a, A, x, x, HIP_R_32F, HIPSPARSE_SPSV_ALG_DEFAULT, sv);"
    old = convert_text(src, rocm="5.2")
    assert old.output.splitlines()[3:5] == [sm + b");", sv]
    assert [(f.code, f.line, f.message) for f in old.findings] == [
        ("PK004", 4, "cusparseSpSM_solve -> hipsparseSpSM_solve: hipSPARSE at this release takes the work buffer as "
                     "argument 11, and reads it; pass the buffer given to hipsparseSpSM_analysis (cuSPARSE keeps it in the descriptor)"),
        ("PK004", 5, "cusparseSpSV_solve -> hipsparseSpSV_solve: hipSPARSE at this release takes the work buffer as "
                     "argument 10, and reads it; pass the buffer given to hipsparseSpSV_analysis (cuSPARSE keeps it in the descriptor)")]
    for rocm in ("6.2", "7.2"):
        new = convert_text(src, rocm=rocm)
        assert new.output.splitlines()[3:5] == [sm + b", nullptr);", sv]
        assert new.findings == []
    assert convert_text(new.output, rocm="7.2").output == new.output   # hipSPARSE's own 11-argument call stays


def test_headers_cudas_headers_included_are_added_where_the_code_relies_on_them():
    """Issue 32 (llm.c at 6.2): cublas_api.h includes cuda_bf16.h, hipBLAS does not include
    hip_bf16.h; cuda_runtime.h gives host code <math.h>, hip_runtime.h does not."""
    src = (b"#include <cuda_runtime.h>\n#include <cublasLt.h>\n"
           b"__device__ float d(float x) { return isfinite(x) ? x : 0.0f; }\n"
           b"typedef __nv_bfloat16 floatX;\nint ok(float x) { return isfinite(x); }\n")
    assert convert_text(src, rocm="6.2").output.splitlines()[:4] == [
        b"#include <hip/hip_runtime.h>", b"#include <math.h>", b"#include <hipblaslt/hipblaslt.h>",
        b"#include <hip/hip_bf16.h>"]
    old = convert_text(src, rocm="5.2").output   # no hip_bf16.h before ROCm 5.7
    assert old.splitlines()[:3] == [b"#include <hip/hip_runtime.h>", b"#include <math.h>",
                                    b"#include <cublasLt.h>"] and b"hip_bf16.h" not in old   # hipBLASLt: 5.5
    device_only = src.replace(b"int ok(float x) { return isfinite(x); }\n", b"")
    assert b"math.h" not in convert_text(device_only, rocm="6.2").output   # HIP's device overloads serve
    assert convert_text(convert_text(src, rocm="6.2").output, rocm="6.2").output == convert_text(src, rocm="6.2").output


def test_atomic_add_on_16_bit_floats_is_reported_where_the_pointer_says_so():
    """Issue 32 (llm.c's layernorm_backward.cu at 6.2): HIP has no 16-bit float atomicAdd. With polyfills
    off (on, the call is portkit_atomicAdd's: tests/test_polyfill_atomics.py)."""
    src = (b"#include <cuda_bf16.h>\n__device__ void add(__nv_bfloat16* p, __nv_bfloat16 v, float* f) {\n"
           b"    __nv_bfloat162* pair = reinterpret_cast<__nv_bfloat162*>(p);\n"
           b"    atomicAdd(pair, __halves2bfloat162(v, v));\n    atomicAdd(f, 1.0f);\n}\n")
    out = scan_source(SourceFile.from_bytes("x.cu", src), scan_options(rocm="6.2", polyfills=False), load_tables(tables_dir()))
    assert [(f.code, f.line, f.message) for f in out.findings if f.code == "PK001"] == [
        ("PK001", 4, "atomicAdd on __nv_bfloat162: HIP's atomicAdd has no __nv_bfloat162 overload (it takes int, "
                     "unsigned, float, double); add through a compare-and-swap loop on the enclosing 32-bit word")]
