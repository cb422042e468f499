"""The audit result as typed records (report/audit_model.py): the only input of every format.

docs/json-schema.md documents their JSON and docs/audit.schema.json validates it. Formats (text,
json, sarif, csv, html) render these records and compute nothing of their own, so a JSON file
saved by CI and read back with audit_load.load renders to the same report later.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections import Counter
from dataclasses import asdict, dataclass, replace

from ..core.tables import ecosystem
from ..rewrite import polyfills
from .. import rules
from ..commands.results import AuditResult
from ..estimate.effort import Estimate, Item
from ..estimate.build_decisions import BOTH_VENDORS_PART
from ..estimate.scope import has_cuda, is_part
from ..core.findings import SEVERITIES, Finding
from ..core.findingstore import CAP_PER_CODE
from ..core.tables.mappings import format_version
from ..core.tables.project_tables import db_for
from ..core.version import __version__
from .audit_model import (AmdImplementation, Archetype, Audit, AutofixEdit, Calibration, Confidence, CostModel,
    Decision, Dependency, Engine, FellBack, FileRecord, FindingRecord, Hours3, JsonObject, NamedHours, OptionalPart,
    Percentiles, Platforms, Polyfill, PortStyle, RuleInfo, RunOptions, Skipped, Spread, Summary, TableCounts, Tool, WorkItem)
from .audit_model import Estimate as EstimateRecord

SCHEMA_VERSION = 1


def _generated() -> str:
    """UTC time of the run; SOURCE_DATE_EPOCH pins it for reproducible output."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = (_dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch and epoch.isdigit()
              else _dt.datetime.now(_dt.timezone.utc))
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def finding_record(f: Finding) -> FindingRecord:
    return FindingRecord(
        code=f.code, name=f.name, severity=f.severity, category=f.category, path=f.path, line=f.line,
        column=f.column, end_line=f.end_line, end_column=f.end_column, message=f.message, snippet=f.snippet,
        fix=f.fix, effort_hours=Hours3(*f.effort_hours), fingerprint=f.fingerprint, platform=f.platform,
        autofix=tuple(AutofixEdit(*edit) for edit in f.autofix) if f.autofix else None)


SHOWN_FINDINGS = 200   # of one item's findings in the JSON (the item's count says how many in all)


def item_record(i: Item) -> WorkItem:
    return WorkItem(
        kind=i.kind, key=i.key, label=i.label, category=i.category, directory=i.directory, count=i.count,
        hours=Hours3(*i.hours), **i.percentiles, expected_hours=round(i.expected, 2), why=i.why,
        findings=tuple(i.findings[:SHOWN_FINDINGS]), facts=dict(i.facts), optional=i.optional)


def changes(parts: tuple[OptionalPart, ...]) -> tuple[str, ...]:
    """What would move the number: each optional feature the team might decide to port (or the
    dual-vendor build a one-way port leaves out)."""
    return tuple(("keeping both vendors (a build option, a shim header and guards)" if o.feature == BOTH_VENDORS_PART
                  else f"porting the {o.feature}" if is_part(o.feature) else f"porting the optional {o.feature} code")
                 + f" adds {o.person_weeks.p50:.1f} person-weeks (P50; "
                 f"{o.person_weeks.p10:.1f}-{o.person_weeks.p90:.1f})" for o in parts)


