"""What every file of one audit or check run is scanned with.

Its own module so that the commit gate (commands/check.py) imports no more than it scans with:
commands/audit.py also brings the estimate, which a check of five files never needs.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.context import Options
from ..engine.facts import ProjectFacts


@dataclass(frozen=True)
class ScanJob:
    """What every file of one run is scanned with (picklable: it travels to worker processes)."""

    scan: Options
    enabled: frozenset[str]
    facts: ProjectFacts = ProjectFacts()   # what the project pipeline learned of the tree
    hours: bool = True       # attach each finding's effort range (check does not need it)
