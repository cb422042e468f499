"""What `portkit audit` says needs a person in the tree convert was given, for convert's summary.

convert's own scan runs the converter only (the rules read the tree in the audit's scan, which keeps
no edits: commands/scan/walk.py), so on its own it saw no warp-size or PTX finding and said
"100.0% converted" where the audit said 4 findings need a person. The audit's scan runs here with
the settings convert resolved (the same ROCm, mapping files, polyfills, -D/-U, configuration), its
result cache shared with `portkit audit`, and the findings its headline counts are kept: the same
codes and lines, so convert's "N sites need a person" and the audit's are one number.
"""

from __future__ import annotations

from dataclasses import replace

from .. import rules
from ..core.findings import Finding
from ..project.pipeline import Project
from . import torch_sources
from .results import AuditOptions, ConvertOptions

NEEDS_PERSON = ("blocker", "high")   # the audit's headline: "N findings need a person (high severity or worse)"


def audit_options(opts: ConvertOptions) -> AuditOptions:
    """`portkit audit`'s options for the run convert was asked for: its scan settings with the
    rules on (--fix, the launch and builtin spellings are convert's choices of output, not what the
    audit reads), the configuration's select and ignore."""
    scan = replace(opts.scan, audit=True, fixes=frozenset(), launch_syntax="cuda", builtins="cuda")
    cfg = opts.config
    return AuditOptions(scan=scan, select=cfg.select, ignore=cfg.ignore, config=cfg, jobs=opts.jobs, cache=opts.cache,
                        extension_sources=opts.extension_sources)


def needs_person(project: Project, opts: ConvertOptions) -> list[Finding]:
    """The findings of high severity or worse the audit of the same paths reports, in its order.
    `project`: the audit's view that convert's own prepare made (pipeline.prepare(..., audit=)), so
    the tree is discovered, read and learned once; only the audit's per-file scan runs here (the
    estimate, and the optional code it reads, show nowhere in convert's summary)."""
    from . import audit
    options = audit_options(opts)
    # a PyTorch extension's sources as this run ports them (--extension-sources), as `portkit audit` reads them
    facts = torch_sources.mode(project.facts, options.extension_sources)
    job = audit.audit_job(options.scan, rules.selected(list(options.select), list(options.ignore)), facts)
    files = audit._outcomes(project.scanned, job, options, project.root, None)
    return [f for file in files if file.scan is not None for f in file.scan.findings if f.severity in NEEDS_PERSON]
