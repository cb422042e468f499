"""The estimate's model and arithmetic: the cost table, work items, and their sums.

Pure: no files, no printing. workitems.py turns findings, metrics and the optional-code map into
work items (a pattern of findings, a unit of work counted in the code, a project cost scaled by
the project's facts, a dependency); each has a [low, likely, high] range from
mappings/effort.toml. An item's P10/P50/P90 are percentiles of its triangular range; the
project's are the sums over the items the default build needs, so the items add up to the
headline exactly. Items in optional code are summed apart, per feature ("+N weeks for cuDNN").
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from . import rewrites, rules
from .errors import PortkitError
from .findings import Finding

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Range = tuple[float, float, float]
PROJECT = "(project)"
PERCENTILES = (10, 50, 90)
FACTS = ("cuda_kloc", "cuda_files", "kernels", "build_files_left")
SCOPE = ("Done means the converted code compiles for AMD GPUs and passes the project's own tests there; "
         "performance tuning is not included.")


@dataclass(frozen=True)
class CostModel:
    """effort.toml, validated."""

    focus_hours_per_week: float
    per_site: float
    per_site_by_code: dict[str, float]
    repeat_in_file: float
    units: dict[str, dict]
    fixed: dict[str, dict]
    finding: dict[str, Range]
    finding_by_severity: dict[str, Range]
    dependency_status: dict[str, Range]
    dependency: dict[str, Range]
    archetypes: tuple[dict, ...]
    calibration: dict = field(default_factory=dict)   # how the model scores on real ports ([calibration])

    def finding_hours(self, f: Finding) -> Range:
        """The cost range of the first finding of its pattern; nothing for code that already has an
        AMD branch (regions.py)."""
        if f.platform in ("ported", "fallback"):
            return (0.0, 0.0, 0.0)
        if rules.of(f.code).rewrite:   # a rewrite blocker: priced per kernel, API or line (rewrites.toml)
            entry, _, unit = f.subject.partition("/")
            return rewrites.default().hours(entry, unit.split("/")[0])
        if f.autofix and f"{f.code}:fixable" in self.finding_by_severity:   # `convert --fix warp` resolves it
            return self.finding_by_severity[f"{f.code}:fixable"]
        return self.finding_by_severity.get(f"{f.code}:{f.severity}") or self.finding.get(f.code, (0.0, 0.0, 0.0))

    def file_finding_hours(self, findings: list[Finding]) -> list[Range]:
        """Each finding's own cost in its file (the findings table): repeats cost `repeat_in_file`."""
        seen: set[str] = set()
        out = []
        for f in findings:
            hours = self.finding_hours(f)
            out.append(scaled(hours, self.repeat_in_file) if f.code in seen else hours)
            seen.add(f.code)
        return out

    def site_factor(self, code: str) -> float:
        return self.per_site_by_code.get(code, self.per_site)


def scaled(hours: Range, factor: float) -> Range:
    low, likely, high = hours
    return round(low * factor, 3), round(likely * factor, 3), round(high * factor, 3)


def added(a: Range, b: Range) -> Range:
    return round(a[0] + b[0], 3), round(a[1] + b[1], 3), round(a[2] + b[2], 3)


def _range(where: str, value) -> Range:
    if (not isinstance(value, list) or len(value) != 3 or not all(isinstance(v, (int, float)) for v in value)
            or not value[0] <= value[1] <= value[2] or value[0] < 0):
        raise PortkitError(f"effort.toml: {where}: expected [low, likely, high] with low <= likely <= high")
    return (float(value[0]), float(value[1]), float(value[2]))


def _fixed(name: str, record: dict) -> dict:
    out = {**record, "base": _range(f"fixed.{name}.base", record.get("base", [0, 0, 0]))}
    if "fact" in record:
        if record["fact"] not in FACTS:
            raise PortkitError(f"effort.toml: fixed.{name}.fact: expected one of {', '.join(FACTS)}")
        out["per"] = _range(f"fixed.{name}.per", record.get("per"))
        out["max"] = _range(f"fixed.{name}.max", record.get("max"))
    return out


