"""The HTML report's folded details: findings grouped so that one kind of problem is one row.

A flat table repeats itself: cuda-samples listed 203 blocker rows with the same advice each, and
llm.c's NVML sites were 20 near-identical rows. Here findings with the same rule and the same
advice are one group (one row: the count, the files, the advice once; its locations folded), and
groups are gathered under what a reader is looking for: the decision a blocker belongs to, or
the part of the tree (a directory, two levels deep) the findings are in.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from .audit_model import Decision, FindingRecord, WorkItem

SEVERITY_RANK = {"blocker": 0, "high": 1, "medium": 2, "low": 3, "info": 4}
LOCATIONS_SHOWN = 200   # of one group, in the page; the searchable table has every finding
AREA_DEPTH = 2          # directories deeper than this are gathered into their ancestor


@dataclass(frozen=True)
class Site:
    file: str
    line: int
    message: str                # the site's own part of the message ("" when all say the same)


@dataclass(frozen=True)
class Place:
    directory: str
    sites: tuple[Site, ...]


@dataclass(frozen=True)
class Group:
    """Findings with one rule and one piece of advice: one row of the report."""

    code: str
    name: str
    fix: str
    severity: str
    message: str
    messages: int
    tail: str
    count: int
    files: int
    places: tuple[Place, ...]
    more: int


@dataclass(frozen=True)
class Area:
    name: str
    count: int
    files: int
    severities: tuple[tuple[str, int], ...]
    groups: tuple[Group, ...]


@dataclass(frozen=True)
class BlockerGroup:
    decision: Decision | None   # None: blockers no decision lists
    anchor: str
    count: int
    files: int
    groups: tuple[Group, ...]


def directory_of(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."


def area_of(path: str) -> str:
    """The part of the tree a finding is listed under: its directory, at most two levels deep
    (Samples/0_Introduction, not one group per sample of cuda-samples' 200)."""
    parts = directory_of(path).split("/")
    return "/".join(parts[:AREA_DEPTH])


def finding_groups(findings: Sequence[FindingRecord]) -> tuple[Group, ...]:
    """Findings with one rule and one piece of advice as one group each, worst and largest first."""
    by_key: dict[tuple[str, str], list[FindingRecord]] = {}
    for f in findings:
        by_key.setdefault((f.code, f.fix), []).append(f)
    groups = [_group(code, fix, members) for (code, fix), members in by_key.items()]
    return tuple(sorted(groups, key=lambda g: (SEVERITY_RANK[g.severity], -g.count, g.code, g.fix)))


def _group(code: str, fix: str, members: list[FindingRecord]) -> Group:
    members = sorted(members, key=lambda f: (f.path, f.line, f.column))
    messages = list(dict.fromkeys(f.message for f in members))
    tail = shared_tail(messages)
    shown = members[:LOCATIONS_SHOWN]
    places: dict[str, list[Site]] = {}
    for f in shown:
        own = f.message[:len(f.message) - len(tail)].rstrip(":;, ") if len(messages) > 1 else ""
        places.setdefault(directory_of(f.path), []).append(Site(f.path.rsplit("/", 1)[-1], f.line, own))
    return Group(
        code=code, name=members[0].name, fix=fix,
        severity=min((f.severity for f in members), key=SEVERITY_RANK.__getitem__),
        message=messages[0], messages=len(messages), tail=tail, count=len(members),
        files=len({f.path for f in members}),
        places=tuple(Place(d, tuple(sites)) for d, sites in places.items()),
        more=len(members) - len(shown))


TAIL_MIN = 16   # characters: a shorter shared ending ("; see PK301") says nothing of its own


def shared_tail(messages: list[str]) -> str:
    """The words every message ends with, when they differ only in how they begin.

    PK402's 36 NPP messages are "<name>: NPP ... has no drop-in on AMD ...; instead: RPP": the
    group says the shared part once and each site its own name. The tail starts at a space
    outside a `code` span, so that no site's part ends mid-word or mid-span; "" when the
    messages share no such ending."""
    if len(messages) < 2:
        return ""
    tail = os.path.commonprefix([m[::-1] for m in messages])[::-1]
    while tail and (tail[0] != " " or tail.count("`") % 2):   # after a space, outside a `code` span
        tail = tail[1:]
    if any(len(m) == len(tail) for m in messages):   # one message is all tail: no part of its own
        return ""
    return tail if len(tail.strip()) >= TAIL_MIN else ""


def by_area(findings: Sequence[FindingRecord]) -> tuple[Area, ...]:
    """Each part of the tree with its findings' groups; the most findings first."""
    areas: dict[str, list[FindingRecord]] = {}
    for f in findings:
        areas.setdefault(area_of(f.path), []).append(f)
    out = []
    for name, members in areas.items():
        severity = Counter(f.severity for f in members)
        out.append(Area(name, len(members), len({f.path for f in members}),
                        tuple((s, severity[s]) for s in SEVERITY_RANK if severity[s]), finding_groups(members)))
    return tuple(sorted(out, key=lambda a: (-a.count, a.name)))


def by_decision(decisions: Sequence[Decision], items: Sequence[WorkItem],
                findings: Sequence[FindingRecord]) -> tuple[BlockerGroup, ...]:
    """Each decision with the blocker findings at its sites, grouped; blockers no decision lists
    (a document saved before decisions existed) last, as one entry of their own.

    A decision is the estimate's item that holds blockers: the item with its label, its part of
    the project and its site count lists the sites (path:line) the decision covers."""
    blockers = [f for f in findings if f.severity == "blocker"]
    placed: set[int] = set()
    out = []
    for k, d in enumerate(decisions):
        item = next((i for i in items if i.label == d.label and i.optional == d.optional
                     and i.count == d.sites), None)
        sites = set(item.findings) if item is not None else set()
        mine = [f for n, f in enumerate(blockers) if n not in placed and f"{f.path}:{f.line}" in sites]
        placed.update(n for n, f in enumerate(blockers) if f"{f.path}:{f.line}" in sites)
        out.append(BlockerGroup(d, f"decision-{k + 1}", len(mine), len({f.path for f in mine}),
                                finding_groups(mine)))
    rest = [f for n, f in enumerate(blockers) if n not in placed]
    if rest:
        out.append(BlockerGroup(None, "decision-other", len(rest), len({f.path for f in rest}),
                                finding_groups(rest)))
    return tuple(out)
