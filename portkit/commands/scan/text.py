"""The audit of build, dependency and Python files: line by line, comments removed.

CMake, Makefiles, setup.py, requirements and environment files are where CUDA hides outside
the sources. They are not C, so they get no tree: each text rule reads the file's lines with
`#` comments blanked out (keeping every column where it was) and reports byte positions like
the tree rules do (textlines.py has the line reader).
"""

from __future__ import annotations

from ... import buildfiles, rules
from ...engine import fix
from ...engine.context import FileScan, Options, ScanContext
from ...engine.facts import ProjectFacts
from ...core.findingstore import FindingStore
from ...core.tables.mappings import MappingDB
from ...core.tables.project_tables import db_for
from ...core.source import SourceFile


def scan_text(source: SourceFile, kind: str, options: Options, db: MappingDB | None = None,
              facts: ProjectFacts = ProjectFacts()) -> FileScan:
    """Migrate one build file (CMake, Make, setup.py: portkit/buildfiles/) and, in audit mode, run the
    text rules for `kind` over it. The audit keeps the migration's findings: PK508 says what
    `convert` will leave for a person. `--fix FAMILY` adds the fixes the family's text rules attach
    to their findings (engine/fix.py), each whole or not at all, never over the migration's edits."""
    db = db or db_for(options)
    ctx = ScanContext(source=source, db=db, options=options, target=options.target,
                      facts=facts, store=FindingStore(options.finding_cap, rules.refines()), rules=rules.by_code())
    ctx.metrics.kind = kind
    ctx.metrics.lines = source.line_count
    if kind in buildfiles.FORMATS and options.build_files:
        buildfiles.migrate(ctx, kind)
    if options.audit:
        for check in rules.text_hooks().get(kind, ()):
            check(ctx)
    families = rules.fix_families() if options.fixes else {}
    for name in sorted(options.fixes):   # --fix: the family's text rules' fixes, after the migration's edits
        checks = families[name].text.get(kind, ()) if name in families else ()
        if checks:
            fix.apply(ctx, fix.text_fixes(ctx, checks), families[name].family)
    findings = ctx.finished_findings()
    if options.audit and any(f.fixed_by is not None for f in findings):   # a text rule's fix, shown
        findings = fix.suggest(findings, {}, source)
    return FileScan(source.rel, ctx.edits, findings, ctx.metrics)
