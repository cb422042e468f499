"""The HTML report: one self-contained file an engineering manager can open offline.

This module builds the view model (numbers formatted, chart geometry computed) from the audit
document; the Jinja2 template (reports/report.html.j2, autoescaped) only displays it. Findings
travel to the page's small script as JSON inside <script type="application/json">, with every
`<`, `>` and `&` escaped, so no file name or snippet can end the script or inject markup.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TextIO

from markupsafe import Markup

from .model import amd_build_line, conversion_headline

STATIC_ROWS = 200          # findings rendered as HTML for readers without JavaScript
TOP_DIRECTORIES = 10
SEVERITY_COLOUR = {        # Okabe-Ito, colour-blind safe; always shown with the word
    "blocker": "#D55E00", "high": "#E69F00", "medium": "#0072B2", "low": "#56B4E9", "info": "#999999",
}
BAR = {"width": 640, "label": 220, "bar": 330, "row": 24}
TREND = {"width": 640, "height": 200, "pad": 40}
STATUS_TEXT = {"drop-in": "drop-in", "different-api": "different API", "partial": "partial", "none": "none"}


def _hours(value: float) -> str:
    return f"{value:,.0f} h" if value >= 10 else f"{value:,.1f} h"


def bar_chart(rows: list[tuple[str, float]], colour: str = "#0072B2") -> dict:
    """Horizontal bars, each labelled with its hours: geometry for the template's <svg>."""
    top = max((v for _, v in rows), default=0.0) or 1.0
    bars = []
    for index, (label, value) in enumerate(rows):
        width = round(BAR["bar"] * value / top, 1)
        y = index * BAR["row"]
        bars.append({"label": label, "value": _hours(value), "x": BAR["label"], "y": y + 4,
                     "width": max(width, 1.0), "height": BAR["row"] - 8, "text_x": BAR["label"] + max(width, 1.0) + 6,
                     "text_y": y + BAR["row"] / 2 + 4, "label_y": y + BAR["row"] / 2 + 4})
    return {"width": BAR["width"], "height": max(1, len(rows)) * BAR["row"], "bars": bars, "colour": colour}


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


def _covers(item: dict) -> str:
    """The findings (path:line) an item covers, or the project facts it scales with."""
    if item["findings"]:
        shown = item["findings"][:COVERS_SHOWN]
        more = max(item["count"] if item["kind"] == "pattern" else 0, len(item["findings"])) - len(shown)
        return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
    return ", ".join(f"{k} {v:g}" for k, v in item["facts"].items())


def _polyfills(doc: dict) -> dict:
    """The polyfills convert would define (a document saved before they were listed has none)."""
    rows = [{"name": p["name"], "serves": ", ".join(p["serves"]), "note": p["note"],
             "files": ", ".join(p["files"][:COVERS_SHOWN]) +
             (f" and {len(p['files']) - COVERS_SHOWN} more" if len(p["files"]) > COVERS_SHOWN else "")}
            for p in doc["summary"].get("polyfills", [])]
    return {"rocm": doc["options"]["rocm"] or doc["tool"]["mappings"]["newest_rocm"], "rows": rows}


BLOCKERS_SHOWN = 200   # blocker sites listed (the decisions above them are what a reader needs)


def view(doc: dict, history: list[dict] | None = None) -> dict:
    """Everything the template shows, computed once here."""
    s, e = doc["summary"], doc["estimate"]
    findings = doc["findings"]
    blockers = [f for f in findings if f["severity"] == "blocker"]
    model = e["model"]
    return {
        "doc": doc,
        "headline": {
            "p50": f"{e['person_weeks']['p50']:.1f}", "p90": f"{e['person_weeks']['p90']:.1f}",
            "p10": f"{e['person_weeks']['p10']:.1f}",
            "calendar_p50": f"{e['calendar_weeks']['p50']:.1f}", "calendar_p90": f"{e['calendar_weeks']['p90']:.1f}",
            "team_size": e["team_size"], "focus": f"{e['focus_hours_per_week']:g}",
            "blockers": s["blockers"], "converted": f"{s['converted_share'] * 100:.0f}%",
            "converted_label": conversion_headline(s)["label"],
            "refs_converted": f"{s['refs_converted']:,}", "cuda_refs": f"{s['cuda_refs']:,}",
            "archetype": e["archetype"], "files": f"{s['files']:,}", "lines": f"{s['lines']:,}",
            "findings": f"{s['findings']:,}", "conversion": s["headline"],
        },
        "items": [{**i, "covers": _covers(i)} for i in e["items"] if not i["optional"]],
        "optional": [{**o, "items": [{**i, "covers": _covers(i)} for i in e["items"] if i["optional"] == o["feature"]]}
                     for o in e["optional"]],
        "hours": e["hours"], "scope": e["scope"], "changes": e["changes"],
        "blockers": [{**f, "cost": f"{_hours(f['effort_hours']['low'])} - {_hours(f['effort_hours']['high'])}"}
                     for f in blockers[:BLOCKERS_SHOWN]],
        "more_blockers": max(0, len(blockers) - BLOCKERS_SHOWN),
        "decisions": e.get("decisions", []),
        "amd_build": amd_build_line(s.get("platforms") or {}),
        "by_category": bar_chart([(r["name"], r["hours"]) for r in e["by_category"]]),
        "by_directory": bar_chart(top_directories(e["by_directory"]), colour="#009E73"),
        "polyfills": _polyfills(doc),
        "dependencies": [{**d, "status_text": STATUS_TEXT[d["status"]]} for d in doc["dependencies"]],
        "trend": trend_chart(history or []),
        "history": history or [],
        "severity_colour": SEVERITY_COLOUR,
        "severities": list(s["by_severity"].items()),
        "static_findings": findings[:STATIC_ROWS],
        "more_findings": max(0, len(findings) - STATIC_ROWS),
        "findings_json": _findings_json(findings),
        "codes": sorted({f["code"] for f in findings}),
        "files": sorted(doc["files"], key=lambda f: (-f["effort_hours"], f["path"])),
        "model": model,
    }


@lru_cache(maxsize=1)
def _environment():
    import jinja2

    from ..tables.mappings import data_dir
    folder = data_dir("portkit._reports", "reports")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals["inline"] = lambda name: Markup((Path(folder) / name).read_text(encoding="utf-8"))
    return env


def render(doc: dict, stream: TextIO, statistics: bool = False, history: list[dict] | None = None) -> None:
    stream.write(_environment().get_template("report.html.j2").render(**view(doc, history)))
