"""The HTML report's work items in plain words: their titles, the one chart, the files in the headline.

A manager does not read rule names: "large-shared-memory" or "no-hip-equivalent:
CUBLASLT_MATMUL_DESC_SCALE_TYPE" said nothing to one. A pattern item is titled with its rule's
summary (the docstring's first line, which the audit document carries in `rules`) and keeps the
code and name as a detail. The chart never draws an "other" bar longer than a named one (llm.c's
longest bar was "19 other work items"): the rest is then a line under the chart. The files table
lists the files in the estimate's headline; code the estimate leaves out is folded apart.
"""

from __future__ import annotations

import re
from typing import Sequence

from .audit_model import Audit, FileRecord, RuleInfo, WorkItem
from .html_view import Bar

CHART_ITEMS = 8            # work items drawn in the one chart; the rest are one bar or one line
PATTERN_KEY = re.compile(r"(PK[0-9]{3})(?::(.+))?")


def hours(value: float) -> str:
    return f"{value:,.0f} h" if value >= 10 else f"{value:,.1f} h"


def title(item: WorkItem, rules: dict[str, RuleInfo]) -> tuple[str, str]:
    """(the item's title in plain words, the rule code and name as a detail; "" when the label
    is plain already: a decision, a dependency, a project cost)."""
    m = PATTERN_KEY.fullmatch(item.key) if item.kind == "pattern" else None
    rule = rules.get(m.group(1)) if m else None
    if m is None or rule is None or not rule.summary:
        return item.label, ""
    subject = m.group(2)
    text = rule.summary.rstrip(". ")
    return (f"{text}: `{subject}`" if subject else text), f"{rule.code} {rule.name}"


def titles(doc: Audit) -> dict[int, tuple[str, str]]:
    """Each work item's (title, detail), by the item's identity."""
    rules = {r.code: r for r in doc.rules}
    return {id(i): title(i, rules) for i in doc.required_estimate().items}


def bars(rows: list[tuple[str, float, bool, str]]) -> tuple[Bar, ...]:
    """Horizontal bars as HTML (labels wrap, print keeps them): each bar's share of the longest,
    in percent, labelled with its hours; `flag` marks a bar that is a decision."""
    top = max((r[1] for r in rows), default=0.0) or 1.0
    return tuple(Bar(label, hours(value), max(round(100 * value / top, 1), 0.5), flag, detail)
                 for label, value, flag, detail in rows)


def _split(items: Sequence[WorkItem]) -> tuple[list[WorkItem], list[WorkItem], bool]:
    """(the items drawn, the rest, whether the rest is a bar): it is one only when it is no
    longer than the shortest named bar."""
    ranked = sorted(items, key=lambda i: (-i.p50, i.label))
    shown, rest = ranked[:CHART_ITEMS], ranked[CHART_ITEMS:]
    as_bar = bool(rest) and sum(i.p50 for i in rest) <= min(i.p50 for i in shown)
    return shown, rest, as_bar


def hours_chart(items: Sequence[WorkItem], decided: set[str],
                named: dict[int, tuple[str, str]] | None = None) -> tuple[Bar, ...]:
    """Where the estimate's hours go: its largest work items, then the rest as one bar when that
    bar is no longer than a named one (else rest_line says it)."""
    named = named or {}
    shown, rest, as_bar = _split(items)
    rows = [(*named.get(id(i), (i.label, ""))[:1], i.p50, i.label in decided, named.get(id(i), ("", ""))[1])
            for i in shown]
    if as_bar:
        rows.append((f"{len(rest)} other work items", round(sum(i.p50 for i in rest), 1), False, ""))
    return bars(rows)


def rest_line(items: Sequence[WorkItem]) -> str:
    """The items the chart leaves out, as a sentence, when their sum would be its longest bar."""
    _, rest, as_bar = _split(items)
    if not rest or as_bar:
        return ""
    total = round(sum(i.p50 for i in rest), 1)
    return (f"Not drawn: {len(rest)} smaller work items, {hours(total)} together "
            f"(each {hours(max(i.p50 for i in rest))} or less); the work items below list them all.")


def parts_of_files(doc: Audit) -> dict[str, str]:
    """path -> the part the estimate prices its findings in: "" (the headline) when any of its
    sites is in a headline item, else the first part priced apart; the estimate's items decide,
    never this page. A dependency's sites say nothing of a part: llm.c's cuBLAS item lists
    dev/cuda/ files, which the estimate prices apart."""
    part: dict[str, str] = {}
    for item in doc.required_estimate().items:
        if item.kind == "dependency":   # priced once for the project: its sites are wherever it is included
            continue
        for site in item.findings:
            path = site.rsplit(":", 1)[0]
            if part.get(path) != "":
                part[path] = item.optional if path not in part or not item.optional else part[path]
    return part


def top_files(doc: Audit) -> tuple[tuple[FileRecord, ...], tuple[FileRecord, ...]]:
    """(the files in the headline, the most hours first; every other file: priced apart or with
    nothing to price)."""
    part = parts_of_files(doc)
    ranked = sorted(doc.files, key=lambda f: (-f.effort_hours, f.path))
    return (tuple(f for f in ranked if part.get(f.path) == ""),
            tuple(f for f in ranked if part.get(f.path) != ""))
