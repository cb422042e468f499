"""`portkit verify` output: text for people (rich) and JSON for collecting portkit's gaps.

The JSON marks each error, and each unit, `unexplained` when no finding explains it: those
are the cases where portkit's rules or tables fall short, worth gathering across projects.
"""

from __future__ import annotations

import json
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from ..findings import Finding
from ..mappings import format_version
from ..results import ErrorReport, UnitReport, VerifyResult

SCHEMA_VERSION = 1
TEXT_ERRORS_PER_UNIT = 5     # the first errors say what is wrong; the rest are in the JSON


def _finding(f: Finding) -> dict:
    return {"code": f.code, "name": f.name, "severity": f.severity, "path": f.path, "line": f.line,
            "subject": f.subject, "message": f.message, "fix": f.fix, "fingerprint": f.fingerprint}


def _error(e: ErrorReport) -> dict:
    return {"path": e.rel, "line": e.line, "column": e.column, "severity": e.severity, "message": e.message,
            "source_line": e.source_line, "source_text": e.source_text,
            "explained": e.explained, "unexplained": not e.explained,
            "findings": [_finding(f) for f in e.findings]}


def _unit(u: UnitReport) -> dict:
    return {"path": u.rel, "status": u.status, "explained": u.explained,
            "unexplained": u.failed and not u.explained, "seconds": round(u.seconds, 3),
            "flags_from": u.flags_from, "command": list(u.command),
            "errors": [_error(e) for e in u.errors], "compiler_output": u.output or None}


def document(result: VerifyResult) -> dict:
    return {
        "version": SCHEMA_VERSION,
        "tool": "portkit verify",
        "root": str(result.root),
        "compiler": {"path": result.compiler.path, "kind": result.compiler.kind,
                     "rocm": format_version(result.compiler.rocm) if result.compiler.rocm else None},
        "target_rocm": format_version(result.target),
        "offload_arch": list(result.offload_arch),
        "summary": summary(result),
        "units": [_unit(u) for u in result.units],
        "unmatched_compile_commands": result.unmatched,
        "skipped": [{"path": s.rel, "reason": s.reason, "error": s.error} for s in result.skipped],
    }


def summary(result: VerifyResult) -> dict:
    return {"units": len(result.units), "compiled": result.count("compiled"), "failed": result.count("failed"),
            "explained": result.count("explained"), "unexplained": result.count("unexplained"),
            "seconds": round(result.seconds, 2)}


def render_json(result: VerifyResult, stream: TextIO) -> None:
    json.dump(document(result), stream, indent=2)
    stream.write("\n")


def render_text(result: VerifyResult, console: Console) -> None:
    """Each failing unit with its first errors, where they were in CUDA, and what explains them;
    then the counts."""
    archs = ",".join(result.offload_arch)
    console.print(f"[bold]portkit verify[/]: {escape(str(result.root))} with {escape(result.compiler.describe())}, "
                  f"--offload-arch={archs}", highlight=False, soft_wrap=True)
    for unit in result.units:
        if not unit.failed:
            continue
        label = "[yellow]failed, explained[/]" if unit.explained else "[red]failed, UNEXPLAINED[/]"
        console.print(f"\n{escape(unit.rel)}: {label} ({unit.seconds:.1f} s)", highlight=False, soft_wrap=True)
        for error in unit.errors[:TEXT_ERRORS_PER_UNIT]:
            _print_error(error, console)
        if len(unit.errors) > TEXT_ERRORS_PER_UNIT:
            console.print(f"  ... {len(unit.errors) - TEXT_ERRORS_PER_UNIT} more errors (--format json lists them)")
        if unit.output:
            for line in unit.output.splitlines()[-6:]:
                console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
    for s in result.skipped:
        console.print(f"{'[red]error[/]' if s.error else 'skipped'}: {escape(s.rel)}: {escape(s.reason)}",
                      highlight=False, soft_wrap=True)
    for path in result.unmatched:
        console.print(f"not in the tree (from compile_commands.json): {escape(path)}", highlight=False, soft_wrap=True)
    s = summary(result)
    console.print(f"\n{_plural(s['units'], 'translation unit')}: {s['compiled']:,} compiled, {s['failed']:,} failed "
                  f"({s['explained']:,} explained by findings, {s['unexplained']:,} unexplained) "
                  f"in {s['seconds']:.1f} s")
    if s["unexplained"]:
        console.print("Unexplained failures are gaps in portkit's rules or tables: `--format json` marks them "
                      "(\"unexplained\": true); please report them.")


def _print_error(error: ErrorReport, console: Console) -> None:
    where = f"{error.rel}:{error.line}:{error.column}" if error.rel else "(outside the tree)"
    console.print(f"  {escape(where)}: {error.severity}: {escape(error.message)}", highlight=False, soft_wrap=True)
    if error.source_line is not None:
        console.print(f"    CUDA line {error.source_line}: {escape((error.source_text or '').strip())}",
                      highlight=False, soft_wrap=True)
    if not error.findings:
        console.print("    [red]no finding explains this error[/]", highlight=False)
    for f in error.findings:
        console.print(f"    explained by {f.code} {f.name}: {escape(f.message)}", highlight=False, soft_wrap=True)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"
