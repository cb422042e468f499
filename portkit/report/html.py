"""The HTML report: one self-contained file an engineering manager can open offline.

The page answers a manager's questions in the order they are asked, on the first screen: how long
(the person-weeks with their range), what blocks and which decisions must be made, what the
estimate leaves out. Then one chart of where the hours go; everything else is folded
(<details>), grouped by decision and by part of the tree (html_groups.py). The share of
references converted is a sentence, never a headline figure: 97% converted beside blockers reads
as "nearly done".

This module builds the view (report/html_view.py: numbers formatted, chart geometry computed)
from the typed audit (report/audit_model.py); the Jinja2 template (reports/report.html.j2, autoescaped) only displays it, with two
filters from html_markup.py (backtick spans as <code>, paths that wrap at '/'). Findings travel
to the page's small script as JSON inside <script type="application/json">, with every `<`, `>`
and `&` escaped, so no file name or snippet can end the script or inject markup.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Sequence, TextIO

from markupsafe import Markup

from . import html_groups, html_items, html_markup
from ..estimate.scope import is_part
from .families import Family, counts, families
from .audit_model import Audit, Decision, Estimate, FindingRecord, NamedHours, WorkItem
from .html_verify import Compiles
from .html_view import (Answer, Bar, Covers, DecisionRow, DependencyCard, DependencyRow, Dot, OptionalView, OutsidePart, PolyfillRow,
    PolyfillView, Run, RunMark, Trend, TrendLine, View, WorkItemRow)
from .model import amd_build_line, conversion_headline, port_style_line

TOP_DIRECTORIES = 10
SEVERITY_COLOUR = {        # Okabe-Ito, colour-blind safe; always shown with the word
    "blocker": "#D55E00", "high": "#E69F00", "medium": "#0072B2", "low": "#56B4E9", "info": "#999999",
}
TREND = {"width": 640, "height": 200, "pad": 40}
STATUS_TEXT = {"drop-in": "drop-in", "different-api": "different API", "partial": "partial", "none": "none"}


_hours = html_items.hours


def _n(count: int, word: str, plural: str = "") -> str:
    return f"{count:,} {word if count == 1 else plural or word + 's'}"


def bars(rows: list[tuple[str, float, bool]]) -> tuple[Bar, ...]:
    """Horizontal bars (html_items.bars) of rows without a detail."""
    return html_items.bars([(label, value, flag, "") for label, value, flag in rows])


def hours_chart(items: Sequence[WorkItem], decided: set[str],
                named: dict[int, tuple[str, str]] | None = None) -> tuple[Bar, ...]:
    """Where the estimate's hours go (html_items.hours_chart)."""
    return html_items.hours_chart(items, decided, named)


def top_directories(rows: Sequence[NamedHours]) -> list[tuple[str, float]]:
    """The ten directories with the most hours, then one bar for the rest."""
    head = [(r.name, r.hours) for r in rows[:TOP_DIRECTORIES]]
    rest = rows[TOP_DIRECTORIES:]
    if rest:
        head.append((f"{len(rest)} more directories", round(sum(r.hours for r in rest), 1)))
    return head


def trend_chart(history: Sequence[Run]) -> Trend | None:
    """Two lines over the recorded runs: P50 person-weeks and findings, each on its own scale."""
    if len(history) < 2:
        return None
    w, h, pad = TREND["width"], TREND["height"], TREND["pad"]
    n = len(history)

    def line(values: list[float]) -> TrendLine:
        top = max(values) or 1.0
        points = [(round(pad + i * (w - 2 * pad) / (n - 1), 1), round(h - pad - v / top * (h - 2 * pad), 1))
                  for i, v in enumerate(values)]
        return TrendLine(" ".join(f"{x},{y}" for x, y in points), values[0], values[-1],
                         tuple(Dot(x, y, v) for (x, y), v in zip(points, values)))

    return Trend(w, h, line([float(r.p50_weeks) for r in history]), line([float(r.findings) for r in history]),
                 tuple(RunMark(round(pad + i * (w - 2 * pad) / (n - 1), 1), r.generated[:10])
                       for i, r in enumerate(history)))


