"""Every rule against its cases: fixtures/rules/PKnnn/ holds code that must be flagged and code
that must not, with the expected findings marked on their lines (`// expect: PK201`).

A line without a marker must have no finding at all, of any code: the test compares the exact
multiset of (line, code) per file, so a missed finding and a false alarm both fail it.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from conftest import REPO
from portkit import rules
from portkit.commands.audit import ScanJob, audit_bytes
from portkit.core.files import kind_of
from portkit.core.tables.mappings import parse_version
from portkit.commands.scan.walk import Options
from portkit.engine.facts import ProjectFacts

RULES_DIR = REPO / "fixtures" / "rules"
CASES = sorted(p for p in RULES_DIR.rglob("*") if p.is_file() and p.name != "README.md"
               and p.suffix not in (".fixed", ".converted"))   # a fix's expected bytes (tests/test_rule_fixes.py)
MARKER = re.compile(r"(?://|#)\s*expect:\s*((?:PK\d{3}\s*)+)")
ROCM = re.compile(r"audit-rocm:\s*(\d+\.\d+)")
# a case that is a PyTorch extension's source (torch hipifies it at build time), as the pipeline
# learns from a setup.py CUDAExtension (ProjectFacts.torch_sources) when a project is audited
TORCH_SOURCE = "audit-torch-source"


def expected(path: Path) -> Counter:
    found: Counter = Counter()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = MARKER.search(line)
        if match:
            for code in match.group(1).split():
                found[(number, code)] += 1
    return found


def audit_file(path: Path, select: frozenset[str] | None = None):
    text = path.read_bytes()
    rocm = ROCM.search(text[:300].decode("utf-8", "replace"))
    options = Options(audit=True, rocm=parse_version(rocm.group(1) if rocm else "5.2"))
    kind = kind_of(path.name) or "source"
    enabled = select or rules.selected(None, None)
    rel = path.relative_to(RULES_DIR).as_posix()
    facts = ProjectFacts(torch_sources=frozenset({rel}) if TORCH_SOURCE.encode() in text[:300] else frozenset())
    return audit_bytes(rel, text, kind, ScanJob(options, facts, enabled=enabled))


@pytest.mark.parametrize("path", CASES, ids=[p.relative_to(RULES_DIR).as_posix() for p in CASES])
def test_rule_cases(path: Path):
    scan = audit_file(path)
    actual = Counter((f.line, f.code) for f in scan.findings)
    want = expected(path)
    details = "\n".join(f"  line {f.line}: {f.code} {f.message}" for f in scan.findings)
    assert actual == want, f"missing {sorted((want - actual).elements())}, " \
                           f"unexpected {sorted((actual - want).elements())}\nfindings:\n{details}"


# PK0xx come from the converter, PK509 (a choice convert made) is reported by convert only,
# deep-only rules (PK207) by `--engine clang` (tests/test_deep.py), and
# PK7xx by verify from compiler errors (tests/test_verify.py), PK902 by check (tests/test_hardening_gate.py):
# their exact lines are tested with the conversion corpus (tests/test_build_files.py for PK509).
AUDIT_RULES = [r for r in rules.all_rules()
               if not r.code.startswith(("PK0", "PK7")) and r.code not in ("PK509", "PK902") and not r.deep_only]


@pytest.mark.parametrize("rule", AUDIT_RULES, ids=[r.code for r in AUDIT_RULES])
def test_every_rule_has_flagged_and_clean_cases(rule):
    """Each audit rule is exercised: some case expects it, and some case of its own expects none."""
    folder = RULES_DIR / rule.code
    assert folder.is_dir(), f"no cases for {rule.code} in {folder}"
    files = [p for p in folder.iterdir() if p.is_file()]
    assert any(code == rule.code for p in CASES for (_, code) in expected(p)), f"no case flags {rule.code}"
    if rule.code != "PK901":
        assert any(not any(code == rule.code for (_, code) in expected(p)) for p in files), \
            f"{rule.code}: no clean case (code that must not be flagged)"


def test_select_by_prefix_keeps_only_that_group():
    path = RULES_DIR / "PK201" / "flagged.cu"
    scan = audit_file(path, select=rules.selected(["PK2"], ["PK203"]))
    codes = {f.code for f in scan.findings}
    assert codes and all(c.startswith("PK2") and c != "PK203" for c in codes)
