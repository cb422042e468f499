"""convert's default summary is the audit's headline at the cost of one parse per file (issue 52): the
audit's scan of a file convert converts rides on convert's own read and parse of it
(commands/convert_audit.py), the files only the audit reads (AMD-built ones) are scanned before
convert writes, and `portkit audit` reuses what convert's summary scanned."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import write_tree
from portkit.cli.app import main
from portkit.commands import audit as audit_command
from portkit.core import parse

SMID = '__device__ unsigned sm_id()\n{\n    unsigned id;\n    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));\n' \
       '    return id;\n}\n'
# x-hip's build compiles x-cuda's sources: convert leaves them (AMD-built), the audit reads them
TREE = {
    "x-cuda/k.cu": '#include <cuda_runtime.h>\n#include "shared.h"\n\n' + SMID +
                   "\n__global__ void k(unsigned *out)\n{\n    if (threadIdx.x % 32 == 0)\n"
                   "        out[blockIdx.x] = sm_id();\n}\n",
    "include/shared.h": "#pragma once\n#ifdef __CUDACC__\n#define HD __host__ __device__\n#else\n#define HD\n#endif\n",
    "x-hip/CMakeLists.txt": 'enable_language(HIP)\nfile(GLOB SRCS "../x-cuda/*.cu")\nadd_library(x-hip ${SRCS})\n',
    "tools/other.cu": "#include <cuda_runtime.h>\n\n__device__ float warp_sum(float v)\n{\n"
                      "    for (int off = 16; off > 0; off >>= 1)\n"
                      "        v += __shfl_down_sync(0xffffffffu, v, off);\n    return v;\n}\n\n" + SMID +
                      "\n__global__ void sum(const float *x, float *out)\n{\n    float v = warp_sum(x[threadIdx.x]);\n"
                      "    if ((threadIdx.x & 31) == 0)\n        atomicAdd(out, v + sm_id());\n}\n\n"
                      "void run(const float *x, float *out) { sum<<<1, 64>>>(x, out); cudaDeviceSynchronize(); }\n",
}
# the audit's findings of high severity: warp size (PK201, PK202) and PTX (PK301), in the AMD-built file too
HEADLINE = [("PK202", "tools/other.cu", 5, 20), ("PK301", "tools/other.cu", 13, 5), ("PK201", "tools/other.cu", 20, 10),
            ("PK301", "x-cuda/k.cu", 7, 5), ("PK201", "x-cuda/k.cu", 13, 9)]


def _json(capsys, argv: list[str]) -> dict:
    assert main(argv) in (0, 1)
    return json.loads(capsys.readouterr().out)


def _headline(doc: dict, key: str) -> list[tuple]:
    return [(f["code"], f["path"], f["line"], f["column"]) for f in doc[key] if f["severity"] in ("blocker", "high")]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("PORTKIT_NO_CACHE", raising=False)
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_summary_is_the_audits_headline_and_each_file_is_parsed_once(tmp_path, capsys, monkeypatch):
    tree = write_tree(tmp_path / "src", TREE)
    parsed: Counter = Counter()
    real = parse.parse

    def counting(data: bytes):
        if sys._getframe(1).f_code.co_name == "scan_source":   # a whole file's, not a macro body's
            parsed[data] += 1
        return real(data)
    monkeypatch.setattr(parse, "parse", counting)
    convert = _json(capsys, ["convert", str(tree), "-o", str(tmp_path / "out"), "--format", "json", "--no-cache", "-j", "1"])
    files = {rel: parsed[(tree / rel).read_bytes()] for rel in TREE if rel.endswith((".cu", ".h"))}
    assert files == {"x-cuda/k.cu": 1, "include/shared.h": 1, "tools/other.cu": 1}   # convert's and the audit's scans
    monkeypatch.setattr(parse, "parse", real)
    audit = _json(capsys, ["audit", str(tree), "--format", "json", "--no-cache"])
    assert _headline(convert, "needs_person") == _headline(audit, "findings") == HEADLINE
    assert convert["files"]["written"] == 4
    assert (tmp_path / "out" / "x-cuda" / "k.cu").read_bytes() == (tree / "x-cuda" / "k.cu").read_bytes()


def test_a_kept_conversion_is_audited_and_the_audit_reuses_the_summarys_scans(tmp_path, capsys, monkeypatch, cache_dir):
    """convert -q keeps its conversions but runs no audit; the next convert takes them from its cache
    and audits their bytes there, before anything is written in place; `portkit audit` then scans nothing."""
    tree = write_tree(tmp_path / "src", TREE)
    assert main(["convert", str(tree), "--in-place", "-q"]) == 0
    (tree / "tools" / "other.cu").write_text(TREE["tools/other.cu"])   # its CUDA bytes again, which the cache knows
    convert = _json(capsys, ["convert", str(tree), "--in-place", "--format", "json"])
    assert _headline(convert, "needs_person") == HEADLINE
    assert (tree / "tools" / "other.cu").read_text() != TREE["tools/other.cu"]   # converted in place

    def scanned(*args):
        raise AssertionError("the audit scanned a file convert's summary had scanned")
    (tree / "tools" / "other.cu").write_text(TREE["tools/other.cu"])
    monkeypatch.setattr(audit_command, "audit_bytes", scanned)
    audit = _json(capsys, ["audit", str(tree), "--format", "json", "-j", "1"])
    assert _headline(audit, "findings") == HEADLINE
