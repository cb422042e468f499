"""What every file of one run is scanned with, and the one place a file's bytes meet the scanner.

Its own module so that the commit gate (commands/check.py) imports no more than it scans with:
commands/audit.py also brings the estimate, which a check of five files never needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...core.source import SourceFile
from ...engine.context import FileScan, Options
from ...engine.facts import ProjectFacts
from ...core.tables.mappings import MappingDB
from .text import scan_text
from .walk import scan_source


@dataclass(frozen=True)
class Job:
    """What every file of one run is scanned with (picklable: it travels to worker processes):
    the settings and what the project pipeline learned of the tree. convert's job is this one;
    a command that needs more adds its own fields in a subclass (ScanJob, compat's CompatJob)."""

    scan: Options
    facts: ProjectFacts = ProjectFacts()


@dataclass(frozen=True)
class ScanJob(Job):
    """audit's and check's job: which codes are reported, and whether findings are priced."""

    enabled: frozenset[str] = field(kw_only=True)
    hours: bool = field(default=True, kw_only=True)   # attach each finding's effort range (check does not need it)


def scan_file(source: SourceFile, kind: str, job: Job, db: MappingDB | None = None) -> FileScan:
    """One file scanned for a job: a C/C++/CUDA source walks its tree (walk.py), a build or
    Python file is read as lines (text.py). Every command makes this choice here, so a new kind
    of file is taught to all of them at once."""
    if kind == "source":
        return scan_source(source, job.scan, db, facts=job.facts)
    return scan_text(source, kind, job.scan, db, facts=job.facts)
