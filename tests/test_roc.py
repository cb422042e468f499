"""convert --roc: hipify-clang --roc semantics (roc_library families, roc_note, qualified roc names)."""

from __future__ import annotations

from portkit import api

SPMV = ("#include <cusparse.h>\n"
        "void f(cusparseHandle_t h, cusparseSpMatDescr_t a, cusparseDnVecDescr_t x, float *al, void *buf) {\n"
        "    cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, al, a, x, al, x, CUDA_R_32F,\n"
        "                 CUSPARSE_SPMV_ALG_DEFAULT, buf);\n"
        "}\n")


def _findings(converted) -> list[tuple[str, int, str]]:
    return [(f.code, f.line, f.message) for f in converted.findings]


def test_roc_function_with_other_arguments_is_renamed_and_reported():
    out = api.convert_text(SPMV, prefer_roc=True, rocm="6.2")
    assert out.output.decode().splitlines()[2] == (
        "    rocsparse_spmv(h, rocsparse_operation_none, al, a, x, al, x, rocblas_datatype_f32_r,")
    assert _findings(out) == [("PK004", 3, "cusparseSpMV -> rocsparse_spmv: rocSPARSE's generic API takes a "
                               "stage argument (buffer size, preprocess, compute) and an explicit buffer-size "
                               "pointer where cuSPARSE has separate calls: the argument lists differ.")]
    plain = api.convert_text(SPMV, rocm="6.2")   # the note is about rocSPARSE only
    assert plain.output.decode().splitlines()[2].startswith("    hipsparseSpMV(h, HIPSPARSE_OPERATION_NON_TRANSPOSE")
    assert _findings(plain) == []


def test_name_the_roc_library_lacks_is_left_not_sent_to_hipblas():
    src = "#include <cublas_v2.h>\nvoid f(cublasHandle_t h) { cublasSgetrfBatched(h, 4, 0, 4, 0, 0, 1); }\n"
    out = api.convert_text(src, prefer_roc=True, rocm="6.2")
    assert out.output.decode() == ("#include <rocblas/rocblas.h>\n"
                                   "void f(rocblas_handle h) { cublasSgetrfBatched(h, 4, 0, 4, 0, 0, 1); }\n")
    assert _findings(out) == [("PK001", 2, "cublasSgetrfBatched has no rocBLAS equivalent; without --roc it "
                               "converts to hipblasSgetrfBatched")]


def test_cublaslt_names_hipify_keeps_on_hipblaslt_under_roc():
    out = api.convert_text("cublasLtHandle_t h;\n", prefer_roc=True, rocm="6.2")
    assert out.output == b"cublasLtHandle_t h;\n".replace(b"cublasLt", b"hipblasLt")


def test_qualified_rocrand_state_and_device_headers():
    src = "#include <curand_philox4x32_x.h>\ncurandStateSobol32 s;\ncurandState_t t;\n"
    out = api.convert_text(src, prefer_roc=True, rocm="5.2")
    assert out.output.decode() == ("#include <rocrand/rocrand_philox4x32_10.h>\n"
                                   "rocrand_device::sobol32_engine<false> s;\n"
                                   "rocrand_state_xorwow t;\n")


def test_cufft_stays_on_hipfft_and_complex_types_go_to_rocblas():
    src = "#include <cufft.h>\ncuDoubleComplex z;\ncufftHandle p;\n"
    out = api.convert_text(src, prefer_roc=True, rocm="6.2")
    assert out.output.decode() == "#include <hipfft/hipfft.h>\nrocblas_double_complex z;\nhipfftHandle p;\n"


def test_cudnn_goes_to_miopen_under_roc_with_argument_warning():
    src = "#include <cudnn.h>\nvoid f(cudnnHandle_t h) { cudnnSoftmaxForward(h); }\n"
    out = api.convert_text(src, prefer_roc=True, rocm="6.2")
    assert out.output.decode() == "#include <miopen/miopen.h>\nvoid f(miopenHandle_t h) { miopenSoftmaxForward_V2(h); }\n"
    assert [(c, line) for c, line, _ in _findings(out)] == [("PK004", 2)]
