"""Deep mode's scan step: the tree-sitter findings of each file, refined by clang's facts.

Deep mode only adds or refines; it never invents a code of its own for what tree-sitter
already reports, so both engines' findings share codes, subjects and fingerprints:

- a finding on a line of an `#if` branch this configuration does not compile is left out
  (counted, and said in the run's notes);
- a partial-parse note (PK005) goes when clang read the file cleanly and found no kernel launch
  that tree-sitter missed;
- a CUDA name or launch that a macro's body produces is reported where the macro is used,
  with the macro's name, by copying the findings the definition carries (the definition
  keeps the hours: it is where the fix goes, once);
- kernel launches in device code that tree-sitter could not see (through macros, in kernels
  declared through macros) are PK302;
- ballot results kept in 32 bits (assignments, typedefs, returns, parameters) and 32-bit lane
  masks are PK204; `warpSize` where a constant is required is PK207;
- kernels and device functions declared through macros count as device code.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ...estimate import effort
from ... import rules
from ..scan import suppress
from ...core.files import read_regular
from ...core.findings import Finding, fingerprint
from ...engine.context import FileScan, line_snippet
from ...core.source import SourceFile
from .engine import DeepResult
from ...engine.codes import Code


def refine(scans: dict[str, FileScan], deep: DeepResult, root: Path, enabled: frozenset[str],
           hours: bool = True, host_only: frozenset[str] = frozenset()) -> None:
    """Refine every scan in place with the facts about its file (in a `host_only` file, none of a
    gpu_only rule: project/gpu_reach.py)."""
    model = effort.default_model()
    for rel, scan in scans.items():
        if rel not in deep.parsed:
            continue
        before = len(scan.findings)
        scan.findings = [f for f in scan.findings if not deep.inactive_line(rel, f.line)]
        deep.dropped_inactive += before - len(scan.findings)
        facts = deep.facts.get(rel, ())
        _partial_parse(scan, facts, deep)
        if not facts:
            continue
        source = _source(root, rel)
        if source is None:
            continue
        costed = _device_code(scan, facts) + _launches(scan, facts, source) + _types(scan, facts, source)
        copies = _macro_uses(scans, facts, source)   # the hours stay with the definition
        suppressions = suppress.find(source)
        have = {(f.line, f.code, f.subject) for f in scan.findings}
        costed_ids = {id(f) for f in costed}
        fresh = []
        for f in costed + copies:
            if f.code not in enabled or deep.inactive_line(rel, f.line) or (f.line, f.code, f.subject) in have \
                    or (rel in host_only and rules.of(f.code).gpu_only) or any(s.covers(f) for s in suppressions):
                continue
            have.add((f.line, f.code, f.subject))
            if hours and id(f) in costed_ids:
                f = replace(f, effort_hours=model.finding_hours(f))
            fresh.append(f)
        deep.added += len(fresh)
        scan.findings = sorted(scan.findings + fresh, key=Finding.sort_key)


def _source(root: Path, rel: str) -> SourceFile | None:
    try:
        return SourceFile.from_bytes(rel, read_regular(root / rel, follow=True))
    except OSError:
        return None


def _finding(code: str, source: SourceFile, line: int, column: int, width: int, message: str,
             subject: str) -> Finding:
    rule = rules.get(code)
    snippet = line_snippet(source, line)
    return Finding(code=rule.code, name=rule.name, severity=rule.severity, category=rule.category,
                   path=source.rel, line=line, column=column, end_line=line, end_column=column + width,
                   message=message, snippet=snippet, fix=rule.fix, subject=subject,
                   fingerprint=fingerprint(rule.code, source.rel, subject, snippet))


def _through(fact: dict) -> str:
    return f" (through macro {fact['macro']})" if fact.get("macro") else ""


def _partial_parse(scan: FileScan, facts: list[dict], deep: DeepResult) -> None:
    """PK005 warns that constructs spanning an unparsed region may be missed. When clang read
    the file without an error and finds no more kernel launches written in it than tree-sitter
    counted, no launch was missed: the note goes (`KERNEL void f()`, `HD inline float g()` are
    the usual cause). tree-sitter reports only a file's first region, so the test is per file."""
    if not any(f.code == Code.PARTIALLY_PARSED for f in scan.findings) \
            or any(error.startswith(scan.rel + ":") for error in deep.clang_errors):
        return
    written = sum(1 for f in facts if f["kind"] == "launch" and not f.get("macro"))
    if written > scan.metrics.launches:
        return
    kept = [f for f in scan.findings if f.code != Code.PARTIALLY_PARSED]
    deep.settled_partial += len(scan.findings) - len(kept)
    scan.findings = kept
    scan.metrics.partially_parsed = False


