"""The audit's JSON document as types: what `portkit.audit_paths` returns (docs/json-schema.md).

TypedDicts, not dataclasses: the document IS the JSON that `portkit audit --format json` writes, so
a caller indexes it, compares it with a saved file or dumps it exactly as before, and a type checker
or an IDE still knows every key and its type. The large records the schema versions on their own
(the estimate, dependencies, the deep engine's, platforms, polyfills) stay `dict[str, Any]`;
docs/audit.schema.json is their contract, and tests/test_packaging.py holds these keys to it.
Nothing here runs: the module imports only `typing`, so the public API can name it cheaply.
"""

from __future__ import annotations

from typing import Any, TypedDict


class ToolRecord(TypedDict):
    name: str                   # "portkit"
    version: str
    mappings: dict[str, Any]    # names (CUDA names in the tables), newest_rocm


class OptionsRecord(TypedDict):
    rocm: str | None            # the target release; None: the newest the tables know
    select: list[str]
    ignore: list[str]
    fail_on: str | None
    team_size: int


class SkippedRecord(TypedDict):
    path: str
    reason: str
    error: bool


class SummaryRecord(TypedDict):
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
    skipped: list[SkippedRecord]
    platforms: dict[str, Any]   # docs/json-schema.md, `summary.platforms`
    polyfills: list[dict[str, Any]]
    headline: str


class RuleRecord(TypedDict):
    code: str
    name: str
    severity: str
    category: str
    summary: str


class FileRecord(TypedDict):
    path: str
    kind: str                   # source, cmake, make, python, requirements, pyproject, conda, shell
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


class EffortRecord(TypedDict):
    low: float
    likely: float
    high: float


class _FindingRecord(TypedDict):
    code: str                   # PKnnn, stable forever
    name: str
    severity: str               # blocker, high, medium, low, info
    category: str
    path: str                   # relative to the document's root, forward slashes
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    snippet: str
    fix: str
    effort_hours: EffortRecord
    fingerprint: str
    platform: str               # "", "ported", "fallback", "nvidia"


class FindingRecord(_FindingRecord, total=False):
    autofix: list[dict[str, Any]]   # only where `portkit convert --fix warp` resolves the finding


class _AuditDocument(TypedDict):
    tool: ToolRecord
    version: int                # the schema version, 1
    generated: str
    root: str
    options: OptionsRecord
    summary: SummaryRecord
    estimate: dict[str, Any] | None
    dependencies: list[dict[str, Any]]
    rules: list[RuleRecord]
    files: list[FileRecord]
    findings: list[FindingRecord]


class AuditDocument(_AuditDocument, total=False):
    """The audit of a tree, as `portkit audit --format json` writes it."""

    engine: dict[str, Any]      # only with the clang engine (deep mode)
