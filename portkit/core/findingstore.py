"""The findings of one file as the scan reports them: one per rule, subject and line, and in an
audit at most CAP_PER_CODE of each rule kept whole; the rest are counted.

A generated file can report a hazard hundreds of thousands of times (a minified kernel repeating
`o[threadIdx.x%32]=1;`). Keeping a Finding for each report (~750 bytes with its message, snippet
and fingerprint) cost 180x the file's size, most of it duplicates the scan drops at the end
anyway. Here a duplicate (same line, code and subject) is decided when it is reported, so only
the one kept is ever built, and past the cap a finding is counted by (code, pattern, severity,
platform), which is what the estimate prices by (workitems.patterns), without being built.

Exactly as the scan decided before (scan.finish_findings): of a line's duplicates the first in
source order is kept, and a converter finding (PK001 ...) inside the span of a rule's finding that
says more about the same construct is dropped. Converter codes a rule can refine are kept whole
until the end, where the spans of every rule finding are known, and capped there.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from operator import attrgetter
from typing import Iterable

from .findings import Finding, pattern

# Finding.sort_key's fields, read in C (a Pending has them too): 60,000 Python calls per sort saved
_SORT_KEY = attrgetter("path", "line", "column", "code", "subject")
CAP_PER_CODE = 1000   # findings of one rule kept per file by the audit (docs/json-schema.md)
Span = tuple[int, int]   # (start, end), each a position as line << 32 | column: one int compares faster than a pair


class Pending:
    """A finding of a code a rule may refine (PK004 ...), reported but not yet built: the store
    keeps every one to the end, where a rule's finding over the same construct drops most of
    them (a generated file's 60,000 "mask dropped" notes under as many PK203s). It has what
    finish() sorts and decides by, and what a pass reads of the findings so far (code, line,
    subject); the Finding itself is made by `build(*args)` only when finish() keeps it."""

    __slots__ = ("code", "path", "line", "column", "subject", "severity", "platform", "build", "args")

    def __init__(self, code: str, path: str, line: int, column: int, subject: str, severity: str, platform: str,
                 build, args: tuple):
        self.code, self.path, self.line, self.column, self.subject = code, path, line, column, subject
        self.severity, self.platform, self.build, self.args = severity, platform, build, args

    def finding(self) -> Finding:
        return self.build(*self.args)


class FindingStore:
    """Where ScanContext.report puts findings: `admit` first (built only if it says where), `put`."""

    def __init__(self, cap: int = 0, refines: dict[str, tuple[str, ...]] | None = None):
        self.findings: list[Finding | Pending] = []   # ScanContext.findings: what passes see while scanning
        self.cap = cap                        # 0: keep every finding (convert, check)
        self.refines = refines or {}
        self.refinable = frozenset(code for codes in self.refines.values() for code in codes)
        self.spans: dict[str, set[Span]] = {}   # refined code -> spans of the findings refining it
        self.over: Counter = Counter()          # (code, pattern, severity, platform) -> findings past the cap
        self._at: dict[tuple, int] = {}         # (line, code, subject) -> index in findings
        self._kept: Counter = Counter()         # code -> findings kept
        self._past: set[int] = set()            # hashes of the (line, code, subject) counted past the cap

    def repeats(self, code: str, subject: str, line: int, column: int) -> bool:
        """Whether admit() would drop this finding as a later duplicate on its line, known from its
        start alone (a generated file repeats a construct thousands of times on one line). A code
        that refines or is refined is never answered here: admit records every one's span."""
        if code in self.refines or code in self.refinable:
            return False
        at = self._at.get((line, code, subject))
        return at is not None and column >= self.findings[at].column

    def admit(self, code: str, subject: str, start: tuple[int, int], end: tuple[int, int], severity: str,
              platform: str) -> int | None:
        """Where to put this finding (an index into `findings`), or None: a duplicate that comes
        later on its line than the one kept, or a finding past the cap (then counted)."""
        line, column = start
        for refined in self.refines.get(code, ()):   # every report's span counts, kept or not
            self.spans.setdefault(refined, set()).add((line << 32 | column, end[0] << 32 | max(end[1], column + 1)))
        if code in self.refinable:
            return len(self.findings)
        key = (line, code, subject)
        at = self._at.get(key)
        if at is not None:
            return at if column < self.findings[at].column else None
        if self.cap and self._kept[code] >= self.cap:
            if hash(key) not in self._past:   # a 64-bit hash: a collision would miss one count
                self._past.add(hash(key))
                self.over[(code, pattern(subject), severity, platform)] += 1
            return None
        self._kept[code] += 1
        self._at[key] = len(self.findings)
        return self._at[key]

    def put(self, index: int, finding: Finding) -> None:
        if index == len(self.findings):
            self.findings.append(finding)
        else:
            self.findings[index] = finding

    def add(self, finding: Finding) -> None:
        """admit and put a finding already built."""
        index = self.admit(finding.code, finding.subject, (finding.line, finding.column),
                           (finding.end_line, finding.end_column), finding.severity, finding.platform)
        if index is not None:
            self.put(index, finding)

    def finish(self) -> list[Finding]:
        """The findings kept, sorted; refined converter findings dropped, the refinable capped."""
        # per code, the spans' starts in order and the furthest end reached by then: a position
        # lies in some span when the furthest end of those starting at or before it is past it.
        # (A scan of every span per finding was quadratic: 18 million steps for a 0.5 MB line.)
        reach: dict[str, tuple[list, list]] = {}
        for code, found in self.spans.items():
            ordered = sorted(found)
            ends, furthest = [], -1
            for _start, end in ordered:
                furthest = end if end > furthest else furthest
                ends.append(furthest)
            reach[code] = ([start for start, _end in ordered], ends)

        kept, seen, per_code = [], set(), Counter()
        for f in sorted(self.findings, key=_SORT_KEY):
            key = (f.line, f.code, f.subject)   # the same construct twice on a line is one finding
            if key in seen:
                continue
            spans = reach.get(f.code)
            if spans is not None:   # inside a span of a finding that refines it: dropped
                at = f.line << 32 | f.column
                index = bisect_right(spans[0], at)
                if index and spans[1][index - 1] > at:
                    continue
            seen.add(key)
            if self.cap and f.code in self.refinable and per_code[f.code] >= self.cap:
                self.over[(f.code, pattern(f.subject), f.severity, f.platform)] += 1
                continue
            per_code[f.code] += 1
            kept.append(f.finding() if type(f) is Pending else f)
        # the store keeps what it kept: a Pending's builder is its ScanContext's method, and a
        # context whose store held one was a reference cycle (the file's tree and text kept alive
        # until the garbage collector's next full pass)
        self.findings[:] = kept
        return kept


def finish_findings(findings: Iterable[Finding], refines: dict[str, tuple[str, ...]]) -> list[Finding]:
    """Findings already built, decided as the scan decides them (no cap)."""
    store = FindingStore(0, refines)
    for f in findings:
        store.add(f)
    return store.finish()
