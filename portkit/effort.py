"""The migration estimate: findings and metrics -> person-hours as a distribution.

Pure: no files, no printing. Every hour comes from a named item (a finding's rule, a unit of
work counted in the code, a fixed project cost, a dependency) whose cost range is in
mappings/effort.toml, so a reader can check the arithmetic. A seeded Monte Carlo over the
items' triangular ranges, times a project-wide uncertainty factor, gives P10/P50/P90.
"""

from __future__ import annotations

import math
import random
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from . import rewrites
from .ecosystem import Ecosystem
from .errors import PortkitError
from .findings import Finding
from .context import Metrics

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Range = tuple[float, float, float]
PROJECT = "(project)"


@dataclass(frozen=True)
class CostModel:
    """effort.toml, validated."""

    focus_hours_per_week: float
    samples: int
    seed: int
    uncertainty: Range
    exact_draws_up_to: int
    repeat_in_file: float
    units: dict[str, dict]
    fixed: dict[str, dict]
    finding: dict[str, Range]
    finding_by_severity: dict[str, Range]
    dependency_status: dict[str, Range]
    dependency: dict[str, Range]
    archetypes: tuple[dict, ...]

    def finding_hours(self, f: Finding) -> Range:
        """The cost range of a finding met for the first time in its file; nothing for code that
        already has an AMD branch (regions.py)."""
        if f.platform in ("ported", "fallback"):
            return (0.0, 0.0, 0.0)
        if f.code == "PK402":   # a rewrite blocker: priced per kernel, API or line (rewrites.toml)
            entry, _, unit = f.subject.partition("/")
            return rewrites.default().hours(entry, unit.split("/")[0])
        return self.finding_by_severity.get(f"{f.code}:{f.severity}") or self.finding.get(f.code, (0.0, 0.0, 0.0))

    def file_finding_hours(self, findings: list[Finding]) -> list[Range]:
        """The cost of each finding of one file, in order: repeats of a rule cost `repeat_in_file`."""
        seen: set[str] = set()
        out = []
        for f in findings:
            hours = self.finding_hours(f)
            out.append(scaled(hours, self.repeat_in_file) if f.code in seen else hours)
            seen.add(f.code)
        return out


def scaled(hours: Range, factor: float) -> Range:
    """A cost range times `factor` (the discount for repeats within one file)."""
    low, likely, high = hours
    return round(low * factor, 3), round(likely * factor, 3), round(high * factor, 3)


def _range(where: str, value) -> Range:
    if (not isinstance(value, list) or len(value) != 3 or not all(isinstance(v, (int, float)) for v in value)
            or not value[0] <= value[1] <= value[2] or value[0] < 0):
        raise PortkitError(f"effort.toml: {where}: expected [low, likely, high] with low <= likely <= high")
    return (float(value[0]), float(value[1]), float(value[2]))


def load(path: Path) -> CostModel:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PortkitError(f"{path}: cannot read the effort model: {exc}") from None
    model = data.get("model", {})
    units = {k: {**v, "hours": _range(f"unit.{k}", v.get("hours"))} for k, v in data.get("unit", {}).items()}
    fixed = {k: {**v, "hours": _range(f"fixed.{k}", v.get("hours"))} for k, v in data.get("fixed", {}).items()}
    return CostModel(
        focus_hours_per_week=float(model.get("focus_hours_per_week", 30)),
        samples=int(model.get("samples", 4000)), seed=int(model.get("seed", 1)),
        uncertainty=_range("model.uncertainty", model.get("uncertainty", [1, 1, 1])),
        exact_draws_up_to=int(model.get("exact_draws_up_to", 30)),
        repeat_in_file=float(model.get("repeat_in_file", 1.0)),
        units=units, fixed=fixed,
        finding={k: _range(f"finding.{k}", v) for k, v in data.get("finding", {}).items()},
        finding_by_severity={k: _range(k, v) for k, v in data.get("finding_by_severity", {}).items()},
        dependency_status={k: _range(k, v) for k, v in data.get("dependency_status", {}).items()},
        dependency={k: _range(f"dependency.{k}", v) for k, v in data.get("dependency", {}).items()},
        archetypes=tuple(data.get("archetype", ())))


