"""The ROCm release the port targets, priced as one decision (issue 48's "fail only on a decision",
issue 50's build-breaking constructs): every name the target lacks that a newer release has (PK002)
is a site of one item, `newer_rocm`, whose hours are the sites' work-arounds at the target and whose
decisions entry names the release where each compiles as written. verify's "failed on a decision"
reads the same family (estimate/decisions.decision_of), so the two agree.

The source compiles with nvcc (test_the_source_compiles_with_nvcc)."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest

from conftest import NVCC, require_tool
from portkit.commands.audit import AuditOptions, audit_paths
from portkit.commands.scan.walk import Options
from portkit.report import html, text
from portkit.report.audit_load import load
from portkit.report.model import audit_document

# __activemask: declared by default from ROCm 7.0 (HIP 7.0's warp-sync builtins); cudaDeviceSetLimit
# and cudaLimitStackSize: HIP has them from ROCm 5.3
SOURCE = """#include <cuda_runtime.h>

__global__ void count(unsigned long long *out) {
  unsigned long long mask = __activemask();
  if (threadIdx.x == 0) atomicAdd(out, mask);
}

int main() {
  unsigned long long *out;
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaDeviceSetLimit(cudaLimitStackSize, 4096);
  cudaMallocAsync(&out, sizeof(*out), s);
  count<<<1, 64, 0, s>>>(out);
  cudaFreeAsync(out, s);
  return cudaStreamSynchronize(s);
}
"""


def _estimate(tmp_path: Path, rocm: tuple[int, int, int]) -> dict:
    (tmp_path / "k.cu").write_text(SOURCE)
    doc = audit_document(audit_paths([tmp_path], AuditOptions(scan=Options(audit=True, rocm=rocm))))
    return doc


def test_names_a_newer_release_has_are_one_release_decision(tmp_path: Path):
    doc = _estimate(tmp_path, (5, 2, 0))
    assert [(f["code"], f["line"], f["message"]) for f in doc["findings"]] == [
        ("PK002", 4, "__activemask -> __activemask needs ROCm 7.0, the target is ROCm 5.2"),
        ("PK002", 12, "cudaDeviceSetLimit -> hipDeviceSetLimit needs ROCm 5.3, the target is ROCm 5.2"),
        ("PK002", 12, "cudaLimitStackSize -> hipLimitStackSize needs ROCm 5.3, the target is ROCm 5.2")]
    release = [i for i in doc["estimate"]["items"] if i["key"] == "newer_rocm"]
    assert [(i["kind"], i["label"], i["findings"], i["hours"]) for i in release] == [
        ("pattern", "names the target ROCm lacks (__activemask, cudaDeviceSetLimit, cudaLimitStackSize): work around "
         "them, or require ROCm 7.0", ["k.cu:12", "k.cu:4"], {"low": 1.5, "likely": 6.0, "high": 18.0})]
    # no item per name beside it: the three names' work is the one item's
    assert not [i for i in doc["estimate"]["items"] if i["key"].startswith("PK002")]
    assert doc["estimate"]["decisions"] == [{
        "id": "newer_rocm", "label": release[0]["label"],
        "alternative": "require ROCm 7.0 or newer: every site compiles as written there", "rocm_since": "7.0",
        "kernels": 0, "files": 1, "sites": 2, "blocker_sites": 0, "hours": {"p10": 4.2, "p50": 8.1, "p90": 13.6},
        "optional": ""}]


def test_one_name_is_the_same_decision_and_a_release_that_has_them_has_none(tmp_path: Path):
    doc = _estimate(tmp_path, (6, 2, 0))
    assert [(f["code"], f["line"]) for f in doc["findings"]] == [("PK002", 4)]
    assert [(d["id"], d["rocm_since"], d["sites"]) for d in doc["estimate"]["decisions"]] == [("newer_rocm", "7.0", 1)]
    assert [i["label"] for i in doc["estimate"]["items"] if i["key"] == "newer_rocm"] == [
        "names the target ROCm lacks (__activemask): work around them, or require ROCm 7.0"]
    at_7 = _estimate(tmp_path, (7, 0, 0))
    assert not [f for f in at_7["findings"] if f["code"] == "PK002"]
    assert at_7["estimate"]["decisions"] == []
    assert not [i for i in at_7["estimate"]["items"] if i["key"] == "newer_rocm"]


def test_the_text_report_names_the_release_decision_with_no_blocker_site(tmp_path: Path):
    """A decision no blocker holds (the release, library internals, the NCCL swap) is printed all the
    same: before, the text report listed decisions only beside blocker sites."""
    out = io.StringIO()
    text.render(load(_estimate(tmp_path, (5, 2, 0))), out)
    lines = out.getvalue().splitlines()
    head = next(k for k, line in enumerate(lines) if line.startswith("Decisions ("))
    assert lines[head:head + 5] == [
        "Decisions (1) - 0 blocker sites, one decision per library or feature family:",
        "  names the target ROCm lacks (__activemask, cudaDeviceSetLimit, cudaLimitStackSize): work around them, "
        "or require ROCm 7.0: 0 kernels, 1 files, 2 sites; 8 h P50",
        "      instead: require ROCm 7.0 or newer: every site compiles as written there (ROCm 7.0+)",
        "",
        "Findings by category and severity"]
    assert not any(line.startswith("Blocker sites") for line in lines)


def test_the_html_page_lists_the_release_decision_and_says_what_its_hours_are(tmp_path: Path):
    out = io.StringIO()
    html.render(load(_estimate(tmp_path, (5, 2, 0))), out)
    page = " ".join(out.getvalue().split())
    assert ("<p>Each is a choice the team makes: a CUDA library or feature with no drop-in on ROCm, a construct "
            "that breaks the AMD build, or the ROCm release to target. The hours are those of the path the estimate "
            "prices (moving the code, or working around what the target release lacks); the alternative is the other "
            "path.</p>") in page
    assert "require ROCm 7.0 or newer: every site compiles as written there" in page
    assert 'id="no-decisions"' not in page


@pytest.mark.compile
def test_the_source_compiles_with_nvcc(tmp_path: Path):
    nvcc = require_tool(NVCC, "nvcc (CUDA toolkit)")
    (tmp_path / "k.cu").write_text(SOURCE)
    proc = subprocess.run([nvcc, "-c", "k.cu", "-o", "/dev/null"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
