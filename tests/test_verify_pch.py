"""verify's compiles through a PCH of each unit's leading includes (commands/verify/precompiled.py)
give exactly the verdict of the plain compiles: the same statuses, errors, lines, columns, messages,
explanations and include chains, for the installed hipcc and for the ROCm 6.2 pack (issue 52)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from conftest import require_tool
from portkit.commands.verify import VerifyOptions, verify_tree

HIPCC = "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)"

UNITS = {
    # compiles: through the PCH
    "clean.hip": "/* a licence,\n   on two lines */\n#include <hip/hip_runtime.h>\n\n"
                 "__global__ void fill(float* x) { x[threadIdx.x] = 1.0f; }\n",
    # errors in the unit, device code and an unconverted CUDA call in host code
    "unit_error.hip": "#include <cstdio>\n#include <hip/hip_runtime.h>\n\n"
                      "__global__ void fill(float* x) { x[threadIdx.x] = not_declared; }\n"
                      "int main() {\n    cudaDeviceSynchronize();\n    std::printf(\"done\\n\");\n    return 0;\n}\n",
    # an error on the host side only: the device side compiles, the host side fails
    "host_error.hip": "#include <hip/hip_runtime.h>\n\n#ifndef __HIP_DEVICE_COMPILE__\n"
                      "#error \"host side only\"\n#endif\n__global__ void fill(float* x) { x[0] = 2.0f; }\n",
    # an error in a project header the unit includes (an include chain)
    "header_error.hip": "#include <hip/hip_runtime.h>\n#include \"bad.h\"\n\n"
                        "__global__ void fill(float* x) { x[0] = scale(); }\n",
    "bad.h": "#pragma once\ninline float scale() { return missing_scale; }\n",
    # a -D of its own (compile_commands.json): its PCH is built with it
    "defined.hip": "#include <hip/hip_runtime.h>\n\nstatic_assert(SCALE == 3, \"SCALE is not 3\");\n"
                   "__global__ void fill(float* x) { x[0] = SCALE; }\n",
    "defined_too.hip": "#include <hip/hip_runtime.h>\n\n__global__ void fill(float* x) { x[0] = SCALE; }\n",
    "printer.hip": "#include <cstdio>\n#include <hip/hip_runtime.h>\n\nint main() { std::printf(\"%d\\n\", 1); }\n",
    # alone with its flags: a PCH would cost more than it saves, compiled plainly
    "lonely.hip": "#include <hip/hip_runtime.h>\n\n__global__ void fill(float* x) { x[0] = LONE; }\n",
    # C++20 (two units: a PCH would be made for them): compiled plainly, since clang 19 reads the HIP
    # wrapper's max/min and operator new in the PCH and the unit as two definitions (faiss, -std=c++20)
    "cxx20.hip": "#include <hip/hip_runtime.h>\n#include <algorithm>\n#include <new>\n\n"
                 "__global__ void fill(float* x) { x[0] = max(x[0], 1.0f); }\n",
    "cxx20_too.hip": "#include <hip/hip_runtime.h>\n#include <algorithm>\n#include <new>\n\n"
                     "__global__ void fill(float* x) { x[1] = min(x[1], 2.0f); }\n",
    # a macro before the runtime: compiled plainly
    "late.hip": "#define WIDTH 4\n#include <hip/hip_runtime.h>\n\n"
                "__global__ void fill(float* x) { x[WIDTH] = undeclared_width; }\n",
}
THROUGH_PCH = {"clean.hip", "unit_error.hip", "host_error.hip", "header_error.hip", "defined.hip", "defined_too.hip",
               "printer.hip"}


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    commands = []
    for name, text in UNITS.items():
        (tree / name).write_text(text)
        if name.endswith(".hip"):
            flags = {"defined.hip": ["-DSCALE=2"], "defined_too.hip": ["-DSCALE=2"], "lonely.hip": ["-DLONE=1"],
                     "cxx20.hip": ["-std=c++20"], "cxx20_too.hip": ["-std=c++20"]}
            flags = flags.get(name, [])
            commands.append({"directory": str(tree), "file": str(tree / name),
                             "arguments": ["hipcc", *flags, "-I.", "-c", str(tree / name)]})
    (tree / "compile_commands.json").write_text(json.dumps(commands))
    return tree


def _verdict(result) -> list:
    """Everything verify says of each unit but its time."""
    units = []
    for unit in sorted(result.units, key=lambda u: u.rel):
        report = asdict(unit)
        report.pop("seconds")
        units.append(report)
    return units


def _both(tree: Path, options: VerifyOptions, monkeypatch) -> tuple[list, list, dict]:
    """The verdict with PCHs and without, and which units compiled through one."""
    from portkit.commands.verify import compiler, precompiled
    seen: dict[str, list[list[str]]] = {"pch": [], "plain": []}
    real = compiler.compile_unit

    def spy(cmd, cwd, timeout):
        seen[mode].append(list(cmd))
        return real(cmd, cwd, timeout)

    monkeypatch.setattr(compiler, "compile_unit", spy)
    mode = "pch"
    monkeypatch.delenv(precompiled.ENV, raising=False)
    with_pch = _verdict(verify_tree(tree, options))
    mode = "plain"
    monkeypatch.setenv(precompiled.ENV, "1")
    without = _verdict(verify_tree(tree, options))
    through = {Path(c[-1] if c[-2] == "-fsyntax-only" else c[-3]).name: True
               for c in seen["pch"] if "-include-pch" in c}
    assert not any("-include-pch" in c for c in seen["plain"])
    return with_pch, without, through


def _check(with_pch: list, without: list, through: dict) -> None:
    assert with_pch == without
    assert set(through) == THROUGH_PCH
    status = {u["rel"]: u["status"] for u in with_pch}
    assert status == {"clean.hip": "compiled", "unit_error.hip": "failed", "host_error.hip": "failed",
                      "header_error.hip": "failed", "defined.hip": "failed", "late.hip": "failed",
                      "defined_too.hip": "compiled", "printer.hip": "compiled", "lonely.hip": "compiled",
                      "cxx20.hip": "compiled", "cxx20_too.hip": "compiled"}
    errors = {u["rel"]: [(e["rel"], e["line"]) for e in u["errors"]] for u in with_pch}
    assert ("unit_error.hip", 4) in errors["unit_error.hip"] and ("unit_error.hip", 6) in errors["unit_error.hip"]
    assert errors["host_error.hip"] == [("host_error.hip", 4)]
    assert ("bad.h", 2) in errors["header_error.hip"]
    assert ("defined.hip", 3) in errors["defined.hip"]
    assert ("late.hip", 4) in errors["late.hip"]


@pytest.mark.compile
def test_the_installed_hipcc_gives_the_same_verdict_through_the_pch(tmp_path: Path, monkeypatch):
    require_tool("hipcc", HIPCC)
    tree = _tree(tmp_path)
    _check(*_both(tree, VerifyOptions(compile_commands=tree, jobs=2, cache=False), monkeypatch))


@pytest.mark.compile
def test_the_pack_gives_the_same_verdict_through_the_pch(tmp_path: Path, monkeypatch, pack62: Path):
    require_tool("clang++-19", "clang-19 (apt-get install clang-19)")
    tree = _tree(tmp_path)
    options = VerifyOptions(compile_commands=tree, jobs=2, cache=False, rocm=(6, 2, 0), rocm_headers=str(pack62),
                            download=False)
    _check(*_both(tree, options, monkeypatch))


def test_a_unit_is_compiled_through_a_pch_only_when_it_starts_with_system_includes_to_the_runtime():
    from portkit.commands.verify import precompiled
    assert precompiled.leading_includes(b"// x\n\n#include <cstdio>\n#include <hip/hip_runtime.h>\nint a;\n") == \
        ("cstdio", "hip/hip_runtime.h")
    assert precompiled.leading_includes(b"#include \"hip/hip_runtime.h\"\n") is None
    assert precompiled.leading_includes(b"/* licence\n */\n#include <hip/hip_runtime.h>\n") == ("hip/hip_runtime.h",)
    assert precompiled.leading_includes(b"/* a */ int a; /* x */\n#include <hip/hip_runtime.h>\n") is None
    assert precompiled.leading_includes(b"// a /*\n#define X\n*/\n#include <hip/hip_runtime.h>\n") is None
    assert precompiled.leading_includes(b"#include <cstdio>\nint a;\n#include <hip/hip_runtime.h>\n") is None
    assert precompiled.split(["clang", "-x", "hip", "-include", "a.h", "-fsyntax-only", "u.hip"]) is not None
    assert precompiled.own_folders(["clang", "-include", "a.h", "-I", "inc"]) is None
    assert precompiled.own_folders(["clang", "-I", "inc", "-isystem/p", "-Iother", "-DX"]) == \
        (["clang", "-isystem/p", "-DX"], [Path("inc"), Path("other")])
    two = ["clang", "--offload-arch=gfx90a", "--offload-arch=gfx1100", "-c", "u.hip", "-o", "/dev/null"]
    assert precompiled.split(two) is None
