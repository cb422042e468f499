"""verify on real trees (issue 48): a missing header explained by its include chain, the finding on
the error's own line linked, the libraries of the pinned 6.2 pack, one line per library missing
from it, stand-ins by preprocessing only, and each unit's result kept until what it reads changes.

The cases are fixtures/verify_real/ (real code; README.md there), compiled by Debian's clang-19
against the pinned pack fixtures/rocm-headers/rocm-6.2.0-headers.tar.xz, as test_verify_packs.py does.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import REPO, clang19
from portkit.cli.app import main
from portkit.commands.verify import VerifyOptions, compiler as compilers, standins, verify_tree
from portkit.commands.verify import diagnostics
from portkit.core import datacache

CASES = REPO / "fixtures" / "verify_real"
GOLDENS = REPO / "fixtures" / "convert"



def _text(tmp_path: Path, tree: Path, pack: Path, capsys, *extra: str) -> list[str]:
    """verify's text report of `tree` at 6.2 against the pack, its timings taken out."""
    main(["verify", str(tree), "--rocm", "6.2", "--rocm-headers", str(pack), *extra])
    out = capsys.readouterr().out
    return [re.sub(r" \(\d+\.\d s\)$", "", line) for line in out.splitlines()]


def _block(lines: list[str], unit: str) -> list[str]:
    """The lines of one failing unit in the text report, up to the blank line after it."""
    start = lines.index(next(line for line in lines if line.startswith(f"{unit}: ")))
    end = lines.index("", start) if "" in lines[start:] else len(lines)
    return lines[start:end]


@pytest.mark.compile
def test_a_cuda_header_reached_through_a_library_is_explained_by_its_include_chain(pack62, tmp_path, capsys):
    """rocThrust's thrust/system/cuda/error.h wants CUDA's driver_types.h: verify named no file and
    no cause. The error is placed at the project's #include, with the chain that reached the header."""
    clang19()
    tree = tmp_path / "tree"
    shutil.copytree(CASES / "thrust_cuda_backend" / "input", tree)
    lines = _text(tmp_path, tree, pack62, capsys)
    assert _block(lines, "src/sort.hip") == [
        "src/sort.hip: failed, explained",
        "  src/util/error.hpp:7:1: fatal error: 'driver_types.h' file not found",
        "    included: src/sort.hip:2 -> src/util/error.hpp:7 -> thrust/system/cuda/error.h:27 -> "
        "thrust/system/cuda/detail/guarded_driver_types.h:50",
        "    explained by PK001 no-hip-equivalent: src/util/error.hpp:7 -> thrust/system/cuda/error.h:27 -> "
        "thrust/system/cuda/detail/guarded_driver_types.h:50 -> 'driver_types.h' not found: a CUDA header reached "
        "through rocThrust's CUDA backend (thrust/system/cuda/), which needs the CUDA toolkit; convert to its HIP "
        "backend: <thrust/system/hip/error.h>",
        "  every header it cannot find: driver_types.h, cuda_runtime_api.h"]


def test_include_lines_belong_to_the_next_error_not_to_a_note():
    output = ("In file included from /t/a.hip:2:\nIn file included from /p/include/x/y.h:4:\n"
              "/p/include/x/z.h:9:10: fatal error: 'cuda.h' file not found\n"
              "/t/b.hip:3:1: error: use of undeclared identifier 'f'\n"
              "In file included from /t/b.hip:1:\n/p/include/x/w.h:5:1: note: declared here\n"
              "/t/b.hip:4:1: error: use of undeclared identifier 'g'\n")
    first, second, third = diagnostics.parse(output)
    assert first.included_from == [("/t/a.hip", 2), ("/p/include/x/y.h", 4)]
    assert second.included_from == [] and third.included_from == []
    located = diagnostics.locate(first, Path("/t"), Path("/t"))
    assert (located.rel, located.line) == ("a.hip", 2)
    assert diagnostics.include_chain(first, Path("/t"), Path("/t")) == ["a.hip:2", "x/y.h:4", "x/z.h:9"]
    assert diagnostics.include_chain(second, Path("/t"), Path("/t")) == []


