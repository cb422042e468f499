"""Command line: flags -> API call -> formatter -> exit code; nothing else."""

from __future__ import annotations

import argparse
import io
import os
import sys
from dataclasses import replace
from pathlib import Path

from . import cli_deep, cli_gate, cli_verify
from .version import __version__
from .errors import PortkitError

# rich, the converter and the report modules are imported by the commands that use them: the
# pre-commit hook (`portkit check`) must start fast.

PROGRESS_MIN_FILES = 6


def _convert_parser(sub: argparse._SubParsersAction) -> None:
    newest = "the newest release the tables know"
    p = sub.add_parser(
        "convert", help="convert CUDA sources to HIP",
        description="Convert CUDA C/C++ sources (one file or whole trees) to HIP, and their build files "
                    "(CMakeLists.txt and *.cmake to CMake's HIP language, Makefiles from nvcc to hipcc, "
                    "setup.py CUDAExtension flags; see docs/build.md). Only CUDA names and nvcc options "
                    "change; every other byte is kept. Exit 0 on success, 1 with --check when "
                    "something would change, 2 on errors.")
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or directories")
    out = p.add_argument_group("where the result goes (choose one)")
    out.add_argument("-o", "--output", type=Path, metavar="OUT",
                     help="mirror the input tree into OUT (files without CUDA are copied unchanged); "
                          "'-' writes one converted file to standard output")
    out.add_argument("--in-place", action="store_true", help="rewrite the files where they are (atomically)")
    out.add_argument("--backup", action="store_true",
                     help="with --in-place, keep each original as NAME.orig (an existing one is kept)")
    out.add_argument("--diff", action="store_true", help="print a unified diff, write nothing")
    out.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file would change")
    p.add_argument("--launch-syntax", choices=("cuda", "hip"), default="cuda",
                   help="keep <<<...>>> launches (cuda, default: HIP compiles them) or rewrite them to "
                        "hipLaunchKernelGGL (hip)")
    p.add_argument("--builtins", choices=("cuda", "hip"), default="cuda",
                   help="keep threadIdx.x, blockIdx.y, blockDim.z, gridDim.x (cuda, default: HIP accepts "
                        "them) or write the legacy HIP spellings hipThreadIdx_x, hipBlockIdx_y ... (hip; with "
                        "--launch-syntax hip this is the classic hipify output). ROCm: " + _builtins_help())
    p.add_argument("--rocm", metavar="X.Y",
                   help=f"target ROCm release: names HIP only has in later releases are left and "
                        f"reported (default: {newest})")
    p.add_argument("--roc", action="store_true", dest="prefer_roc",
                   help="prefer the roc* libraries (rocBLAS, rocRAND, ...) where the tables have them")
    p.add_argument("--offload-arch", action="append", metavar="GFX",
                   help="AMD GPU targets for the build files, comma-separated or repeated (default gfx90a = "
                        "MI200; gfx942 = MI300, gfx950 = MI350/MI355). CUDA's sm_XX are never mapped to a chip")
    p.add_argument("--rename", action="store_true",
                   help="write .cu files as .hip and .cuh as .hip.h (the ROCm projects' layout), with the "
                        "project's own #include lines and the sources CMake files and Makefiles list renamed to "
                        "match; a new name that is taken (a.cu beside a.hip) is reported and never overwritten. "
                        "Without it names are kept: hipcc compiles .cu with -x hip")
    p.add_argument("--rename-map", metavar="OLD=NEW[,...]",
                   help="the suffixes --rename uses (default .cu=.hip,.cuh=.hip.h), e.g. .cu=.hip,.cuh=.hpp")
    p.add_argument("--compat-header", type=Path, metavar="FILE",
                   help="single-source mode: keep the CUDA sources and generate FILE (inside the tree), a header "
                        "of #defines mapping exactly the CUDA names they use to HIP, for AMD builds only "
                        "(__HIP_PLATFORM_AMD__ or __HIP__ defined); each CUDA #include is guarded to take FILE on AMD. "
                        "With --in-place, --diff or --check")
    p.add_argument("--no-build-files", action="store_false", dest="build_files",
                   help="leave CMake files, Makefiles and setup.py as they are (they are still copied with -o)")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="worker processes (default 1)")
    _file_timeout(p)
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--verify", action="store_true",
                   help="with -o OUT: then compile what was written with a ROCm compiler and explain every "
                        "failure, as `portkit verify OUT --source SRC` does (exit 1 when a unit fails)")
    cli_verify.add_options(p)
    cli_deep.add_options(p, with_flags=False)


def _file_timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument("--file-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="time limit for one file (default 60; 0: none): a file over it is left as it is and "
                        "reported, the run goes on, and the exit code is 2")


def _check_file_timeout(value: float) -> float:
    if value < 0:
        raise PortkitError(f"--file-timeout must be 0 (no limit) or positive, not {value:g}")
    return value


