"""The platform model (portkit/regions.py, ppexpr.py): which code is AMD-only, NVIDIA-only or shared,
and what convert and audit do with it. The dual-vendor fixture's golden bytes are checked by
test_convert_fixtures.py and compiled by test_compile_fixtures.py; here the exact regions and
findings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO
from portkit import ppexpr, regions
from portkit.cli import main

PROJECT = REPO / "fixtures" / "convert" / "dual_vendor_project" / "input"
WORLDS = regions.selectors()


@pytest.mark.parametrize("expr, amd, nvidia", [
    ("defined(__HIP_PLATFORM_AMD__)", 1, 0),
    ("!defined(USE_ROCM)", 0, 1),
    ("__CUDA_ARCH__ >= 800", 0, None),
    ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 350", 0, None),
    ("CUDA_VERSION >= 11000 || defined(FOO)", None, None),
    ("HIP_VERSION >= 60500000", None, 0),
    ("defined(FOO) && 0", 0, 0),
    ("(1 ? 2 : FOO) == 2", 1, 1),
    ("__has_include(<nvml.h>)", None, None),
    ("0x10 + 010 == 24", 1, 1),
    ("defined FOO ||", None, None),          # unreadable: unknown, never an error
])
def test_if_expressions_in_three_valued_logic(expr, amd, nvidia):
    assert (ppexpr.evaluate(expr, WORLDS.amd), ppexpr.evaluate(expr, WORLDS.nvidia)) == (amd, nvidia)


SOURCE = b"""#include <x.h>
#ifdef USE_ROCM
hip_code();
#else
cuda_code();
#if __CUDA_ARCH__ >= 800
inner();
#endif
#endif
#if CUDA_VERSION >= 11000
newer();
#else
older();
#endif
#if defined(PROJ_HIP) && defined(RDNA3)
#define V_DOT2
#endif
#ifdef V_DOT2
asm volatile("v_dot2_f32_f16 %0, %1, %2, %0");
#else
plain();
#endif
"""


def test_branches_are_classified_nested_and_by_derived_macros():
    found = regions.classify(SOURCE, regions.selectors(("PROJ_HIP",)))
    assert [(SOURCE[s:e], k) for s, e, k in found.ranges] == [
        (b"hip_code();\n", "amd"),
        (b"cuda_code();\n#if __CUDA_ARCH__ >= 800\ninner();\n#endif\n", "ported"),   # nested: still ported
        (b"newer();\n", "nvidia"),                                                    # no AMD counterpart
        (b"#define V_DOT2\n", "amd"),
        (b'asm volatile("v_dot2_f32_f16 %0, %1, %2, %0");\n', "amd"),                # V_DOT2 only on AMD
    ]
    assert not found.shim and found.totals(len(SOURCE))["ported"] == 54


def test_without_the_project_macro_its_branches_are_shared():
    found = regions.classify(SOURCE, WORLDS)
    assert [SOURCE[s:e] for s, e, k in found.ranges if k == "amd"] == [b"hip_code();\n"]


def test_a_guard_of_a_hip_branch_is_learned_for_the_whole_tree():
    from portkit.files import discover
    _, entries, _ = discover([PROJECT])
    assert regions.project_amd_macros(entries) == ("DEMO_USE_HIP",)
    assert regions.project_amd_macros(entries, ("MINE",)) == ("MINE", "DEMO_USE_HIP")


def test_a_vendor_shim_header_is_amd_as_a_whole():
    shim = regions.classify((PROJECT / "vendors" / "hip.h").read_bytes(), WORLDS)
    assert shim.shim and shim.kind_at(0) == "amd"
    common = regions.classify((PROJECT / "common.cuh").read_bytes(), WORLDS)
    assert not common.shim
    few = b"".join(b"#define cudaX%d hipX%d\n" % (i, i) for i in range(regions.SHIM_MIN_DEFINES - 1))
    assert not regions.classify(few, WORLDS).shim
    assert regions.classify(few + b"#define cudaLast hipLast\n", WORLDS).shim


def test_directives_without_if_and_broken_nesting_do_not_fail():
    assert regions.classify(b"#endif\n#else\nx\n#if 1\n", WORLDS).ranges == []
    assert regions.classify(b"no directives at all", WORLDS).ranges == []


def _audit(tmp_path: Path, *extra: str) -> dict:
    out = tmp_path / "audit.json"
    assert main(["audit", str(PROJECT), "--rocm", "5.2", "--format", "json", "-o", str(out), "-q", *extra]) == 0
    return json.loads(out.read_text())


def test_audit_reports_ported_ptx_as_info_at_no_cost_and_never_amd_assembly(tmp_path: Path):
    doc = _audit(tmp_path)
    assert [(f["path"], f["line"], f["code"], f["severity"], f["platform"], f["effort_hours"]["likely"])
            for f in doc["findings"]] == [("common.cuh", 26, "PK301", "info", "ported", 0.0),
                                          # `__CUDA_ARCH__ >= 350` with no AMD branch: PK103, costed
                                          ("kernels.cu", 17, "PK103", "medium", "", 0.5)]
    assert doc["findings"][0]["message"].startswith("already ported (this #if has an AMD branch")
    assert doc["summary"]["platforms"] == {
        "amd_bytes": 784, "ported_bytes": 196, "nvidia_bytes": 28, "shared_bytes": 1818,
        "amd_path_share": 0.3468, "shim_files": ["vendors/hip.h"], "amd_macros": ["DEMO_USE_HIP"],
        "refs_already_ported": 11, "findings_left_amd": 0, "findings_already_ported": 1,
    }


def test_amd_assembly_outside_any_branch_is_not_ptx(tmp_path: Path):
    (tmp_path / "k.cu").write_text(
        '__global__ void k(float *a) {\n  asm volatile("v_dot2_f32_f16 %0, %1, %2, %0" : "+v"(a[0]));\n'
        '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(*(unsigned *)a));\n}\n')
    out = tmp_path / "a.json"
    assert main(["audit", str(tmp_path / "k.cu"), "--format", "json", "-o", str(out), "-q"]) == 0
    assert [(f["line"], f["code"]) for f in json.loads(out.read_text())["findings"]] == [(3, "PK301")]


def test_configured_amd_macros_come_from_the_project_settings(tmp_path: Path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.portkit]\namd-macros = ["MY_HIP"]\n')
    (tmp_path / "k.cu").write_text('#ifdef MY_HIP\nvoid f() { hipDeviceSynchronize(); }\n#else\n'
                                   'void f() { cudaDeviceSynchronize(); }\n#endif\n')
    monkeypatch.chdir(tmp_path)
    assert main(["convert", "k.cu", "--check"]) == 0          # nothing to change: the #else is ported
    (tmp_path / "pyproject.toml").write_text('[tool.portkit]\namd-macros = ["MY HIP"]\n')
    assert main(["convert", "k.cu", "--check"]) == 2
