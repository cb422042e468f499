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


def test_roc_insert_args_stage_and_buffer_as_hipify_clang():
    """e_add_const_argument: before an argument, and after the last one; plain HIP is untouched."""
    out = api.convert_text(SPMV, prefer_roc=True, rocm="6.2")
    assert out.output.decode().splitlines()[2:4] == [
        "    rocsparse_spmv(h, rocsparse_operation_none, al, a, x, al, x, rocsparse_datatype_f32_r,",
        "                 rocsparse_spmv_alg_default, rocsparse_spmv_stage_compute, buf);"]
    assert _findings(out) == []
    plain = api.convert_text(SPMV, rocm="6.2")   # the rewrites are rocSPARSE's only
    assert plain.output.decode().splitlines()[3] == "                 HIPSPARSE_SPMV_ALG_DEFAULT, buf);"
    assert _findings(plain) == []


def _roc(call: str) -> str:
    return api.convert_text(f"void f() {{ {call}; }}\n", prefer_roc=True, rocm="6.2").output.decode()


def test_roc_replace_and_insert_policies():
    """e_replace_argument_with_const + e_add_const_argument (csrilu02 analysis)."""
    assert _roc("cusparseDcsrilu02_analysis(h, m, n, d, v, r, c, i, CUSPARSE_SOLVE_POLICY_USE_LEVEL, b)") == (
        "void f() { rocsparse_dcsrilu0_analysis(h, m, n, d, v, r, c, i, rocsparse_analysis_policy_force, "
        "rocsparse_solve_policy_auto, b); }\n")


def test_roc_size_t_cast_of_buffer_size():
    """e_reinterpret_cast_size_t: reinterpret_cast<size_t*>(arg), as hipify-clang writes it."""
    assert _roc("cusparseScsrilu02_bufferSize(h, m, n, d, v, r, c, i, &size)") == (
        "void f() { rocsparse_scsrilu0_buffer_size(h, m, n, d, v, r, c, i, reinterpret_cast<size_t*>(&size)); }\n")


def test_roc_copied_argument_batch_stride():
    """e_add_var_argument copies an argument (no new variable): the batch count is also the stride."""
    assert _roc("cusparseSgtsvInterleavedBatch(h, 0, m, dl, d, du, x, count, buf)") == (
        "void f() { rocsparse_sgtsv_interleaved_batch(h, 0, m, dl, d, du, x, count, count, buf); }\n")


def test_roc_dropped_arguments_csr2csc_buffer_size():
    """e_remove_argument, seven of them, two pairs adjacent."""
    assert _roc("cusparseCsr2cscEx2_bufferSize(h, m, n, nnz, v, r, c, cv, cp, ci, CUDA_R_32F, "
                "CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &size)") == (
        "void f() { rocsparse_csr2csc_buffer_size(h, m, n, nnz, r, c, rocsparse_action_numeric, &size); }\n")


def test_roc_two_arguments_inserted_at_once():
    assert _roc("cusparseScsrgemm2(h, m, n, k, al, da, na, va, ra, ca, db, nb, vb, rb, cb, be, dd, nd, vd, rd, "
                "cd, dc, rc, cc, info, buf)").startswith(
        "void f() { rocsparse_scsrgemm(h, rocsparse_operation_none, rocsparse_operation_none, m, n, k,")


def test_roc_moved_arguments_keep_their_conversion():
    """e_move_argument: the moved text is converted too (hipify-clang writes it as spelled)."""
    assert _roc("cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, a, x, b, a, y, c)") == (
        "void f() { miopenSoftmaxForward_V2(h, a, x, b, a, y, c, MIOPEN_SOFTMAX_ACCURATE, "
        "MIOPEN_SOFTMAX_MODE_CHANNEL); }\n")
    # two single arguments swapped, a third dropped
    assert _roc("cudnnGetConvolutionBackwardDataWorkspaceSize(h, w, dy, cd, dx, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, &s)") == (
        "void f() { miopenConvolutionBackwardDataGetWorkSpaceSize(h, dy, w, cd, dx, &s); }\n")
    # two pairs swapped, and a pair moved after the last argument
    assert _roc("cudnnConvolutionBackwardData(h, al, wd, w, dyd, dy, cd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, "
                "ws, n, be, dxd, dx)") == (
        "void f() { miopenConvolutionBackwardData(h, al, dyd, dy, wd, w, cd, miopenConvolutionBwdDataAlgoDirect, "
        "be, dxd, dx, ws, n); }\n")


def test_roc_rewrite_out_of_view_is_reported():
    out = api.convert_text("void f() { auto p = &cusparseSpMV; }\n", prefer_roc=True, rocm="6.2")
    assert out.output == b"void f() { auto p = &rocsparse_spmv; }\n"
    assert _findings(out) == [("PK004", 1, "cusparseSpMV -> rocsparse_spmv: it is not called here, so its arguments "
                               "are not in view; rewrite the arguments by hand: insert rocsparse_spmv_stage_compute "
                               "before argument 10")]


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
