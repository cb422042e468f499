"""CUDA version and architecture guards: rule PK103 (portkit/engine/platform/ppguards.py) and convert
--rewrite-guards (portkit/rewrite/guards.py). The rule's fixture cases are in
fixtures/rules/PK103 (test_rules.py), the golden conversion in fixtures/convert/version_guards
(test_convert_fixtures.py, test_compile_fixtures.py); here the exact findings, edits and messages."""

from __future__ import annotations

from portkit.cli.app import main
from portkit.engine.context import Options
from portkit.core.edits import apply_edits
from portkit.core.tables.mappings import parse_version
from portkit.commands.scan.walk import scan_source
from portkit.core.source import SourceFile

ROCM = parse_version("5.2")


def audit(text: bytes) -> list[tuple[int, str, str]]:
    scan = scan_source(SourceFile.from_bytes("g.cu", text), Options(audit=True, rocm=ROCM))
    return [(f.line, f.severity, f.message) for f in scan.findings if f.code == "PK103"]


def convert(text: bytes) -> tuple[bytes, list[tuple[int, str, str]]]:
    scan = scan_source(SourceFile.from_bytes("g.cu", text), Options(rocm=ROCM, rewrite_guards=True))
    return (apply_edits(text, scan.edits),
            [(f.line, f.severity, f.message) for f in scan.findings if f.code == "PK103"])


def test_error_reached_on_amd_through_a_version_guard():
    assert audit(b'#if CUDA_VERSION < 8000\n#error "CUDA >= 8.0 is required"\n#endif\n') == [
        (2, "high", "an AMD build stops here: hip-clang never defines `CUDA_VERSION` (0 in #if), so "
                    "`#if CUDA_VERSION < 8000` (line 1) holds")]


def test_nvidia_only_paths_name_the_macro_and_what_amd_does():
    src = (b"#ifdef __CUDA_ARCH__\nint a;\n#else\nint b;\n#endif\n"
           b"#if CUDA_VERSION >= 11000\nint c;\n#endif\n"
           b"#ifndef __CUDA_ARCH__\nint d;\n#endif\n")
    assert audit(src) == [
        (1, "medium", "`#ifdef __CUDA_ARCH__`: hip-clang never defines `__CUDA_ARCH__`, so an AMD build takes "
                      "the `#else` branch (line 3) instead"),
        (6, "medium", "`#if CUDA_VERSION >= 11000`: hip-clang never defines `CUDA_VERSION`, so an AMD build "
                      "leaves this branch out"),
        (9, "medium", "`#ifndef __CUDA_ARCH__`: hip-clang never defines `__CUDA_ARCH__`, so an AMD build "
                      "compiles this branch, which a current nvcc build skips"),
    ]


def test_the_fix_names_the_hip_spelling():
    scan = scan_source(SourceFile.from_bytes("g.cu", b"#if CUDART_VERSION >= 12000\nint c;\n#endif\n"),
                       Options(audit=True))
    assert [f.fix for f in scan.findings] == [
        "`CUDART_VERSION >= X || defined(__HIP_PLATFORM_AMD__)` when HIP has the API at your ROCm release "
        "(convert --rewrite-guards), or test `HIP_VERSION` for the AMD build"]


def test_guards_that_already_chose_the_amd_path_are_not_reported():
    src = (b"#if defined(__HIP_PLATFORM_AMD__) || CUDA_VERSION >= 11000\nint a;\n#endif\n"   # names AMD
           b"#ifdef USE_ROCM\nint b;\n#elif CUDA_VERSION >= 11000\nint c;\n#endif\n"         # ported
           b"#ifdef USE_ROCM\n#if CUDA_VERSION >= 11000\nint d;\n#endif\n#endif\n"           # AMD-only
           b"#if CUDA_VERSION >= 12000 && CUDA_VERSION < 12030\nint e;\n#endif\n"           # one release
           b"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600\nint f;\n#endif\n"           # old GPUs
           b"#ifdef __CUDACC__\n#define HD __host__ __device__\n#endif\n"                   # convert maps it
           b"#ifdef __CUDA_ARCH__\n#if __CUDA_ARCH__ >= 800\nint g;\n#endif\n#endif\n")     # inside the outer
    assert audit(src) == [
        (23, "medium", "`#ifdef __CUDA_ARCH__`: hip-clang never defines `__CUDA_ARCH__`, so an AMD build "
                       "leaves this branch out")]


