"""The platform model (portkit/engine/platform/regions.py, ppexpr.py): which code is AMD-only, NVIDIA-only or shared,
and what convert and audit do with it. The dual-vendor fixture's golden bytes are checked by
test_convert_fixtures.py and compiled by test_compile_fixtures.py; here the exact regions and
findings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO
from portkit.engine.platform import facts as platform_facts, ppexpr, regions
from portkit.cli.app import main

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
        (b"newer();\n", "fallback"),                                                  # AMD takes older()
        (b"#define V_DOT2\n", "amd"),
        (b'asm volatile("v_dot2_f32_f16 %0, %1, %2, %0");\n', "amd"),                # V_DOT2 only on AMD
    ]
    assert not found.shim and found.totals(len(SOURCE))["ported"] == 63


def test_without_the_project_macro_its_branches_are_shared():
    found = regions.classify(SOURCE, WORLDS)
    assert [SOURCE[s:e] for s, e, k in found.ranges if k == "amd"] == [b"hip_code();\n"]


def test_the_tree_pass_learns_selectors_and_the_names_the_shim_maps():
    from portkit.core.files import discover
    from portkit.engine.facts import ProjectFacts
    _, entries, _ = discover([PROJECT])
    found = platform_facts.project_platforms(entries, ProjectFacts())
    assert found.amd_macros == ("DEMO_USE_HIP",)
    assert sorted(found.shim_names) == [
        b"__shfl_xor_sync", b"cudaDeviceSynchronize", b"cudaError_t", b"cudaFree", b"cudaGetErrorString",
        b"cudaMalloc", b"cudaMemcpy", b"cudaMemcpyDeviceToHost", b"cudaMemcpyHostToDevice", b"cudaStream_t",
        b"cudaSuccess"]
    assert platform_facts.project_platforms(entries, ProjectFacts(amd_macros=("MINE",))).amd_macros == \
        ("MINE", "DEMO_USE_HIP")


def test_a_vendor_shim_header_is_amd_as_a_whole():
    shim = regions.classify((PROJECT / "vendors" / "hip.h").read_bytes(), WORLDS)
    assert shim.shim and shim.kind_at(0) == "amd"
    common = regions.classify((PROJECT / "common.cuh").read_bytes(), WORLDS)
    assert not common.shim
    few = b"".join(b"#define cudaX%d hipX%d\n" % (i, i) for i in range(regions.SHIM_MIN_DEFINES - 1))
    assert not regions.classify(few, WORLDS).shim
    assert regions.classify(few + b"#define cudaLast hipLast\n", WORLDS).shim


def test_an_amd_selector_in_a_mixed_condition_makes_the_nvidia_branch_ported():
    """faiss Select.cuh (issue 31): `#if CUDA_VERSION < 9000 || defined(USE_AMD_ROCM)` is the author's
    AMD path, so the `#else` (`__any_sync`) is ported, left as it is, not a fallback to convert."""
    data = (b"#if CUDA_VERSION < 9000 || defined(USE_AMD_ROCM)\nx = __any(x);\n#else\n"
            b"x = __any_sync(0xffffffff, x);\n#endif\n")
    assert regions.classify(data, WORLDS).ranges == [(data.index(b"x = __any_sync"), data.index(b"#endif"), "ported")]
    plain = data.replace(b" || defined(USE_AMD_ROCM)", b"")   # no AMD choice: the AMD build's fallback
    assert regions.classify(plain, WORLDS).ranges == [(plain.index(b"x = __any_sync"), plain.index(b"#endif"), "fallback")]


def test_hips_own_nvidia_branch_is_ported_code():
    """`#if defined(__HIP_PLATFORM_NVIDIA__)`: HIP code built by nvcc (convert's vote helper among it)."""
    data = b"#if defined(__HIP_PLATFORM_NVIDIA__)\n#define __all(p) __all_sync(__activemask(), (p))\n#endif\n"
    assert regions.classify(data, WORLDS).ranges == [(data.index(b"#define"), data.index(b"#endif"), "ported")]
    assert regions.classify(data.replace(b"defined(", b"!defined("), WORLDS).ranges == []


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
        "amd_bytes": 784, "ported_bytes": 224, "nvidia_bytes": 0, "shared_bytes": 1905,
        "amd_path_share": 0.346, "shim_files": ["vendors/hip.h"], "amd_macros": ["DEMO_USE_HIP"],
        "refs_already_ported": 21, "findings_left_amd": 0, "findings_already_ported": 1, "findings_inactive": 0,
        "builds_for_amd": False, "amd_build_share": 0.0, "amd_implementations": [], "amd_branch_only": False, "amd_branch_unbuilt": 0,
    }


def test_amd_assembly_outside_any_branch_is_not_ptx(tmp_path: Path):
    (tmp_path / "k.cu").write_text(
        '__global__ void k(float *a) {\n  asm volatile("v_dot2_f32_f16 %0, %1, %2, %0" : "+v"(a[0]));\n'
        '  asm volatile("mov.u32 %0, %%smid;" : "=r"(*(unsigned *)a));\n}\n')
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


