"""verify's "failed on a decision" (issue 48's second target): a failed unit counts there when each
of its errors that is not a consequence of another is explained by a finding the estimate prices as
a decision (estimate/decisions.decision_of), never by a plain missing name (PK001 without an
alternative) and never by a header not installed here (PK701, PK702: not reached, apart). A name
that only a newer ROCm has (PK002 naming the release) is the decision of the ROCm release the port
targets (decisions.NEWER_ROCM): raising it makes the unit compile as written.

fixtures/verify_real/decisions/input/ (README.md there) is converted for ROCm 6.2 and compiled by
Debian's clang-19 against the pinned 6.2 pack, as tests/test_verify_real.py does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import REPO, clang19
from portkit.api import convert_paths
from portkit.cli.app import main
from portkit.commands.results import ErrorReport, UnitReport
from portkit.core.findings import Finding
from portkit.core.tables import ecosystem
from portkit.estimate import decisions, effort

CASE = REPO / "fixtures" / "verify_real" / "decisions" / "input"


def _finding(code: str, subject: str, severity: str = "high") -> Finding:
    return Finding(code, "rule", severity, "api", "src/a.hip", 3, 1, 3, 2, "message", subject=subject)


def test_a_finding_is_a_decision_where_the_estimate_prices_one():
    """The estimate's own test, not a list of codes: a library not drop-in on ROCm (libcu++ through
    its namespace or its header, CUTLASS, NVBench), CUB's dispatch layer (library internals), a
    CUDA-only subdirectory, a blocker, a name a newer ROCm release has (the release decision); a name
    HIP lacks is a site, and so is a PK002 that names no release (no ROCm has that member yet)."""
    eco, model = ecosystem.default(), effort.default_model()
    cases = [("PK001", "cuda", "high"), ("PK401", "libcudacxx", "medium"), ("PK401", "nvbench", "high"),
             ("PK001", "cub::DispatchRadixSort", "high"), ("PK510", "third_party/cutlass", "high"),
             ("PK302", "launch", "blocker"), ("PK001", "__double2half", "high"), ("PK002", "__nv_fp8_e4m3", "high"),
             ("PK702", "fast_double_parser.h", "info"), ("PK701", "hipblas", "low")]
    assert [decisions.decision_of(_finding(*c), eco, model) for c in cases] == [
        "libcudacxx", "libcudacxx", "nvbench", "library_internals", "cuda_only_subdirectory", "PK302:launch",
        "", "", "", ""]
    released = [("__nv_fp8_e4m3 -> __hip_fp8_e4m3 needs ROCm 6.3, the target is ROCm 6.2", "newer_rocm"),
                ("__shfl_sync is declared at ROCm 6.2 only with -DHIP_ENABLE_WARP_SYNC_BUILTINS (the *_sync warp "
                 "functions, 64-bit masks; declared by default from ROCm 7.0): define it for the build", "newer_rocm"),
                ("coalesced_group::num_threads() is in no ROCm release portkit knows, the target is 6.2", ""),
                ("hipblasGemmEx takes 'hipblasDatatype_t' at ROCm 6.2 where the call passes 'hipDataType': call "
                 "hipblasGemmEx_v2 (cublasGemmEx's HIP name from ROCm 6.0, which takes it), or build with ROCm 7.0 "
                 "or newer, where it has that signature by default", "newer_rocm"),
                # the project's own shim writes a name the target lacks: the fix is at the target, no release
                ("hipHostAllocPortable is the project's own #define of cudaHostAllocPortable (src/x.h:29), its AMD "
                 "port's name, which ROCm 6.2 does not declare: ROCm 6.2's name for cudaHostAllocPortable is "
                 "hipHostMallocPortable: write that in the #define, or build with the newer ROCm the project's AMD "
                 "build expects", "")]
    for message, decided in released:
        finding = Finding("PK002", "needs-newer-rocm", "high", "api", "src/a.hip", 3, 1, 3, 2, message, subject="x")
        assert decisions.decision_of(finding, eco, model) == decided, message


def _error(line: int, decision: str = "", consequence_of: str | None = None, code: str = "PK001") -> ErrorReport:
    error = ErrorReport("src/a.hip", line, 1, "error", "message", decision=decision, consequence_of=consequence_of)
    error.findings = [] if consequence_of else [_finding(code, "x")]
    return error


def test_a_unit_fails_on_a_decision_only_when_every_root_error_names_one():
    unit = lambda *errors, status="failed": UnitReport("src/a.hip", status, 0.0, (), "tree", list(errors))
    assert unit(_error(3, "libcudacxx"), _error(9, consequence_of="src/a.hip:3")).failed_on_decision
    assert not unit(_error(3, "libcudacxx"), _error(9)).failed_on_decision            # a plain PK001 beside it
    assert not unit(_error(3, "libcudacxx"), _error(5, code="PK702")).failed_on_decision   # a header not here
    assert not unit(_error(3, "libcudacxx"), status="not_reached").failed_on_decision
    assert not unit(status="failed").failed_on_decision                              # no error line: a gap
    assert not unit(status="compiled").failed_on_decision


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("decisions") / "out"
    convert_paths([CASE], output=out, rocm="6.2")
    return out


@pytest.mark.compile
def test_verify_json_marks_each_unit_and_error_with_its_decision(converted: Path, pack62: Path, capsys):
    clang19()
    assert main(["verify", str(converted), "--source", str(CASE), "--rocm", "6.2", "--rocm-headers", str(pack62),
                 "--offline", "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {(u["path"], u["status"], u["explained"], u["failed_on_decision"],
             tuple((e["line"], tuple(f["code"] for f in e["findings"]), e["decision"]) for e in u["errors"]))
            for u in doc["units"]} == {
        ("src/count.cu", "failed", True, True, ((5, ("PK401",), "libcudacxx"),)),
        ("src/sort.cu", "failed", True, True, ((2, ("PK001",), "library_internals"),)),
        # a newer ROCm has the type (6.3): the release the port targets is the decision
        ("src/fp8.cu", "failed", True, True, ((9, ("PK002",), "newer_rocm"),)),
        # no ROCm has it: a plain missing name, a site
        ("src/l2.cu", "failed", True, False, ((9, ("PK001",), None),)),
        # __double2half, which no ROCm up to 6.2.2 has: convert defines it (portkit_double2half,
        # mappings/polyfills.toml), so the unit compiles; the name itself is still a site, not a
        # decision (test_a_finding_is_a_decision_where_the_estimate_prices_one)
        ("src/half.cu", "compiled", False, False, ())}
    assert doc["summary"] | {"seconds": 0} == {"units": 5, "compiled": 1, "failed": 4, "explained": 4,
                                               "unexplained": 0, "not_reached": 0, "failed_on_decision": 3,
                                               "seconds": 0}


@pytest.mark.compile
def test_verify_text_counts_the_units_failed_on_a_decision(converted: Path, pack62: Path, capsys):
    clang19()
    main(["verify", str(converted), "--source", str(CASE), "--rocm", "6.2", "--rocm-headers", str(pack62), "--offline"])
    lines = capsys.readouterr().out.splitlines()
    assert re.sub(r" in \d+\.\d s$", "", lines[-2]) == \
        "5 translation units: 1 compiled, 4 failed (4 explained by findings, 0 unexplained, 0 not reached)"
    assert lines[-1] == ("failed only on a decision: 3 of the 4 failed units reached (libcudacxx: 1, "
                         "library_internals: 1, newer_rocm: 1); compiled or failed on a decision: 4 of 5 reached "
                         "units (80%)")
