"""The audit as typed results: what every audit format renders (docs/json-schema.md, field for field).

Each record is a frozen dataclass whose fields are the JSON document's keys in the JSON's order, so
`to_json()` is the document `portkit audit --format json` writes, byte for byte, and `load()` reads
a saved one back for `portkit report` (report/audit_load.py). Formats read attributes (`audit.summary.blockers`), never
string keys: a field renamed here is a type error in every renderer, not a KeyError in one.
Building the records from an AuditResult is report/model.py's job; this module only holds them.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field, fields, is_dataclass

# a JSON object as Python holds it: what to_json() gives and load() reads, not the typed model
JsonObject = dict[str, object]


def _omit_empty() -> typing.Any:
    """A field the JSON leaves out while it is empty or None (a finding's autofix, deep mode's engine)."""
    return field(default=None, metadata={"omit_empty": True})


@dataclass(frozen=True)
class Percentiles:
    p10: float
    p50: float
    p90: float


@dataclass(frozen=True)
class Spread:   # percentiles and the mean: the estimate's hours and weeks, an optional part's
    p10: float
    p50: float
    p90: float
    mean: float


@dataclass(frozen=True)
class Hours3:   # a triangular range: a finding's or a work item's low / likely / high hours
    low: float
    likely: float
    high: float


@dataclass(frozen=True)
class TableCounts:
    names: int                  # CUDA names in the tables the audit ran with
    newest_rocm: str


@dataclass(frozen=True)
class Tool:
    name: str
    version: str
    mappings: TableCounts


@dataclass(frozen=True)
class RunOptions:
    rocm: str | None            # the target release; None: the newest the tables know
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    fail_on: str | None
    team_size: int


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str
    error: bool


@dataclass(frozen=True)
class AmdImplementation:
    path: str
    kind: str
    evidence: str
    replaces: str
    compiles: str


@dataclass(frozen=True)
class Platforms:
    """What the platform model saw (docs/platforms.md): code by where it is compiled."""

    amd_bytes: int
    ported_bytes: int
    nvidia_bytes: int
    shared_bytes: int
    amd_path_share: float
    shim_files: tuple[str, ...]
    amd_macros: tuple[str, ...]
    refs_already_ported: int
    findings_left_amd: int
    findings_inactive: int
    findings_already_ported: int
    builds_for_amd: bool
    amd_build_share: float
    amd_implementations: tuple[AmdImplementation, ...]
    amd_branch_only: bool = False   # the build has an AMD branch its code does not back (issue 53) ...
    amd_branch_unbuilt: int = 0     # ... and N constructs of its sources do not compile for AMD


@dataclass(frozen=True)
class Polyfill:
    name: str
    serves: tuple[str, ...]
    files: tuple[str, ...]
    note: str


@dataclass(frozen=True)
class Summary:
    files: int
    lines: int
    findings: int
    by_severity: dict[str, int]
    by_category: dict[str, int]
    by_code: dict[str, int]
    blockers: int
    cuda_refs: int
    refs_converted: int
    refs_left: int
    converted_share: float      # 0-1; 1 when there is nothing to convert
    kernels: int
    launches: int
    partially_parsed_files: int
    findings_not_stored: int
    findings_cap: int
    skipped: tuple[Skipped, ...]
    platforms: Platforms | None   # None only in a document saved before the platform model
    polyfills: tuple[Polyfill, ...]
    headline: str


@dataclass(frozen=True)
class Archetype:
    id: str
    label: str
    reference: str
    feasible: bool


@dataclass(frozen=True)
class Decision:
    """One blocker family: the choice a team makes before porting its sites (estimate/decisions.py)."""

    id: str
    label: str
    alternative: str
    rocm_since: str
    kernels: int
    files: int
    sites: int
    blocker_sites: int
    hours: Percentiles
    optional: str


@dataclass(frozen=True)
class Calibration:
    projects: int
    spearman: float
    error_factor: float
    heldout_error_factor: float
    source: str


@dataclass(frozen=True)
class Confidence:
    band_ratio: float | None
    calibration: Calibration | None


@dataclass(frozen=True)
class OptionalPart:
    """Code behind an optional feature, priced apart from the headline."""

    feature: str
    hours: Spread
    person_weeks: Spread
    items: int


@dataclass(frozen=True)
class NamedHours:
    name: str
    hours: float


@dataclass(frozen=True)
class WorkItem:
    kind: str                   # pattern, unit, dependency, fixed, decision
    key: str
    label: str
    category: str
    directory: str
    count: int
    hours: Hours3
    p10: float
    p50: float
    p90: float
    expected_hours: float
    why: str
    findings: tuple[str, ...]   # path:line, the first SHOWN_FINDINGS
    facts: dict[str, float]
    optional: str               # the optional feature it belongs to; "" for the headline


@dataclass(frozen=True)
class PortStyle:
    """The port the headline prices, and both prices (estimate/build_decisions.py, issue 50)."""

    assumed: str                # one-way or both-vendors
    reason: str
    one_way: Spread             # person-weeks of the one-way port
    both_vendors: Spread        # ... and of the port that keeps both vendors (+ the dual-vendor build)


@dataclass(frozen=True)
class CostModel:
    method: str
    per_site: float
    source: str


@dataclass(frozen=True)
class Estimate:
    archetype: Archetype
    signals: tuple[str, ...]
    hours: Spread
    person_weeks: Spread
    calendar_weeks: Spread
    team_size: int
    focus_hours_per_week: float
    blockers: int
    decisions: tuple[Decision, ...]
    scope: str
    confidence: Confidence
    changes: tuple[str, ...]
    optional: tuple[OptionalPart, ...]
    by_category: tuple[NamedHours, ...]
    by_directory: tuple[NamedHours, ...]
    items: tuple[WorkItem, ...]
    model: CostModel
    port_style: PortStyle | None = None   # None only in a document saved before issue 50


@dataclass(frozen=True)
class Dependency:
    kind: str                   # library or package
    id: str
    name: str
    status: str                 # drop-in, different-api, partial, none
    rocm: str | None
    note: str


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    severity: str
    category: str
    summary: str


@dataclass(frozen=True)
class FileRecord:
    path: str
    kind: str
    lines: int
    cuda_refs: int
    refs_converted: int
    refs_left: int
    kernels: int
    launches: int
    partially_parsed: bool
    findings: int
    findings_not_stored: dict[str, int]
    effort_hours: float


@dataclass(frozen=True)
class AutofixEdit:
    line: int
    column: int
    end_line: int
    end_column: int
    text: str


@dataclass(frozen=True)
class FindingRecord:
    code: str
    name: str
    severity: str
    category: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    snippet: str
    fix: str
    effort_hours: Hours3
    fingerprint: str
    platform: str
    autofix: tuple[AutofixEdit, ...] | None = _omit_empty()   # only where `convert --fix warp` resolves it


@dataclass(frozen=True)
class FellBack:
    path: str
    reason: str


@dataclass(frozen=True)
class Engine:
    """What the deep pass did (--engine clang): present only when it ran."""

    name: str
    toolchain: str
    units: int
    files_seen: int
    seconds: float
    added: int
    left_out_inactive: int
    partial_parse_settled: int
    fell_back: tuple[FellBack, ...]
    clang_errors: int


@dataclass(frozen=True)
class Audit:
    """The audit of a tree: the one input of every audit format."""

    tool: Tool
    version: int
    generated: str
    root: str
    options: RunOptions
    summary: Summary
    estimate: Estimate | None
    dependencies: tuple[Dependency, ...]
    rules: tuple[RuleInfo, ...]
    files: tuple[FileRecord, ...]
    findings: tuple[FindingRecord, ...]
    engine: Engine | None = _omit_empty()

    def to_json(self) -> JsonObject:
        """The JSON document, keys in the schema's order (docs/json-schema.md)."""
        return as_json(self)

    def required_estimate(self) -> Estimate:
        """The estimate every audit has: only a document from elsewhere could lack one, and
        report/shape.py refuses it before any format reads it."""
        if self.estimate is None:
            raise ValueError("the audit has no estimate")
        return self.estimate


def as_json(value: object) -> typing.Any:
    """A record (or any value in one) as JSON data: records as objects in field order, tuples as lists."""
    if is_dataclass(value):
        return {f.name: as_json(getattr(value, f.name)) for f in fields(value)
                if not (f.metadata.get("omit_empty") and not getattr(value, f.name))}
    if isinstance(value, (tuple, list)):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value
