"""`portkit verify` output: text for people (rich) and JSON for collecting portkit's gaps.

The JSON marks each error, and each unit, `unexplained` when no finding explains it: those
are the cases where portkit's rules or tables fall short, worth gathering across projects.
Units that stopped at a header of a library not installed here are `not_reached`, apart from
both. Both formats say where each unit's configuration came from (compile database, CMake,
Makefile, or the compiler's defaults).
"""

from __future__ import annotations

import json
from typing import TextIO

from rich.console import Console

from ..project.buildconfig import BuildConfig
from ..core.findings import Finding
from ..core.tables.mappings import format_version
from ..commands.results import ErrorReport, UnitReport, VerifyResult
from .audit_model import JsonObject
from .plain import say

SCHEMA_VERSION = 1
TEXT_ERRORS_PER_UNIT = 5     # the first errors say what is wrong; the rest are in the JSON


def _finding(f: Finding) -> JsonObject:
    return {"code": f.code, "name": f.name, "severity": f.severity, "path": f.path, "line": f.line,
            "subject": f.subject, "message": f.message, "fix": f.fix, "fingerprint": f.fingerprint}


def _error(e: ErrorReport) -> JsonObject:
    return {"path": e.rel, "line": e.line, "column": e.column, "severity": e.severity, "message": e.message,
            "source_line": e.source_line, "source_text": e.source_text,
            "explained": e.explained, "unexplained": not e.explained, "consequence_of": e.consequence_of,
            "include_chain": e.include_chain, "findings": [_finding(f) for f in e.findings],
            "decision": e.decision or None}


def _unit(u: UnitReport) -> JsonObject:
    return {"path": u.rel, "status": u.status, "explained": u.explained,
            "unexplained": u.failed and not u.explained and not u.not_reached, "not_reached": u.not_reached,
            "failed_on_decision": u.failed_on_decision,
            "seconds": round(u.seconds, 3),
            "flags_from": u.flags_from, "command": list(u.command),
            "errors": [_error(e) for e in u.errors], "missing_headers": u.missing_headers,
            "compiler_output": u.output or None}


def document(result: VerifyResult) -> JsonObject:
    return {
        "version": SCHEMA_VERSION,
        "tool": "portkit verify",
        "root": str(result.root),
        "compiler": {"path": result.compiler.path, "kind": result.compiler.kind,
                     "rocm": format_version(result.compiler.rocm) if result.compiler.rocm else None,
                     "headers": _headers(result.compiler), "note": result.compiler.note or None},
        "target_rocm": format_version(result.target),
        "torch": {"pack": result.torch, "units": result.torch_units} if result.torch else None,
        "offload_arch": list(result.offload_arch),
        "summary": summary(result),
        "std_option": result.std,
        "amd_selectors": list(result.amd_selectors),
        "hipify_step": result.hipify_step or None,
        "hipify_standin": result.hipify_standin or None,
        "hipify_units": list(result.hipify_units) if result.hipify_units is not None else None,
        "configurations": [{"origin": c.origin, "files": list(c.files), "std": c.std, "includes": list(c.includes),
                            "defines": list(c.defines), "assumed": list(c.assumed), "units": n}
                           for c, n in result.configurations],
        "units": [_unit(u) for u in result.units],
        "missing_libraries": result.missing_libraries,
        "unmatched_compile_commands": result.unmatched,
        "skipped": [{"path": s.rel, "reason": s.reason, "error": s.error} for s in result.skipped],
    }


def summary(result: VerifyResult) -> JsonObject:
    return {"units": len(result.units), "compiled": result.count("compiled"), "failed": result.count("failed"),
            "explained": result.count("explained"), "unexplained": result.count("unexplained"),
            "not_reached": result.count("not_reached"), "failed_on_decision": result.count("failed_on_decision"),
            "seconds": round(result.seconds, 2)}


def render_json(result: VerifyResult, stream: TextIO) -> None:
    json.dump(document(result), stream, indent=2)
    stream.write("\n")


def quiet_line(result: VerifyResult) -> str:
    s = summary(result)
    not_reached = f", {s['not_reached']} not reached" if s["not_reached"] else ""
    return (f"portkit verify: {s['compiled']}/{s['units']} compiled, {s['failed']} failed "
            f"({s['unexplained']} unexplained{not_reached})")


def configuration_lines(result: VerifyResult) -> list[str]:
    """Where the units' standard, include directories and definitions came from."""
    lines, said = [], ()
    for config, n in result.configurations or [(None, len(result.units))]:
        lines.append(f"configuration of {_plural(n, 'unit')}: {_describe(config, result)}")
        if config is not None and config.assumed and config.assumed != said:   # the values verify took
            lines.append(f"  values assumed, as a first configure without -D has them: {'; '.join(config.assumed)}")
            said = config.assumed
    if result.std is not None:
        lines.append(f"standard: -std={result.std} for every unit (--std)")
    if result.amd_selectors:
        lines.append(f"the project's AMD build: {' '.join('-D' + n for n in result.amd_selectors)} for every unit "
                     f"(its own AMD selectors, as its AMD build defines them)")
    if result.hipify_step:
        standin = result.hipify_standin or "portkit's conversion"
        which = "every unit" if result.hipify_units is None else _plural(len(result.hipify_units), "unit")
        scope = "" if result.hipify_units is None else ": the units only that build compiles"
        lines.append(f"{which} compiled after the build's own hipify step ({result.hipify_step}), "
                     f"{standin} standing in{scope}; errors at the tree's own lines")
        if result.hipify_units is not None:
            lines.append("the other units compiled as the CMake build that lists them sees them, without "
                         "that step: after portkit's conversion of the tree")
    return lines