def _estimate_record(e: Estimate) -> EstimateRecord:
    from ..estimate.effort import default_model
    model = default_model()
    p10, p90 = e.hours["p10"], e.hours["p90"]
    parts = tuple(OptionalPart(o["feature"], Spread(**o["hours"]), Spread(**o["person_weeks"]), o["items"])
                  for o in e.optional)
    return EstimateRecord(
        archetype=Archetype(**e.archetype), signals=tuple(e.signals), hours=Spread(**e.hours),
        person_weeks=Spread(**e.person_weeks), calendar_weeks=Spread(**e.calendar_weeks), team_size=e.team_size,
        focus_hours_per_week=e.focus_hours_per_week, blockers=e.blockers,
        decisions=tuple(Decision(**{**d, "hours": Percentiles(**d["hours"])}) for d in e.decisions),
        scope=e.scope,
        confidence=Confidence(round(p90 / p10, 2) if p10 else None,
                              Calibration(**asdict(model.calibration)) if model.calibration else None),
        changes=changes(parts), optional=parts,
        by_category=tuple(NamedHours(k, round(v, 1)) for k, v in e.by("category")),
        by_directory=tuple(NamedHours(k, round(v, 1)) for k, v in e.by("directory")),
        items=tuple(item_record(i) for i in sorted(e.items, key=_item_order)),
        model=CostModel("sum of the work items' percentiles", model.per_site, "mappings/effort.toml"),
        port_style=PortStyle(e.port_style["assumed"], e.port_style["reason"], Spread(**e.port_style["one_way"]),
                             Spread(**e.port_style["both_vendors"])) if e.port_style else None)


def port_style_line(style: PortStyle) -> str:
    """The port the headline prices, why, and the other style's price (issue 50)."""
    names = {"one-way": "one-way", "both-vendors": "both vendors (a build option, a shim header and guards)"}
    other = "one-way" if style.assumed == "both-vendors" else "both-vendors"
    price = {"one-way": style.one_way, "both-vendors": style.both_vendors}
    return (f"Port style: {names[style.assumed]}, {_pw(price[style.assumed].p50)} person-weeks (P50), since "
            f"{style.reason}; {other}: {_pw(price[other].p50)} (--port-style {other})")


def _pw(weeks: float) -> str:
    return f"{weeks:.1f}"


def _item_order(i: Item) -> tuple:
    return (i.optional, -i.percentiles["p50"], i.kind, i.key)


@dataclass(frozen=True)
class Headline:
    """The verdict on conversion: its sentence, and how many findings need a person."""

    text: str
    need_person: int


def conversion_headline(summary: Summary) -> Headline:
    """The one verdict on conversion every format shows, decided from the counts alone.

    "Converted automatically" only while no blocker or high finding remains; otherwise the
    references were converted mechanically and the findings that need a person are counted.
    Blockers are always counted, never a hard-coded zero."""
    severity = summary.by_severity
    blockers = severity.get("blocker", 0)
    need = blockers + severity.get("high", 0)
    counts = f"{summary.refs_converted:,} of {summary.cuda_refs:,} CUDA references " \
             f"({summary.converted_share * 100:.1f}%)"
    tail = f"blockers: {blockers}"
    if need:
        text = (f"{counts} converted mechanically; {need:,} finding{'s' if need != 1 else ''} "
                f"need{'' if need != 1 else 's'} a person (high severity or worse); {tail}")
    else:
        text = f"Converted automatically: {counts}; {summary.refs_left:,} left for people; {tail}"
    return Headline(text, need)


def _dependencies(result: AuditResult) -> tuple[Dependency, ...]:
    eco = ecosystem.default()
    out = []
    libraries = sorted({lib for s in result.scans for lib in s.metrics.libraries})
    for lib_id in libraries:
        lib = eco.by_id.get(lib_id)
        if lib is not None:
            out.append(Dependency("library", lib.id, lib.name, lib.status, lib.rocm, lib.note))
    packages = sorted({f.subject for f in result.findings if rules.of(f.code).package and ":" not in f.subject})
    imports = sorted({m for s in result.scans for m in s.metrics.imports})
    named = set(packages) | {p.name for p in (eco.module(m) for m in imports) if p is not None}
    for name in sorted(named):
        pkg = eco.package(name)
        if pkg is not None:
            out.append(Dependency("package", pkg.name, pkg.name, pkg.status, pkg.rocm, pkg.note))
    return tuple(out)


