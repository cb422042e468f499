"""The conversion polyfills round as CUDA does: portkit_double2half (__double2half) and the integer-to-
bfloat16 family (__int2bfloat16_rn and its 23 siblings), names ROCm 6.2 lacks (nccl-tests calls two).

No GPU is needed: the bodies in mappings/polyfills.toml round with integer arithmetic on the value's
own bits, so the same source is compiled as host code (`__host__`/`__device__` defined away, the
HIP types stood in for by a struct of the bits) and run on the values where rounding goes wrong:
ties at every binade, a hair either side of them, subnormals, the overflow edge, NaN, the largest
integers. The reference is exact rational arithmetic in Python, written from the CUDA Math API's
words ("round-to-nearest-even", "round-towards-zero", ...), not from the bodies; where nvcc is
present the same values go through CUDA's own host functions too, so reference and CUDA agree.
A cast through float, which rounds twice, fails here (test_a_cast_through_float_would_fail).
"""

from __future__ import annotations

import math
import os
import random
import shutil
import struct
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from conftest import NVCC, REPO, clang19, require_tool
from portkit.cli.app import main
from portkit.rewrite import polyfills

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MODES = ("rn", "rz", "rd", "ru")
TYPES = {"int": (32, True), "uint": (32, False), "short": (16, True), "ushort": (16, False),
         "ll": (64, True), "ull": (64, False)}
CTYPES = {"int": "int", "uint": "unsigned int", "short": "short", "ushort": "unsigned short",
          "ll": "long long", "ull": "unsigned long long"}
CASES = {"double2half": REPO / "fixtures" / "polyfills" / "double2half",
         "int2bfloat16": REPO / "fixtures" / "polyfills_bf16" / "int2bfloat16"}


# -- the reference: the float nearest (or next, by the mode) to an exact value ---------------------

def _round(value: Fraction, mode: str, mantissa: int, emin: int, emax: int, bias: int) -> int:
    """The bits of `value` rounded to a binary format with `mantissa` fraction bits, normal
    exponents emin..emax, under CUDA's mode; overflow to infinity (rn/away from zero) as IEEE does."""
    sign = 0x8000 if value < 0 or (value == 0 and math.copysign(1, float(value)) < 0) else 0
    a = abs(value)
    if a == 0:
        return sign
    e = max(math.floor(math.log2(a)), emin)
    while Fraction(2) ** e > a and e > emin:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, emin)
    ulp = Fraction(2) ** (e - mantissa)
    q, rest = divmod(a, ulp)
    q, rest = int(q), Fraction(rest)
    negative = sign != 0
    if mode == "rn":
        up = rest > ulp / 2 or (rest == ulp / 2 and q % 2 == 1)
    elif mode == "rz":
        up = False
    else:
        up = rest != 0 and (negative if mode == "rd" else not negative)
    q += up
    exponent_field = 0 if q < 2 ** mantissa else e + bias   # subnormal: no implicit bit
    if q == 2 ** (mantissa + 1):   # the carry: the next binade
        q, e = q // 2, e + 1
        exponent_field = e + bias
    if e > emax:
        return sign | (((2 ** (15 - mantissa)) - 1) << mantissa)   # infinity
    return sign | (exponent_field << mantissa) | (q - (2 ** mantissa if exponent_field else 0))


def half_of(x: float) -> int:
    """CUDA's __double2half(x): round to nearest, ties to even; NaN is 0x7fff."""
    if math.isnan(x):
        return 0x7FFF
    if math.isinf(x):
        return 0xFC00 if x < 0 else 0x7C00
    if x == 0:
        return 0x8000 if math.copysign(1, x) < 0 else 0
    bits = _round(Fraction(x), "rn", 10, -14, 15, 15)
    return bits | (0x8000 if x < 0 else 0)


def bfloat16_of(i: int, mode: str) -> int:
    """CUDA's __<type>2bfloat16_<mode>(i)."""
    return 0 if i == 0 else _round(Fraction(i), mode, 7, -126, 127, 127)


