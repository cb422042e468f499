"""The audit of build, dependency and Python files: line by line, comments removed.

CMake, Makefiles, setup.py, requirements and environment files are where CUDA hides outside
the sources. They are not C, so they get no tree: each text rule reads the file's lines with
`#` comments blanked out (keeping every column where it was) and reports byte positions like
the tree rules do (textlines.py has the line reader).
"""

from __future__ import annotations

from .. import buildfiles, rules
from ..engine.context import FileScan, Options, ScanContext
from ..engine.facts import ProjectFacts
from ..core.findingstore import FindingStore
from ..tables.mappings import MappingDB, target_release
from ..tables.project_tables import db_for
from ..core.source import SourceFile


def scan_text(source: SourceFile, kind: str, options: Options, db: MappingDB | None = None,
              facts: ProjectFacts = ProjectFacts()) -> FileScan:
    """Migrate one build file (CMake, Make, setup.py: portkit/buildfiles/) and, in audit mode, run the
    text rules for `kind` over it. The audit keeps the migration's findings: PK508 says what
    `convert` will leave for a person."""
    db = db or db_for(options)
    ctx = ScanContext(source=source, db=db, options=options, target=target_release(options.rocm, db),
                      facts=facts, store=FindingStore(options.finding_cap, rules.refines()), rules=rules.by_code())
    ctx.metrics.kind = kind
    ctx.metrics.lines = source.line_count
    if kind in buildfiles.FORMATS and options.build_files:
        buildfiles.migrate(ctx, kind)
    if options.audit:
        for check in rules.text_hooks().get(kind, ()):
            check(ctx)
    return FileScan(source.rel, ctx.edits, ctx.finished_findings(), ctx.metrics)