@lru_cache(maxsize=1)
def default_model() -> CostModel:
    from .mappings import tables_dir
    return load(tables_dir() / "effort.toml")


@dataclass(frozen=True)
class Item:
    """One line of the estimate: `count` units of `hours` each, in a category and a directory."""

    kind: str          # finding, unit, fixed, dependency
    key: str           # rule code, unit or fixed-cost name, dependency id
    label: str
    category: str
    directory: str
    count: int
    hours: Range

    @property
    def expected(self) -> float:
        return self.count * sum(self.hours) / 3


@dataclass
class Estimate:
    archetype: dict
    signals: list[str]
    hours: dict[str, float]            # p10, p50, p90, mean
    person_weeks: dict[str, float]
    calendar_weeks: dict[str, float]
    team_size: int
    focus_hours_per_week: float
    blockers: int
    items: list[Item] = field(default_factory=list)

    def by(self, attribute: str) -> list[tuple[str, float]]:
        """Expected hours per category or directory, largest first."""
        totals: dict[str, float] = {}
        for item in self.items:
            key = getattr(item, attribute)
            totals[key] = totals.get(key, 0.0) + item.expected
        return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))


def signals(files: Iterable[tuple[str, Metrics]], findings: list[Finding]) -> set[str]:
    """What kind of project this is: the facts the fixed costs and archetypes are chosen by."""
    found: set[str] = set()
    for _, m in files:
        if m.kind == "source" and (m.has_device_code or m.refs_found or m.launches):
            found.add("cuda-sources")
        if "torch" in m.imports:
            found.add("pytorch")
        if "jax" in m.imports or "jaxlib" in m.imports:
            found.add("jax")
        if m.triton_kernels or "triton" in m.imports:
            found.add("triton")
        if m.cuda_extension:
            found.add("cuda-extension")
        if "tensorrt" in m.libraries or "tensorrt" in m.imports:
            found.add("tensorrt")
    for f in findings:
        if f.code.startswith("PK5") and f.code != "PK507":
            found.add("build-files")
        if f.code == "PK601" and f.subject.startswith("tensorrt"):
            found.add("tensorrt")
    return found


def _holds(when: list[str], present: set[str]) -> bool:
    return all((w[1:] not in present) if w.startswith("!") else (w in present) for w in when)


