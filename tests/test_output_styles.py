"""Output styles (issue 11): legacy HIP built-ins, renamed files, the single-source compatibility header.

The golden conversions live in fixtures/convert (legacy_builtins, classic_hipify_style) and are
checked byte for byte, and compiled with hipcc, by the corpus tests; here: the edges.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from portkit import convert_text
from portkit.cli import main
from portkit.rewrite import builtins


def test_builtins_hip_rewrites_only_bare_builtins_with_a_component():
    source = ("__global__ void k(float *o, S s) {\n"
              "  o[threadIdx.x] = s.threadIdx.x + blockIdx . y + gridDim.z + blockDim.w;\n"
              "  dim3 t = threadIdx; o[0] = p->blockIdx.x;\n}\n")
    out = convert_text(source, builtins="hip").output.decode()
    assert out.splitlines()[2:4] == [
        "  o[hipThreadIdx_x] = s.threadIdx.x + hipBlockIdx_y + hipGridDim_z + blockDim.w;",
        "  dim3 t = threadIdx; o[0] = p->blockIdx.x;"]
    assert convert_text(out, builtins="hip").output.decode() == out          # idempotent
    assert convert_text(source).output.decode().count("threadIdx.x") == 2    # default: CUDA spelling kept


def test_help_says_what_the_table_says_about_deprecation(monkeypatch):
    assert builtins.help_text() == ("the tables record no ROCm release that deprecates or drops them "
                                    "(checked: ROCm 5.2, 6.3)")
    table = {b"threadIdx": builtins.Builtin("threadIdx", "hipThreadIdx_", hip_deprecated=(7, 1, 0))}
    monkeypatch.setattr(builtins, "_load", lambda: (table, ("7.1",)))
    assert builtins.help_text() == "threadIdx: deprecated in ROCm 7.1"


def test_bad_builtins_value_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["convert", "x.cu", "--diff", "--builtins", "amd"])
    assert stop.value.code == 2