def _describe(config: BuildConfig | None, result: VerifyResult) -> str:
    default = f"the compiler's -std={result.default_std}" if result.default_std else "the compiler's standard"
    if config is None or config.origin == "default":
        return f"default (no CMakeLists.txt or Makefile read; {default}, include directories inferred from the tree)"
    parts = [f"-std={config.std}" if config.std else default]
    if config.origin != "compile database":
        parts.append(_plural(len(config.includes), "include directory", "include directories"))
        parts.append(_plural(len(config.defines), "definition") +
                     (f" ({', '.join(config.defines[:4])}{', ...' if len(config.defines) > 4 else ''})"
                      if config.defines else ""))
    return f"{config.origin} ({', '.join(config.files)}): {', '.join(parts)}"


def render_text(result: VerifyResult, console: Console) -> None:
    """Each failing unit with its first errors, where they were in CUDA, and what explains them;
    then the counts."""
    archs = ",".join(result.offload_arch)
    say(console, ("portkit verify", "bold"), f": {result.root} with {result.compiler.describe()}, "
        f"--offload-arch={archs}")
    if result.compiler.note:
        say(console, f"Note: {result.compiler.note}")
    if result.torch:
        say(console, f"torch's headers for {_plural(result.torch_units, 'unit')} that include them: {result.torch}")
    for line in configuration_lines(result):
        say(console, line)
    for unit in result.units:
        if not unit.failed:
            continue
        label = ("failed, explained", "yellow") if unit.explained else ("failed, UNEXPLAINED", "red")
        if unit.not_reached:
            label = ("not reached: a header of a library not installed here", "cyan")
        console.print()
        say(console, f"{unit.rel}: ", label, f" ({unit.seconds:.1f} s)")
        for error in unit.errors[:TEXT_ERRORS_PER_UNIT]:
            _print_error(error, console)
        if len(unit.errors) > TEXT_ERRORS_PER_UNIT:
            console.print(f"  ... {len(unit.errors) - TEXT_ERRORS_PER_UNIT} more errors (--format json lists them)")
        if len(unit.missing_headers) > 1:   # the first is shown above; the rest, found with stand-ins
            say(console, f"  every header it cannot find: {', '.join(unit.missing_headers)}")
        if unit.output:
            for line in unit.output.splitlines()[-6:]:
                say(console, f"  {line}")
    for line in result.missing_libraries:
        say(console, f"not found: {line}")
    for s in result.skipped:
        say(console, ("error", "red") if s.error else "skipped", f": {s.rel}: {s.reason}")
    for path in result.unmatched:
        say(console, f"not in the tree (from compile_commands.json): {path}")
    s = summary(result)
    console.print(f"\n{_plural(s['units'], 'translation unit')}: {s['compiled']:,} compiled, {s['failed']:,} failed "
                  f"({s['explained']:,} explained by findings, {s['unexplained']:,} unexplained, "
                  f"{s['not_reached']:,} not reached) in {s['seconds']:.1f} s")
    if s["failed"] > s["not_reached"]:
        say(console, decision_line(result))
    if s["unexplained"]:
        console.print("Unexplained failures are gaps in portkit's rules or tables: `--format json` marks them "
                      "(\"unexplained\": true); please report them.")


def decision_line(result: VerifyResult) -> str:
    """How many failed units fail only on a decision, which decisions, and issue 48's measure: the
    units that compile or fail only on a decision, of those reached (not reached: counted apart)."""
    s = summary(result)
    named: dict[str, int] = {}
    for unit in result.units:
        if unit.failed_on_decision:
            for name in sorted({e.decision for e in unit.errors if e.decision}):
                named[name] = named.get(name, 0) + 1
    which = f" ({', '.join(f'{n}: {k:,}' for n, k in sorted(named.items(), key=lambda i: (-i[1], i[0])))})" \
        if named else ""
    reached = s["units"] - s["not_reached"]
    done = s["compiled"] + s["failed_on_decision"]
    return (f"failed only on a decision: {s['failed_on_decision']:,} of the {s['failed'] - s['not_reached']:,} failed "
            f"units reached{which}; compiled or failed on a decision: {done:,} of {reached:,} reached units "
            f"({100 * done / reached:.0f}%)")


def _print_error(error: ErrorReport, console: Console) -> None:
    where = f"{error.rel}:{error.line}:{error.column}" if error.rel else "(outside the tree)"
    say(console, f"  {where}: {error.severity}: {error.message}")
    if error.include_chain:
        say(console, f"    included: {' -> '.join(error.include_chain)}")
    if error.source_line is not None:
        say(console, f"    CUDA line {error.source_line}: {(error.source_text or '').strip()}")
    if error.consequence_of is not None:
        say(console, f"    a consequence of the error at {error.consequence_of} (explained)")
    elif not error.findings:
        console.print("    [red]no finding explains this error[/]", highlight=False)
    for f in error.findings:
        say(console, f"    explained by {f.code} {f.name}: {f.message}")


def _plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def _headers(compiler) -> JsonObject | None:
    """The header pack checked against, when it was one (None: the compiler's own installation)."""
    pack = compiler.pack
    if pack is None:
        return None
    return {"pack": str(pack.root), "release": format_version(pack.release), "libraries": list(pack.libraries),
            "sources": list(pack.sources), "syntax_only": True}
