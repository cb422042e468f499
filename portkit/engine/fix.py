"""Fix: the edits that resolve one finding, a capability of the rule that reports it.

ruff's model: a rule's fix lives in the rule's module and rides on its finding (`Finding.fixed_by`,
shown by audit as `autofix` suggestions); `convert --fix FAMILY` applies the fixes of the rules of
that family, from the scan's one walk. A rule module declares its family (`FIX_FAMILY`, a `Family`)
and, for a tree rule, the fix functions it runs on nodes before the checks (`FIX_NODES`: node kind ->
functions; `FIX_LITERALS`: number literal value -> functions; `FIX_GATES` as `GATES`). A text rule
(build and Python files) attaches its fix where it reports (`ctx.flag(..., fixed_by=Fix(...))`).
`registry()` builds, from the rule modules, the one table of which rules fix which family: nothing
here or in the scan names a rule or a family.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..core.edits import Edit, EditKind

SAFE = "safe"       # the fix keeps what the code means (a name for its exact counterpart)
UNSAFE = "unsafe"   # the fix changes what the code computes, on purpose (the warp family)


@dataclass(frozen=True)
class Fix:
    code: str                  # the rule whose finding it resolves ("" for none: a fix no finding shows)
    anchor: int                # the byte that rule reports at
    edits: tuple[Edit, ...]    # byte ranges on the original text, applied whole or not at all
    title: str = ""            # one line: what applying it does
    applicability: str = SAFE  # ruff's: SAFE or UNSAFE (audit shows both; only a fix option applies)
    note: str = ""             # a deliberate choice, reported when the fix is applied (the family's)
    supersedes: bool = False   # replaces the converter's edits it overlaps (a call renamed whole)
    suggest_only: bool = False  # the edits belong to another fix: shown on this finding, applied once


Fixer = Callable[..., "Fix | None"]   # (view, node) -> the node's fix, or None


def _as_recorded(data: bytes, fixes: list[Fix]) -> list[Fix]:
    return fixes


@dataclass(frozen=True)
class Family:
    """What `--fix NAME` selects: its rules' fixes, and what the family does with them beyond each
    fix alone: `finish` completes a file's fixes (a helper defined once, before its first use),
    `apply` adds them to the conversion (None: `apply_each`). A node's fixers are tried in the rules'
    order, except that the rules named in `first` go before the others: the more specific fix of a
    node two rules can fix (a shuffle loop's 32 is PK202's, not PK201's arithmetic)."""

    name: str
    edit_kind: str = EditKind.OTHER
    words: tuple[bytes, ...] = ()   # tree fixes: a file holding none of these gets no fixer run (a speed contract)
    finish: Callable[[bytes, list[Fix]], list[Fix]] = _as_recorded
    apply: Callable[..., None] | None = None   # (ctx, fixes) -> None
    first: tuple[str, ...] = ()     # rule codes whose fixers a node tries before the other rules'


@dataclass
class FamilyFixes:
    """One family's fixes, as the rule modules declare them (`registry`)."""

    family: Family
    codes: set[str] = field(default_factory=set)
    by_type: dict[str, tuple[Fixer, ...]] = field(default_factory=dict)    # node type -> fixers, in order
    by_value: dict[int, tuple[Fixer, ...]] = field(default_factory=dict)   # literal value -> fixers
    consumers: list[tuple[tuple[str, ...], dict]] = field(default_factory=list)   # (capture kinds, gates) per rule
    text: dict[str, tuple[Callable, ...]] = field(default_factory=dict)  # file kind -> text checks

    @property
    def kinds(self) -> tuple[str, ...]:
        """The node kinds (or `(parent (kind) @rule)` patterns) the family's fixers read."""
        return tuple(dict.fromkeys(k for kinds, _ in self.consumers for k in kinds))

    def fix_of(self, view, node) -> Fix | None:
        """The node's fix: the first of its fixers, in the rules' order (the family's `first` rules
        before the others), that returns one."""
        if node.type == "number_literal":
            from .syntax import int_value
            fixers = self.by_value.get(int_value(node), ())
        else:
            fixers = self.by_type.get(node.type, ())
        for fixer in fixers:
            found = fixer(view, node)
            if found is not None:
                return found
        return None


_PATTERN_KIND = re.compile(r"\((\w+)\)\s*@rule")


def registry(modules: Iterable) -> dict[str, FamilyFixes]:
    """Every family, from the rule modules that declare FIX_FAMILY, in the modules' order."""
    found: dict[str, FamilyFixes] = {}
    for module in modules:
        family = getattr(module, "FIX_FAMILY", None)
        if family is None:
            continue
        entry = found.setdefault(family.name, FamilyFixes(family))
        if entry.family != family:
            raise ValueError(f"fix family {family.name!r} declared twice, differently ({module.__name__})")
        entry.codes.add(module.RULE.code)
        kinds = _tree_fixers(entry, module)
        if kinds:
            entry.consumers.append((kinds, dict(getattr(module, "FIX_GATES", {}))))
        for kind in getattr(module, "FILE_KINDS", ()):
            entry.text[kind] = entry.text.get(kind, ()) + (module.check_text,)
    return found


def _tree_fixers(entry: FamilyFixes, module) -> tuple[str, ...]:
    """Add a module's node and literal fixers to its family's; the capture kinds they need."""
    kinds = []
    first = module.RULE.code in entry.family.first

    def add(table: dict, key, fixers) -> None:
        table[key] = tuple(fixers) + table.get(key, ()) if first else table.get(key, ()) + tuple(fixers)
    for kind, fixers in getattr(module, "FIX_NODES", {}).items():
        kinds.append(kind)
        add(entry.by_type, _PATTERN_KIND.findall(kind)[-1] if kind.startswith("(") else kind, fixers)
    for value, fixers in getattr(module, "FIX_LITERALS", {}).items():
        add(entry.by_value, value, fixers)
    if getattr(module, "FIX_LITERALS", None):
        kinds.append("number_literal")
    return tuple(kinds)


def node_key(node) -> tuple[int, int, str]:
    """A node of the file's own tree, as ScanContext.fixes records its fix."""
    return (node.start_byte, node.end_byte, node.type)


# --- the scan's side: record a tree's fixes, attach them to findings, finish and apply them ---

def record(ctx, view, nodes, entry: FamilyFixes) -> None:
    """`--fix NAME`: record the fix of each node of the file's own tree (not of a macro body
    re-parsed) in ctx.fixes, before the rules' checks, whose findings carry them (`attached`)."""
    words = entry.family.words
    if view.base or (words and not any(word in view.data for word in words)):
        return
    recorded = ctx.fixes.setdefault(entry.family.name, {})
    for node in nodes:
        found = entry.fix_of(view, node)
        if found is not None:
            recorded[node_key(node)] = found


def on_demand(view, families: dict[str, FamilyFixes]):
    """ScanContext.fix_of for an audit: one node's fix, asked for by a finding the audit keeps (a
    generated line's 61,000 duplicate shuffles ask for none); none in a file without the family's words."""
    live = {name: entry for name, entry in families.items()
            if not entry.family.words or any(word in view.data for word in entry.family.words)}

    def fix_of(family: str, view, node) -> Fix | None:
        entry = live.get(family)
        return entry.fix_of(view, node) if entry is not None else None
    return fix_of


def attached(ctx, view, node, family: str, code: str, start: int):
    """The fix the finding of rule `code` at byte `start` about `node` carries: the node's fix in
    `family`, where it resolves that finding. A macro body re-parsed (view.base > 0) has none. In
    an audit (ctx.fix_of set) it is found when the finding is kept: this returns what finds it then."""
    if view.base:
        return None
    if ctx.fix_of is not None and family not in ctx.options.fixes:
        return lambda: _on_demand(ctx, view, node, family, code, start)
    return _resolving(ctx.fixes.get(family, {}).get(node_key(node)), code, start)


def _on_demand(ctx, view, node, family: str, code: str, start: int) -> Fix | None:
    """The node's fix, found now and recorded in ctx.fixes as `record` records it (whatever finding
    it resolves: the fixes recorded decide, for instance, where a family's helper is defined)."""
    key = node_key(node)
    recorded = ctx.fixes.setdefault(family, {})
    found = recorded.get(key)
    if found is None:
        found = ctx.fix_of(family, view, node)
        if found is not None:
            recorded[key] = found
    return _resolving(found, code, start)


def _resolving(found: Fix | None, code: str, start: int) -> Fix | None:
    return found if found is not None and found.code == code and found.anchor == start else None


def finish(ctx, data: bytes, families: dict[str, FamilyFixes]) -> tuple[dict[str, list[Fix]], dict[int, Fix]]:
    """Each family's recorded fixes in source order, as its `finish` completes them; and, by the
    identity of each fix recorded, the fix as finished (what its finding shows)."""
    fixes: dict[str, list[Fix]] = {}
    finished: dict[int, Fix] = {}
    for name, recorded_by_node in ctx.fixes.items():
        recorded = [f for _key, f in sorted(recorded_by_node.items(), key=lambda item: (item[0][0], -item[0][1]))]
        done = families[name].family.finish(data, recorded)
        fixes[name] = done
        finished.update({id(old): new for old, new in zip(recorded, done)})
    return fixes, finished


def apply(ctx, fixes: list[Fix], family: Family) -> None:
    """Add a family's fixes to the conversion: its own way (`Family.apply`) or each whole or not at all."""
    if family.apply is not None:
        family.apply(ctx, fixes)
    else:
        apply_each(ctx, fixes, family)


def apply_each(ctx, fixes: list[Fix], family: Family) -> None:
    """Each fix whole or not at all: never over the converter's edits (the build migration may have
    rewritten the same bytes), nor in code this build does not compile (AMD-only, NVIDIA with an
    AMD branch)."""
    from .platform.regions import PROTECTED
    for fix in sorted(fixes, key=lambda f: f.anchor):
        if fix.suggest_only or not fix.edits or ctx.regions.ranges and ctx.regions.kind_at(fix.anchor) in PROTECTED:
            continue
        taken = [(e.start, e.end) for e in ctx.edits]
        if any(overlaps(e, taken) for e in fix.edits):
            continue
        for e in fix.edits:
            ctx.edit(e.start, e.end, e.text, what=family.name, kind=family.edit_kind)


def overlaps(edit: Edit, taken: list[tuple[int, int]]) -> bool:
    return any(s < edit.end and edit.start < e or (s == e == edit.start == edit.end) for s, e in taken)


def text_fixes(ctx, checks: tuple[Callable, ...]) -> list[Fix]:
    """`convert --fix NAME` on a build or Python file: the fixes the family's text rules attach to
    their findings, found on a context of their own (convert reports no audit finding)."""
    from .context import ScanContext
    probe = ScanContext(source=ctx.source, db=ctx.db, options=ctx.options, target=ctx.target, facts=ctx.facts,
                        regions=ctx.regions, rules=ctx.rules)
    for check in checks:
        check(probe)
    return [f.fixed_by for f in probe.finished_findings() if isinstance(f.fixed_by, Fix)]


def suggest(findings: list, finished: dict[int, Fix], source) -> list:
    """The audit's findings, each carrying its rule's fix as finished, its edits shown (JSON
    `autofix`, SARIF `fixes`) as ((line, column, end_line, end_column, text), ...)."""
    from dataclasses import replace
    out = []
    for finding in findings:
        found = finished.get(id(finding.fixed_by), finding.fixed_by)   # a text rule's: as attached
        if found is not None:
            finding = replace(finding, fixed_by=found, autofix=tuple(
                (*source.position(e.start), *source.position(e.end), e.text.decode("utf-8", "replace"))
                for e in sorted(found.edits)))
        out.append(finding)
    return out
