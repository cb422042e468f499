"""bfloat16 and FP8 device types: what each ROCm release gets, and the findings where it gets nothing."""

from __future__ import annotations

import portkit

RUNTIME = "\n#include <hip/hip_runtime.h>\n"   # inserted as hipify-clang does, before the first include
BF16 = ("#include <cuda_bf16.h>\n"
        "__global__ void k(__nv_bfloat16* y, float a) {\n"
        "    y[0] = __hadd(__float2bfloat16_rn(a), y[0]);\n"
        "}\n")

FP8 = ("#include <cuda_fp8.h>\n"
       "__global__ void q(const float* x, __nv_fp8_storage_t* y, __nv_fp8_e4m3* z) {\n"
       "    y[0] = __nv_cvt_float_to_fp8(x[0], __NV_SATFINITE, __NV_E4M3);\n"
       "    z[0] = __nv_fp8_e4m3(x[1]);\n"
       "}\n")


def findings(result) -> list[tuple[str, int, str]]:
    return [(f.code, f.line, f.message) for f in result.findings]


def test_bfloat16_becomes_the_hip_bf16_type_not_hipify_clangs_hip_bfloat16():
    out = portkit.convert_text(BF16, rocm="5.7")
    assert out.output.decode() == RUNTIME + ("#include <hip/hip_bf16.h>\n"
                                   "__global__ void k(__hip_bfloat16* y, float a) {\n"
                                   "    y[0] = __hadd(__float2bfloat16(a), y[0]);\n"
                                   "}\n")
    assert findings(out) == []


def test_bfloat16_before_rocm_5_7_stays_with_a_newer_finding_per_name():
    out = portkit.convert_text(BF16, rocm="5.6")
    assert out.output.decode() == RUNTIME + BF16
    assert findings(out) == [
        ("PK002", 1, "cuda_bf16.h -> hip/hip_bf16.h needs ROCm 5.7, the target is ROCm 5.6"),
        ("PK002", 2, "__nv_bfloat16 -> __hip_bfloat16 needs ROCm 5.7, the target is ROCm 5.6"),
        ("PK002", 3, "__float2bfloat16_rn -> __float2bfloat16 needs ROCm 5.7, the target is ROCm 5.6"),
    ]


def test_fp8_at_rocm_6_3_maps_to_the_ocp_names_and_flags_the_type_for_mi300():
    out = portkit.convert_text(FP8, rocm="6.3")
    assert out.output.decode() == RUNTIME + (
        "#include <hip/hip_fp8.h>\n"
        "__global__ void q(const float* x, __hip_fp8_storage_t* y, __hip_fp8_e4m3* z) {\n"
        "    y[0] = __hip_cvt_float_to_fp8(x[0], __HIP_SATFINITE, __HIP_E4M3);\n"
        "    z[0] = __hip_fp8_e4m3(x[1]);\n"
        "}\n")
    note = ("Same OCP format as CUDA, but MI300 (gfx940-gfx942) device code has only the FNUZ types "
            "(__hip_fp8_e4m3_fnuz: other bias, range and NaN): on those GPUs convert values explicitly, "
            "never reinterpret the bytes.")
    assert findings(out) == [("PK004", 2, f"__nv_fp8_e4m3 -> __hip_fp8_e4m3: {note}"),
                             ("PK004", 4, f"__nv_fp8_e4m3 -> __hip_fp8_e4m3: {note}")]


def test_fp8_at_rocm_6_2_never_renames_an_ocp_name_to_a_fnuz_one():
    out = portkit.convert_text(FP8, rocm="6.2")
    assert out.output.decode() == RUNTIME + (
        "#include <hip/hip_fp8.h>\n"
        "__global__ void q(const float* x, __hip_fp8_storage_t* y, __nv_fp8_e4m3* z) {\n"
        "    y[0] = __hip_cvt_float_to_fp8(x[0], __HIP_SATFINITE, __NV_E4M3);\n"
        "    z[0] = __nv_fp8_e4m3(x[1]);\n"
        "}\n")
    assert findings(out) == [
        ("PK002", 2, "__nv_fp8_e4m3 -> __hip_fp8_e4m3 needs ROCm 6.3, the target is ROCm 6.2"),
        ("PK002", 3, "__NV_E4M3 -> __HIP_E4M3 needs ROCm 6.3, the target is ROCm 6.2"),
        ("PK002", 4, "__nv_fp8_e4m3 -> __hip_fp8_e4m3 needs ROCm 6.3, the target is ROCm 6.2"),
    ]


def test_hmax2_converts_but_says_hip_has_it_only_for_bfloat16_pairs():
    out = portkit.convert_text("__device__ __half2 m(__half2 a, __half2 b) { return __hmax2(a, b); }\n",
                               rocm="6.2")
    assert out.output.decode() == RUNTIME + "__device__ __half2 m(__half2 a, __half2 b) { return __hmax2(a, b); }\n"
    assert findings(out) == [
        ("PK004", 1, "__hmax2: HIP has __hmax2 only for __hip_bfloat162; for __half2 apply "
                     "__hmax (ROCm 5.5+) to the low and high halves."),
    ]


def test_cublas_status_string_becomes_hipblas_status_to_string_and_the_name_is_left_to_a_polyfill():
    src = ("#include <cublas_v2.h>\n"
           "const char* s(cublasStatus_t st) { return cublasGetStatusString(st); }\n"
           "const char* n(cublasStatus_t st) { return cublasGetStatusName(st); }\n")
    out = portkit.convert_text(src, rocm="5.2")
    assert out.output.decode() == (
        "#include <hipblas/hipblas.h>\n"
        "const char* s(hipblasStatus_t st) { return hipblasStatusToString(st); }\n"
        "const char* n(hipblasStatus_t st) { return cublasGetStatusName(st); }\n")
    assert findings(out) == [
        ("PK001", 3, "cublasGetStatusName has no HIP equivalent: polyfill: cublasGetStatusName (hipBLAS has "
                     "no status-name function up to ROCm 6.3: a switch over hipblasStatus_t returning the "
                     "enumerator's name)."),
    ]
