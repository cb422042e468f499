"""A tree that carries a vendor-neutral library as source (project/carried.py).

nccl and rccl keep NVTX3's headers in src/include/nvtx3. Read as CUDA, rccl (which already
builds for AMD) was priced 22.3 person-weeks, 464 h of them "adopt the ROCm counterpart of NVTX"
over 373 sites, 434 of which were inside the copy itself; convert rewrote the project's NVTX calls
to roctx beside NVTX3 C++ code roctx cannot express. The tree here is the golden case
fixtures/convert/carried_nvtx_copy: real NVTX3 headers (from the CUDA toolkit) beside a kernel.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import REPO
from portkit.api import audit_paths
from portkit.cli.app import main
from portkit.core.errors import PortkitError
from portkit.core.files import Entry
from portkit.engine.facts import ProjectFacts
from portkit.project import carried, pipeline
from portkit.core.tables import ecosystem

CASE = REPO / "fixtures" / "convert" / "carried_nvtx_copy"


def _items(doc: dict) -> list[tuple]:
    return [(i["kind"], i["key"], i["hours"]["likely"], i["findings"]) for i in doc["estimate"]["items"]]


def _entries(*rels: str) -> list[Entry]:
    return [Entry(Path("/nowhere") / rel, rel, "source") for rel in rels]


def test_a_copy_is_the_directory_its_marker_names_wherever_it_lies():
    assert carried.learn(_entries("src/include/nvtx3/nvToolsExt.h", "src/include/nvtx3/nvtx3.hpp", "src/a.cu")) == (
        ("nvtx", "src/include/nvtx3"),)
    assert carried.learn(_entries("nvtx3/nvToolsExt.h")) == (("nvtx", "nvtx3"),)
    # a directory that only ends like one, a lone header without NVTX3's directory, no marker: no copy
    assert carried.learn(_entries("src/mynvtx3/nvToolsExt.h", "include/nvToolsExt.h", "nvtx3/nvtx3.hpp")) == ()
    found = (("nvtx", "src/include/nvtx3"),)
    assert carried.library_of("src/include/nvtx3/nvtxDetail/nvtxImpl.h", found) == "nvtx"
    assert carried.library_of("src/include/nvtx3.h", found) == ""


def test_a_carried_copy_keeps_its_names_except_those_naming_cuda_objects():
    facts = ProjectFacts(carried=(("nvtx", "nvtx3"),))
    assert [facts.carries_name("nvtx", n) for n in ("nvtxRangePushA", "NVTX3_FUNC_RANGE_IN", "nvtx3",
                                                     "nvtxNameCudaStreamA", "nvtxNameCuDeviceA",
                                                     "NVTX_RESOURCE_TYPE_CUDA_STREAM")] == [
        True, True, True, False, False, False]
    assert [facts.carries_header(h) for h in ("nvtx3/nvToolsExt.h", "nvtx3/nvtx3.hpp", "nvToolsExt.h",
                                              "nvtx3/nvToolsExtCudaRt.h", "cuda_runtime.h")] == [
        True, True, True, False, False]
    assert not ProjectFacts().carries_name("nvtx", "nvtxRangePushA")
    assert not facts.carries_name("runtime", "cudaMalloc")


def test_the_estimate_prices_no_nvtx_for_a_tree_that_carries_it():
    doc = audit_paths([CASE / "input"])
    assert [f for f in doc["findings"] if f["path"] == "ranges.cu"] == []
    assert _items(doc) == [("dependency", "cuda-runtime", 2.0, ["ranges.cu:3"]), ("fixed", "ci", 0.525, []),
                           ("fixed", "cuda_toolchain", 0.5, []), ("fixed", "project_tests", 0.25, []),
                           ("unit", "validate_kernel", 0.25, []), ("unit", "review_converted_ref", 0.05, [])]
    # the copy's own CUDA-object names are still findings (what a change to the copy is gated by),
    # but they are the library's: none of them is priced
    inside = sorted({(f["code"], f["path"]) for f in doc["findings"]})
    assert inside == [("PK001", "nvtx3/nvtxDetail/nvtxImpl.h"), ("PK005", "nvtx3/nvToolsExt.h"),
                      ("PK005", "nvtx3/nvtx3.hpp"), ("PK005", "nvtx3/nvtxDetail/nvtxImpl.h"),
                      ("PK005", "nvtx3/nvtxDetail/nvtxImplCore.h"), ("PK005", "nvtx3/nvtxDetail/nvtxInit.h"),
                      ("PK005", "nvtx3/nvtxDetail/nvtxInitDecls.h"), ("PK005", "nvtx3/nvtxDetail/nvtxInitDefs.h"),
                      ("PK005", "nvtx3/nvtxDetail/nvtxTypes.h"), ("PK007", "nvtx3/nvToolsExt.h")]


def test_without_the_copy_the_same_code_adopts_roctx(tmp_path: Path):
    """The control: ranges.cu alone includes NVTX from the CUDA toolkit, and NVTX is a dependency."""
    shutil.copy(CASE / "input" / "ranges.cu", tmp_path / "ranges.cu")
    doc = audit_paths([tmp_path])
    assert [(f["code"], f["line"]) for f in doc["findings"]] == [("PK401", 4), ("PK004", 5), ("PK401", 5),
                                                                 ("PK001", 15)]
    # NVTX adopted, the partial include's caveat, and four more converted names to review (roctx's)
    assert _items(doc) == [("dependency", "nvtx", 3.55, ["ranges.cu:15", "ranges.cu:4", "ranges.cu:5"]),
                           ("dependency", "cuda-runtime", 2.0, ["ranges.cu:3"]), ("fixed", "ci", 0.525, []),
                           ("fixed", "cuda_toolchain", 0.5, []), ("fixed", "project_tests", 0.25, []),
                           ("pattern", "PK004", 0.25, ["ranges.cu:5"]), ("unit", "validate_kernel", 0.25, []),
                           ("unit", "review_converted_ref", 0.09, [])]


def test_convert_says_which_copy_it_left(tmp_path: Path, capsys):
    assert main(["convert", str(CASE / "input"), "-o", str(tmp_path / "out"), "--rocm", "5.2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("9 files of the tree's own copy of NVTX left as they are: vendor-neutral source "
                                   "that builds for AMD as it is.")


def test_the_gate_learns_the_copy_from_its_cache_as_from_the_tree():
    facts = ProjectFacts(carried=(("nvtx", "src/include/nvtx3"),))
    assert pipeline._facts_from_plain(pipeline._facts_to_plain(facts)).carried == facts.carried


@pytest.mark.parametrize("copy, message", [
    ('"nvtx3/nvToolsExt.h"', "copy must be a table with a `marker`"),
    ('{ marker = "nvToolsExt.h" }', "copy must be a table with a `marker`"),
    ('{ marker = "nvtx3/nvToolsExt.h", names = "x" }', "copy must be a table with a `marker`"),
    ('{ marker = "nvtx3/nvToolsExt.h", names_needing_cuda = "(" }', "copy.names_needing_cuda: missing ), "),
])
def test_a_bad_copy_record_is_an_error_naming_the_library(tmp_path: Path, copy: str, message: str):
    table = tmp_path / "ecosystem.toml"
    table.write_text(f'[[library]]\nid = "nvtx"\nname = "NVTX"\nstatus = "partial"\ncopy = {copy}\n')
    with pytest.raises(PortkitError) as raised:
        ecosystem.load(table)
    assert str(raised.value).startswith(f"{table}: nvtx: {message}")
