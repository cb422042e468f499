"""The SIMD video polyfills compute what CUDA documents, checked on the host.

No GPU is needed: each body in mappings/polyfills.toml is plain integer C++, so it is compiled
with the host compiler (`__device__` defined away) and run on byte patterns that cover every
edge a per-byte operation has (0, 1, 0x7f, 0x80, 0xff in each lane, plus pseudo-random words).
The reference below is written from the CUDA Math API's descriptions (crt/device_functions.h:
"per-byte subtraction", "with signed saturation", "absolute difference of signed integer"),
not from the polyfills, so a body that saturates where CUDA wraps (ggml's hip.h maps __vsub4
to __vsubss4) fails here.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from conftest import REPO, require_tool

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

EDGES = (0x00, 0x01, 0x7F, 0x80, 0x81, 0xFE, 0xFF, 0x40)


def _bytes(word: int) -> list[int]:
    return [(word >> s) & 0xFF for s in (0, 8, 16, 24)]


def _word(parts: list[int]) -> int:
    return sum((p & 0xFF) << s for p, s in zip(parts, (0, 8, 16, 24)))


def _signed(b: int) -> int:
    return b - 256 if b > 127 else b


def _sat(v: int) -> int:
    return max(-128, min(127, v))


REFERENCE = {
    "__vadd4": lambda x, y: x + y,
    "__vsub4": lambda x, y: x - y,
    "__vaddss4": lambda x, y: _sat(_signed(x) + _signed(y)),
    "__vsubss4": lambda x, y: _sat(_signed(x) - _signed(y)),
    "__vcmpeq4": lambda x, y: 0xFF if x == y else 0,
    "__vcmpne4": lambda x, y: 0xFF if x != y else 0,
    "__vabsdiffu4": lambda x, y: abs(x - y),
    "__vabsdiffs4": lambda x, y: abs(_signed(x) - _signed(y)),
}


def _expected(name: str, a: int, b: int) -> int:
    return _word([REFERENCE[name](x, y) for x, y in zip(_bytes(a), _bytes(b))])


def _inputs() -> list[tuple[int, int]]:
    pairs = [(_word([x, y, y, x]), _word([y, x, x, y])) for x in EDGES for y in EDGES]
    rng = random.Random(20261124)
    pairs += [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(500)]
    return pairs


def test_every_simd_polyfill_has_a_reference():
    table = tomllib.loads((REPO / "mappings" / "polyfills.toml").read_text(encoding="utf-8"))
    simd = sorted(p["name"] for p in table["polyfill"] if p["name"].startswith("__v"))
    assert simd == sorted(REFERENCE)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_simd_polyfill_matches_cuda_semantics(tmp_path, name):
    cxx = require_tool("g++", "g++")
    table = tomllib.loads((REPO / "mappings" / "polyfills.toml").read_text(encoding="utf-8"))
    body = next(p["body"] for p in table["polyfill"] if p["name"] == name)
    pairs = _inputs()
    source = tmp_path / "check.cpp"
    source.write_text("#include <cstdio>\n#define __device__\n" + body +
                      "int main() {\n  unsigned a, b;\n"
                      f"  while (std::scanf(\"%u %u\", &a, &b) == 2) std::printf(\"%u\\n\", {name}(a, b));\n"
                      "}\n", encoding="utf-8")
    binary = tmp_path / "check"
    subprocess.run([cxx, "-std=c++17", "-O1", "-o", str(binary), str(source)], check=True)
    run = subprocess.run([str(binary)], input="".join(f"{a} {b}\n" for a, b in pairs),
                         capture_output=True, text=True, check=True)
    got = [int(line) for line in run.stdout.split()]
    wrong = [(hex(a), hex(b), hex(g), hex(_expected(name, a, b)))
             for (a, b), g in zip(pairs, got) if g != _expected(name, a, b)]
    assert len(got) == len(pairs)
    assert wrong == []


# CUDA's typed integer min/max (CUDA Math API, integer intrinsics): the comparison is in the named
# type, so a body that compared as int would get umin(0xffffffff, 1) and ullmax wrong.
TYPED = {   # name: (C type, scanf/printf format, edge values)
    "umin": ("unsigned int", "%u", [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]),
    "umax": ("unsigned int", "%u", [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]),
    "llmin": ("long long int", "%lld", [-(1 << 63), -1, 0, 1, (1 << 63) - 1, 1 << 40]),
    "llmax": ("long long int", "%lld", [-(1 << 63), -1, 0, 1, (1 << 63) - 1, 1 << 40]),
    "ullmin": ("unsigned long long int", "%llu", [0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1]),
    "ullmax": ("unsigned long long int", "%llu", [0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1]),
}


@pytest.mark.parametrize("name", sorted(TYPED))
def test_typed_min_max_polyfill_compares_in_its_type(tmp_path, name):
    cxx = require_tool("g++", "g++")
    table = tomllib.loads((REPO / "mappings" / "polyfills.toml").read_text(encoding="utf-8"))
    record = next(p for p in table["polyfill"] if p.get("serves") == [name])
    ctype, fmt, edges = TYPED[name]
    source = tmp_path / "check.cpp"
    source.write_text("#include <cstdio>\n#define __device__\n#define __host__\n" + record["body"] +
                      f"int main() {{\n  {ctype} a, b;\n"
                      f"  while (std::scanf(\"{fmt} {fmt}\", &a, &b) == 2) std::printf(\"{fmt}\\n\", "
                      f"{record['name']}(a, b));\n}}\n", encoding="utf-8")
    binary = tmp_path / "check"
    subprocess.run([cxx, "-std=c++17", "-O1", "-o", str(binary), str(source)], check=True)
    pairs = [(a, b) for a in edges for b in edges]
    run = subprocess.run([str(binary)], input="".join(f"{a} {b}\n" for a, b in pairs),
                         capture_output=True, text=True, check=True)
    pick = min if name.endswith("min") else max
    assert [int(v) for v in run.stdout.split()] == [pick(a, b) for a, b in pairs]
