"""verify defines a project's own AMD selectors (3ead5b0), read off the code the project wrote:
in convert's output every branch uses HIP, so llm.c's ENABLE_BF16 and ENABLE_CUDNN were taken for
selectors, its dev/cuda units compiled with both (`no viable overloaded '='` in the fp32
layernorm kernel, `'cudnn_frontend.h' file not found`), and the audit of the converted tree took
their branches for the project's AMD code, so no finding explained either error.

The case is fixtures/verify_real/converted_branches (llm.c's dev/cuda, reduced; README.md there).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO, clang19
from portkit.cli.app import main

CASE = REPO / "fixtures" / "verify_real" / "converted_branches" / "input"
CUDNN_FRONTEND = [
    "attention_forward.cu: failed, explained",
    "  attention_forward.cu:8:10: fatal error: 'cudnn_frontend.h' file not found",
    "    CUDA line 6: #include <cudnn_frontend.h>",
    "    explained by PK402 rewrite-blocker: #include <cudnn_frontend.h>: cuDNN frontend (graph API) has no "
    "drop-in on AMD (the code moves to another library); instead: MIOpen (fusion API) or hipDNN (beta graph "
    "API) (ROCm 5.0+)",
]


def _converted(tmp_path: Path, capsys) -> Path:
    out = tmp_path / "out"
    assert main(["convert", str(CASE), "-o", str(out), "--rocm", "6.2", "-q"]) in (0, 1)
    capsys.readouterr()
    return out


def _verify(out: Path, pack: Path, capsys, *extra: str) -> list[str]:
    main(["verify", str(out), "--source", str(CASE), "--rocm", "6.2", "--rocm-headers", str(pack), *extra])
    text = capsys.readouterr().out
    return [re.sub(r"(?: \(\d+\.\d s\)| in \d+\.\d s)$", "", line) for line in text.splitlines()]


def test_a_branch_only_convert_wrote_hip_into_teaches_no_selector(tmp_path, capsys):
    from portkit.commands.verify.own_selectors import OwnSelectors   # here: the module is new
    out = _converted(tmp_path, capsys)
    own = OwnSelectors(out, CASE)
    assert "ENABLE_BF16" not in own.of(str(out / "common.h")).learned
    assert own.keep(("ENABLE_BF16", "ENABLE_CUDNN", "PROJ_CONFIGURED"), ["common.h", "attention_forward.cu"]) == \
        ("PROJ_CONFIGURED",)
    # without the CUDA tree, the converted file is all there is to read
    assert "ENABLE_BF16" in OwnSelectors(out, None).of(str(out / "common.h")).learned


@pytest.mark.compile
def test_the_units_compile_without_the_defines_convert_made_look_like_selectors(pack62, tmp_path, capsys):
    clang19()
    lines = _verify(_converted(tmp_path, capsys), pack62, capsys)
    assert not any(line.startswith("the project's AMD build") for line in lines)
    assert lines[-1] == "2 translation units: 2 compiled, 0 failed (0 explained by findings, 0 unexplained, 0 not reached)"


@pytest.mark.compile
def test_the_cudnn_frontend_branch_a_user_builds_is_explained(pack62, tmp_path, capsys):
    """-DENABLE_CUDNN, as attention_forward.cu's own build comment gives it: the branch is CUDA code
    the project wrote, so the audit's finding on the include explains the missing header."""
    clang19()
    lines = _verify(_converted(tmp_path, capsys), pack62, capsys, "-D", "ENABLE_CUDNN")
    start = lines.index(CUDNN_FRONTEND[0])
    assert lines[start:start + 4] == CUDNN_FRONTEND
    assert lines[-2].startswith("2 translation units: 1 compiled, 1 failed (1 explained by findings, 0 unexplained")