def _device_code(scan: FileScan, facts: list[dict]) -> list[Finding]:
    functions = [f for f in facts if f["kind"] == "device"]
    if functions:
        scan.metrics.has_device_code = True
        scan.metrics.kernels += sum(1 for f in functions if f["function"] == "global")
    return []


def _launches(scan: FileScan, facts: list[dict], source: SourceFile) -> list[Finding]:
    launches = [f for f in facts if f["kind"] == "launch"]
    scan.metrics.launches = max(scan.metrics.launches, len(launches))
    if launches:
        scan.metrics.has_device_code = True
    out = []
    for fact in launches:
        if fact.get("device"):
            out.append(_finding(Code.DYNAMIC_PARALLELISM, source, fact["line"], fact["column"], len(fact["name"]),
                                f"kernel {fact['name']} launched from device code{_through(fact)}: "
                                "HIP has no dynamic parallelism", subject=fact["name"]))
    return out


def _macro_uses(scans: dict[str, FileScan], facts: list[dict], source: SourceFile) -> list[Finding]:
    """The definition's findings about each name a macro expands to, at the macro's use."""
    out = []
    for fact in facts:
        if fact["kind"] != "macro":
            continue
        definition = scans.get(fact["defined_in"])
        if definition is None:
            continue
        for f in definition.findings:
            if f.line != fact["def_line"] or not (f.column <= fact["def_column"] < max(f.end_column, f.column + 1)
                                                   or f.subject == fact["name"]):
                continue
            if f.path == source.rel and f.line == fact["line"]:
                continue   # the macro is used on its own definition's line: already reported there
            use = _finding(f.code, source, fact["line"], fact["column"], len(fact["macro"] or f.subject),
                           f"{f.message} (through macro {fact['macro']}, defined at {f.path}:{f.line})",
                           subject=f.subject)
            out.append(replace(use, severity=f.severity))
    return out


def _types(scan: FileScan, facts: list[dict], source: SourceFile) -> list[Finding]:
    out = []
    for fact in facts:
        kind = fact["kind"]
        if kind == "ballot32":
            out.append(_finding(Code.BALLOT_IN_32_BITS, source, fact["line"], fact["column"], len(fact["name"]),
                                f"{fact['name']} result stored in `{fact['type']} {fact['target']}`: "
                                f"32 bits, the AMD mask has 64{_through(fact)}",
                                subject=f"{fact['name']}:{fact['target']}"))
        elif kind == "mask32":
            out.append(_finding(Code.BALLOT_IN_32_BITS, source, fact["line"], fact["column"], len(fact["variable"]),
                                f"`{fact['variable']}` ({fact['type']}, 32 bits) is the lane mask of "
                                f"{fact['name']}: it names lanes 0-31 of a 64-lane wavefront",
                                subject=f"mask:{fact['variable']}"))
        elif kind == "warpsize":
            out.append(_finding(Code.WARP_SIZE_AS_CONSTANT, source, fact["line"], fact["column"], len("warpSize"),
                                f"warpSize where C++ needs a constant ({fact['context']}): a run-time value from ROCm 7",
                                subject=f"warpSize:{fact['context']}"))
    return out
