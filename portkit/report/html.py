"""The HTML report: one self-contained file an engineering manager can open offline.

The page answers a manager's questions in the order they are asked, on the first screen: how long
(the person-weeks with their range), what blocks and which decisions must be made, what the
estimate leaves out. Then one chart of where the hours go; everything else is folded
(<details>), grouped by decision and by part of the tree (html_groups.py). The share of
references converted is a sentence, never a headline figure: 97% converted beside blockers reads
as "nearly done".

This module builds the view model (numbers formatted, chart geometry computed) from the audit
document; the Jinja2 template (reports/report.html.j2, autoescaped) only displays it, with two
filters from html_markup.py (backtick spans as <code>, paths that wrap at '/'). Findings travel
to the page's small script as JSON inside <script type="application/json">, with every `<`, `>`
and `&` escaped, so no file name or snippet can end the script or inject markup.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import TextIO

from markupsafe import Markup

from . import html_groups, html_markup
from ..estimate.scope import is_part
from .model import amd_build_line, conversion_headline

TOP_DIRECTORIES = 10
CHART_ITEMS = 8            # work items drawn in the one chart; the rest are one bar
SEVERITY_COLOUR = {        # Okabe-Ito, colour-blind safe; always shown with the word
    "blocker": "#D55E00", "high": "#E69F00", "medium": "#0072B2", "low": "#56B4E9", "info": "#999999",
}
TREND = {"width": 640, "height": 200, "pad": 40}
STATUS_TEXT = {"drop-in": "drop-in", "different-api": "different API", "partial": "partial", "none": "none"}


def _hours(value: float) -> str:
    return f"{value:,.0f} h" if value >= 10 else f"{value:,.1f} h"


def _n(count: int, word: str, plural: str = "") -> str:
    return f"{count:,} {word if count == 1 else plural or word + 's'}"


def bars(rows: list[tuple[str, float, bool]]) -> list[dict]:
    """Horizontal bars as HTML (labels wrap, print keeps them): each bar's share of the longest,
    in percent, labelled with its hours; `flag` marks a bar that is a decision."""
    top = max((v for _, v, _ in rows), default=0.0) or 1.0
    return [{"label": label, "value": _hours(value), "percent": max(round(100 * value / top, 1), 0.5),
             "decision": flag} for label, value, flag in rows]


def hours_chart(items: list[dict], decided: set[str]) -> list[dict]:
    """Where the estimate's hours go: its largest work items, then one bar for the rest."""
    ranked = sorted(items, key=lambda i: (-i["p50"], i["label"]))
    rows = [(i["label"], i["p50"], i["label"] in decided) for i in ranked[:CHART_ITEMS]]
    rest = ranked[CHART_ITEMS:]
    if rest:
        rows.append((f"{len(rest)} other work items", round(sum(i["p50"] for i in rest), 1), False))
    return bars(rows)


def top_directories(rows: list[dict]) -> list[tuple[str, float]]:
    """The ten directories with the most hours, then one bar for the rest."""
    head = [(r["name"], r["hours"]) for r in rows[:TOP_DIRECTORIES]]
    rest = rows[TOP_DIRECTORIES:]
    if rest:
        head.append((f"{len(rest)} more directories", round(sum(r["hours"] for r in rest), 1)))
    return head


def trend_chart(history: list[dict]) -> dict | None:
    """Two lines over the recorded runs: P50 person-weeks and findings, each on its own scale."""
    if len(history) < 2:
        return None
    w, h, pad = TREND["width"], TREND["height"], TREND["pad"]
    n = len(history)

    def line(key: str) -> dict:
        values = [float(r[key]) for r in history]
        top = max(values) or 1.0
        points = [(round(pad + i * (w - 2 * pad) / (n - 1), 1), round(h - pad - v / top * (h - 2 * pad), 1))
                  for i, v in enumerate(values)]
        return {"points": " ".join(f"{x},{y}" for x, y in points), "first": values[0], "last": values[-1],
                "dots": [{"x": x, "y": y, "value": v} for (x, y), v in zip(points, values)]}

    return {"width": w, "height": h, "weeks": line("p50_weeks"), "findings": line("findings"),
            "runs": [{"x": round(pad + i * (w - 2 * pad) / (n - 1), 1), "date": r["generated"][:10]}
                     for i, r in enumerate(history)]}