def _builtins_help() -> str:
    try:
        from .rewrite.builtins import help_text
        return help_text()
    except PortkitError as exc:   # a broken table must not break --help
        return str(exc)


def _mappings_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mappings", help="coverage of the mapping tables, one name, or a full export",
        description="Without NAME: coverage by family (names known, with a HIP target, with a ROC "
                    "target, unsupported). With NAME: that CUDA name's record (or the CUDA names that "
                    "become a HIP NAME); exit 1 if unknown. --format exports every record.")
    p.add_argument("name", nargs="?", metavar="NAME", help="a CUDA name or header, e.g. cudaMallocAsync")
    p.add_argument("--format", choices=("text", "json", "csv", "markdown"), default="text")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the export to FILE")


def _codes(value: str) -> list[str]:
    return [v for v in value.split(",") if v.strip()]


def _audit_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "audit", help="find what will not port and estimate the migration",
        description="Audit CUDA sources, build files and Python dependencies for what will not port "
                    "to AMD GPUs, and estimate the migration in person-weeks (P10/P50/P90). Exit 0, "
                    "or 1 when a finding is at or above --fail-on; 2 on errors.")
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or directories")
    p.add_argument("--format", choices=("text", "json", "sarif", "csv"), default="text",
                   help="output format (default text)")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the report to FILE")
    p.add_argument("--select", type=_codes, action="extend", default=[], metavar="CODES",
                   help="only these rule codes or prefixes, comma-separated (PK2,PK301)")
    p.add_argument("--ignore", type=_codes, action="extend", default=[], metavar="CODES",
                   help="skip these rule codes or prefixes")
    p.add_argument("--fail-on", choices=("blocker", "high", "medium", "low", "info"),
                   help="exit 1 when a finding is at or above this severity")
    p.add_argument("--team-size", type=int, default=1, metavar="N", help="engineers on the port (default 1)")
    p.add_argument("--focus-hours", type=float, metavar="H",
                   help="focused engineering hours per person per week (default 30, from effort.toml)")
    p.add_argument("--rocm", metavar="X.Y", help="target ROCm release (default: the newest the tables know)")
    p.add_argument("--statistics", action="store_true", help="add counts per rule (text and csv)")
    p.add_argument("--html", type=Path, metavar="FILE",
                   help="also write the HTML report for managers (one self-contained file)")
    p.add_argument("--record", action="store_true",
                   help="append this run's summary to the history (the HTML report shows the trend)")
    p.add_argument("--history", type=Path, metavar="PATH",
                   help="the history database (default: .portkit/history.sqlite under the audited root)")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="worker processes (default 1)")
    _file_timeout(p)
    p.add_argument("-q", "--quiet", action="store_true", help="text format: print nothing; use the exit code")
    cli_deep.add_options(p, with_flags=True)


def _report_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="render a saved JSON audit as the HTML report",
                       description="Render an audit saved with `portkit audit --format json` as the "
                                   "self-contained HTML report (so CI can archive JSON and render later).")
    p.add_argument("audit", type=Path, metavar="AUDIT_JSON")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", required=True, help="the HTML file to write")
    p.add_argument("--history", type=Path, metavar="PATH", help="a history database to draw the trend from")


