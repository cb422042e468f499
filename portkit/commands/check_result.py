"""What `portkit check` returns: kept apart from results.py, whose other results (convert,
audit, verify: a dozen dataclasses and their imports) the commit gate never needs at start-up."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.findings import Finding

if TYPE_CHECKING:
    from .scan.suppress import Suppression


@dataclass
class CheckResult:
    """What `portkit check` found (commands/check.py); report/gate.py renders it."""

    root: Path
    fail_on: str = "high"
    files: list[str] = field(default_factory=list)   # checked, relative to root
    blocking: list[Finding] = field(default_factory=list)
    accepted: int = 0        # in the baseline
    untouched: int = 0       # on lines the change does not touch
    below: list[Finding] = field(default_factory=list)   # new, but under --fail-on
    mode: str = ""
    unchecked: list[tuple[str, str]] = field(default_factory=list)   # (file, why): not checked, so blocking
    policy: list[Finding] = field(default_factory=list)     # PK902: the change alters the gate's policy
    suppressions: list[tuple[str, "Suppression"]] = field(default_factory=list)   # added by the change
    not_compared: int = 0    # files given that do not differ from HEAD (nothing to compare)