@pytest.mark.compile
def test_the_finding_on_an_error_directives_line_explains_it(pack62, tmp_path, capsys):
    """faiss before its ROCm support: DeviceDefs.cuh's `#if CUDA_VERSION < 8000` `#error` stops the AMD
    build. The audit reports PK103 on that very #error line, and verify did not link it (PK103 is
    not a rule whose findings all break builds): the error stayed unexplained."""
    clang19()
    case = CASES / "error_directive_guard" / "input"
    out = tmp_path / "out"
    assert main(["convert", str(case), "-o", str(out), "--rocm", "6.2", "-q"]) in (0, 1)
    capsys.readouterr()
    lines = _text(tmp_path, out, pack62, capsys, "--source", str(case))
    assert _block(lines, "faiss/gpu/test/WarpFence.cu") == [
        "faiss/gpu/test/WarpFence.cu: failed, explained",
        "  faiss/gpu/utils/DeviceDefs.cuh:18:2: error: \"CUDA >= 8.0 is required\"",
        "    CUDA line 17: #error \"CUDA >= 8.0 is required\"",
        "    explained by PK103 cuda-version-guard: an AMD build stops here: hip-clang never defines `CUDA_VERSION` "
        "(0 in #if), so `#if CUDA_VERSION < 8000` (line 17) holds"]


@pytest.mark.compile
def test_the_pinned_pack_holds_hipfft_hipsolver_and_rccl_and_names_a_library_it_lacks(pack62, tmp_path, capsys):
    """Units using hipFFT, hipSOLVER and RCCL were not reached against the 6.2 pack; MIOpen is not in
    the pinned pack (its source tree is 370 MB to download), and is named in one line with its package."""
    clang19()
    tree = tmp_path / "tree"
    for case in ("cufft_transforms", "cusolver_dense_lu", "nccl_allreduce", "roc_cudnn_miopen"):
        (tree / case).mkdir(parents=True)
        shutil.copy(GOLDENS / case / "expected.hip", tree / case / "unit.hip")
    result = verify_tree(tree, VerifyOptions(rocm=(6, 2, 0), rocm_headers=str(pack62)))
    assert [(u.rel, u.status) for u in result.units] == [
        ("cufft_transforms/unit.hip", "compiled"), ("cusolver_dense_lu/unit.hip", "compiled"),
        ("nccl_allreduce/unit.hip", "compiled"), ("roc_cudnn_miopen/unit.hip", "not_reached")]
    lines = _text(tmp_path, tree, pack62, capsys)
    assert [line for line in lines if line.startswith("not found: ")] == [
        "not found: miopen/miopen.h: MIOpen is not in the header pack or the ROCm installation; the ROCm package "
        "miopen-hip-dev (1 unit)"]
    assert "    explained by PK701 rocm-library-not-installed: miopen/miopen.h: MIOpen is not in the header pack or " \
           "the ROCm installation; the ROCm package miopen-hip-dev" in lines


def test_stand_ins_only_preprocess():
    assert standins.preprocess_only(["clang++", "-x", "hip", "-Ifoo", "-fsyntax-only", "/t/a.hip"]) == [
        "clang++", "-E", "-x", "hip", "-Ifoo", "/t/a.hip", "-o", "/dev/null"]
    assert standins.preprocess_only(["clang", "-O3", "-x", "hip", "-c", "/t/a.hip", "-o", "/dev/null"]) == [
        "clang", "-E", "-O3", "-x", "hip", "/t/a.hip", "-o", "/dev/null"]