def load(path: Path) -> CostModel:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PortkitError(f"{path}: cannot read the effort model: {exc}") from None
    model = data.get("model", {})
    units = {k: {**v, "hours": _range(f"unit.{k}", v.get("hours"))} for k, v in data.get("unit", {}).items()}
    return CostModel(
        focus_hours_per_week=float(model.get("focus_hours_per_week", 30)),
        per_site=float(model.get("per_site", 1.0)),
        per_site_by_code={k: float(v) for k, v in data.get("per_site", {}).items()},
        repeat_in_file=float(model.get("repeat_in_file", 1.0)),
        units=units, fixed={k: _fixed(k, v) for k, v in data.get("fixed", {}).items()},
        finding={k: _range(f"finding.{k}", v) for k, v in data.get("finding", {}).items()},
        finding_by_severity={k: _range(k, v) for k, v in data.get("finding_by_severity", {}).items()},
        dependency_status={k: _range(k, v) for k, v in data.get("dependency_status", {}).items()},
        dependency={k: _range(f"dependency.{k}", v) for k, v in data.get("dependency", {}).items()},
        archetypes=tuple(data.get("archetype", ())), calibration=dict(data.get("calibration", {})))


@lru_cache(maxsize=1)
def default_model() -> CostModel:
    from .mappings import tables_dir
    return load(tables_dir() / "effort.toml")


def triangular_percentile(hours: Range, p: float) -> float:
    """The p-th percentile (0-100) of the triangular distribution [low, likely, high]."""
    a, c, b = hours
    if b <= a:
        return a
    u = p / 100
    if u < (c - a) / (b - a):
        return a + math.sqrt(u * (b - a) * (c - a))
    return b - math.sqrt((1 - u) * (b - a) * (b - c))


@dataclass(frozen=True)
class Item:
    """One piece of work: what it is, the findings it covers or the facts it scales with, and why."""

    kind: str          # pattern, unit, fixed, dependency
    key: str           # rule code (+ CUDA name), unit or fixed-cost name, dependency id
    label: str
    category: str
    directory: str     # the one directory its findings are in, or PROJECT
    count: int         # sites (findings, kernels, references) the item covers; 1 for a project cost
    hours: Range       # the whole item, all its sites
    why: str = ""
    findings: tuple[str, ...] = ()                 # "path:line" of every finding it covers
    facts: tuple[tuple[str, float], ...] = ()      # the project facts it scales with
    optional: str = ""                             # the optional feature it belongs to ("" = headline)

    @property
    def percentiles(self) -> dict[str, float]:
        return {f"p{p}": round(triangular_percentile(self.hours, p), 1) for p in PERCENTILES}

    @property
    def expected(self) -> float:
        return sum(self.hours) / 3


def total(work: list[Item]) -> dict[str, float]:
    """P10/P50/P90 and mean hours of some items: the sums of theirs."""
    out = {k: round(sum(i.percentiles[k] for i in work), 1) for k in ("p10", "p50", "p90")}
    out["mean"] = round(sum(i.expected for i in work), 1)
    return out


@dataclass
class Estimate:
    archetype: dict
    signals: list[str]
    hours: dict[str, float]            # p10, p50, p90, mean: the sums over the headline items
    person_weeks: dict[str, float]
    calendar_weeks: dict[str, float]
    team_size: int
    focus_hours_per_week: float
    blockers: int
    items: list[Item] = field(default_factory=list)   # the headline's and the optional ones
    optional: list[dict] = field(default_factory=list)   # per feature: hours and person-weeks
    scope: str = SCOPE

    @property
    def headline_items(self) -> list[Item]:
        return [i for i in self.items if not i.optional]

    def by(self, attribute: str) -> list[tuple[str, float]]:
        """Expected hours per category or directory of the headline items, largest first."""
        totals: dict[str, float] = {}
        for item in self.headline_items:
            key = getattr(item, attribute)
            totals[key] = totals.get(key, 0.0) + item.expected
        return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))


def _holds(when: list[str], present: set[str]) -> bool:
    return all((w[1:] not in present) if w.startswith("!") else (w in present) for w in when)


def archetype(present: set[str], model: CostModel) -> dict:
    for entry in model.archetypes:
        if _holds(list(entry.get("when", [])), present):
            return {k: entry[k] for k in ("id", "label", "reference", "feasible") if k in entry}
    return {"id": "other", "label": "unclassified", "reference": "", "feasible": True}


def weeks_of(hours: dict[str, float], focus: float) -> dict[str, float]:
    return {k: round(v / focus, 2) for k, v in hours.items()}


def optional_totals(work: list[Item], focus: float) -> list[dict]:
    """Per optional feature, the hours it would add: largest first."""
    features = sorted({i.optional for i in work if i.optional})
    out = []
    for feature in features:
        hours = total([i for i in work if i.optional == feature])
        out.append({"feature": feature, "hours": hours, "person_weeks": weeks_of(hours, focus),
                    "items": sum(1 for i in work if i.optional == feature)})
    return sorted(out, key=lambda o: (-o["hours"]["p50"], o["feature"]))
