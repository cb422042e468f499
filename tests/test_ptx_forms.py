"""Inline PTX through the preprocessor (issue 49): PK301 and the commit gate see `asm` wherever
the compiler would: in a macro's body, through an alias of the keyword, across a line splice.

fixtures/ptx_forms/ holds each form as a library writes it (warp_asm.cuh's macros, used by
kernels.cu), beside what is not PTX in device code: a host macro's x86 `pause`, and a macro the
tree defines twice (PTX for NVIDIA, `__lane_id()` for AMD), whose uses are the platform's business.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import REPO, require_tool
from portkit.api import audit_paths
from portkit.cli.app import main
from portkit.project import asm_macros

FORMS = REPO / "fixtures" / "ptx_forms"
TAIL = " - PTX does not compile for AMD GPUs"


def test_audit_reports_each_form_at_its_line_and_nothing_else():
    document = audit_paths([FORMS], rocm="6.2", config=False)
    found = [(f["path"], f["line"], f["message"].removesuffix(TAIL)) for f in document["findings"] if f["code"] == "PK301"]
    assert found == [
        ("kernels.cu", 9, "inline assembly through the macro `DEVICE_ASM` (warp_asm.cuh:8 defines it with `asm`)"),
        ("kernels.cu", 11, "inline assembly through the macro `SYNC_WARP` (warp_asm.cuh:5 defines it with `asm`)"),
        ("kernels.cu", 24, "inline PTX (barrier): `bar.warp.sync -1`"),      # the splice joined, as the compiler reads it
        ("kernels.cu", 26, "inline PTX (memory fence): `fence.acq_rel.cta`"),  # __asm__
        ("warp_asm.cuh", 5, "inline PTX (barrier): `bar.warp.sync -1`"),    # the macro's definition
    ]


def _learn(*files: tuple[str, str]) -> tuple[tuple[str, str, int], ...]:
    return asm_macros.learn([(SimpleNamespace(rel=rel), text.encode()) for rel, text in files])


def test_the_tree_learns_assembly_macros_and_their_aliases():
    assert _learn(("a.h", "#define A() asm volatile(\"bar.sync 0;\")\n#define B A\n#define C(x) \\\n  B()\n"),
                  ("b.h", "#define PLAIN 1\n")) == (("A", "a.h", 1), ("B", "a.h", 2), ("C", "a.h", 3))


def test_a_macro_also_defined_without_assembly_is_left_to_the_platform():
    assert _learn(("a.h", "#ifdef __HIP_PLATFORM_AMD__\n#define LANE(l) ((l) = __lane_id())\n#else\n"
                          "#define LANE(l) asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(l))\n#endif\n")) == ()


def test_an_alias_cycle_ends():
    assert _learn(("a.h", "#define X Y\n#define Y X\n#define Z __asm__\n")) == (("Z", "a.h", 3),)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)


CLEAN = "__global__ void fill(float *out) { out[threadIdx.x] = 0.0f; }\n"
CHANGES = {
    "macro body": {"sync.cuh": '#pragma once\n#define SYNC_WARP() asm volatile("bar.warp.sync -1;" ::: "memory")\n',
                   "k.cu": '#include "sync.cuh"\n__global__ void fill(float *out) { out[threadIdx.x] = 0.0f; SYNC_WARP(); }\n'},
    "alias": {"k.cu": "#define DEVICE_ASM asm\n__global__ void fill(float *out) {\n    unsigned lane;\n"
                      '    DEVICE_ASM volatile("mov.u32 %0, %%laneid;" : "=r"(lane));\n    out[lane] = 0.0f;\n}\n'},
    "splice": {"k.cu": '__global__ void fill(float *out) {\n    out[threadIdx.x] = 0.0f;\n    asm volatile("bar.warp.sync \\\n'
                       '-1;" ::: "memory");\n}\n'},
}
BLOCKED = {
    "macro body": ["k.cu:2:61: PK301 inline assembly through the macro `SYNC_WARP` (sync.cuh:2 defines it with `asm`)",
                   "sync.cuh:2:21: PK301 inline PTX (barrier): `bar.warp.sync -1`"],
    "alias": ["k.cu:4:5: PK301 inline assembly through the macro `DEVICE_ASM` (k.cu:1 defines it with `asm`)"],
    "splice": ["k.cu:3:5: PK301 inline PTX (barrier): `bar.warp.sync -1`"],
}


@pytest.mark.parametrize("form", sorted(CHANGES))
def test_the_gate_blocks_each_form(form: str, tmp_path: Path, monkeypatch, capsys):
    require_tool("git", "git")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "dev")
    (repo / "k.cu").write_text(CLEAN)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "clean")
    for name, text in CHANGES[form].items():
        (repo / name).write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", form)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["check", "--diff-base", "HEAD~1"]) == 1
    out = capsys.readouterr().out
    assert [line.removesuffix(TAIL) for line in out.splitlines() if ": PK" in line] == BLOCKED[form]