def _polyfills(result: AuditResult) -> tuple[Polyfill, ...]:
    """The polyfills `portkit convert` would define for this tree at the audit's --rocm
    (docs/polyfills.md): each with the CUDA names it serves and the files that use it."""
    users: dict[str, list[str]] = {}
    for s in result.scans:
        for name in s.metrics.polyfills:
            users.setdefault(name, []).append(s.rel)
    records = polyfills.by_name()
    return tuple(Polyfill(name, tuple(records[name].serves + records[name].headers), tuple(sorted(files)),
                          records[name].note) for name, files in sorted(users.items()))


def _platforms(result: AuditResult) -> Platforms:
    """What the platform model saw: code by where it is compiled, and what is already ported."""
    scans = result.scans
    sizes = Counter()
    for s in scans:
        sizes.update(s.metrics.region_bytes)
    total = sum(sizes.values())
    return Platforms(
        amd_bytes=sizes["amd"], ported_bytes=sizes["ported"], nvidia_bytes=sizes["nvidia"],
        shared_bytes=sizes["shared"],
        amd_path_share=round((sizes["amd"] + sizes["ported"]) / total, 4) if total else 0.0,
        shim_files=tuple(sorted(s.rel for s in scans if s.metrics.shim)),
        amd_macros=tuple(result.facts.amd_macros),
        refs_already_ported=sum(s.metrics.refs_already_ported for s in scans),
        findings_left_amd=sum(s.metrics.findings_left_amd for s in scans),
        findings_inactive=sum(s.metrics.findings_inactive for s in scans),
        findings_already_ported=sum(1 for f in result.findings if f.platform in ("ported", "fallback")),
        builds_for_amd=bool(result.scope is not None and result.scope.builds_for_amd),
        amd_build_share=_amd_build_share(result),
        amd_implementations=tuple(AmdImplementation(**i.record()) for i in result.scope.amd.implementations)
        if result.scope else (),
        amd_branch_only=bool(result.scope is not None and result.scope.branch_only),
        amd_branch_unbuilt=result.scope.unbuilt if result.scope is not None and result.scope.branch_only else 0)


def _amd_build_share(result: AuditResult) -> float:
    """In a tree that already builds for AMD: the share of the product's CUDA code (the headline's
    files, estimate/scope.py) that AMD builds compile or a parallel implementation replaces, by
    bytes; the rest is NVIDIA-only code. 0.0 for a tree that does not build for AMD."""
    scope = result.scope
    if scope is None or not scope.builds_for_amd:
        return 0.0
    total = nvidia = 0
    for s in result.scans:
        m = s.metrics
        if has_cuda(m) and not scope.whole(s.rel):
            total += sum(m.region_bytes.values())
            nvidia += m.region_bytes.get("nvidia", 0) if scope.priced(s.rel) else 0
    return round(1 - nvidia / total, 4) if total else 0.0


def amd_build_line(platforms: Platforms | None) -> str:
    """The sentence for a tree that already builds for AMD: what says so, and what the estimate is; for
    a build with an AMD branch its code does not back (issue 53), what that branch lacks."""
    if platforms is not None and platforms.amd_branch_only:
        where = "; ".join(i.evidence for i in platforms.amd_implementations[:3])
        n = platforms.amd_branch_unbuilt
        lacks = (f"{n} construct{'s' if n != 1 else ''} in its sources do{'es' if n == 1 else ''} not compile for AMD"
                 if n else "its sources use no HIP API and still name CUDA's")
        return f"Not yet built for AMD: the build has an AMD branch ({where}); {lacks}. The estimate prices the port."
    if platforms is None or not platforms.builds_for_amd:
        return ""
    found = platforms.amd_implementations
    evidence = "; ".join(i.evidence for i in found[:3]) + (f"; {len(found) - 3} more" if len(found) > 3 else "")
    return (f"Already builds for AMD: {platforms.amd_build_share * 100:.0f}% of the product's CUDA code has an AMD "
            f"path ({evidence}). The estimate is the residue: what the AMD build still lacks.")


def audit_document(result: AuditResult) -> JsonObject:
    """The audit as the JSON document (what `portkit.audit_paths` returns)."""
    return build(result).to_json()


