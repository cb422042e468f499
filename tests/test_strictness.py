"""C++ nvcc accepts and hip-clang rejects (portkit/rewrite/strictness.py): PK011 `register`,
PK012 a __device__ function HIP's headers define, PK013 narrowing in brace initialisers.

The golden case fixtures/convert/strict_cxx is compiled by tests/test_compile_fixtures.py with
-std=c++17 (input: nvcc, output: hipcc); here, the exact findings and the cases left alone.
"""

from __future__ import annotations

from conftest import REPO
from portkit.api import convert_text
from portkit.rewrite import signatures

CASE = REPO / "fixtures" / "convert" / "strict_cxx"
HIP_SAYS = "HIP's headers define atomicMax(double*, double) (ROCm 5.2): hip-clang would report a " \
           "redefinition; this one is now compiled by nvcc only (`#if !defined(__HIP_PLATFORM_AMD__)`)"
REGISTER = "`register` dropped: ISO C++17 does not allow the storage class, and hip-clang compiles " \
           "C++17 by default from ROCm 6 (nvcc accepts it)"


RUNTIME = b"\n#include <hip/hip_runtime.h>\n"   # inserted as hipify-clang does


def found(result, *codes):
    return [(f.code, f.line, f.column, f.severity, f.message) for f in result.findings if f.code in codes]


def narrowing(text, source, target, cast):
    return f"`{text}` narrows from {source} to {target} in a brace initialiser: hip-clang rejects it " \
           f"(nvcc warns); written as static_cast<{cast}>({text})"


def test_golden_case_findings_are_exact():
    result = convert_text(CASE.joinpath("input.cu").read_bytes(), rocm="5.2")
    assert result.output == CASE.joinpath("expected.hip").read_bytes()
    assert found(result, "PK011", "PK012", "PK013") == [
        ("PK012", 6, 19, "info", HIP_SAYS),
        ("PK011", 21, 5, "info", REGISTER),
        ("PK011", 22, 5, "info", REGISTER),
        ("PK013", 29, 20, "info", narrowing("host.size()", "size_t", "int", "int")),
        ("PK013", 32, 15, "info", narrowing("(n + threads - 1) / threads", "int", "unsigned int", "unsigned int")),
        ("PK013", 33, 16, "info", narrowing("n", "int", "unsigned int", "unsigned int")),
        ("PK013", 34, 18, "info", narrowing("scale", "double", "float", "float")),
    ]


def test_register_keyword_and_its_whitespace_are_dropped_only():
    out = convert_text(b"__device__ int f(int a) {\n    register  unsigned r = a;\n    return r;\n}\n", rocm="5.2")
    assert out.output == RUNTIME + b"__device__ int f(int a) {\n    unsigned r = a;\n    return r;\n}\n"


def test_register_left_in_c_files_and_explicit_register_variables():
    asm = b'void f(void) { register int x asm("r0") = 0; (void)x; }\n'
    assert convert_text(asm, rocm="5.2").output == asm
    plain = b"int f(void) { register int x = 0; return x; }\n"
    result = convert_text(plain, filename="lib.c", rocm="5.2")
    assert result.output == plain and found(result, "PK011") == []


def test_redefinition_needs_the_same_parameter_types_and_file_level():
    text = (b"__device__ float atomicMax(float* a, int v);\n"                       # HIP has (float*, float)
            b"namespace mine { __device__ double atomicAdd(double* a, double v); }\n"  # not HIP's function
            b"template <class T> struct S { __device__ int __ffs(unsigned int x); };\n")
    result = convert_text(text, rocm="6.2")
    assert result.output == RUNTIME + text and found(result, "PK012") == []


def test_redefinition_by_release_and_a_line_shared_with_other_code():
    text = b"__device__ long long atomicMax(long long* a, long long v) { return *a; } int x;\n"
    assert found(convert_text(text, rocm="5.2"), "PK012") == []   # HIP defines it from ROCm 5.7
    result = convert_text(text, rocm="6.0")
    assert result.output == RUNTIME + text   # shares its line with `int x;`: reported, not guarded
    assert found(result, "PK012") == [
        ("PK012", 1, 22, "high", "HIP's headers define atomicMax(long long*, long long) (ROCm 6.0): "
                                 "hip-clang reports a redefinition; put this one under "
                                 "`#if !defined(__HIP_PLATFORM_AMD__)`")]


def test_guard_at_end_of_file_without_newline_and_in_extern_c():
    text = b'extern "C" {\n__device__ unsigned int __ffs(unsigned int x) { return x; }\n}\n' \
           b"__device__ int __popc(unsigned v) { return 0; }"
    assert convert_text(text, rocm="5.2").output == RUNTIME + (
        b'extern "C" {\n#if !defined(__HIP_PLATFORM_AMD__)\n__device__ unsigned int __ffs(unsigned int x) '
        b"{ return x; }\n#endif\n}\n#if !defined(__HIP_PLATFORM_AMD__)\n"
        b"__device__ int __popc(unsigned v) { return 0; }\n#endif\n")


def test_narrowing_left_where_a_type_is_unknown_or_constant():
    text = (b"void f(int n, float *p, T t, unsigned u) {\n"
            b"    const int k = 4;\n"
            b"    dim3 a{k};\n"               # a constant that fits
            b"    dim3 b{t};\n"               # type unknown
            b"    dim3 c{u, 2u};\n"           # unsigned into unsigned
            b"    double d{n};\n"             # int into double: not in the list? (it is: int -> floating)
            b"    long e{n};\n"               # widening
            b"    auto g{n};\n"
            b"    int h[] = {sizeof(float)};\n"
            b"    (void)p;\n}\n")
    result = convert_text(text, rocm="5.2")
    assert found(result, "PK013") == [("PK013", 6, 14, "info", narrowing("n", "int", "double", "double"))]
    assert result.output == text.replace(b"double d{n}", b"double d{static_cast<double>(n)}")


def test_signature_spelling_is_canonical():
    assert signatures.canonical("const unsigned long long int * __restrict__ ") == "const unsigned long long*"
    assert signatures.canonical("unsigned") == "unsigned int"
    assert signatures.canonical("long int") == "long"
    assert signatures.canonical("float (&)[4]") == "float(&)[4]"