def _double(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _doubles() -> list[float]:
    """Ties and a last place either side of them in every half binade, subnormals, the overflow edge,
    specials, and seeded random values across the half range."""
    values = [0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 65504.0, 65519.999999, 65520.0,
              -65520.0, 1e300, -1e300, 5e-324, -5e-324, 2.0 ** -1022, 2.0 ** -24, 2.0 ** -25, -(2.0 ** -25),
              3 * 2.0 ** -25, 2.0 ** -14, 2.0 ** -14 - 2.0 ** -25, 2.0 ** -26, 1 + 2.0 ** -11 + 2.0 ** -40]
    for e in range(-24, 16):
        for k in (1, 2, 3, 1023, 1024, 2047):
            tie = (2 * k + 1) * 2.0 ** (e - 11) if e >= -14 else (2 * k + 1) * 2.0 ** -25
            for v in (tie, math.nextafter(tie, 0), math.nextafter(tie, math.inf)):
                values += [v, -v]
    rng = random.Random(48)
    values += [rng.uniform(-70000.0, 70000.0) for _ in range(300)]
    values += [math.ldexp(rng.random(), rng.randint(-30, 17)) for _ in range(300)]
    return values


def _integers(kind: str) -> list[int]:
    width, signed = TYPES[kind]
    lo, hi = (-(2 ** (width - 1)), 2 ** (width - 1) - 1) if signed else (0, 2 ** width - 1)
    values = {lo, hi, lo + 1, hi - 1, 0, 1, 255, 256, 257, 258, 259, 384, 385, 2 ** 24 + 2 ** 16 + 1}
    for top in range(8, width):   # ties and their neighbours at each width
        for low in (2 ** (top - 8), 3 * 2 ** (top - 8)):
            values.update({2 ** top + low - 1, 2 ** top + low, 2 ** top + low + 1})
    rng = random.Random(width)
    values.update(rng.randint(lo, hi) for _ in range(200))
    if signed:
        values.update(-v for v in list(values) if -v >= lo)
    return sorted(v for v in values if lo <= v <= hi)


# -- the bodies, compiled as host code -------------------------------------------------------------

STANDINS = """
#include <cstdio>
#include <cstdint>
#include <cstring>
#define __host__
#define __device__
struct __half_raw { unsigned short x; };
struct __half { unsigned short x; __half(__half_raw r) : x(r.x) {} };
struct __hip_bfloat16 { unsigned short x; };
"""


def _bodies(names: list[str]) -> str:
    records = {r["name"]: r for r in tomllib.loads((REPO / "mappings" / "polyfills.toml").read_text())["polyfill"]}
    return "\n".join(records[n]["body"] for n in names)


def _program(call_half: str, call_bf16: str, modes: tuple[str, ...] = MODES, device: bool = False) -> str:
    """main() prints one hex line per value: the doubles' halves, then each integer function's results,
    computed on the host, or (`device`) by a kernel per function over its values."""
    doubles = ",".join(f"0x{struct.unpack('<Q', struct.pack('<d', v))[0]:x}ull" for v in _doubles())
    lines = ["#define RUN(T, CALL, V) { const int n = sizeof(V) / sizeof(V[0]); unsigned short r[n]; " +
             ("T* dv; unsigned short* dr; cudaMalloc(&dv, sizeof(V)); cudaMalloc(&dr, sizeof(r)); "
              "cudaMemcpy(dv, V, sizeof(V), cudaMemcpyHostToDevice); "
              "auto body = [] __device__ (T v) { auto h = CALL(v); unsigned short b; memcpy(&b, &h, 2); return b; }; "
              "each<<<(n + 255) / 256, 256>>>(dv, dr, n, body); "
              "cudaMemcpy(r, dr, sizeof(r), cudaMemcpyDeviceToHost); " if device else
              "for (int k = 0; k < n; ++k) { auto h = CALL(V[k]); memcpy(&r[k], &h, 2); } ") +
             "for (int k = 0; k < n; ++k) printf(\"%04x\\n\", r[k]); }"]
    if device:
        lines.append("template <class T, class F> __global__ void each(const T* v, unsigned short* r, int n, F f) "
                     "{ int k = blockIdx.x * blockDim.x + threadIdx.x; if (k < n) r[k] = f(v[k]); }")
    lines += [f"static const uint64_t D[] = {{{doubles}}};", "int main() {",
              "  { static double X[sizeof(D) / 8]; memcpy(X, D, sizeof(D)); RUN(double, " + call_half + ", X) }"]
    for kind in TYPES:
        values = ",".join(f"{v}ll" if v >= -(2 ** 63) + 1 else "(-9223372036854775807ll-1)" for v in _integers(kind))
        if kind == "ull":
            values = ",".join(f"{v}ull" for v in _integers(kind))
        for mode in modes:
            lines.append(f"  {{ static const {CTYPES[kind]} V[] = {{{values}}}; "
                         f"RUN({CTYPES[kind]}, {call_bf16.format(kind=kind, mode=mode)}, V) }}")
    return "\n".join(lines + ["}"])


def _expected(modes: tuple[str, ...] = MODES) -> list[str]:
    out = [f"{half_of(v):04x}" for v in _doubles()]
    for kind in TYPES:
        for mode in modes:
            out += [f"{bfloat16_of(v, mode):04x}" for v in _integers(kind)]
    return out


def _run(compiler: list[str], source: str, tmp_path: Path) -> list[str]:
    (tmp_path / "t.cpp").write_text(source)
    build = subprocess.run([*compiler, str(tmp_path / "t.cpp"), "-o", str(tmp_path / "t")], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-4000:]
    return subprocess.run([str(tmp_path / "t")], capture_output=True, text=True, check=True).stdout.split()


def _polyfill_program() -> str:
    names = ["portkit_double2half", "portkit_int_to_bfloat16"] + \
        [f"portkit_{k}2bfloat16_{m}" for k in TYPES for m in MODES]
    return STANDINS + _bodies(names) + _program("portkit_double2half", "portkit_{kind}2bfloat16_{mode}")


def test_the_polyfills_round_as_the_reference(tmp_path):
    got = _run([require_tool("g++", "g++"), "-std=c++17", "-O1", "-x", "c++"], _polyfill_program(), tmp_path)
    want = _expected()
    assert len(got) == len(want)
    wrong = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not wrong, wrong[:10]


def _cuda_program(modes: tuple[str, ...], device: bool) -> str:
    """The values through CUDA's own functions: on the host (__double2half and the _rn forms are
    __host__ __device__ there) or, for all of them, in a kernel (the directed forms are device-only)."""
    head = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cstdio>\n#include <cstring>\n#include <cstdint>\n"
    return head + _program("__double2half", "__{kind}2bfloat16_{mode}", modes, device)


def _compare_with_cuda(tmp_path: Path, modes: tuple[str, ...], device: bool) -> None:
    nvcc = require_tool(NVCC, "nvcc")
    (tmp_path / "t.cu").write_text(_cuda_program(modes, device))
    arch = ["-arch=native", "--extended-lambda"] if device else []
    build = subprocess.run([nvcc, *arch, "-x", "cu", str(tmp_path / "t.cu"), "-o", str(tmp_path / "t")],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-4000:]
    got = subprocess.run([str(tmp_path / "t")], capture_output=True, text=True, check=True).stdout.split()
    want = _expected(modes)
    wrong = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert len(got) == len(want) and not wrong, wrong[:10]


@pytest.mark.compile
def test_the_reference_is_cudas_own_on_the_host(tmp_path):
    """CUDA's host __double2half and __<type>2bfloat16_rn on the same values give the reference."""
    _compare_with_cuda(tmp_path, ("rn",), device=False)


@pytest.mark.compile
def test_the_reference_is_cudas_own_on_an_nvidia_gpu(tmp_path):
    """Every mode, through CUDA's device functions (cvt.rn.f16.f64 and the bf16 conversions); needs a GPU."""
    if shutil.which("nvidia-smi") is None or subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode != 0:
        pytest.skip("no NVIDIA GPU here: the directed modes are device-only in CUDA")
    _compare_with_cuda(tmp_path, MODES, device=True)


def test_a_cast_through_float_would_fail():
    """The values include ones where float in between rounds twice: the test can tell."""
    x = 1 + 2.0 ** -11 + 2.0 ** -40     # above the tie between 1 and 1 + 2^-10; float makes it the tie
    assert half_of(x) == 0x3C01 and half_of(struct.unpack("<f", struct.pack("<f", x))[0]) == 0x3C00
    i = 2 ** 24 + 2 ** 16 + 1           # above bfloat16's tie; float (24 bits) makes it the tie, then even
    assert bfloat16_of(i, "rn") == 0x4B81 and bfloat16_of(int(struct.unpack("<f", struct.pack("<f", i))[0]), "rn") == 0x4B80
    assert x in _doubles() and i in _integers("int")


@pytest.mark.parametrize("value, bits", [(65504.0, 0x7BFF), (65519.99, 0x7BFF), (65520.0, 0x7C00), (-1e300, 0xFC00),
                                         (2.0 ** -24, 0x0001), (2.0 ** -25, 0x0000), (3 * 2.0 ** -25, 0x0002),
                                         (-0.0, 0x8000), (math.nan, 0x7FFF), (2.0 ** -14 - 2.0 ** -25, 0x0400)])
def test_reference_edges(value, bits):
    """The reference itself at the edges CUDA's documentation names (overflow, subnormals, +-0, NaN)."""
    assert half_of(value) == bits


def test_every_integer_function_is_served_from_5_7_and_double2half_from_5_2():
    table = polyfills.table()
    assert table["__double2half"].name == "portkit_double2half" and tuple(table["__double2half"].since) == (5, 2, 0)
    for kind in TYPES:
        for mode in MODES:
            record = table[f"__{kind}2bfloat16_{mode}"]
            assert record.name == f"portkit_{kind}2bfloat16_{mode}" and record.needs == ("portkit_int_to_bfloat16",)
            assert tuple(record.since) == (5, 7, 0) and record.until is None


# -- the conversions: golden bytes, idempotence, compiles ------------------------------------------

def _convert(tmp_path: Path, case: str, *extra: str) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(CASES[case] / "input.cu", src / "input.cu")
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--rocm", "6.2", *extra]) == 0
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_rocm_62_output_and_header_are_exact(tmp_path, case):
    out = _convert(tmp_path, case)
    assert (out / "input.cu").read_bytes() == (CASES[case] / "expected.hip").read_bytes()
    assert (out / "portkit_polyfills.h").read_bytes() == (CASES[case] / "expected_polyfills.h").read_bytes()
    again = tmp_path / "again"
    assert main(["convert", str(out), "-o", str(again), "-q", "--rocm", "6.2"]) == 0
    assert (again / "input.cu").read_bytes() == (out / "input.cu").read_bytes()
    assert (again / "portkit_polyfills.h").read_bytes() == (out / "portkit_polyfills.h").read_bytes()


def test_no_polyfills_leaves_the_names_reported(tmp_path, capsys):
    out = _convert(tmp_path, "double2half", "--no-polyfills")
    assert b"__double2half(x)" in (out / "input.cu").read_bytes() and not (out / "portkit_polyfills.h").exists()


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.compile
def test_inputs_compile_with_nvcc(tmp_path, case):
    nvcc = require_tool(NVCC, "nvcc")
    run = subprocess.run([nvcc, "-c", str(CASES[case] / "input.cu"), "-o", str(tmp_path / "o.o")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.compile
def test_double2half_output_compiles_with_hipcc_52(tmp_path):
    require_tool("hipcc", "hipcc")
    shutil.copy(CASES["double2half"] / "expected.hip", tmp_path / "input.hip")
    shutil.copy(CASES["double2half"] / "expected_polyfills.h", tmp_path / "portkit_polyfills.h")
    run = subprocess.run(["hipcc", "-x", "hip", "--offload-arch=gfx90a", "-c", str(tmp_path / "input.hip"), "-o",
                          str(tmp_path / "o.o")], capture_output=True, text=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    assert run.returncode == 0, run.stderr


@pytest.mark.compile
def test_every_body_compiles_against_the_62_pack(pack62, tmp_path):
    """hip_bf16.h is ROCm 5.7's (Debian's hipcc 5.2 has none): the bfloat16 output and all 26 bodies,
    host and device side, compile with clang against the pinned 6.2 headers."""
    from portkit.rewrite.polyfill_header import header_text
    names = ["portkit_double2half"] + [f"portkit_{k}2bfloat16_{m}" for k in TYPES for m in MODES]
    (tmp_path / "portkit_polyfills.h").write_bytes(header_text(names, "6.2", "portkit convert --rocm 6.2"))
    shutil.copy(CASES["int2bfloat16"] / "expected.hip", tmp_path / "input.hip")
    (tmp_path / "all.hip").write_text('#include "portkit_polyfills.h"\n__global__ void k(__hip_bfloat16* o, __half* h, '
                                      'long long i, double d) { o[0] = portkit_ll2bfloat16_rd(i); h[0] = portkit_double2half(d); }\n')
    base = [clang19(), "-x", "hip", "--offload-arch=gfx90a", "-nogpulib", f"--rocm-path={pack62}", "-isystem",
            str(pack62 / "include"), "-std=c++17", "-fsyntax-only"]
    for unit in ("input.hip", "all.hip"):
        run = subprocess.run([*base, str(tmp_path / unit)], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-4000:]
