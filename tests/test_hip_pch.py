"""tests/hip_pch.py checks through a precompiled hip_runtime.h exactly what the plain command checks."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import hip_pch
from conftest import clang19, require_tool

RUNTIME = "#include <hip/hip_runtime.h>\n"
GOOD = "__global__ void k(float *x) { x[threadIdx.x] = __shfl_xor(x[0], 1); }\n"
BAD = "__global__ void k(float *x) { x[0] = not_declared(threadIdx.x); }\n"


@pytest.mark.parametrize("text, headers", [
    (RUNTIME + GOOD, ("hip/hip_runtime.h",)),
    ("// a comment\n\n#include <cstdio>\n  #  include <hip/hip_runtime.h>\r\n" + GOOD, ("cstdio", "hip/hip_runtime.h")),
    ("#define N 4\n" + RUNTIME + GOOD, None),                 # a macro before the header changes it
    ('#include "mine.h"\n' + RUNTIME + GOOD, None),          # a quoted include is the unit's own
    ("/* block */\n" + RUNTIME + GOOD, None),
    ("#include <cstdio>\n" + GOOD, None),                     # no runtime: nothing to precompile
    ("\ufeff" + RUNTIME + GOOD, None),                        # a BOM: checked as it is
])
def test_only_leading_system_includes_through_the_runtime_are_a_prefix(tmp_path: Path, text: str, headers):
    unit = tmp_path / "k.hip"
    unit.write_text(text, encoding="utf-8")
    assert hip_pch.leading_includes(unit) == headers


def test_a_flag_other_than_an_include_folder_is_checked_plainly():
    assert hip_pch.include_folders(["-I", "a", "-Ib"]) == [Path("a"), Path("b")]
    assert hip_pch.include_folders(["-I", "a", "-DN=4"]) is None
    assert hip_pch.include_folders(["-std=c++17"]) is None
    assert hip_pch.include_folders(["-fgpu-rdc"]) is None


def verdicts(checker: hip_pch.Precompiled, tmp_path: Path) -> list[tuple[bool, int, list[str]]]:
    """For a good and a bad unit, through the PCH and plainly (a -D of its own, a macro first, a leading
    include that is not there):
    whether the PCH was used, the return code, the error lines (paths relative)."""
    found = []
    for name, text, extra in (("good", RUNTIME + GOOD, []), ("bad", RUNTIME + BAD, []),
                              ("bad", RUNTIME + BAD, ["-DUNUSED"]), ("bad_macro", "#define N 4\n" + RUNTIME + BAD, []),
                              ("missing", "#include <no/such.h>\n" + RUNTIME + GOOD, [])):
        unit = tmp_path / f"{name}.hip"
        unit.write_text(text)
        proc = checker.check(["-I", str(tmp_path), *extra], unit)
        errors = [line.replace(f"{tmp_path}/", "") for line in proc.stderr.splitlines() if re.search(r": (fatal )?error: ", line)]
        found.append(("-include-pch" in proc.args, proc.returncode, errors))
    return found


EXPECTED = [(True, 0, []),
            (True, 1, ["bad.hip:2:38: error: use of undeclared identifier 'not_declared'"]),
            (False, 1, ["bad.hip:2:38: error: use of undeclared identifier 'not_declared'"]),
            (False, 1, ["bad_macro.hip:3:38: error: use of undeclared identifier 'not_declared'"]),
            (False, 1, ["missing.hip:1:10: fatal error: 'no/such.h' file not found"])]   # its prefix made no PCH


@pytest.mark.compile
def test_the_pack_check_through_the_pch_fails_where_the_plain_one_does(pack62: Path, tmp_path: Path):
    base = [clang19(), "-x", "hip", "--offload-arch=gfx90a", "-nogpulib", f"--rocm-path={pack62}",
            "-isystem", str(pack62 / "include"), "-w"]
    (tmp_path / "pch").mkdir()
    assert verdicts(hip_pch.Precompiled(base, ["-fsyntax-only"], tmp_path / "pch"), tmp_path) == EXPECTED


@pytest.mark.compile
def test_the_hipcc_compile_through_the_pch_fails_where_the_plain_one_does(tmp_path: Path):
    hipcc = require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    (tmp_path / "pch").mkdir()
    checker = hip_pch.Precompiled([hipcc, "-x", "hip", "--offload-arch=gfx90a"], ["-c", "-o", os.devnull],
                                  tmp_path / "pch", env=dict(os.environ, HIP_PLATFORM="amd"))
    assert verdicts(checker, tmp_path) == EXPECTED