def test_rewrite_guards_gives_each_condition_the_amd_selector():
    src = (b"#include <cuda_runtime.h>\n"
           b"#if CUDA_VERSION >= 10000  // capture\nbool f(cudaStream_t s) { cudaStreamCaptureStatus c;"
           b" return cudaStreamIsCapturing(s, &c) == cudaSuccess; }\n#else\nbool f(cudaStream_t) { return false; }\n#endif\n"
           b"#ifdef __CUDA_ARCH__\n#define LDG(p) __ldg(p)\n#endif\n"
           b"#if CUDART_VERSION < 9000 || CUDART_VERSION == 9010\n#error old\n#endif\n")
    out, found = convert(src)
    assert out == (b"#include <hip/hip_runtime.h>\n"
                   b"#if CUDA_VERSION >= 10000 || defined(__HIP_PLATFORM_AMD__)  // capture\n"
                   b"bool f(hipStream_t s) { hipStreamCaptureStatus c; return hipStreamIsCapturing(s, &c) == hipSuccess; }\n"
                   b"#else\nbool f(hipStream_t) { return false; }\n#endif\n"
                   b"#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)\n#define LDG(p) __ldg(p)\n#endif\n"
                   b"#if (CUDART_VERSION < 9000 || CUDART_VERSION == 9010) && !defined(__HIP_PLATFORM_AMD__)\n"
                   b"#error old\n#endif\n")
    assert [line for line, _, _ in found] == [2, 7, 10]
    assert found[0] == (2, "info", "rewritten for AMD: `#if CUDA_VERSION >= 10000` -> `#if CUDA_VERSION >= 10000 "
                                   "|| defined(__HIP_PLATFORM_AMD__)`: the AMD build now takes the branch a current "
                                   "nvcc build takes")
    assert convert(out) == (out, [])   # idempotent: the rewritten guards name the AMD build


def test_rewrite_guards_leaves_what_would_not_convert_and_says_why():
    src = (b"#if CUDART_VERSION >= 11040\nvoid t() { cudaDeviceGraphMemTrim(0); }\n#endif\n"   # HIP: ROCm 5.3
           b"#if __CUDA_ARCH__ >= 800\nint a;\n#endif\n"
           b"#if CUDA_VERSION >= 11000 && USE_FAST\nint b;\n#endif\n"
           b"#if defined(__CUDA_ARCH__)\n__device__ void p() { asm volatile(\"exit;\"); }\n#endif\n")
    out, found = convert(src)
    assert b"__HIP" not in out
    assert found == [
        (1, "medium", "left as it is (cudaDeviceGraphMemTrim in the branch does not convert at the target ROCm): "
                      "an AMD build takes another branch than a current nvcc build"),
        (4, "medium", "left as it is (not a CUDA_VERSION/CUDART_VERSION test nor a defined(__CUDA_ARCH__) test): "
                      "an AMD build takes another branch than a current nvcc build"),
        (7, "medium", "left as it is (not a CUDA_VERSION/CUDART_VERSION test nor a defined(__CUDA_ARCH__) test): "
                      "an AMD build takes another branch than a current nvcc build"),
        (10, "medium", "left as it is (the branch holds inline assembly): an AMD build takes another branch than "
                       "a current nvcc build"),
    ]


def test_guards_are_kept_without_the_option(tmp_path, capsys):
    path = tmp_path / "g.cu"
    path.write_bytes(b"#if CUDA_VERSION >= 10000\nint x;\n#endif\n")
    assert main(["convert", str(path), "--check", "-q"]) == 0
    assert main(["convert", str(path), "--diff", "--rewrite-guards", "-q"]) == 0
    assert "+#if CUDA_VERSION >= 10000 || defined(__HIP_PLATFORM_AMD__)\n" in capsys.readouterr().out


def test_rewrite_guards_leaves_every_copy_of_a_guard_it_leaves_once():
    src = (b"#if CUDART_VERSION >= 12080\n__device__ float h(__nv_fp4_e2m1 v) { return float(v); }\n#endif\n"
           b"__device__ float g() {\n#if CUDART_VERSION >= 12080\n  return h({});\n#else\n  return 0.f;\n#endif\n}\n")
    out, found = convert(src)
    assert out == b"\n#include <hip/hip_runtime.h>\n" + src
    assert found == [
        (1, "medium", "left as it is (__nv_fp4_e2m1 in the branch is not in portkit's tables): an AMD build takes "
                      "another branch than a current nvcc build"),
        (5, "medium", "left as it is (the same guard is left at line 1): an AMD build takes another branch than a "
                      "current nvcc build"),
    ]
