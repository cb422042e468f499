"""`portkit audit` and `portkit report` on the command line: options, the run, the report files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import deep as cli_deep
from .common import (MAX_TEAM, add_config, add_file_set, add_file_timeout, add_jobs, add_mappings, add_no_cache,
    add_platform_model, bounded, check_file_timeout, codes, configuration, count, emit_rendered, nothing_read,
    progress_factory, say_scope)
from ..core.errors import PortkitError
from ..report import AUDIT_EMITTERS
from ..report.safe_text import safe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..report.audit_model import Audit
    from ..report.html_verify import Compiles
    from ..report.html_view import Run


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "audit", help="find what will not port and estimate the migration",
        description="Audit CUDA sources, build files and Python dependencies for what will not port "
                    "to AMD GPUs, and estimate the migration in person-weeks (P10/P50/P90). Exit 0, "
                    "or 1 when a finding is at or above --fail-on; 2 on errors.")
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or directories")
    p.add_argument("--format", choices=tuple(AUDIT_EMITTERS), default="text",
                   help="output format (default text)")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the report to FILE")
    p.add_argument("--select", type=codes, action="extend", default=[], metavar="CODES",
                   help="only these rule codes or prefixes, comma-separated (PK2,PK301)")
    p.add_argument("--ignore", type=codes, action="extend", default=[], metavar="CODES",
                   help="skip these rule codes or prefixes")
    p.add_argument("--fail-on", choices=("blocker", "high", "medium", "low", "info"),
                   help="exit 1 when a finding is at or above this severity")
    p.add_argument("--team-size", type=count("--team-size", MAX_TEAM), default=1, metavar="N",
                   help="engineers on the port (default 1)")
    p.add_argument("--focus-hours", type=bounded("--focus-hours", 1, 80), metavar="H",
                   help="focused engineering hours per person per week (default 30, from effort.toml)")
    p.add_argument("--rocm", metavar="X.Y", help="target ROCm release (default: the newest the tables know)")
    p.add_argument("--extension-sources", choices=("cuda", "hip"), default="cuda",
                   help="the sources a PyTorch CUDAExtension compiles, as convert's option of that name ports them: "
                        "CUDA, each line torch's build-time hipify cannot port a PK506 finding (default), or HIP "
                        "like any other source (docs/build.md)")
    p.add_argument("--port-style", choices=("one-way", "both-vendors"),
                   help="the port the headline prices: one-way (the tree becomes HIP) or both-vendors (a build "
                        "option, a shim header and guards; the default for a tree with its own build)")
    p.add_argument("--statistics", action="store_true", help="add counts per rule (text and csv)")
    p.add_argument("--all", action="store_true", dest="every",
                   help="text format: list every finding, info ones too (without it: the first 40, the headline's first)")
    p.add_argument("--explain-estimate", action="store_true",
                   help="print the estimate's work items as a table (what each covers, its hours and why)")
    add_platform_model(p)
    p.add_argument("--no-polyfills", action="store_false", dest="polyfills",
                   help="price the names the --rocm release lacks as left for people, not as the polyfills "
                        "`portkit convert` defines for them (docs/polyfills.md)")
    p.add_argument("--html", type=Path, metavar="FILE",
                   help="also write the HTML report for managers (one self-contained file)")
    _add_verify_result(p)
    p.add_argument("--record", action="store_true",
                   help="append this run's summary to the history (the HTML report shows the trend)")
    p.add_argument("--history", type=Path, metavar="PATH",
                   help="the history database (default: .portkit/history.sqlite under the audited root)")
    add_mappings(p)
    add_config(p)
    add_file_set(p)
    add_jobs(p)
    add_file_timeout(p)
    add_no_cache(p)
    p.add_argument("-q", "--quiet", action="store_true", help="text format: print nothing; use the exit code")
    cli_deep.add_options(p, with_flags=True)
    _report_parser(sub)


def _report_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="render a saved JSON audit as the HTML report",
                       description="Render an audit saved with `portkit audit --format json` as the "
                                   "self-contained HTML report (so CI can archive JSON and render later).")
    p.add_argument("audit", type=Path, metavar="AUDIT_JSON")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", required=True, help="the HTML file to write")
    p.add_argument("--history", type=Path, metavar="PATH", help="a history database to draw the trend from")
    _add_verify_result(p)


def _add_verify_result(p: argparse.ArgumentParser) -> None:
    p.add_argument("--verify-result", type=Path, metavar="FILE",
                   help="the output of `portkit verify --format json`: the HTML report shows how many units "
                        "compile at which ROCm release")


def run_audit(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ..project import history
    from ..engine.platform import facts as platform_facts
    from ..commands.audit import audit_paths, configured
    from ..report import audit_emitter
    from ..report.model import build

    compiles = _compiles(args)   # read first: a bad file is exit 2 before a long audit
    cfg = configuration(args)   # [tool.portkit] / portkit.toml above the paths, or --config; flags win
    defines, undefines = platform_facts.parse_defines(args.defines, args.undefines)
    scan = dict(file_timeout=check_file_timeout(args.file_timeout), platform_model=args.platform_model,
                polyfills=args.polyfills, defines=defines, undefines=undefines, port_style=args.port_style)
    opts = configured(cfg, rocm=args.rocm, select=tuple(args.select), ignore=tuple(args.ignore),
                      fail_on=args.fail_on, scan=scan, mappings=tuple(args.mappings), team_size=args.team_size,
                      focus_hours=args.focus_hours,
                      jobs=args.jobs, deep=cli_deep.options(args, args.jobs, check_file_timeout(args.file_timeout)),
                      cache=args.cache, extension_sources=args.extension_sources)
    result = audit_paths(args.paths, opts, progress_factory=progress_factory(Console(stderr=True), "auditing"))
    if not args.quiet:
        say_scope(cfg, result.left_out)
        for line in cli_deep.notes(result.deep):
            print(f"portkit: {safe(line)}", file=sys.stderr)
    empty = _empty(args, result)
    doc = build(result)
    history_path = args.history or result.root / history.DEFAULT
    refused = _record(doc, history_path, result.root) if args.record else None
    if args.html is not None:
        _write_html(doc, args.html, _history(history_path, doc.root, result.root), args.quiet, compiles)
    formatter = audit_emitter(args.format)
    if args.explain_estimate:   # the work items instead of the report, in any --format
        _explain(doc, args.output, args.quiet)
    elif args.output is not None:
        options = _render_options(args)
        emit_rendered(lambda stream: formatter.render(doc, stream, **options), args.output,
                      f"the {args.format} report", args.quiet)
    elif not (args.quiet and args.format == "text"):
        formatter.render(doc, sys.stdout, **_render_options(args))
        sys.stdout.flush()
    if args.format != "text" or args.quiet or args.output is not None:
        for s in result.errors:  # the text report lists them itself
            print(f"portkit: {safe(s.rel)}: {safe(s.reason)}", file=sys.stderr)
    if refused is not None:
        print(f"portkit: error: {safe(refused)}", file=sys.stderr)
    if result.errors or refused is not None or empty:
        return 2
    return 1 if result.failed() else 0


def _empty(args: argparse.Namespace, result) -> bool:
    """A run that read no file says so (ruff: "No Python files found"), never a clean "nothing to
    port"; under --fail-on (the flag or the configuration's) it is an error: a gate that checked
    nothing must not pass. True: exit 2."""
    if result.files:
        return False
    failing = result.options.fail_on is not None
    if failing or not args.quiet:
        print(f"portkit: {'error' if failing else 'warning'}: {nothing_read('audit', args.paths)}", file=sys.stderr)
    return failing


def _render_options(args: argparse.Namespace) -> dict:
    """What the chosen format is told: --statistics; --all is the text report's (the other formats
    list every finding already)."""
    if args.every and args.format != "text":
        raise PortkitError(f"--all lists every finding of the text report; --format {args.format} lists them all already")
    return {"statistics": args.statistics, **({"every": True} if args.every else {})}


def _explain(doc: Audit, output: Path | None, quiet: bool) -> None:
    """--explain-estimate: the work items on standard output, or in the -o file, which is written
    as every report file is (emit_rendered: a link, a FIFO or a directory is handled or refused alike)."""
    from ..report.text import render_explain
    if output is None:
        render_explain(doc, sys.stdout)
        sys.stdout.flush()
        return
    emit_rendered(lambda stream: render_explain(doc, stream), output, "the estimate's work items", quiet)


def _record(doc: Audit, path: Path, root: Path) -> PortkitError | None:
    """--record: append the run. A database that cannot be opened, or that holds anything but
    portkit's table (a trigger there would run), costs the record (a warning); one reached
    through a link in the tree is refused, reported after the audit, and exits 2."""
    from ..project import history
    from ..report.audit_model import as_json
    try:
        history.check_path(path, root)
    except PortkitError as exc:
        return exc
    # what history.row_of reads: the summary's counts and the estimate, not every finding as JSON
    summary = {"generated": doc.generated, "root": doc.root, "tool": as_json(doc.tool),
               "summary": as_json(doc.summary), "estimate": as_json(doc.estimate)}
    try:
        history.record(summary, path)
    except PortkitError as exc:   # the audit itself is still reported
        print(f"portkit: warning: {safe(exc)}; this run is not recorded", file=sys.stderr)
    return None


def _compiles(args: argparse.Namespace) -> Compiles | None:
    """--verify-result: verify's counts for the HTML report, checked before anything runs."""
    if args.verify_result is None:
        return None
    if getattr(args, "html", "report") is None:
        raise PortkitError("--verify-result is shown in the HTML report: add --html FILE")
    from ..report.html_verify import read
    return read(args.verify_result)


