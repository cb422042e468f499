"""`portkit rules`, `portkit explain` and `portkit mappings`: what portkit knows, printed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import add_mappings, emit_rendered


def add_rules_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="list the audit rules",
                       description="List every rule: code, name, default severity, category, summary.")
    p.add_argument("--format", choices=("text", "markdown"), default="text")
    e = sub.add_parser("explain", help="show one rule's documentation",
                       description="Print a rule's documentation: what it finds, why it matters on AMD "
                                   "GPUs, an example, what to do instead, and the effort.")
    e.add_argument("code", metavar="CODE", help="a rule code, e.g. PK201")
def add_mappings_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mappings", help="coverage of the mapping tables, one name, or a full export",
        description="Without NAME: coverage by family (names known, with a HIP target, with a ROC "
                    "target, unsupported). With NAME: that CUDA name's record (or the CUDA names that "
                    "become a HIP NAME); exit 1 if unknown. --format exports every record. The project's own "
                    "mapping files ([tool.portkit] mappings, --mappings) are included, marked with their file.")
    p.add_argument("name", nargs="?", metavar="NAME", help="a CUDA name or header, e.g. cudaMallocAsync")
    p.add_argument("--format", choices=("text", "json", "csv", "markdown"), default="text")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the export to FILE")
    add_mappings(p)


def run_rules(args: argparse.Namespace) -> int:
    from .. import rules
    from ..report import rules as report

    if args.command == "explain":
        report.render_rule(rules.get(args.code), sys.stdout)
        return 0
    report.render_list(rules.all_rules(), sys.stdout, args.format)
    return 0


def run_mappings(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ..core.tables.coverage import lookup
    from ..project import config, mapping_files
    from ..core.tables.mappings import default_db
    from ..core.tables.project_tables import merged
    from ..report import mappings as report

    tables = mapping_files.read(config.find(), args.mappings)
    db = merged(tables) if tables else default_db()
    console = Console(highlight=False, soft_wrap=True)
    if args.name:
        found = lookup(db, args.name)
        if not found:
            from ..report.safe_text import safe
            print(f"portkit: {safe(args.name)}: not in the mapping tables", file=sys.stderr)
            return 1
        for index, m in enumerate(found):
            if index:
                console.print()
            report.render_record(m, console)
        return 0
    if args.format == "text":
        report.render_coverage(db, console)
        return 0
    render = report.EXPORTS[args.format]
    if args.output is None:
        render(db, sys.stdout)
        return 0
    emit_rendered(lambda stream: render(db, stream), args.output, f"the {args.format} export")
    return 0
