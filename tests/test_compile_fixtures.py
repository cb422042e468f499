"""Fixtures are real code: every input compiles with nvcc, every expected output with hipcc (AMD)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import hip_pch
from cases import Case, all_cases
from conftest import CUDA_LIB_INCLUDE, LIBRARY_HEADERS, NVCC, REPO, require_dir, require_rocm_libraries, require_tool

CASES = all_cases()
REPO_FIXTURES = REPO / "fixtures"
IDS = [c.name for c in CASES]
COMPILED = (".cu", ".cpp", ".cc", ".cuh", ".h", ".hpp")


def translation_units(case: Case, files: list[Path]) -> list[Path]:
    """Multi-file cases compile their .cu/.cpp files; one-file cases compile their one file."""
    if not case.multi:
        return files
    return [f for f in files if f.suffix in (".cu", ".cpp", ".cc")]


def run(cmd: list[str], env: dict | None = None) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr[-4000:]}"


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.compile
def test_input_compiles_with_nvcc(case: Case):
    if case.nvcc_skip:
        pytest.skip(f"not compiled with nvcc: {case.nvcc_skip}")
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    includes = []
    if any(h in f.read_bytes() for f in case.input_files() for h in LIBRARY_HEADERS):
        includes = ["-I", str(require_dir(CUDA_LIB_INCLUDE, "CUDA library headers (set CUDA_LIB_INCLUDE)"))]
    base = case.input if case.multi else case.input.parent
    for unit in translation_units(case, case.input_files()):
        run([nvcc, "-x", "cu", "-c", str(unit), "-o", os.devnull, "-I", str(base), *includes, *case.nvcc_flags])


def compiled(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, f"{' '.join(proc.args)}\n{proc.stdout}\n{proc.stderr[-4000:]}"


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.compile
def test_expected_compiles_with_hipcc(case: Case, hipcc_pch: hip_pch.Precompiled):
    if case.hipcc_skip:
        pytest.skip(f"not compiled with hipcc: {case.hipcc_skip}")
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    require_rocm_libraries(case.expected_files())
    base = case.expected if case.multi else case.expected.parent
    for unit in translation_units(case, case.expected_files()):
        compiled(hipcc_pch.check(["-I", str(base), *case.hipcc_flags], unit))


# The warp fixtures (fixtures/warp/<idiom>/: input.cu, expected.hip, case.toml) are real code too:
# the CUDA original compiles with nvcc, the fixed HIP with hipcc for a 64-lane target (gfx90a).
WARP_FIXTURES = sorted(p.parent for p in (REPO_FIXTURES / "warp").glob("*/case.toml"))
WARP_IDS = [f"warp/{p.name}" for p in WARP_FIXTURES]


def skip_declared(folder: Path) -> None:
    """A warp fixture whose output uses a ROCm library this machine's ROCm lacks says so in its
    case.toml (`hipcc_skip`, with where it is compiled instead), as the conversion cases do."""
    reason = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8")).get("hipcc_skip")
    if reason:
        pytest.skip(f"not compiled with hipcc: {reason}")


@pytest.mark.parametrize("folder", WARP_FIXTURES, ids=WARP_IDS)
@pytest.mark.compile
def test_warp_input_compiles_with_nvcc(folder: Path):
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    run([nvcc, "-x", "cu", "-c", str(folder / "input.cu"), "-o", os.devnull])


@pytest.mark.parametrize("folder", WARP_FIXTURES, ids=WARP_IDS)
@pytest.mark.compile
def test_warp_expected_compiles_with_hipcc(folder: Path, hipcc_pch: hip_pch.Precompiled):
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    skip_declared(folder)
    compiled(hipcc_pch.check([], folder / "expected.hip"))


# The audit's cases (fixtures/rules, fixtures/audit) are real code too. A file may ask for extra
# nvcc flags in its first lines (`// nvcc-flags: -rdc=true`), or, only where CUDA 13 itself can no
# longer compile the construct (texture references), say why it is not compiled (`// nvcc-skip:`).
AUDIT_SOURCES = sorted(p for d in ("rules", "audit") for p in (REPO_FIXTURES / d).rglob("*.cu"))
NVCC_FLAGS = re.compile(r"//\s*nvcc-flags:\s*(.+)")
NVCC_SKIP = re.compile(r"//\s*nvcc-skip:\s*(.+)")


@pytest.mark.parametrize("path", AUDIT_SOURCES, ids=[p.relative_to(REPO_FIXTURES).as_posix() for p in AUDIT_SOURCES])
@pytest.mark.compile
def test_audit_case_compiles_with_nvcc(path: Path):
    head = "\n".join(path.read_text(encoding="utf-8").splitlines()[:5])
    skip = NVCC_SKIP.search(head)
    if skip:
        pytest.skip(f"not compiled with nvcc: {skip.group(1).strip()}")
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    flags = NVCC_FLAGS.search(head)
    includes = []
    local = [path, *(p for p in path.parent.iterdir() if p.suffix in (".h", ".cuh", ".hpp"))]  # its own headers
    if any(h in p.read_bytes() for p in local for h in LIBRARY_HEADERS):
        includes = ["-I", str(require_dir(CUDA_LIB_INCLUDE, "CUDA library headers (set CUDA_LIB_INCLUDE)"))]
    given = [f"-I{path.parent / f[2:]}" if f.startswith("-I") and not f[2:].startswith("/") else f
             for f in (flags.group(1).split() if flags else [])]   # -I relative to the file, as its build has it
    run([nvcc, "-std=c++17", "-x", "cu", "-c", str(path), "-o", os.devnull, "-I", str(path.parent), *includes, *given])


# A ROCm library that is not installed skips the compile checks that need it, with the package to
# install, like a missing compiler; under PORTKIT_REQUIRE_TOOLS=1 (CI) it fails them instead.

def test_missing_rocm_library_header_skips_with_the_package(tmp_path: Path, monkeypatch):
    import conftest
    include = tmp_path / "include"
    (include / "hiprand").mkdir(parents=True)
    (include / "hiprand" / "hiprand.h").write_text("")
    source = tmp_path / "src" / "k.hip"
    source.parent.mkdir()
    source.write_text("#include <hiprand/hiprand.h>\n")
    monkeypatch.setattr(conftest, "HIP_INCLUDE_DIRS", (include,))
    monkeypatch.delenv("PORTKIT_REQUIRE_TOOLS", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_rocm_libraries([source.parent])
    assert str(skipped.value) == (f"hiprand needs rocrand/rocrand.h, not found in {include} "
                                  "(apt-get install librocrand-dev)")
    monkeypatch.setenv("PORTKIT_REQUIRE_TOOLS", "1")
    with pytest.raises(pytest.fail.Exception) as failed:
        require_rocm_libraries([source])
    assert str(failed.value) == (f"hiprand needs rocrand/rocrand.h, not found in {include} "
                                 "(apt-get install librocrand-dev) and PORTKIT_REQUIRE_TOOLS=1")
    (include / "rocrand").mkdir()
    (include / "rocrand" / "rocrand.h").write_text("")
    assert require_rocm_libraries([source]) is None             # installed: the check runs


def test_code_without_a_rocm_library_needs_none(tmp_path: Path, monkeypatch):
    import conftest
    source = tmp_path / "k.hip"
    source.write_text("#include <hip/hip_runtime.h>\n")
    monkeypatch.setattr(conftest, "HIP_INCLUDE_DIRS", (tmp_path / "nothing",))
    monkeypatch.setenv("PORTKIT_REQUIRE_TOOLS", "1")
    assert require_rocm_libraries([source]) is None


@pytest.mark.parametrize("case", [c for c in CASES if c.name.startswith("curand")], ids=lambda c: c.name)
def test_hiprand_cases_need_rocrand(case: Case, tmp_path: Path, monkeypatch):
    """The corpus's hiprand outputs are what the check guards: without rocrand they skip."""
    import conftest
    (tmp_path / "hiprand").mkdir()
    (tmp_path / "hiprand" / "hiprand.h").write_text("")
    monkeypatch.setattr(conftest, "HIP_INCLUDE_DIRS", (tmp_path,))
    monkeypatch.delenv("PORTKIT_REQUIRE_TOOLS", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"^hiprand needs rocrand/rocrand\.h, "):
        require_rocm_libraries(case.expected_files())
