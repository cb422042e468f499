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
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path

from ..core.tables import blockers as rewrites
from .. import rules
from ..core.errors import MappingError, PortkitError
from ..core.tables import toml_cache
from ..core.findings import Finding
from ..core.tables.records import check_keys, record

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
class Unit:
    """[unit.NAME]: a cost per unit of work counted in the code (a kernel, a converted reference)."""

    hours: Range
    label: str
    category: str
    fact: str = ""                 # the metric that counts the units (default: the unit's name)
    basis: str = ""
    repeat_in_file: float = 1.0    # the second and later units of one file cost this fraction


@dataclass(frozen=True)
class Fixed:
    """[fixed.NAME]: a project cost, hours = base + fact x per, capped at max (base alone without fact)."""

    label: str
    category: str
    base: Range = (0.0, 0.0, 0.0)
    when: tuple[str, ...] = ()
    basis: str = ""
    fact: str = ""
    per: Range = (0.0, 0.0, 0.0)
    max: Range = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Decision:
    """[decision.NAME]: a construct that breaks the AMD build, one item (build_decisions.py): `first`
    for its first site, `per` for each further one, capped at `max`."""

    label: str
    alternative: str
    basis: str
    first: Range
    per: Range = (0.0, 0.0, 0.0)
    max: Range = (0.0, 0.0, 0.0)
    libraries: tuple[str, ...] = ()   # ecosystem ids whose adoption the decision is (NCCL -> RCCL)
    subjects: tuple[str, ...] = ()    # finding subjects (prefixes) that are the decision's sites

    def hours(self, sites: int) -> Range:
        return tuple(round(min(f + (sites - 1) * p, m), 3) for f, p, m in zip(self.first, self.per, self.max))


@dataclass(frozen=True)
class Archetype:
    """[[archetype]]: a kind of project, first match wins."""

    id: str
    label: str
    when: tuple[str, ...]
    reference: str
    feasible: bool


@dataclass(frozen=True)
class Calibration:
    """[calibration]: how the model scores on real ports."""

    projects: int
    spearman: float
    error_factor: float           # in-sample: the projects around their own hours-per-line fit
    heldout_error_factor: float   # leave-one-out: each project around the fit of the others
    source: str


@dataclass(frozen=True)
class CostModel:
    """effort.toml, validated."""

    focus_hours_per_week: float
    per_site: float
    per_site_by_code: dict[str, float]
    repeat_in_file: float
    units: dict[str, Unit]
    fixed: dict[str, Fixed]
    finding: dict[str, Range]
    finding_by_severity: dict[str, Range]
    dependency_status: dict[str, Range]
    dependency: dict[str, Range]
    archetypes: tuple[Archetype, ...]
    calibration: Calibration | None = None
    # rules priced per file ([per_file]): each further file costs this fraction of the first site,
    # each further site in a file `per_site`: a kernel family is redesigned once per file
    per_file_by_code: dict[str, float] = field(default_factory=dict)   # how the model scores on real ports ([calibration])
    decisions: dict[str, Decision] = field(default_factory=dict)   # [decision.NAME]: build-breaking constructs

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

    def sites_factor(self, code: str, sites: int, files: int) -> float:
        """How many first sites' worth `sites` findings of one pattern in `files` files cost: the
        first in full, then per further site, or for a [per_file] rule per further file (and
        per_site for each further site in a file)."""
        if code in self.per_file_by_code:
            return 1 + (files - 1) * self.per_file_by_code[code] + (sites - files) * self.per_site
        return 1 + (sites - 1) * self.site_factor(code)


def scaled(hours: Range, factor: float) -> Range:
    low, likely, high = hours
    return round(low * factor, 3), round(likely * factor, 3), round(high * factor, 3)


def added(a: Range, b: Range) -> Range:
    return round(a[0] + b[0], 3), round(a[1] + b[1], 3), round(a[2] + b[2], 3)


TABLE = "mappings/effort.toml"
KEYS = ("schema", "model", "calibration", "per_site", "per_file", "unit", "fixed", "finding", "finding_by_severity",
        "dependency_status", "dependency", "archetype", "decision")
MODEL_KEYS = ("focus_hours_per_week", "per_site", "repeat_in_file")


def _range(where: str, value) -> Range:
    if (not isinstance(value, list) or len(value) != 3 or not all(isinstance(v, (int, float)) for v in value)
            or not value[0] <= value[1] <= value[2] or value[0] < 0):
        raise MappingError(f"{TABLE}: {where}: expected [low, likely, high] with low <= likely <= high")
    return (float(value[0]), float(value[1]), float(value[2]))


def _unit(name: str, raw) -> Unit:
    where = f"{TABLE}: unit.{name}"
    check_keys(where, raw, optional=[f.name for f in fields(Unit)])
    return record(Unit, where, raw, hours=_range(f"unit.{name}", raw.get("hours")))