def _directory(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."


def items(files: list[tuple[str, Metrics]], findings: list[Finding], present: set[str],
          model: CostModel, eco: Ecosystem) -> list[Item]:
    """Every costed piece of the port, grouped by (kind, key, directory)."""
    counts: dict[tuple, int] = {}

    def add(kind: str, key: str, label: str, category: str, directory: str, hours: Range, n: int = 1) -> None:
        if n > 0 and hours[2] > 0:
            k = (kind, key, label, category, directory, hours)
            counts[k] = counts.get(k, 0) + n

    for f in findings:
        repeat = f.effort_hours != model.finding_hours(f)
        add("finding", f.code, f"{f.name} (again in the same file)" if repeat else f.name, f.category,
            _directory(f.path), f.effort_hours)
    review, kernel, triton = (model.units.get(k) for k in
                              ("review_converted_ref", "validate_kernel", "validate_triton_kernel"))
    for path, m in files:
        directory = _directory(path)
        for unit, n in ((review, m.refs_converted), (kernel, m.kernels), (triton, m.triton_kernels)):
            if unit is None or n <= 0:
                continue
            repeat = float(unit.get("repeat_in_file", 1.0))
            if repeat == 1.0 or n == 1:
                add("unit", unit["label"], unit["label"], unit["category"], directory, unit["hours"], n)
                continue
            add("unit", unit["label"], unit["label"], unit["category"], directory, unit["hours"], 1)
            add("unit", unit["label"], f"{unit['label']} (more in the same file)", unit["category"], directory,
                scaled(unit["hours"], repeat), n - 1)
    for name, cost in model.fixed.items():
        if _holds(list(cost.get("when", [])), present):
            add("fixed", name, cost["label"], cost["category"], PROJECT, cost["hours"])
    for dep_id, status, label in dependencies(files, findings, eco):
        hours = model.dependency.get(dep_id) or model.dependency_status.get(status)
        if hours:
            add("dependency", dep_id, f"adopt the ROCm counterpart of {label} ({status})", "dependencies",
                PROJECT, hours)
    return [Item(kind, key, label, category, directory, n, hours)
            for (kind, key, label, category, directory, hours), n in sorted(counts.items())]


def dependencies(files: list[tuple[str, Metrics]], findings: list[Finding],
                 eco: Ecosystem) -> list[tuple[str, str, str]]:
    """(id, status, name) of each CUDA library and CUDA-only Python package the project uses, once."""
    seen: dict[str, tuple[str, str]] = {}
    python_of = {p: lib.id for lib in eco.libraries for p in lib.python}
    for _, m in files:
        for lib_id in m.libraries:
            lib = eco.by_id.get(lib_id)
            if lib is not None:
                seen.setdefault(lib.id, (lib.cost_status, lib.name))
    for f in findings:
        if f.code == "PK601" and ":" not in f.subject:
            package = eco.package(f.subject)
            if package is None:
                continue
            lib_id = python_of.get(package.name)
            if lib_id in seen:
                continue
            seen.setdefault(lib_id or package.name, (package.cost_status, package.name))
    return sorted((k, status, name) for k, (status, name) in seen.items())


def archetype(present: set[str], model: CostModel) -> dict:
    for entry in model.archetypes:
        if _holds(list(entry.get("when", [])), present):
            return {k: entry[k] for k in ("id", "label", "reference", "feasible") if k in entry}
    return {"id": "other", "label": "unclassified", "reference": "", "feasible": True}


def _triangular_stats(r: Range) -> tuple[float, float]:
    a, c, b = r
    mean = (a + b + c) / 3
    var = (a * a + b * b + c * c - a * b - a * c - b * c) / 18
    return mean, var


def simulate(work: list[Item], model: CostModel) -> list[float]:
    """Sorted total hours of `model.samples` seeded samples of the whole port."""
    rng = random.Random(model.seed)
    totals = []
    low_u, mode_u, high_u = model.uncertainty
    by_range: dict[Range, int] = {}   # the sum's distribution depends only on ranges and counts
    for item in work:
        by_range[item.hours] = by_range.get(item.hours, 0) + item.count
    groups = sorted(by_range.items())
    for _ in range(model.samples):
        total = 0.0
        for (low, likely, high), count in groups:
            if high <= low:
                total += count * low
            elif count <= model.exact_draws_up_to:
                total += sum(rng.triangular(low, high, likely) for _ in range(count))
            else:
                mean, var = _triangular_stats((low, likely, high))
                draw = rng.gauss(count * mean, math.sqrt(count * var))
                total += max(count * low, min(count * high, draw))
        factor = rng.triangular(low_u, high_u, mode_u) if high_u > low_u else low_u
        totals.append(total * factor)
    totals.sort()
    return totals


def _percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    index = min(len(values) - 1, max(0, int(round(p / 100 * (len(values) - 1)))))
    return values[index]


def estimate(files: list[tuple[str, Metrics]], findings: list[Finding], eco: Ecosystem,
             model: CostModel, team_size: int = 1, focus_hours: float | None = None) -> Estimate:
    """The estimate for one audited tree (`files`: (path, metrics) of every scanned file)."""
    if team_size < 1:
        raise PortkitError(f"--team-size must be at least 1, not {team_size}")
    focus = focus_hours or model.focus_hours_per_week
    if focus <= 0 or focus > 80:
        raise PortkitError(f"--focus-hours must be between 1 and 80, not {focus}")
    present = signals(files, findings)
    work = items(files, findings, present, model, eco)
    samples = simulate(work, model)
    hours = {f"p{p}": round(_percentile(samples, p), 1) for p in (10, 50, 90)}
    hours["mean"] = round(sum(samples) / len(samples), 1) if samples else 0.0
    weeks = {k: round(v / focus, 2) for k, v in hours.items()}
    calendar = {k: round(v / team_size, 2) for k, v in weeks.items()}
    return Estimate(archetype(present, model), sorted(present), hours, weeks, calendar, team_size, focus,
                    sum(1 for f in findings if f.severity == "blocker"), work)