@pytest.mark.compile
def test_a_units_result_is_kept_until_a_file_it_reads_changes(pack62, tmp_path, monkeypatch):
    """A second verify of the same tree compiles nothing and says the same; a changed header
    compiles again the units that include it, and only those."""
    clang19()
    monkeypatch.delenv("PORTKIT_NO_CACHE", raising=False)
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    # the plain compile step, which the spy below counts: through a PCH (commands/verify/precompiled.py)
    # each unit is two side compiles, and tests/test_verify_pch.py pins that the verdicts are the same
    monkeypatch.setenv("PORTKIT_VERIFY_NO_PCH", "1")
    tree = tmp_path / "tree"
    shutil.copytree(CASES / "thrust_cuda_backend" / "input", tree)
    (tree / "src" / "fill.hip").write_text("#include <hip/hip_runtime.h>\n"
                                           "__global__ void fill(int* o) { o[threadIdx.x] = 1; }\n")
    compiled: list[str] = []
    real = compilers.compile_unit

    def counting(cmd, cwd, timeout):
        compiled.append(Path(cmd[-1]).name if cmd[-1] != "/dev/null" else "stand-ins")
        return real(cmd, cwd, timeout)
    monkeypatch.setattr(compilers, "compile_unit", counting)
    opts = VerifyOptions(rocm=(6, 2, 0), rocm_headers=str(pack62))
    first = verify_tree(tree, opts)
    assert sorted(compiled) == ["fill.hip", "sort.hip", "stand-ins", "stand-ins"]   # two rounds: 2 headers
    compiled.clear()
    second = verify_tree(tree, opts)
    assert compiled == []
    assert [(u.rel, u.status, [(e.rel, e.line, e.message, e.include_chain) for e in u.errors], u.missing_headers)
            for u in second.units] == \
        [(u.rel, u.status, [(e.rel, e.line, e.message, e.include_chain) for e in u.errors], u.missing_headers)
         for u in first.units]
    header = tree / "src" / "util" / "error.hpp"
    header.write_text(header.read_text().replace("#include <thrust/system/cuda/error.h>\n", ""))
    third = verify_tree(tree, opts)
    assert compiled == ["sort.hip"]
    assert [u.status for u in third.units] == ["compiled", "failed"]   # thrust::cuda_category now undeclared
    compiled.clear()
    verify_tree(tree, VerifyOptions(rocm=(6, 2, 0), rocm_headers=str(pack62), cache=False))
    assert sorted(compiled) == ["fill.hip", "sort.hip"]
    assert datacache.cache_dir() == tmp_path / "cache"


def test_a_library_missing_from_the_installation_names_the_installed_release_not_the_target():
    """verify --rocm 6.2 with no 6.2 pack falls back to the ROCm installed here (5.2): a library
    the installation lacks is 'not in the ROCm 5.2 installation', the release that was looked in."""
    from portkit.commands.verify.explain import Facts, _not_installed
    from portkit.commands.scan.walk import Options
    from portkit.core.tables.mappings import parse_version
    facts = Facts(REPO, Options(audit=True, rocm=parse_version("6.2")), None, None,
                          installed=parse_version("5.2"))
    assert _not_installed("hipblas/hipblas.h", None, facts) == \
        "hipblas/hipblas.h: hipBLAS is not in the ROCm 5.2 installation; the ROCm package hipblas-dev"


@pytest.mark.compile
def test_a_tree_that_builds_for_amd_is_compiled_with_its_own_amd_selectors(pack62, tmp_path, capsys):
    """ggml and faiss build for AMD through their own selectors (GGML_USE_HIP around vendors/hip.h):
    convert leaves those files to the project, and verify compiled their CUDA branches (186 of
    ggml's 187 units unexplained). The selectors the pipeline learns are defined for every unit,
    as the project's AMD build defines them, and the report says so."""
    clang19()
    case = CASES / "own_amd_build" / "input"
    out = tmp_path / "out"
    assert main(["convert", str(case), "-o", str(out), "--rocm", "6.2", "-q"]) in (0, 1)
    capsys.readouterr()
    lines = _text(tmp_path, out, pack62, capsys)
    assert "the project's AMD build: -DPROJ_USE_HIP for every unit (its own AMD selectors, as its AMD build " \
           "defines them)" in lines
    assert lines[-1].startswith("1 translation unit: 1 compiled")
    lines = _text(tmp_path, out, pack62, capsys, "-D", "PROJ_USE_HIP=1")   # the user's own definition wins
    assert not any(line.startswith("the project's AMD build") for line in lines)