def _findings_json(findings: list[dict]) -> Markup:
    """Compact rows for the script ([path, line, column, code, severity, message, snippet] with
    paths and codes as indexes), escaped so that nothing inside can close the <script>."""
    paths = sorted({f["path"] for f in findings})
    codes = sorted({f["code"] for f in findings})
    pi = {p: i for i, p in enumerate(paths)}
    ci = {c: i for i, c in enumerate(codes)}
    rows = [[pi[f["path"]], f["line"], f["column"], ci[f["code"]], f["severity"], f["message"], f["snippet"]]
            for f in findings]
    text = json.dumps({"paths": paths, "codes": codes, "rows": rows}, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


COVERS_SHOWN = 5   # findings named in an item's row; the JSON has them all


def _covers(item: dict) -> dict:
    """The findings (path:line) an item covers, the first few by name, or the project facts it
    scales with."""
    if item["findings"]:
        shown = item["findings"][:COVERS_SHOWN]
        more = max(item["count"] if item["kind"] == "pattern" else 0, len(item["findings"])) - len(shown)
        return {"sites": shown, "more": max(more, 0), "facts": ""}
    return {"sites": [], "more": 0, "facts": ", ".join(f"{k} {v:g}" for k, v in item["facts"].items())}


def _polyfills(doc: dict) -> dict:
    """The polyfills convert would define (a document saved before they were listed has none)."""
    rows = [{"name": p["name"], "serves": ", ".join(p["serves"]), "note": p["note"],
             "files": p["files"][:COVERS_SHOWN], "more": max(len(p["files"]) - COVERS_SHOWN, 0)}
            for p in doc["summary"].get("polyfills", [])]
    return {"rocm": doc["options"]["rocm"] or doc["tool"]["mappings"]["newest_rocm"], "rows": rows}


def _headline(doc: dict, decisions: list[dict]) -> dict:
    """The first screen's numbers: how long, what blocks, and the conversion in words."""
    s, e = doc["summary"], doc["estimate"]
    weeks = e["person_weeks"]
    inside = sum(1 for d in decisions if not d["optional"])
    return {
        "p50": f"{weeks['p50']:.1f}", "p10": f"{weeks['p10']:.1f}", "p90": f"{weeks['p90']:.1f}",
        "calendar_p50": f"{e['calendar_weeks']['p50']:.1f}", "calendar_p90": f"{e['calendar_weeks']['p90']:.1f}",
        "team_size": e["team_size"], "focus": f"{e['focus_hours_per_week']:g}",
        "decisions": inside, "decisions_word": "decision" if inside == 1 else "decisions",
        "decisions_outside": len(decisions) - inside, "blockers": f"{s['blockers']:,}",
        "need_person": _n(conversion_headline(s)["need_person"], "finding needs", "findings need"),
        "archetype": e["archetype"], "files": f"{s['files']:,}", "lines": f"{s['lines']:,}",
        "findings": f"{s['findings']:,}", "conversion": s["headline"],
    }


def _decision_rows(decisions: list[dict]) -> list[dict]:
    """The decisions as the first screen lists them, each linked to its sites further down."""
    rows = []
    for k, d in enumerate(decisions):
        where = _n(d["sites"], "site")
        where += f" ({_n(d['blocker_sites'], 'blocker')})" if d["blocker_sites"] != d["sites"] else ""
        where += " in " + _n(d["files"], "file")
        where += f", {_n(d['kernels'], 'kernel')}" if d["kernels"] else ""
        h = d["hours"]
        rows.append({**d, "anchor": f"decision-{k + 1}", "where": where,
                     "hours_text": f"{_hours(h['p50'])} ({h['p10']:,.0f}\u2013{h['p90']:,.0f})",
                     "since": f"ROCm {d['rocm_since']}+" if d["rocm_since"] else ""})
    return rows


NAMED_OUTSIDE = 3   # decisions named in a folded part's summary line (a printed page shows only that line)


def _outside(rows: list[dict]) -> list[dict]:
    """Decisions about code the estimate leaves out, by the part they belong to, each part with
    the line its folded list shows: how many, and the first few by name."""
    parts: dict[str, list[dict]] = {}
    for d in rows:
        if d["optional"]:
            parts.setdefault(d["optional"], []).append(d)
    out = []
    for feature, ds in parts.items():
        names = "; ".join(d["label"] for d in ds[:NAMED_OUTSIDE])
        names += f"; and {len(ds) - NAMED_OUTSIDE} more" if len(ds) > NAMED_OUTSIDE else ""
        part = f"the {feature}" if is_part(feature) else f"the optional {feature} code"   # as model.changes() says
        out.append({"feature": feature, "part": part, "decisions": ds, "names": names,
                    "count": _n(len(ds), "more decision")})
    return out


def view(doc: dict, history: list[dict] | None = None) -> dict:
    """Everything the template shows, computed once here."""
    s, e = doc["summary"], doc["estimate"]
    findings = doc["findings"]
    decisions = e.get("decisions", [])
    rows = _decision_rows(decisions)
    items = [{**i, "covers": _covers(i)} for i in e["items"] if not i["optional"]]
    dependencies = [{**d, "status_text": STATUS_TEXT[d["status"]]} for d in doc["dependencies"]]
    return {
        "doc": doc,
        "headline": _headline(doc, decisions),
        "decisions": [d for d in rows if not d["optional"]],
        "decisions_outside": _outside(rows),
        "not_included": e["changes"], "scope": e["scope"],
        "amd_build": amd_build_line(s.get("platforms") or {}),
        "chart": hours_chart(items, {d["label"] for d in decisions if not d["optional"]}),
        "hours": e["hours"],
        "items": items,
        "optional": [{**o, "items": [{**i, "covers": _covers(i)} for i in e["items"] if i["optional"] == o["feature"]]}
                     for o in e["optional"]],
        "blocker_groups": html_groups.by_decision(decisions, e["items"], findings),
        "areas": html_groups.by_area(findings),
        "by_category": [(r["name"], _hours(r["hours"])) for r in e["by_category"]],
        "by_directory": [(name, _hours(h)) for name, h in top_directories(e["by_directory"])],
        "polyfills": _polyfills(doc),
        "dependencies": dependencies,
        "dependency_counts": ", ".join(f"{n} {STATUS_TEXT[k]}" for k, n in
                                       Counter(d["status"] for d in dependencies).most_common()),
        "trend": trend_chart(history or []),
        "history": history or [],
        "severities": list(s["by_severity"].items()),
        "findings_json": _findings_json(findings),
        "codes": sorted({f["code"] for f in findings}),
        "files": sorted(doc["files"], key=lambda f: (-f["effort_hours"], f["path"])),
        "model": e["model"],
    }


@lru_cache(maxsize=1)
def _environment():
    import jinja2

    from ..tables.mappings import data_dir
    folder = data_dir("portkit._reports", "reports")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals["inline"] = lambda name: Markup((Path(folder) / name).read_text(encoding="utf-8"))
    env.filters["code"] = html_markup.code_spans
    env.filters["path"] = html_markup.path
    env.filters["name"] = html_markup.name_breaks
    return env


def render(doc: dict, stream: TextIO, statistics: bool = False, history: list[dict] | None = None) -> None:
    stream.write(_environment().get_template("report.html.j2").render(**view(doc, history)))
