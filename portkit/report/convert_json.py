"""`portkit convert --format json`: the conversion's summary as one JSON document for CI.

The same facts as the text summary (report/terminal.py), as data: which files change, how many
stay as they are or were written, the findings counted by code and severity, and the findings
that need a person: those `portkit audit` reports at high severity or worse (the bar its headline
uses), every CUDA reference left unconverted among them, with the same codes and lines as the
audit's (commands/convert_audit.py). docs/ci.md documents the fields.
"""

from __future__ import annotations

from collections import Counter
from typing import TextIO

from ..commands.results import ConvertResult
from ..core.findings import SEVERITIES
from .audit_model import JsonObject, as_json
from .json import dumps

VERSION = 1


def document(result: ConvertResult, mode: str) -> JsonObject:
    from ..core.version import __version__
    from .model import finding_record
    findings = sorted(result.findings, key=lambda f: f.sort_key())
    scanned = [o for o in result.outcomes if o.scan is not None]
    header = result.polyfills
    return {
        "tool": {"name": "portkit", "version": __version__},
        "version": VERSION,
        "root": result.root.as_posix(),
        "mode": mode,
        "files": {"scanned": len(scanned), "changed": len(result.changed),
                  "unchanged": sum(1 for o in scanned if not o.changed), "written": result.written,
                  "partially_parsed": sum(1 for o in scanned if o.scan.metrics.partially_parsed),
                  "skipped": sum(1 for s in result.all_skipped if not s.error), "failed": len(result.errors)},
        "changed": [{"path": o.entry.rel, **({"written_as": o.target_rel} if o.renamed else {})}
                    for o in result.changed],
        "references": {"found": result.total("refs_found"), "converted": _converted(result),
                       "left": result.total("refs_left")},
        "findings": {"total": len(findings),
                     "by_code": dict(sorted(Counter(f.code for f in findings).items())),
                     "by_severity": {s: sum(1 for f in findings if f.severity == s) for s in SEVERITIES}},
        "needs_person": [as_json(finding_record(f)) for f in result.needs_person],
        "torch_extension": _torch(result),
        "polyfills": None if header is None else {"path": header.rel, "changed": header.changed,
                                                  "names": sorted(header.users)},
        "skipped": [{"path": s.rel, "reason": s.reason} for s in result.all_skipped if not s.error],
        "errors": [{"path": s.rel, "reason": s.reason} for s in result.errors],
    }


def _converted(result: ConvertResult) -> int:
    total = result.total("refs_converted")
    return total if result.torch is None else result.torch.converted(total)


def _torch(result: ConvertResult) -> JsonObject | None:
    """A PyTorch extension's sources (commands/torch_sources.py): the mode, and what convert wrote,
    what torch's hipify renames at build time and what is left for a person (null with mode "hip")."""
    t = result.torch
    if t is None:
        return None
    return {"mode": t.mode, "files": t.files, "torch": t.torch, "written": t.written, "torch_hipify": t.renamed,
            "left_for_person": t.person, "sites_for_person": None if t.mode == "hip" else len(t.left)}


def render(result: ConvertResult, stream: TextIO, mode: str) -> None:
    stream.write(dumps(document(result, mode)))   # as report/json.py writes JSON: C1 and surrogates escaped
    stream.write("\n")
