"""The shape of a saved audit document that the HTML report reads, checked before rendering.

`portkit report` renders a JSON file that anyone may have written or edited. docs/audit.schema.json
describes the whole document; this is the part html.py and the template read, as Python data
(jsonschema is only a test dependency, and docs/ is not shipped). A wrong type anywhere is one
message naming the JSON path (`findings[3].line: expected an integer, got "x"`), never a
traceback from inside the template. Numbers must be finite (JSON's 1e400 parses as infinity,
Python reads NaN) and not negative: every number here is a count, hours, weeks or a share, and a
negative one would draw bars backwards. Every field the report reads is listed here
(tests/test_hardening_output.py renders a document cut down to this shape).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

NUMBER = "number"
SEVERITIES = ("blocker", "high", "medium", "low", "info")
STATUSES = ("drop-in", "different-api", "partial", "none")


@dataclass(frozen=True)
class OneOf:
    values: tuple


@dataclass(frozen=True)
class MapOf:
    """An object whose keys are chosen by the data (counts by severity ...)."""
    value: object


@dataclass(frozen=True)
class Opt:
    """A field a document may lack (saved before it existed); when present, it has `shape`."""
    shape: object


HOURS3 = {"low": NUMBER, "likely": NUMBER, "high": NUMBER}
PERCENTILES = {"p10": NUMBER, "p50": NUMBER, "p90": NUMBER}
NAMED_HOURS = [{"name": str, "hours": NUMBER}]
POLYFILLS = [{"name": str, "serves": [str], "files": [str], "note": str}]
DECISIONS = [{"id": Opt(str), "label": str, "alternative": str, "rocm_since": str, "kernels": int, "files": int, "sites": int,
              "blocker_sites": int, "hours": PERCENTILES, "optional": str}]
# model.amd_build_line reads the last two only when `builds_for_amd` is true (audit_problem)
PLATFORMS = {"builds_for_amd": Opt(bool), "amd_build_share": Opt(NUMBER), "amd_implementations": Opt([{"evidence": str}]),
             "amd_branch_only": Opt(bool), "amd_branch_unbuilt": Opt(int)}
AMD_BUILD = {"amd_build_share": NUMBER, "amd_implementations": [{"evidence": str}]}
AUDIT = {
    "version": int, "generated": str, "root": str,
    "tool": {"version": str, "mappings": {"names": int, "newest_rocm": str}},
    "options": {"rocm": (str, type(None))},
    "summary": {"files": int, "lines": int, "findings": int, "blockers": int, "cuda_refs": int,
                "refs_converted": int, "refs_left": int, "converted_share": NUMBER, "by_severity": MapOf(int),
                "headline": str, "platforms": Opt(PLATFORMS), "polyfills": Opt(POLYFILLS)},
    "estimate": {
        "hours": PERCENTILES, "person_weeks": PERCENTILES, "calendar_weeks": {"p50": NUMBER, "p90": NUMBER},
        "team_size": int, "focus_hours_per_week": NUMBER,
        "archetype": {"label": str, "reference": str, "feasible": bool},
        "by_category": NAMED_HOURS, "by_directory": NAMED_HOURS,
        "items": [{"kind": str, "key": str, "label": str, "hours": HOURS3, "p10": NUMBER, "p50": NUMBER,
                   "p90": NUMBER, "count": int, "why": str, "findings": [str], "facts": MapOf(NUMBER),
                   "optional": str}],
        "optional": [{"feature": str, "person_weeks": PERCENTILES}],
        "scope": str, "changes": [str],
        "model": {"method": str, "source": str},
        "decisions": Opt(DECISIONS),
        "port_style": Opt({"assumed": OneOf(("one-way", "both-vendors")), "reason": str,
                           "one_way": PERCENTILES, "both_vendors": PERCENTILES}),   # issue 50; older documents lack it
    },
    "dependencies": [{"kind": str, "name": str, "rocm": (str, type(None)), "status": OneOf(STATUSES)}],
    "rules": Opt([{"code": str, "name": str, "summary": str}]),   # the work items' plain titles (html_items.py)
    "files": [{"path": str, "kind": (str, type(None)), "lines": int, "cuda_refs": int, "refs_converted": int,
               "kernels": int, "findings": int, "effort_hours": NUMBER}],
    "findings": [{"code": str, "name": str, "severity": OneOf(SEVERITIES), "path": str, "line": int,
                  "column": int, "message": str, "snippet": str, "fix": str,
                  "effort_hours": {"low": NUMBER, "high": NUMBER}}],
}

ENGINE = {"units": int, "added": int, "left_out_inactive": int, "fell_back": [object]}


def audit_problem(doc: object) -> str | None:
    """What keeps `doc` from being rendered as the HTML report, or None."""
    found = problem(doc, AUDIT)
    if found is None and doc["summary"].get("platforms", {}).get("builds_for_amd"):
        found = problem(doc["summary"]["platforms"], AMD_BUILD, "summary.platforms")
    if found is None and doc.get("engine"):   # deep mode only (the template tests it the same way)
        found = problem(doc["engine"], ENGINE, "engine")
    return found


def problem(doc: object, shape: object = AUDIT, where: str = "") -> str | None:
    """The first place where `doc` does not have `shape`, as `path: what is wrong`; None if it fits."""
    if isinstance(shape, dict):
        if not isinstance(doc, dict):
            return _wrong(where, "an object", doc)
        for key, inner in shape.items():
            if key not in doc and isinstance(inner, Opt):
                continue
            if key not in doc:
                return f"{where or 'the document'}: missing field {key!r}"
            found = problem(doc[key], inner, f"{where}.{key}" if where else key)
            if found:
                return found
        return None
    if isinstance(shape, list):
        if not isinstance(doc, list):
            return _wrong(where, "a list", doc)
        for k, item in enumerate(doc):
            found = problem(item, shape[0], f"{where}[{k}]")
            if found:
                return found
        return None
    if isinstance(shape, MapOf):   # its keys are shown too
        if not isinstance(doc, dict):
            return _wrong(where, "an object", doc)
        return next((p for k, v in doc.items() if (p := _text(k, f"{where}.{k!r}") or
                                                   problem(v, shape.value, f"{where}.{k}"))), None)
    if isinstance(shape, Opt):
        return problem(doc, shape.shape, where)
    if isinstance(shape, OneOf):
        return None if doc in shape.values else _wrong(where, "one of " + ", ".join(shape.values), doc)
    return _scalar(doc, shape, where)


def _scalar(doc: object, shape: object, where: str) -> str | None:
    if shape == NUMBER:   # an integer past float's range (10**400) is no finite number to draw
        ok = isinstance(doc, (int, float)) and not isinstance(doc, bool) and abs(doc) <= _LARGEST \
            and math.isfinite(doc)
        return _negative(doc, where) if ok else _wrong(where, "a finite number", doc)
    types = shape if isinstance(shape, tuple) else (shape,)
    if isinstance(doc, bool) and bool not in types:
        return _wrong(where, _NAMES.get(types[0], "a value"), doc)
    if not isinstance(doc, types):
        return _wrong(where, _NAMES.get(types[0], "a value"), doc)
    if isinstance(doc, str):
        return _text(doc, where)
    return _negative(doc, where) if isinstance(doc, int) and not isinstance(doc, bool) else None


def _text(value: str, where: str) -> str | None:
    """JSON's "\\ud800" reads as a lone surrogate, which no UTF-8 page can hold; those a file name's
    undecodable bytes became (U+DC80-U+DCFF, surrogateescape) are written back as the bytes."""
    try:
        value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return _wrong(where, "text (a lone surrogate is none)", value)
    return None


def _negative(value: float, where: str) -> str | None:
    return _wrong(where, "a number >= 0", value) if value < 0 else None


_LARGEST = sys.float_info.max
_NAMES = {int: "an integer", str: "a string", bool: "true or false"}


def _wrong(where: str, expected: str, got: object) -> str:
    shown = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
    if len(shown) > 40:
        shown = shown[:39] + "…"
    return f"{where or 'the document'}: expected {expected}, got {shown}"