def build(result: AuditResult) -> Audit:
    """Everything the formats show, as typed records."""
    opts = result.options
    db = db_for(opts.scan)   # the tables the audit ran with: the project's mapping files counted
    rule_index = rules.by_code()
    return Audit(
        tool=Tool("portkit", __version__, TableCounts(len(db.names), format_version(db.newest))),
        version=SCHEMA_VERSION,
        generated=_generated(),
        root=result.root.as_posix(),
        options=RunOptions(format_version(opts.scan.rocm) if opts.scan.rocm else None, tuple(opts.select),
                           tuple(opts.ignore), opts.fail_on, opts.team_size),
        summary=_summary(result),
        estimate=_estimate_record(result.estimate) if result.estimate else None,
        dependencies=_dependencies(result),
        rules=tuple(RuleInfo(c, rule_index[c].name, rule_index[c].severity, rule_index[c].category,
                             rule_index[c].summary) for c in sorted({f.code for f in result.findings})),
        files=tuple(FileRecord(
            path=s.rel, kind=s.metrics.kind, lines=s.metrics.lines, cuda_refs=s.metrics.refs_found,
            refs_converted=s.metrics.refs_converted, refs_left=s.metrics.refs_left, kernels=s.metrics.kernels,
            launches=s.metrics.launches, partially_parsed=s.metrics.partially_parsed, findings=len(s.findings),
            findings_not_stored=_not_stored(s),
            effort_hours=round(sum(sum(f.effort_hours) / 3 for f in s.findings), 2)) for s in result.scans),
        findings=tuple(finding_record(f) for f in result.findings),
        engine=deep_record(result.deep) if result.deep is not None else None)


def _summary(result: AuditResult) -> Summary:
    findings, scans = result.findings, result.scans
    found = sum(s.metrics.refs_found for s in scans)
    converted = sum(s.metrics.refs_converted for s in scans)
    severity = Counter(f.severity for f in findings)
    summary = Summary(
        files=len(scans),
        lines=sum(s.metrics.lines for s in scans),
        findings=len(findings),
        by_severity={s: severity.get(s, 0) for s in SEVERITIES},
        by_category=dict(sorted(Counter(f.category for f in findings).items())),
        by_code=dict(sorted(Counter(f.code for f in findings).items())),
        blockers=severity.get("blocker", 0),
        cuda_refs=found,
        refs_converted=converted,
        refs_left=sum(s.metrics.refs_left for s in scans),
        converted_share=round(converted / found, 4) if found else 1.0,
        kernels=sum(s.metrics.kernels for s in scans),
        launches=sum(s.metrics.launches for s in scans),
        partially_parsed_files=sum(1 for s in scans if s.metrics.partially_parsed),
        findings_not_stored=sum(n for s in scans for n in s.metrics.findings_not_stored.values()),
        findings_cap=result.options.scan.finding_cap or CAP_PER_CODE,
        skipped=tuple(Skipped(s.rel, s.reason, s.error) for s in result.all_skipped),
        platforms=_platforms(result),
        polyfills=_polyfills(result),
        headline="")
    return replace(summary, headline=conversion_headline(summary).text)   # the same words everywhere


def _not_stored(scan) -> dict[str, int]:
    """A file's findings past the per-file cap of its rule (findingstore.py), by code."""
    counts: Counter = Counter()
    for (code, _, _, _), n in scan.metrics.findings_not_stored.items():
        counts[code] += n
    return dict(sorted(counts.items()))


def deep_record(deep) -> Engine:
    """What the deep pass did (--engine clang): present only when it ran."""
    return Engine(name="clang", toolchain=deep.toolchain, units=deep.units, files_seen=len(deep.parsed),
                  seconds=round(deep.seconds, 2), added=deep.added, left_out_inactive=deep.dropped_inactive,
                  partial_parse_settled=deep.settled_partial,
                  fell_back=tuple(FellBack(rel, why) for rel, why in deep.failed), clang_errors=len(deep.clang_errors))
