"""convert --active-only: only the #if branches the -D/-U configuration compiles are converted."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO
from portkit.engine.platform import regions
from portkit.cli.app import main
from portkit.engine.context import Options
from portkit.engine.facts import ProjectFacts
from portkit.commands.scan.walk import scan_source
from portkit.core.source import SourceFile

CASE = REPO / "fixtures" / "convert" / "active_only_config"
CONFIG = ["--active-only", "-D", "USE_PINNED", "-U", "LEGACY_SYNC"]
SRC = (b"#include <cuda_runtime.h>\n#ifdef FAST\nstatic void f() { cudaDeviceSynchronize(); }\n#else\n"
       b"static void f() { cudaStreamSynchronize(0); }\n#endif\n"
       b"int main() { void* p; cudaMalloc(&p, 4); f(); return 0; }\n")


def _hip(data: bytes, *names: bytes) -> bytes:
    """SRC with these CUDA names (and the runtime header) converted."""
    data = data.replace(b"<cuda_runtime.h>", b"<hip/hip_runtime.h>")
    for name in names:
        data = data.replace(b"cuda" + name, b"hip" + name)
    return data


def _convert(data: bytes, clang_inactive=(), **options) -> bytes:
    from portkit.core.edits import apply_edits
    scan = scan_source(SourceFile.from_bytes("a.cu", data), Options(**options),
                       facts=ProjectFacts(clang_inactive=clang_inactive))
    return apply_edits(data, scan.edits)


def test_the_summary_names_what_was_left_and_what_could_not_be_decided(capsys):
    assert main(["convert", str(CASE / "input.cu"), "--check", "--rocm", "5.2", *CONFIG]) == 1
    assert capsys.readouterr().out.splitlines()[1:4] == [
        "CUDA references: 13 found, 13 converted, 0 left (100.0% converted)",
        "--active-only: 2 #if branches this configuration does not compile, left byte for byte (4 CUDA names in them)",
        "--active-only: 2 #if conditions portkit cannot evaluate under -D/-U converted as compiled "
        "(--engine clang decides them exactly)"]


def test_inactive_branches_stay_byte_for_byte_and_active_ones_are_converted():
    out = _convert(SRC, active_only=True, defines=(("FAST", 1),))
    assert out == _hip(SRC, b"DeviceSynchronize", b"Malloc")
    out = _convert(SRC, active_only=True, undefines=("FAST",))
    assert out == _hip(SRC, b"StreamSynchronize", b"Malloc")
    # without it, -D/-U (audit's configured world) change findings only
    assert _convert(SRC, active_only=False, defines=(("FAST", 1),)) == _hip(SRC, b"StreamSynchronize",
                                                                         b"DeviceSynchronize", b"Malloc")


def test_no_platform_model_still_leaves_the_inactive_branches():
    out = _convert(SRC, active_only=True, defines=(("FAST", 1),), platform_model=False)
    assert b"cudaStreamSynchronize(0)" in out and b"hipDeviceSynchronize()" in out


def test_clang_decides_the_files_it_preprocessed():
    # line 3 (the FAST branch) is what clang skipped; no -D: ppexpr alone would convert both
    options = dict(active_only=True, clang_inactive=(("a.cu", ((3, 3),)),))
    assert _convert(SRC, **options) == _hip(SRC, b"StreamSynchronize", b"Malloc")
    scan = scan_source(SourceFile.from_bytes("a.cu", SRC), Options(active_only=True, defines=(("OTHER", 1),)),
                       facts=ProjectFacts(clang_inactive=options["clang_inactive"]))
    assert (scan.metrics.branches_inactive, scan.metrics.refs_inactive, scan.metrics.branches_undecided) == (1, 1, 0)


def test_undecided_conditions_are_counted_once_each():
    src = b"#if LEVEL > 2\na();\n#elif defined(X)\nb();\n#else\nc();\n#endif\n#ifdef Y\nd();\n#endif\n"
    found = regions.classify(src, regions.selectors((), (("X", 1),), ("Y",)))
    assert found.undecided == 1    # LEVEL > 2; the #elif under X is decided, #else adds none
    assert [src[s:e] for s, e in found.inactive] == [b"c();\n", b"d();\n"]


@pytest.mark.parametrize("args, message", [
    (["-U", "FAST"], "portkit: error: -U: only with --active-only or --engine clang"),
    (["--active-only"], "portkit: error: --active-only needs the configuration: -D/-U, or --engine clang (with -p "
                        "for the build's own)"),
    (["--active-only", "-D", "FAST", "-I", "inc"], "portkit: error: -p/-I: only with --engine clang"),
    (["--active-only", "-D", "1X"], "portkit: error: -D 1X: '1X' is not a macro name"),
])
def test_configuration_flags_are_one_line_errors(args, message, tmp_path: Path, capsys):
    (tmp_path / "a.cu").write_bytes(SRC)
    assert main(["convert", str(tmp_path / "a.cu"), "--diff", *args]) == 2
    assert capsys.readouterr().err.strip() == message
