"""What the HTML template shows, as typed rows: computed by html.py, displayed by reports/*.j2.

Every figure is formatted and every chart coordinate computed before the template sees it; the
template reads these attributes and computes nothing (STYLE.md, habit 8).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from .audit_model import Archetype, Audit, CostModel, FileRecord, Spread
from .html_groups import Area, BlockerGroup
from .html_verify import Compiles


@dataclass(frozen=True)
class Run:
    """One recorded audit of the history (project/history.py), as the trend draws it."""

    generated: str
    p50_weeks: float
    findings: int


@dataclass(frozen=True)
class Bar:
    label: str
    value: str                  # the hours, formatted
    percent: float              # of the longest bar
    decision: bool              # the bar is a decision's work item
    detail: str = field(default="", metadata={"omit_empty": True})   # the rule code and name of a titled item


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    value: float


@dataclass(frozen=True)
class TrendLine:
    points: str                 # an SVG polyline's points
    first: float
    last: float
    dots: tuple[Dot, ...]


@dataclass(frozen=True)
class RunMark:
    x: float
    date: str


@dataclass(frozen=True)
class Trend:
    width: int
    height: int
    weeks: TrendLine
    findings: TrendLine
    runs: tuple[RunMark, ...]


@dataclass(frozen=True)
class Covers:
    sites: tuple[str, ...]      # path:line, the first few
    more: int
    facts: str                  # the project facts an item without sites scales with


@dataclass(frozen=True)
class WorkItemRow:
    label: str                  # the title in plain words (html_items.title)
    detail: str                 # the rule code and name, or ""
    covers: Covers
    p10: float
    p50: float
    p90: float
    why: str


@dataclass(frozen=True)
class DecisionRow:
    label: str
    alternative: str
    optional: str
    anchor: str                 # the id of its blocker sites further down
    where: str
    hours_text: str
    since: str


@dataclass(frozen=True)
class OutsidePart:
    """Decisions about code the estimate leaves out, for one optional part."""

    feature: str
    part: str
    decisions: tuple[DecisionRow, ...]
    names: str
    count: str


@dataclass(frozen=True)
class OptionalView:
    feature: str
    person_weeks: Spread
    items: tuple[WorkItemRow, ...]


@dataclass(frozen=True)
class DependencyRow:
    name: str
    kind: str
    rocm: str | None
    status: str
    status_text: str


@dataclass(frozen=True)
class PolyfillRow:
    name: str
    serves: str
    note: str
    files: tuple[str, ...]
    more: int


@dataclass(frozen=True)
class PolyfillView:
    rocm: str
    rows: tuple[PolyfillRow, ...]


@dataclass(frozen=True)
class DependencyCard:
    """What the port depends on: the CUDA libraries and packages, and those with no drop-in."""

    count: str                  # "6 CUDA libraries and packages"
    statuses: str               # "4 drop-in, 1 partial, 1 none"
    hard: tuple[str, ...]       # "A different API on ROCm: cuDNN, NVML": what a person moves


@dataclass(frozen=True)
class Answer:
    """The first screen's numbers, formatted."""

    p50: str
    p10: str
    p90: str
    calendar_p50: str
    calendar_p90: str
    team_size: int
    focus: str
    decisions: int
    decisions_word: str
    decisions_outside: int      # one per family (report/families.py), as the text report counts them
    blockers: str
    need_person: str
    archetype: Archetype
    files: str
    lines: str
    findings: str
    conversion: str


@dataclass(frozen=True)
class View:
    """The template's names (report.html.j2), each a field."""

    doc: Audit
    headline: Answer
    decisions: tuple[DecisionRow, ...]
    decisions_outside: tuple[OutsidePart, ...]
    not_included: tuple[str, ...]
    scope: str
    port_style: str           # the port style the headline prices, and the other's price
    amd_build: str
    chart: tuple[Bar, ...]
    chart_rest: str           # the items the chart leaves out, as a line, when they would be its longest bar
    hours: Spread
    items: tuple[WorkItemRow, ...]
    optional: tuple[OptionalView, ...]
    blocker_groups: tuple[BlockerGroup, ...]
    areas: tuple[Area, ...]
    by_category: tuple[tuple[str, str], ...]
    by_directory: tuple[tuple[str, str], ...]
    polyfills: PolyfillView
    dependencies: tuple[DependencyRow, ...]
    dependency_counts: str
    trend: Trend | None
    history: tuple[Run, ...]
    severities: tuple[tuple[str, int], ...]
    findings_json: Markup
    codes: tuple[str, ...]
    files: tuple[FileRecord, ...]         # the files in the headline, the most hours first
    files_apart: tuple[FileRecord, ...]   # priced apart, or nothing to price
    compiles: Compiles | None             # audit --verify-result
    dependency_card: DependencyCard
    model: CostModel