def _rules_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="list the audit rules",
                       description="List every rule: code, name, default severity, category, summary.")
    p.add_argument("--format", choices=("text", "markdown"), default="text")
    e = sub.add_parser("explain", help="show one rule's documentation",
                       description="Print a rule's documentation: what it finds, why it matters on AMD "
                                   "GPUs, an example, what to do instead, and the effort.")
    e.add_argument("code", metavar="CODE", help="a rule code, e.g. PK201")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="portkit", description="Port CUDA C/C++ to AMD HIP and tell what will not port.")
    parser.add_argument("--version", action="version", version=f"portkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _convert_parser(sub)
    _audit_parser(sub)
    _report_parser(sub)
    _rules_parser(sub)
    cli_gate.add_parsers(sub, _codes)
    cli_verify.add_parser(sub)
    _mappings_parser(sub)
    return parser


def _progress_factory(console, verb: str = "converting"):
    def start(total: int):
        if total < PROGRESS_MIN_FILES or not console.is_terminal:
            return None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
        progress = Progress(TextColumn(verb), BarColumn(), MofNCompleteColumn(),
                            TimeRemainingColumn(), console=console, transient=True)
        task = progress.add_task("convert", total=total)
        progress.start()

        def advance(n: int) -> None:
            progress.advance(task, n)
            if progress.finished:
                progress.stop()
        return advance
    return start


def run_convert(args: argparse.Namespace) -> int:
    from rich.console import Console

    from . import scan_options
    from .convert import ConvertOptions, convert_paths
    from .report.terminal import render_convert
    from .rename import parse_map
    if args.compat_header is not None:
        return _run_compat(args)
    if args.rename_map is not None and not args.rename:
        raise PortkitError("--rename-map needs --rename")
    opts = ConvertOptions(
        output=args.output, in_place=args.in_place, backup=args.backup, diff=args.diff,
        check=args.check, jobs=args.jobs, rename=parse_map(args.rename_map) if args.rename else None,
        scan=replace(scan_options(args.launch_syntax, args.rocm, args.prefer_roc, args.offload_arch,
                                  args.build_files, args.builtins),
                     file_timeout=_check_file_timeout(args.file_timeout)),
        deep=cli_deep.options(args, args.jobs, _check_file_timeout(args.file_timeout)))
    data_on_stdout = args.diff or (args.output is not None and str(args.output) == "-")
    if args.verify and (args.output is None or data_on_stdout):
        raise PortkitError("--verify needs -o OUT (a directory): it compiles the converted tree")
    verify_opts = cli_verify.options(args) if args.verify else None   # bad verify options fail before writing
    # the summary goes to stderr whenever stdout carries data (a diff, a converted file)
    console = Console(stderr=data_on_stdout, highlight=False, soft_wrap=True)
    result = convert_paths(args.paths, opts, progress_factory=_progress_factory(Console(stderr=True)),
                           stdout=sys.stdout.buffer)
    for chunk in result.diff_text:
        sys.stdout.buffer.write(chunk)
    sys.stdout.flush()
    if not args.quiet:
        mode = ("check" if args.check else "diff" if args.diff else
                "in-place" if args.in_place else "stdout" if data_on_stdout else "output")
        render_convert(result, console, mode)
        for line in cli_deep.notes(result.deep):
            print(f"portkit: {line}", file=sys.stderr)
    else:
        for s in result.errors:
            print(f"portkit: {s.rel}: {s.reason}", file=sys.stderr)
    if result.errors:
        return 2
    if args.check and result.changed:
        return 1
    if verify_opts is not None:
        return _verify_converted(result, args, verify_opts, console)
    return 0


def _run_compat(args: argparse.Namespace) -> int:
    """convert --compat-header: the generated header and the guarded includes (portkit/compat.py)."""
    from rich.console import Console

    from . import scan_options
    from .compat import compat_paths
    from .convert import diff_bytes, write_compat
    from .files import read_regular
    from .report.terminal import render_compat
    if args.output is not None or not (args.in_place or args.diff or args.check):
        raise PortkitError("--compat-header keeps the sources where they are: use it with --in-place, --diff "
                           "or --check (not -o)")
    if args.rename or args.builtins != "cuda" or args.launch_syntax != "cuda" or args.verify:
        raise PortkitError("--compat-header leaves the CUDA code as it is: --rename, --builtins, --launch-syntax "
                           "and --verify do not apply")
    if args.jobs < 1:
        raise PortkitError(f"--jobs must be at least 1, not {args.jobs}")
    options = scan_options(rocm=args.rocm, prefer_roc=args.prefer_roc)
    result = compat_paths(args.paths, args.compat_header, options, args.jobs)
    if args.diff:
        for f in result.changed:
            sys.stdout.buffer.write(diff_bytes(read_regular(f.entry.path, f.entry.named), f.output or b"",
                                               f.entry.rel, f.entry.rel))
        if result.header_changed:
            sys.stdout.buffer.write(diff_bytes(result.old_header or b"", result.header_text, result.header_rel,
                                               result.header_rel))
        sys.stdout.flush()
    if args.in_place:
        write_compat(result)
    if not args.quiet:
        render_compat(result, Console(stderr=args.diff, highlight=False, soft_wrap=True), args.in_place)
    for s in result.skipped:
        if s.error:
            print(f"portkit: {s.rel}: {s.reason}", file=sys.stderr)
    if any(s.error for s in result.skipped):
        return 2
    if args.check and (result.changed or result.header_changed):
        return 1
    return 0


def _verify_converted(result, args: argparse.Namespace, verify_opts, console) -> int:
    """convert --verify: compile the units this run wrote, their CUDA lines from the input tree."""

    from rich.console import Console

    from .report import verify as report
    from .verify import verify_tree
    only = frozenset(o.entry.rel for o in result.outcomes if o.skipped is None)
    # explained against the compiler's own release: --rocm was the conversion's target
    opts = replace(verify_opts, source=result.root, only=only, rocm=None)
    verified = verify_tree(args.output, opts, progress_factory=_progress_factory(Console(stderr=True), "compiling"))
    if args.quiet:
        s = report.summary(verified)
        print(f"portkit verify: {s['compiled']}/{s['units']} compiled, {s['failed']} failed "
              f"({s['unexplained']} unexplained)")
    else:
        console.print()
        report.render_text(verified, console)
    return 0 if verified.ok else 1


def run_audit(args: argparse.Namespace) -> int:
    from rich.console import Console

    from . import config, history, scan_options
    from .audit import AuditOptions, audit_paths
    from .report import audit_formats
    from .report.model import audit_document
    from .context import Options

    cfg = config.find()   # [tool.portkit] / portkit.toml; flags win
    scan = scan_options(rocm=args.rocm or cfg.rocm)
    opts = AuditOptions(scan=Options(audit=True, rocm=scan.rocm, file_timeout=_check_file_timeout(args.file_timeout)),
                        select=tuple(args.select) or cfg.select,
                        ignore=tuple(args.ignore) or cfg.ignore, fail_on=args.fail_on or cfg.fail_on,
                        team_size=args.team_size, focus_hours=args.focus_hours, jobs=args.jobs,
                        exclude=cfg.exclude,
                        deep=cli_deep.options(args, args.jobs, _check_file_timeout(args.file_timeout)))
    result = audit_paths(args.paths, opts, progress_factory=_progress_factory(Console(stderr=True), "auditing"))
    if not args.quiet:
        for line in cli_deep.notes(result.deep):
            print(f"portkit: {line}", file=sys.stderr)
    doc = audit_document(result)
    history_path = args.history or result.root / history.DEFAULT
    if args.record:
        history.record(doc, history_path)
    if args.html is not None:
        _write_html(doc, args.html, history.load(history_path, doc["root"]))
    formatter = audit_formats()[args.format]
    if args.output is not None:
        buffer = io.StringIO()
        formatter.render(doc, buffer, statistics=args.statistics)
        _emit(buffer.getvalue(), args.output)
    elif not (args.quiet and args.format == "text"):
        formatter.render(doc, sys.stdout, statistics=args.statistics)
        sys.stdout.flush()
    if args.format != "text" or args.quiet or args.output is not None:
        for s in result.errors:  # the text report lists them itself
            print(f"portkit: {s.rel}: {s.reason}", file=sys.stderr)
    if result.errors:
        return 2
    return 1 if result.failed() else 0


def _write_html(doc: dict, output: Path, runs: list[dict]) -> None:
    from .report import html
    buffer = io.StringIO()
    html.render(doc, buffer, history=runs)
    _emit(buffer.getvalue(), output)


def run_report(args: argparse.Namespace) -> int:
    import json

    from . import history
    try:
        doc = json.loads(args.audit.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PortkitError(f"{args.audit}: cannot read the audit JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("version") != 1 or "estimate" not in doc:
        raise PortkitError(f"{args.audit}: not a portkit audit (write one with `portkit audit --format json`)")
    runs = history.load(args.history, doc["root"]) if args.history else []
    _write_html(doc, args.output, runs)
    return 0


def _emit(text: str, output: Path) -> None:
    from .output import write_output
    write_output(output, text.encode("utf-8"))


def run_rules(args: argparse.Namespace) -> int:
    from . import rules
    from .report import rules as report

    if args.command == "explain":
        report.render_rule(rules.get(args.code), sys.stdout)
        return 0
    report.render_list(rules.all_rules(), sys.stdout, args.format)
    return 0


def run_mappings(args: argparse.Namespace) -> int:
    from rich.console import Console

    from .coverage import lookup
    from .mappings import default_db
    from .report import mappings as report

    db = default_db()
    console = Console(highlight=False, soft_wrap=True)
    if args.name:
        found = lookup(db, args.name)
        if not found:
            print(f"portkit: {args.name}: not in the mapping tables", file=sys.stderr)
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
    buffer = io.StringIO()
    render(db, buffer)
    _emit(buffer.getvalue(), args.output)
    return 0


class Terminated(BaseException):
    """SIGTERM, raised where the program is, so that unfinished atomic writes clean up."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    import signal
    import threading
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if args.command == "convert":
            return run_convert(args)
        if args.command == "mappings":
            return run_mappings(args)
        if args.command == "audit":
            return run_audit(args)
        if args.command == "report":
            return run_report(args)
        if args.command in ("rules", "explain"):
            return run_rules(args)
        if args.command in ("check", "baseline", "hook"):
            return cli_gate.run(args)
        if args.command == "verify":
            from rich.console import Console
            return cli_verify.run(args, _progress_factory(Console(stderr=True), "compiling"))
        parser.error(f"unknown command {args.command}")
    except PortkitError as exc:
        print(f"portkit: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("portkit: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("portkit: terminated", file=sys.stderr)
        return 143
    except BrokenPipeError:
        return 0
    except Exception as exc:  # an internal error: one line unless PORTKIT_DEBUG asks for the traceback
        if os.environ.get("PORTKIT_DEBUG"):
            raise
        print(f"portkit: internal error: {type(exc).__name__}: {exc} "
              f"(set PORTKIT_DEBUG=1 for details, and please report it)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