def _write_html(doc: Audit, output: Path, runs: list[Run], quiet: bool = False,
                compiles: Compiles | None = None) -> None:
    from ..report import html
    emit_rendered(lambda stream: html.render(doc, stream, history=runs, compiles=compiles), output,
                  "the HTML report", quiet)


def run_report(args: argparse.Namespace) -> int:
    import json

    from ..report.audit_load import load
    from ..report.shape import audit_problem
    try:
        doc = json.loads(args.audit.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PortkitError(f"{args.audit}: cannot read the audit JSON: {exc}") from None
    except RecursionError:
        raise PortkitError(f"{args.audit}: cannot read the audit JSON: nested too deeply") from None
    if not isinstance(doc, dict) or doc.get("version") != 1 or "estimate" not in doc:
        raise PortkitError(f"{args.audit}: not a portkit audit (write one with `portkit audit --format json`)")
    found = audit_problem(doc)
    if found is not None:
        raise PortkitError(f"{args.audit}: not a valid portkit audit: {found}")
    runs = _history(args.history, doc["root"]) if args.history else []
    _write_html(load(doc), args.output, runs, compiles=_compiles(args))
    return 0


def _history(path: Path, root: str, tree: Path | None = None) -> list[Run]:
    """The recorded runs for the trend; a history that cannot be read in time, is not portkit's
    (a view, a trigger), or is reached through a link in the audited `tree` costs the trend, not
    the report."""
    from ..project import history
    from ..report.html_view import Run
    try:
        if tree is not None:
            history.check_path(path, tree)
        return [Run(r["generated"], r["p50_weeks"], r["findings"]) for r in history.load(path, root)]
    except PortkitError as exc:
        print(f"portkit: warning: {safe(exc)}; the report has no trend", file=sys.stderr)
        return []
