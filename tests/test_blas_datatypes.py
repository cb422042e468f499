"""cuBLAS data and compute types per ROCm release: hipBLAS before 6.0 takes only hipblasDatatype_t
(legacy names), 6.0+ takes hipify-clang's hipDataType names through the _v2 functions."""

from __future__ import annotations

from pathlib import Path

import pytest

import portkit
from portkit.core.errors import MappingError
from portkit.core.tables.mappings import load_tables

GEMM = ("#include <cublas_v2.h>\n"
        "#include <cusparse.h>\n"
        "void f(cublasHandle_t h, const void* a, void* c, cusparseDnVecDescr_t* v, float* x, float* s) {\n"
        "    cudaDataType_t t = CUDA_R_16F;\n"
        "    cublasComputeType_t ct = CUBLAS_COMPUTE_32F;\n"
        "    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, s, a, CUDA_R_16F, 4, a, t, 4, s,\n"
        "                 c, CUDA_R_32F, 4, ct, CUBLAS_GEMM_DEFAULT);\n"
        "    cusparseCreateDnVec(v, 4, x, CUDA_R_32F);\n"
        "}\n")
HEAD = ("#include <hipblas/hipblas.h>\n"
        "#include <hipsparse/hipsparse.h>\n"
        "void f(hipblasHandle_t h, const void* a, void* c, hipsparseDnVecDescr_t* v, float* x, float* s) {\n")


def test_before_rocm_6_hipblas_gets_its_legacy_names_and_hipsparse_keeps_hipDataType():
    out = portkit.convert_text(GEMM, rocm="5.2")
    assert out.output.decode() == HEAD + (
        "    hipblasDatatype_t t = HIPBLAS_R_16F;\n"
        "    hipblasDatatype_t ct = HIPBLAS_R_32F;\n"
        "    hipblasGemmEx(h, HIPBLAS_OP_N, HIPBLAS_OP_N, 4, 4, 4, s, a, HIPBLAS_R_16F, 4, a, t, 4, s,\n"
        "                 c, HIPBLAS_R_32F, 4, ct, HIPBLAS_GEMM_DEFAULT);\n"
        "    hipsparseCreateDnVec(v, 4, x, HIP_R_32F);\n"
        "}\n")
    assert [(f.code, f.line) for f in out.findings] == []


def test_a_file_that_never_names_cublas_gets_hipDataType_before_rocm_6_too():
    """Issue 31: a cuSPARSE-only program's `cudaDataType dt` became hipblasDatatype_t at 5.2, a hipBLAS
    type the program never includes (hipSPARSE takes hipDataType on every release)."""
    src = ("#include <cusparse.h>\n"
           "void f(cusparseDnVecDescr_t* v, float* x) {\n"
           "    cudaDataType dt = CUDA_R_32F;\n"
           "    cusparseCreateDnVec(v, 4, x, dt);\n"
           "}\n")
    out = portkit.convert_text(src, rocm="5.2")
    assert out.output.decode().splitlines()[2:4] == ["    hipDataType dt = HIP_R_32F;",
                                                    "    hipsparseCreateDnVec(v, 4, x, dt);"]
    assert [(f.code, f.line) for f in out.findings] == []


def test_the_legacy_names_end_at_rocm_6_where_the_output_is_hipify_clangs():
    """hipblasGemmEx_v2 takes hipDataType/hipblasComputeType_t with or without HIPBLAS_V2 (6.x)."""
    assert b"HIPBLAS_R_16F" in portkit.convert_text(GEMM, rocm="5.7").output
    out = portkit.convert_text(GEMM, rocm="6.0")
    assert out.output.decode() == HEAD + (
        "    hipDataType t = HIP_R_16F;\n"
        "    hipblasComputeType_t ct = HIPBLAS_COMPUTE_32F;\n"
        "    hipblasGemmEx_v2(h, HIPBLAS_OP_N, HIPBLAS_OP_N, 4, 4, 4, s, a, HIP_R_16F, 4, a, t, 4, s,\n"
        "                 c, HIP_R_32F, 4, ct, HIPBLAS_GEMM_DEFAULT);\n"
        "    hipsparseCreateDnVec(v, 4, x, HIP_R_32F);\n"
        "}\n")
    assert [(f.code, f.line) for f in out.findings] == []


HEADER = 'schema = 1\nfamily = "cublas"\ntitle = "t"\nsource = "s"\nentries = [\n{}\n]\n'


@pytest.mark.parametrize("entry, message", [
    ('{ cuda = "CUDA_R_16F", hip = "HIP_R_16F", kind = "enum", status = "supported", legacy = "HIPBLAS_R_16F" }',
     "mappings/cublas.toml: entry 1 (CUDA_R_16F): legacy and legacy_until go together"),
    ('{ cuda = "CUDA_R_16F", hip = "HIP_R_16F", kind = "enum", status = "supported", legacy = "R 16", '
     'legacy_until = "6.0" }',
     "mappings/cublas.toml: entry 1 (CUDA_R_16F): legacy name 'R 16' is not an identifier"),
    ('{ cuda = "CUDA_R_16F", hip = "HIP_R_16F", kind = "enum", status = "supported", legacy = "HIPBLAS_R_16F", '
     'legacy_until = "six" }',
     "mappings/cublas.toml: entry 1 (CUDA_R_16F): field 'legacy_until': not a version: 'six' (expected X.Y or X.Y.Z)"),
])
def test_bad_legacy_fields_are_named(tmp_path: Path, entry, message):
    (tmp_path / "cublas.toml").write_text(HEADER.format(entry))
    with pytest.raises(MappingError) as info:
        load_tables(tmp_path)
    assert str(info.value) == message


def test_legacy_name_applies_strictly_before_legacy_until(tmp_path: Path):
    (tmp_path / "cublas.toml").write_text(HEADER.format(
        '{ cuda = "CUDA_R_16F", hip = "HIP_R_16F", kind = "enum", status = "supported", hip_since = "5.2", '
        'legacy = "HIPBLAS_R_16F", legacy_until = "6.0" }'))
    m = load_tables(tmp_path).names["CUDA_R_16F"]
    assert m.resolve((5, 7, 1)) == ("HIPBLAS_R_16F", "", "")
    assert m.resolve((6, 0, 0)) == ("HIP_R_16F", "", "")
    assert m.resolve((5, 7, 1), legacy=False) == ("HIP_R_16F", "", "")
