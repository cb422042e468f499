"""A header's constant of 32 that makes a kernel's block one warp in the files that include the
header (issue 49, project/warp_constants.py): reported once, at its definition in the header, with
every use in the other files listed; priced once; `--fix warp` rewrites the definition in the header
(and the kernel's assertion in the .cu follows it); a constant its project already sizes per vendor is
the platform model's (left as ported). The fixed tree is proven on the lane simulator at 32 and 64
lanes and compiled for AMD against the pinned hipCUB.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import REPO
from portkit.api import audit_paths, convert_paths
from portkit.engine.facts import ProjectFacts
from portkit.project import pipeline
from warpsim import AMD32, AMD64, CUDA32, CUDA64, HIP_NVIDIA, Device, SimError, run_host

CASE = REPO / "fixtures" / "audit" / "warp_header_constant"
CLEAN = REPO / "fixtures" / "audit" / "warp_header_constant_clean"
FILES = ("split_config.cuh", "evaluate_splits.cu", "histogram.cu")


def _warp_findings(path: Path) -> list[tuple[str, int, str, str]]:
    document = audit_paths([path], rocm="6.2", config=False)
    return [(f["path"], f["line"], f["code"], f["severity"]) for f in document["findings"] if f["code"].startswith("PK2")]


def test_the_header_constant_is_reported_once_at_its_definition_with_its_uses_in_other_files():
    document = audit_paths([CASE], rocm="6.2", config=False)
    found = [f for f in document["findings"] if f["code"].startswith("PK2")]
    assert [(f["path"], f["line"], f["code"], f["severity"]) for f in found] == [
        ("split_config.cuh", 7, "PK208", "high")]   # not again at the .cu's WarpReduce
    assert found[0]["message"].endswith(
        "Uses: evaluate_splits.cu line 10 static_assert in evaluate_splits; evaluate_splits.cu line 11 "
        "cub::WarpReduce<float> in evaluate_splits, with no logical width; evaluate_splits.cu line 21 block size of "
        "the launch of evaluate_splits; evaluate_splits.cu line 21 template argument of evaluate_splits; histogram.cu "
        "line 12 index arithmetic; histogram.cu line 12 lane arithmetic")
    assert found[0]["message"].startswith("kBlockThreads = 32 makes each block of evaluate_splits one 32-lane warp "
                                          "in the files that include split_config.cuh")


def test_the_estimate_prices_the_header_constant_once():
    document = audit_paths([CASE], rocm="6.2", config=False)
    items = [i for i in document["estimate"]["items"] if "PK208" in json.dumps(i)]
    assert [(i["key"], i["count"], i["findings"]) for i in items] == [("PK208:kBlockThreads", 1, ["split_config.cuh:7"])]


def test_a_constant_the_project_sizes_per_vendor_is_the_platform_models():
    """split_config.cuh's 32 is the branch without __HIP_PLATFORM_AMD__ (64 in the AMD one): already
    ported, no effort; a logical width and a tile of 32 are not reported at all."""
    document = audit_paths([CLEAN], rocm="6.2", config=False)
    found = [f for f in document["findings"] if f["code"].startswith("PK2")]
    assert [(f["path"], f["line"], f["code"], f["severity"], f["platform"], f["effort_hours"]["high"]) for f in found] \
        == [("split_config.cuh", 8, "PK208", "info", "ported", 0.0)]


def test_a_warp_named_header_constant_is_pk201s_with_the_uses_listed(tmp_path: Path):
    for name in FILES:
        text = (CASE / name).read_text().replace("kBlockThreads", "WARP_SIZE")
        (tmp_path / name).write_text(text.replace("uint32_t constexpr WARP_SIZE = 32;", "#define WARP_SIZE 32"))
    document = audit_paths([tmp_path], rocm="6.2", config=False)
    found = [f for f in document["findings"] if f["code"].startswith("PK2")]
    assert [(f["path"], f["line"], f["code"]) for f in found] == [("split_config.cuh", 7, "PK201")]
    assert found[0]["message"].startswith("#define WARP_SIZE 32 fixes the warp size; an AMD wavefront has 64 lanes; "
                                          "the block of a kernel that relies on it being one warp. Uses: "
                                          "evaluate_splits.cu line 10 static_assert in evaluate_splits;")


def test_fix_warp_rewrites_the_header_and_the_assertion_follows(tmp_path: Path):
    convert_paths([CASE], output=tmp_path / "out", rocm="6.2", fix_warp=True, config=False)
    for name in FILES:
        assert (tmp_path / "out" / name).read_bytes() == (CASE / (name + ".fixed")).read_bytes(), name
    convert_paths([tmp_path / "out"], output=tmp_path / "again", rocm="6.2", fix_warp=True, config=False)
    for name in FILES:   # a fixed point
        assert (tmp_path / "again" / name).read_bytes() == (CASE / (name + ".fixed")).read_bytes(), name
    assert _warp_findings(tmp_path / "out") == []


def test_the_fact_survives_the_gates_facts_cache():
    facts = replace(ProjectFacts(), warp_constants=(("kBlockThreads", "a.cuh", 7, True, (("k.cu", 21, "static_assert"),)),))
    assert pipeline._facts_from_plain(json.loads(json.dumps(pipeline._facts_to_plain(facts)))) == facts
    assert Path(pipeline.warp_constants.__file__) in pipeline._facts_code()
    assert Path(pipeline.warp_constants.model().__file__) in pipeline._facts_code()


# -- the lane simulator: the original tree and the fixed one, as one translation unit ----------------

def _unit(folder: Path, suffix: str = "") -> str:
    header = (folder / ("split_config.cuh" + suffix)).read_text().replace("#pragma once", "")
    return header + (folder / ("evaluate_splits.cu" + suffix)).read_text().replace('#include "split_config.cuh"', "")


FEATURE_SUMS = [float(sum(range(f * 40, f * 40 + 40))) for f in range(3)]


def _evaluate(source: str, target, host_defines=None) -> list[float] | str:
    dev = Device(source, target)
    dev.alloc("gain", "float", [float(i) for i in range(3 * 40)])
    dev.alloc("best", "float", [0.0] * 3)
    try:
        run_host(dev, source, "evaluate", ["gain", "best", 3, 40, 0], host_defines)
    except SimError as err:
        return f"SimError: {err}"
    return dev.buffers["best"].data


def test_the_fixed_tree_is_right_at_32_and_64_lanes():
    original, fixed = _unit(CASE), _unit(CASE, ".fixed")
    assert _evaluate(original, CUDA32) == FEATURE_SUMS
    assert _evaluate(original, CUDA64).startswith("SimError: WarpReduce<float>::Sum: lane 32 of the 64-lane logical warp")
    assert _evaluate(fixed, AMD64) == FEATURE_SUMS
    assert _evaluate(fixed, HIP_NVIDIA) == FEATURE_SUMS
    assert _evaluate(fixed, AMD32, {"PORTKIT_WAVEFRONT_SIZE": "32"}) == FEATURE_SUMS


@pytest.mark.compile
def test_the_fixed_tree_compiles_for_amd_against_the_pinned_hipcub(pack62: Path, tmp_path: Path):
    from conftest import require_tool
    hipcc = require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    for library in ("hipcub", "rocprim"):
        (tmp_path / library).symlink_to(pack62 / "include" / library)
    for name in FILES:
        shutil.copy(CASE / (name + ".fixed"), tmp_path / name)
    for unit in ("evaluate_splits.cu", "histogram.cu"):
        done = subprocess.run([hipcc, "-std=c++17", "-x", "hip", "--offload-arch=gfx90a", "-c", str(tmp_path / unit),
                               "-o", os.devnull, "-I", str(tmp_path)], capture_output=True, text=True,
                              env=dict(os.environ, HIP_PLATFORM="amd"), timeout=300)
        assert done.returncode == 0, done.stderr[-4000:]
