"""Issue 53's precision items, beyond the (line, code) pairs tests/test_rules.py compares: the
severity and price of PK307 at an opt-in call (a size above the LDS re-tiles; a size not known
here ports with the cast convert writes: an info, no hours), and PK310's message naming the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO
from portkit import rules
from portkit.commands.audit import ScanJob, audit_bytes
from portkit.commands.scan.walk import Options
from portkit.core.tables.mappings import parse_version
from portkit.estimate.effort import default_model

CASES = REPO / "fixtures" / "rules"


def _findings(rel: str, code: str):
    path = CASES / rel
    job = ScanJob(Options(audit=True, rocm=parse_version("6.2")), enabled=rules.selected(None, None))
    return [f for f in audit_bytes(rel, path.read_bytes(), "source", job).findings if f.code == code]


@pytest.mark.parametrize("rel, want", [
    ("PK307/flagged.cu", [(44, "high"), (54, "high"), (56, "high"), (65, "info")]),
    ("PK307/opt_in_info.cu", [(45, "info")]),
])
def test_pk307_retile_only_where_the_size_is_above_the_lds(rel: str, want):
    assert [(f.line, f.severity) for f in _findings(rel, "PK307")] == want


def test_pk307_opt_in_costs_nothing_and_says_converted():
    model = default_model()
    opt_in, = _findings("PK307/opt_in_info.cu", "PK307")
    assert model.finding_hours(opt_in) == (0.0, 0.0, 0.0)
    assert "converted" in opt_in.message and "const void*" in opt_in.message
    above = [f for f in _findings("PK307/flagged.cu", "PK307") if f.line == 54]
    assert model.finding_hours(above[0])[1] > 0 and "96 KiB" in above[0].message


def test_pk310_names_the_fix_per_construct():
    found = {f.line: f.message for f in _findings("PK310/flagged.cu", "PK310")}
    assert sorted(found) == [20, 26, 34, 41]
    assert "operator[]" in found[20] and "fixed-size array" in found[26]
    assert "const char*" in found[34] and "'throw'" in found[41]