def test_defines_pick_branches_and_leave_the_rest_out_of_the_audit(tmp_path: Path):
    """-D/-U with the default engine: a configured world; its false branches' findings are left out,
    and the AMD/NVIDIA classification does not change."""
    doc = _audit(tmp_path, "-D", "USE_ROCM")
    assert [(f["path"], f["line"], f["code"]) for f in doc["findings"]] == [("kernels.cu", 17, "PK103")]
    assert doc["summary"]["platforms"]["findings_inactive"] == 1
    doc = _audit(tmp_path, "-U", "USE_ROCM")
    assert [(f["path"], f["line"], f["code"], f["severity"]) for f in doc["findings"]] == [
        ("common.cuh", 26, "PK301", "info"), ("kernels.cu", 17, "PK103", "medium")]
    assert doc["summary"]["platforms"]["findings_inactive"] == 0


def test_configured_world_inactive_ranges():
    src = b"#if FEATURE >= 2\nnew();\n#elif defined(OLD)\nold();\n#else\nnone();\n#endif\n"
    found = regions.classify(src, regions.selectors((), (("FEATURE", 1),), ("OLD",)))
    assert [src[s:e] for s, e in found.inactive] == [b"new();\n", b"old();\n"]
    assert not found.is_inactive(src.index(b"none"))
    assert regions.classify(src, WORLDS).inactive == []


@pytest.mark.parametrize("args, message", [
    (["-D", "BAD NAME"], "portkit: error: -D BAD NAME: 'BAD NAME' is not a macro name"),
    (["-U", "1X"], "portkit: error: -U 1X: not a macro name"),
    (["-I", "inc"], "portkit: error: -p/-I: only with --engine clang"),
])
def test_bad_configuration_flags_are_one_line_errors(args, message, capsys):
    assert main(["audit", str(PROJECT), "-q", *args]) == 2
    assert capsys.readouterr().err.strip() == message


def test_convert_and_audit_say_what_was_left_as_already_ported(capsys):
    assert main(["convert", str(PROJECT), "--check"]) == 1
    assert capsys.readouterr().out.splitlines()[1:3] == [
        "CUDA references: 1 found, 1 converted, 0 left (100.0% converted)",
        "Left as already ported: 21 CUDA names in AMD-only code, in NVIDIA branches beside an AMD one or mapped by "
        "the project's shim; 1 vendor shim header (vendors/hip.h) (docs/platforms.md; --no-platform-model converts them)"]
    assert main(["audit", str(PROJECT)]) == 0
    assert ("Already ported: 34.6% of the code is AMD-only, or NVIDIA-only beside a branch AMD builds take; 1 vendor shim "
            "header; 1 finding there reported as info, not costed") in capsys.readouterr().out.splitlines()


def test_without_the_platform_model_everything_is_converted_and_costed(tmp_path: Path, capsys):
    assert main(["convert", str(PROJECT / "vendors" / "hip.h"), "--check"]) == 0
    assert main(["convert", str(PROJECT / "vendors" / "hip.h"), "--check", "--no-platform-model"]) == 1
    doc = _audit(tmp_path, "--no-platform-model")   # the shim's own shuffle macro is judged as CUDA too
    assert [(f["path"], f["line"], f["code"], f["severity"]) for f in doc["findings"]] == [
        ("common.cuh", 26, "PK301", "high"), ("kernels.cu", 17, "PK103", "medium"), ("vendors/hip.h", 17, "PK004", "medium"),
        ("vendors/hip.h", 17, "PK101", "low")]


def test_the_commit_gate_uses_the_configured_amd_macros(tmp_path: Path, monkeypatch, capsys):
    """A hazard in a branch the project's AMD macro selects is already AMD code: it never blocks."""
    import subprocess
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "k.cu").write_text('#ifdef MY_HIP\nasm volatile("mov.u32 %0, %%smid;" : "=r"(x));\n#endif\n')
    monkeypatch.chdir(tmp_path)
    assert main(["check", "k.cu"]) == 1
    capsys.readouterr()
    (tmp_path / "pyproject.toml").write_text('[tool.portkit]\namd-macros = ["MY_HIP"]\n')
    subprocess.run(["git", "add", "pyproject.toml"], cwd=tmp_path, check=True)   # the gate's policy: the index's
    assert main(["check", "k.cu"]) == 0


def test_a_fallback_is_converted_but_a_device_host_split_is_no_counterpart():
    src = (b"#if CUDART_VERSION >= 11080\nptx();\n#else\ngeneric();\n#endif\n"
           b"#ifdef __CUDA_ARCH__\ndevice();\n#else\nhost();\n#endif\n")
    found = regions.classify(src, WORLDS)
    assert [(src[s:e], k) for s, e, k in found.ranges] == [(b"ptx();\n", "fallback"), (b"device();\n", "nvidia")]
    assert not found.protected(src.index(b"ptx"))   # converted: only an AMD branch is left as it is