def _findings_json(findings: Sequence[FindingRecord]) -> Markup:
    """Compact rows for the script ([path, line, column, code, severity, message, snippet] with
    paths and codes as indexes), escaped so that nothing inside can close the <script>."""
    paths = sorted({f.path for f in findings})
    codes = sorted({f.code for f in findings})
    pi = {p: i for i, p in enumerate(paths)}
    ci = {c: i for i, c in enumerate(codes)}
    rows = [[pi[f.path], f.line, f.column, ci[f.code], f.severity, f.message, f.snippet] for f in findings]
    text = json.dumps({"paths": paths, "codes": codes, "rows": rows}, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


COVERS_SHOWN = 5   # findings named in an item's row; the JSON has them all


def _covers(item: WorkItem) -> Covers:
    """The findings (path:line) an item covers, the first few by name, or the project facts it
    scales with."""
    if item.findings:
        shown = item.findings[:COVERS_SHOWN]
        more = max(item.count if item.kind == "pattern" else 0, len(item.findings)) - len(shown)
        return Covers(shown, max(more, 0), "")
    return Covers((), 0, ", ".join(f"{k} {v:g}" for k, v in item.facts.items()))


def _item_row(item: WorkItem, named: dict[int, tuple[str, str]]) -> WorkItemRow:
    label, detail = named.get(id(item), (item.label, ""))
    return WorkItemRow(label, detail, _covers(item), item.p10, item.p50, item.p90, item.why)


def _polyfills(doc: Audit) -> PolyfillView:
    """The polyfills convert would define (a document saved before they were listed has none)."""
    rows = tuple(PolyfillRow(p.name, ", ".join(p.serves), p.note, p.files[:COVERS_SHOWN],
                             max(len(p.files) - COVERS_SHOWN, 0)) for p in doc.summary.polyfills)
    return PolyfillView(doc.options.rocm or doc.tool.mappings.newest_rocm, rows)


def _headline(doc: Audit, e: Estimate) -> Answer:
    """The first screen's numbers: how long, what blocks, and the conversion in words."""
    s, weeks = doc.summary, e.person_weeks
    inside, outside = counts(e.decisions)   # one per family, as the text report counts them
    return Answer(
        p50=f"{weeks.p50:.1f}", p10=f"{weeks.p10:.1f}", p90=f"{weeks.p90:.1f}",
        calendar_p50=f"{e.calendar_weeks.p50:.1f}", calendar_p90=f"{e.calendar_weeks.p90:.1f}",
        team_size=e.team_size, focus=f"{e.focus_hours_per_week:g}",
        decisions=inside, decisions_word="decision" if inside == 1 else "decisions",
        decisions_outside=outside, blockers=f"{s.blockers:,}",
        need_person=_n(conversion_headline(s).need_person, "finding needs", "findings need"),
        archetype=e.archetype, files=f"{s.files:,}", lines=f"{s.lines:,}",
        findings=f"{s.findings:,}", conversion=s.headline)


def _where(d: Decision) -> str:
    where = _n(d.sites, "site")
    where += f" ({_n(d.blocker_sites, 'blocker')})" if d.blocker_sites != d.sites else ""
    where += " in " + _n(d.files, "file")
    return where + (f", {_n(d.kernels, 'kernel')}" if d.kernels else "")


def _part_name(feature: str) -> str:
    return f"the {feature}" if is_part(feature) else f"the optional {feature} code"   # as model.changes() says


def _decision_row(family: Family, anchors: dict[int, int]) -> DecisionRow:
    """One decision (a family) as the first screen lists it, linked to its sites further down:
    in the estimate, its headline sites and a note of those in parts priced apart; else each
    part's sites and the hours of all of them (the estimate sums percentiles the same way)."""
    d = family.first
    if family.in_estimate:
        where = _where(d) + "".join(f"; {_n(p.sites, 'more site')} in {_part_name(p.optional)}, not in the estimate"
                                    for p in family.apart)
        p10, p50, p90 = d.hours.p10, d.hours.p50, d.hours.p90
    else:
        where = "; ".join(f"{_where(p)} in {_part_name(p.optional)}" for p in family.parts)
        p10, p50, p90 = (round(sum(getattr(p.hours, k) for p in family.parts), 1) for k in ("p10", "p50", "p90"))
    return DecisionRow(label=d.label, alternative=d.alternative, optional=d.optional,
                       anchor=f"decision-{anchors[id(d)]}", where=where,
                       hours_text=f"{_hours(p50)} ({p10:,.0f}\u2013{p90:,.0f})",
                       since=f"ROCm {d.rocm_since}+" if d.rocm_since else "")


NAMED_OUTSIDE = 3   # decisions named in the folded summary line (a printed page shows only that line)


def _outside(fams: Sequence[Family], rows: list[DecisionRow]) -> tuple[OutsidePart, ...]:
    """The decisions only code the estimate leaves out needs, one per family, as one fold whose
    line says how many, for which parts, and the first few by name."""
    ds = [r for f, r in zip(fams, rows) if not f.in_estimate]
    if not ds:
        return ()
    parts = list(dict.fromkeys(p.optional for f in fams if not f.in_estimate for p in f.parts))
    names = "; ".join(d.label for d in ds[:NAMED_OUTSIDE])
    names += f"; and {len(ds) - NAMED_OUTSIDE} more" if len(ds) > NAMED_OUTSIDE else ""
    part = " or ".join(_part_name(p) for p in parts)
    return (OutsidePart(", ".join(parts), part, tuple(ds), names, _n(len(ds), "more decision")),)


def _dependency_card(rows: Sequence[DependencyRow]) -> DependencyCard:
    """What the port depends on, for the first screen: the libraries, and those a person moves."""
    statuses = ", ".join(f"{n} {STATUS_TEXT[k]}" for k, n in Counter(d.status for d in rows).most_common())
    hard = tuple(f"{label}: {', '.join(d.name for d in rows if d.status == status)}"
                 for status, label in (("none", "No ROCm counterpart"), ("different-api", "A different API on ROCm"))
                 if any(d.status == status for d in rows))
    return DependencyCard(_n(len(rows), "CUDA library or package", "CUDA libraries and packages"), statuses, hard)


def view(doc: Audit, history: Sequence[Run] = (), compiles: Compiles | None = None) -> View:
    """Everything the template shows, computed once here."""
    s, e = doc.summary, doc.required_estimate()
    fams = families(e.decisions)
    anchors = {id(d): k + 1 for k, d in enumerate(e.decisions)}   # html_groups.by_decision's anchors
    rows = [_decision_row(f, anchors) for f in fams]
    named = html_items.titles(doc)
    headline_items = [i for i in e.items if not i.optional]
    inside, apart = html_items.top_files(doc)
    dependencies = tuple(DependencyRow(d.name, d.kind, d.rocm, d.status, STATUS_TEXT[d.status])
                         for d in doc.dependencies)
    return View(
        doc=doc,
        headline=_headline(doc, e),
        decisions=tuple(r for f, r in zip(fams, rows) if f.in_estimate),
        decisions_outside=_outside(fams, rows),
        not_included=e.changes, scope=e.scope, port_style=port_style_line(e.port_style) if e.port_style else "",
        amd_build=amd_build_line(s.platforms),
        chart=hours_chart(headline_items, {d.label for d in e.decisions if not d.optional}, named),
        chart_rest=html_items.rest_line(headline_items),
        hours=e.hours,
        items=tuple(_item_row(i, named) for i in headline_items),
        optional=tuple(OptionalView(o.feature, o.person_weeks,
                                    tuple(_item_row(i, named) for i in e.items if i.optional == o.feature))
                       for o in e.optional),
        blocker_groups=html_groups.by_decision(e.decisions, e.items, doc.findings),
        areas=html_groups.by_area(doc.findings),
        by_category=tuple((r.name, _hours(r.hours)) for r in e.by_category),
        by_directory=tuple((name, _hours(h)) for name, h in top_directories(e.by_directory)),
        polyfills=_polyfills(doc),
        dependencies=dependencies,
        dependency_counts=", ".join(f"{n} {STATUS_TEXT[k]}" for k, n in
                                    Counter(d.status for d in dependencies).most_common()),
        trend=trend_chart(history),
        history=tuple(history),
        severities=tuple(s.by_severity.items()),
        findings_json=_findings_json(doc.findings),
        codes=tuple(sorted({f.code for f in doc.findings})),
        files=inside, files_apart=apart, compiles=compiles, dependency_card=_dependency_card(dependencies),
        model=e.model)


@lru_cache(maxsize=1)
def _environment():
    import jinja2

    from ..core.tables.mappings import data_dir
    folder = data_dir("portkit._reports", "reports")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals["inline"] = lambda name: Markup((Path(folder) / name).read_text(encoding="utf-8"))
    env.filters["code"] = html_markup.code_spans
    env.filters["path"] = html_markup.path
    env.filters["name"] = html_markup.name_breaks
    return env


def render(doc: Audit, stream: TextIO, statistics: bool = False, history: Sequence[Run] = (),
           compiles: Compiles | None = None) -> None:
    """The self-contained page: the template displays view(doc, history, compiles), field by field."""
    stream.write(_environment().get_template("report.html.j2").render(**vars(view(doc, history, compiles))))
