"""__ffs/__ffsll arguments hip-clang finds ambiguous (rewrite/ffs.py): the cast where the type is
declared, PK004 for __ffsll of an unknown type, nothing where HIP has the exact overload."""

from __future__ import annotations

import portkit

RUNTIME = "#include <hip/hip_runtime.h>\n"
WHY = ("__ffsll: HIP declares __ffsll(long long) and __ffsll(unsigned long long), so hip-clang rejects an "
       "argument of another type (uint64_t, size_t, long, int) as ambiguous; where it is not a long long, "
       "cast it: __ffsll((unsigned long long)(x))")


def _body(out) -> str:
    """The output after the runtime header the converter adds (where it goes is not tested here)."""
    head, sep, body = out.output.decode().partition(RUNTIME)
    assert sep and not head.strip()
    return body


def _findings(out) -> list[tuple[str, int, int, str]]:
    return [(f.code, f.line, f.column, f.message) for f in out.findings]


def test_declared_types_are_cast_and_exact_ones_are_left():
    src = ("__device__ int f(unsigned long x, long long y, short s, unsigned u) {\n"
           "    return __ffsll(x) + __ffsll(y) + __ffs(x) + __ffs(s) + __ffs(u) + __ffsll(1ul) + __ffsll(2ull);\n"
           "}\n")
    out = portkit.convert_text(src, rocm="5.2")
    assert _body(out) == (
        "__device__ int f(unsigned long x, long long y, short s, unsigned u) {\n"
        "    return __ffsll((unsigned long long)(x)) + __ffsll(y) + __ffs((unsigned int)(x)) + __ffs(s) + __ffs(u)"
        " + __ffsll((unsigned long long)(1ul)) + __ffsll(2ull);\n"
        "}\n")
    assert _findings(out) == []
    again = portkit.convert_text(out.output, rocm="5.2")   # the cast it wrote is an exact overload
    assert again.output == out.output and _findings(again) == []


def test_unknown_type_is_reported_for_ffsll_only():
    src = ("struct S { unsigned long long bits; };\n"
           "__device__ int f(S s, const unsigned *w) { return __ffsll(s.bits) + __ffs(w[0]); }\n")
    out = portkit.convert_text(src, rocm="5.2")
    assert _body(out) == src
    assert _findings(out) == [("PK004", 2, 51, WHY)]
