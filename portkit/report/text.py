"""The audit for people at a terminal: the estimate first, then blockers, then where the work is.

Renders the typed audit (report/audit_model.py) with rich; plain text when not a terminal.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TextIO

from rich.console import Console
from rich.table import Table

from .audit_model import Audit, Estimate, WorkItem
from .csv import statistics_rows
from .families import families
from .model import amd_build_line, port_style_line
from .plain import cell, say
from .terminal import SEVERITY_STYLE, _plural

TOP_FILES = 10
TOP_ITEMS = 12
TOP_DIRECTORIES = 10
MAX_BLOCKERS_SHOWN = 20
MAX_FINDINGS_LISTED = 40


def _weeks(value: float) -> str:
    return f"{value:.1f}"


def render(doc: Audit, stream: TextIO, statistics: bool = False, every: bool = False) -> None:
    """Colours on a terminal; plain text, 120 columns wide, into files and pipes. `every` (--all):
    every finding listed, not the first MAX_FINDINGS_LISTED."""
    terminal = stream.isatty() if hasattr(stream, "isatty") else False
    console = Console(file=stream, highlight=False, emoji=False, soft_wrap=True, width=None if terminal else 120)
    render_console(doc, console, statistics, every)


def render_console(doc: Audit, console: Console, statistics: bool = False, every: bool = False) -> None:
    _estimate(doc, console)
    _blockers(doc, console, every)
    _findings(doc, console)
    _listing(doc, console, every)
    _not_stored(doc, console)
    _where(doc, console)
    if statistics:
        _statistics(doc, console)
    for s in doc.summary.skipped:
        say(console, f"{s.path}: {s.reason}", style="red" if s.error else "dim")


def _estimate(doc: Audit, console: Console) -> None:
    e, s = doc.required_estimate(), doc.summary
    arche = e.archetype
    more = s.findings_not_stored
    say(console, ("portkit audit", "bold"), f" of {doc.root}: {_plural(s.files, 'file')}, "
        f"{s.lines:,} lines, {_plural(s.findings, 'finding')}"
        + (f" and {more:,} more past the per-file cap (counted, not listed)" if more else ""))
    pw, cw = e.person_weeks, e.calendar_weeks
    console.print(f"[bold]Estimate:[/] {_weeks(pw.p50)} person-weeks (P50), {_weeks(pw.p10)}-"
                  f"{_weeks(pw.p90)} (P10-P90); {_weeks(cw.p50)}-{_weeks(cw.p90)} calendar weeks "
                  f"(P50-P90) for a team of {e.team_size} at {e.focus_hours_per_week:g} focus hours a week")
    say(console, f"Project: {arche.label} ({arche.reference})")
    if not arche.feasible:
        console.print("[bold red]Not currently feasible as a port: the blockers below need a decision first.[/]")
    platforms = s.platforms
    if platforms and amd_build_line(platforms):
        say(console, amd_build_line(platforms))
    say(console, s.headline)
    say(console, f"Scope: {e.scope}")
    if e.port_style:
        say(console, port_style_line(e.port_style))
    for change in e.changes:
        say(console, f"Not included: {change}.")
    if platforms and not platforms.builds_for_amd and (platforms.amd_path_share or platforms.shim_files):
        say(console, f"Already ported: {platforms.amd_path_share * 100:.1f}% of the code is AMD-only, or NVIDIA-only "
                     f"beside a branch AMD builds take; {_plural(len(platforms.shim_files), 'vendor shim header')}; "
                     f"{_plural(platforms.findings_already_ported, 'finding')} there reported as info, not costed")
    fills = s.polyfills
    if fills:
        say(console, f"Polyfills: convert defines {_plural(len(fills), 'name')} ROCm "
                     f"{doc.options.rocm or doc.tool.mappings.newest_rocm} lacks in portkit_polyfills.h "
                     f"(priced as review): {', '.join(p.name for p in fills)}")


def _blockers(doc: Audit, console: Console, every: bool = False) -> None:
    """The decisions first (one per blocker family, build decision, or the ROCm release), then the
    first blocker sites (--all: every one), the headline's first; a fix text is printed under the
    first site it belongs to, once. Decisions without a blocker site (the ROCm release the port
    targets, library internals, the communication library swap) are printed too: they are what a
    manager decides, whether or not a site blocks."""
    blockers = leading(doc, [f for f in doc.findings if f.severity == "blocker"])
    limit = len(blockers) if every else MAX_BLOCKERS_SHOWN
    decided = families(doc.required_estimate().decisions)   # one per family, as the HTML counts them
    if not blockers and not decided:
        return
    console.print()
    console.print(f"[bold red]Decisions ({len(decided)})[/] - {_plural(len(blockers), 'blocker site')}, "
                  f"one decision per library or feature family:")
    for family in decided:
        for k, d in enumerate(family.parts):
            where = f"; not included: {d.optional}" if d.optional else ""
            lead = ("  ", (d.label, "bold"), ": ") if k == 0 else ("      and ",)
            say(console, *lead, f"{d.kernels} kernels, {d.files} files, {d.sites} sites; {d.hours.p50:.0f} h P50{where}")
        d = family.first
        since = f" (ROCm {d.rocm_since}+)" if d.rocm_since else ""
        say(console, f"      instead: {d.alternative}{since}", style="dim")
    if not blockers:
        return
    console.print(f"Blocker sites ({'all' if every else 'the first'} {min(len(blockers), limit)}):")
    shown: set[str] = set()   # a rule's generic "Instead" repeated under each of its sites said nothing new
    for f in blockers[:limit]:
        say(console, f"  {f.path}:{f.line}:{f.column}: ", (f.code, "bold"), f" {f.message}")
        if f.fix and f.fix not in shown:
            shown.add(f.fix)
            say(console, f"      instead: {f.fix}", style="dim")
    if len(blockers) > limit:
        console.print(f"  ... and {len(blockers) - limit} more (--all lists them; so does --format json)")


def _findings(doc: Audit, console: Console) -> None:
    if not doc.findings:
        console.print("No findings.")
        return
    table = Table(title="Findings by category and severity", title_justify="left", show_edge=False)
    table.add_column("category")
    severities = list(doc.summary.by_severity)
    for sev in severities:
        table.add_column(sev, justify="right", style=SEVERITY_STYLE.get(sev, ""))
    counts: dict[str, Counter] = defaultdict(Counter)
    for f in doc.findings:
        counts[f.category][f.severity] += 1
    for category in sorted(counts):
        table.add_row(cell(category), *[str(counts[category][s] or "") for s in severities])
    console.print()
    console.print(table)


def _listing(doc: Audit, console: Console, every: bool = False) -> None:
    """The findings below blocker, the headline's first (the product as its default build makes
    it), then the parts the estimate prices apart; each by severity, then path. Info findings only
    with --all, which lists every one."""
    rest = leading(doc, [f for f in doc.findings if f.severity != "blocker" and (every or f.severity != "info")])
    if not rest:
        return
    limit = len(rest) if every else MAX_FINDINGS_LISTED
    parts = _parts(doc)
    shown = rest[:limit]
    headings = any(_part(parts, f) != "" for f in shown)   # a tree priced whole reads as one list
    heading: object = ()
    for f in shown:
        part = _part(parts, f)
        if part != heading:
            console.print()
            if headings:
                say(console, "In the estimate's headline:" if part == "" else
                    f"Priced apart: {part}:" if part else "Not priced (AMD code, info):", style="bold")
        heading = part
        style = SEVERITY_STYLE.get(f.severity, "")
        say(console, f"{f.path}:{f.line}:{f.column}: ", (f.code, style), f" {f.message}")
    if len(rest) > limit:
        console.print(f"... and {len(rest) - limit} more (--all lists them; so do --format json, sarif and csv)")


def _parts(doc: Audit) -> dict[str, str]:
    """path:line -> the part the estimate prices it in ("" = the headline), from its work items
    (the JSON's `optional` of each item): the scope the estimate decided, never decided again here."""
    where: dict[str, str] = {}
    for item in doc.estimate.items if doc.estimate is not None else ():
        for site in item.findings:
            where.setdefault(site, item.optional)
            where.setdefault(site.rsplit(":", 1)[0], item.optional)   # the file, for a site past SHOWN_FINDINGS
    return where


def _part(parts: dict[str, str], f) -> str | None:
    """The part of a finding: "" the headline, a feature's name, or None when the estimate prices
    it nowhere (AMD code, an info finding)."""
    return parts.get(f"{f.path}:{f.line}", parts.get(f.path))


def leading(doc: Audit, findings: list) -> list:
    """Findings in the order a reader needs them: the headline's, then each part priced apart,
    then those priced nowhere; within each, by severity, then path and line."""
    parts = _parts(doc)
    order = {s: i for i, s in enumerate(doc.summary.by_severity)}

    def key(f) -> tuple:
        part = _part(parts, f)
        return (0 if part == "" else 2 if part is None else 1, part or "", order.get(f.severity, 9),
                f.path, f.line, f.column)
    return sorted(findings, key=key)


def _not_stored(doc: Audit, console: Console) -> None:
    """Findings past the per-file cap of one rule (generated code): counted and priced, not listed."""
    total = doc.summary.findings_not_stored
    if not total:
        return
    files = [(f.path, f.findings_not_stored) for f in doc.files if f.findings_not_stored]
    shown = "; ".join(f"{path}: " + ", ".join(f"{code} {n:,}" for code, n in counts.items())
                      for path, counts in files[:TOP_FILES])
    more = f"; {len(files) - TOP_FILES} more files" if len(files) > TOP_FILES else ""
    console.print()
    say(console, f"Not listed: {_plural(total, 'finding')} past {doc.summary.findings_cap:,} of one rule in one "
                 f"file, counted and priced as further sites ({shown}{more})")


def items_table(e: Estimate, limit: int | None = None, why: bool = False) -> Table:
    """The headline's work items, largest first, and their sum: the estimate."""
    headline = [i for i in e.items if not i.optional]
    shown = headline if limit is None else headline[:limit]
    title = "Work items (hours; their sum is the estimate)" if limit is None or len(headline) <= limit else \
        f"Work items, the {limit} largest of {len(headline)} (hours; --explain-estimate lists all)"
    table = Table(title=title, title_justify="left", show_edge=False)
    for name in ("item", "covers", "P10", "P50", "P90") + (("why",) if why else ()):
        table.add_column(name, justify="right" if name.startswith("P") else "left")
    for i in shown:
        table.add_row(cell(i.label), cell(_covers(i, why)), f"{i.p10:.1f}", f"{i.p50:.1f}", f"{i.p90:.1f}",
                      *((cell(i.why),) if why else ()))
    h = e.hours
    table.add_row("total", "", f"{h.p10:.1f}", f"{h.p50:.1f}", f"{h.p90:.1f}", *(("",) if why else ()))
    return table


def _covers(item: WorkItem, every: bool) -> str:
    """What an item covers: its findings (path:line), or the facts it scales with."""
    if item.findings:
        listed = item.findings if every else item.findings[:2]
        more = item.count - len(listed) if item.kind == "pattern" else len(item.findings) - len(listed)
        return ", ".join(listed) + (f" and {more} more" if more > 0 else "")
    return ", ".join(f"{k} {v:g}" for k, v in item.facts.items())


def render_explain(doc: Audit, stream: TextIO) -> None:
    """--explain-estimate: every work item with what it covers and why, then the optional ones."""
    terminal = stream.isatty() if hasattr(stream, "isatty") else False
    console = Console(file=stream, highlight=False, emoji=False, soft_wrap=True, width=None if terminal else 160)
    e = doc.required_estimate()
    console.print(items_table(e, why=True))
    for o in e.optional:
        console.print()
        table = Table(title=cell(f"Optional: {o.feature} (not in the estimate)"), title_justify="left",
                      show_edge=False)
        for name in ("item", "covers", "P10", "P50", "P90"):
            table.add_column(name, justify="right" if name.startswith("P") else "left")
        for i in (i for i in e.items if i.optional == o.feature):
            table.add_row(cell(i.label), cell(_covers(i, True)), f"{i.p10:.1f}", f"{i.p50:.1f}", f"{i.p90:.1f}")
        h = o.hours
        table.add_row("total", "", f"{h.p10:.1f}", f"{h.p50:.1f}", f"{h.p90:.1f}")
        console.print(table)
    say(console, f"Scope: {e.scope}")


def _where(doc: Audit, console: Console) -> None:
    e = doc.required_estimate()
    console.print()
    console.print(items_table(e, TOP_ITEMS))
    dirs = e.by_directory
    console.print()
    table = Table(title="By directory (P50 hours; they sum to the estimate)", title_justify="left", show_edge=False)
    table.add_column("directory")
    table.add_column("P50 h", justify="right")
    for row in dirs[:TOP_DIRECTORIES]:
        table.add_row(cell(row.name), f"{row.hours:.1f}")
    if len(dirs) > TOP_DIRECTORIES:
        table.add_row(f"{len(dirs) - TOP_DIRECTORIES} more", f"{sum(r.hours for r in dirs[TOP_DIRECTORIES:]):.1f}")
    console.print(table)
    files = sorted((f for f in doc.files if f.findings), key=lambda f: (-f.effort_hours, f.path))
    if files:
        console.print()
        table = Table(title="Top files (likely hours of their findings, before grouping into items)",
                      title_justify="left", show_edge=False)
        table.add_column("file")
        table.add_column("findings", justify="right")
        table.add_column("likely h", justify="right")
        for f in files[:TOP_FILES]:
            table.add_row(cell(f.path), str(f.findings), f"{f.effort_hours:.1f}")
        console.print(table)


def _statistics(doc: Audit, console: Console) -> None:
    """--statistics: the run's counts, then the findings per rule, most first, as ruff's
    --statistics prints them (count, code, name), so the rule to fix first is the top line."""
    console.print()
    table = Table(title="Statistics", title_justify="left", show_edge=False)
    table.add_column("statistic")
    table.add_column("value", justify="right")
    for name, value in statistics_rows(doc):
        if not name.startswith("rule "):   # per rule: the table below, with names
            table.add_row(cell(name), str(value))
    console.print(table)
    names = {r.code: (r.name, r.severity) for r in doc.rules}
    per_code = sorted(doc.summary.by_code.items(), key=lambda kv: (-kv[1], kv[0]))
    if not per_code:
        return
    console.print()
    table = Table(title="Findings per rule", title_justify="left", show_edge=False)
    for name in ("count", "code", "name", "severity"):
        table.add_column(name, justify="right" if name == "count" else "left")
    for code, n in per_code:
        name, severity = names.get(code, ("", ""))
        table.add_row(f"{n:,}", code, name, severity)
    console.print(table)