def _fixed(name: str, raw) -> Fixed:
    where = f"{TABLE}: fixed.{name}"
    check_keys(where, raw, optional=[f.name for f in fields(Fixed)])
    ranges = {"base": _range(f"fixed.{name}.base", raw.get("base", [0, 0, 0]))}
    if "fact" in raw:
        if raw["fact"] not in FACTS:
            raise MappingError(f"{TABLE}: fixed.{name}.fact: expected one of {', '.join(FACTS)}")
        ranges["per"] = _range(f"fixed.{name}.per", raw.get("per"))
        ranges["max"] = _range(f"fixed.{name}.max", raw.get("max"))
    elif "per" in raw or "max" in raw:
        raise MappingError(f"{where}: 'per' and 'max' need a 'fact'")
    return record(Fixed, where, raw, **ranges)


def _decision(name: str, raw) -> Decision:
    where = f"{TABLE}: decision.{name}"
    check_keys(where, raw, required=("label", "alternative", "basis", "first", "max"),
               optional=("per", "libraries", "subjects"))
    ranges = {k: _range(f"decision.{name}.{k}", raw.get(k, [0, 0, 0])) for k in ("first", "per", "max")}
    return record(Decision, where, raw, **ranges)


def _table(section: str, data: dict) -> dict:
    """A section keyed by names of its own (rule codes, units, libraries)."""
    table = data.get(section, {})
    if not isinstance(table, dict):
        raise MappingError(f"{TABLE}: [{section}]: not a table")
    return table


def _ranges(section: str, data: dict, prefix: str = "") -> dict[str, Range]:
    return {k: _range(f"{prefix}{k}", v) for k, v in _table(section, data).items()}


def load(path: Path) -> CostModel:
    """effort.toml as typed records: an unknown or missing key is a MappingError naming the file and the key."""
    try:
        data = toml_cache.load(path)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PortkitError(f"{path}: cannot read the effort model: {exc}") from None
    check_keys(TABLE, data, optional=KEYS)
    model = check_keys(f"{TABLE}: [model]", data.get("model", {}), required=MODEL_KEYS)
    calibration = data.get("calibration")
    return CostModel(
        focus_hours_per_week=float(model["focus_hours_per_week"]),
        per_site=float(model["per_site"]),
        per_site_by_code={k: float(v) for k, v in _table("per_site", data).items()},
        per_file_by_code={k: float(v) for k, v in _table("per_file", data).items()},
        decisions={k: _decision(k, v) for k, v in _table("decision", data).items()},
        repeat_in_file=float(model["repeat_in_file"]),
        units={k: _unit(k, v) for k, v in _table("unit", data).items()},
        fixed={k: _fixed(k, v) for k, v in _table("fixed", data).items()},
        finding=_ranges("finding", data, "finding."),
        finding_by_severity=_ranges("finding_by_severity", data),
        dependency_status=_ranges("dependency_status", data),
        dependency=_ranges("dependency", data, "dependency."),
        archetypes=tuple(record(Archetype, f"{TABLE}: archetype {n}", raw)
                         for n, raw in enumerate(data.get("archetype", ()), start=1)),
        calibration=None if calibration is None else record(Calibration, f"{TABLE}: [calibration]", calibration))


@lru_cache(maxsize=1)
def default_model() -> CostModel:
    from ..core.tables.mappings import tables_dir
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
    family: str = ""                               # the library or rewrite decision it is part of (decisions.py)

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
    decisions: list[dict] = field(default_factory=list)   # one per blocker family (decisions.py)
    scope: str = SCOPE                 # the definition of done, in one line (scope.Scope.done)
    # the port style the headline assumes and both prices (workitems._styles): assumed, reason,
    # one_way and both_vendors (person-weeks p10/p50/p90/mean)
    port_style: dict = field(default_factory=dict)

    @property
    def headline_items(self) -> list[Item]:
        return [i for i in self.items if not i.optional]

    def by(self, attribute: str) -> list[tuple[str, float]]:
        """P50 hours per category or directory of the headline items, largest first: they sum to the
        headline's P50 (the headline is the sum of the items' percentiles)."""
        totals: dict[str, float] = {}
        for item in self.headline_items:
            key = getattr(item, attribute)
            totals[key] = totals.get(key, 0.0) + item.percentiles["p50"]
        return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))


def _holds(when: list[str], present: set[str]) -> bool:
    return all((w[1:] not in present) if w.startswith("!") else (w in present) for w in when)


def archetype(present: set[str], model: CostModel) -> dict:
    for entry in model.archetypes:
        if _holds(list(entry.when), present):
            return {"id": entry.id, "label": entry.label, "reference": entry.reference, "feasible": entry.feasible}
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
