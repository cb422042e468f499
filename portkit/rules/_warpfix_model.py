"""The fix a warp rule owns (ruff's model: the check reports the finding and attaches its fix):
one fix = the edits resolving one finding, their applicability, and what `--fix warp` needs to
apply them (rules/warpfix.py); the per-target wavefront-size constant it defines.

Under `--fix warp` the scan's one walk records each node's fix in `ScanContext.fixes` before the
rules' checks run (rules/warpfix.py, `fix_nodes`); a check takes its node's fix from there
(`attached`) and its finding carries it. An audit shows only the fixes of the findings it keeps,
so there a finding's fix is found when the finding is kept (`ScanContext.fix_of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import ClassVar

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..core.edits import Edit

CONSTANT = b"PORTKIT_WAVEFRONT_SIZE"


@dataclass(frozen=True)
class WarpFix:
    code: str                  # the audit rule whose finding this resolves ("" for none)
    anchor: int                # the byte that rule reports at
    edits: tuple[Edit, ...]
    constant: bool = False     # needs PORTKIT_WAVEFRONT_SIZE defined before it
    note: str = ""             # a deliberate choice or change of meaning: reported as PK008
    supersedes: bool = False   # replaces the converter's edits it overlaps (a call renamed whole)
    suggest_only: bool = False  # the edits belong to another fix: shown on this finding, applied once
    # ruff's applicability: the edits change what the code computes (on purpose), so only the
    # family's fix option applies them; audit shows them as suggestions
    applicability: ClassVar[str] = "unsafe"
    family: ClassVar[str] = "warp"   # `convert --fix warp`


def node_key(node: Node) -> tuple[int, int, str]:
    """A node of the file's own tree, as ScanContext.fixes records it."""
    return (node.start_byte, node.end_byte, node.type)


def attached(ctx: ScanContext, view: View, node: Node, code: str, start: int):
    """The fix the finding of rule `code` at byte `start` about `node` carries: the node's fix,
    where it resolves that finding. A macro body re-parsed (view.base > 0) has none. In an audit
    (ctx.fix_of set) it is found when the finding is kept: this returns what finds it then."""
    if view.base:
        return None
    if ctx.fix_of is not None:
        return partial(_on_demand, ctx, view, node, code, start)
    return _resolving(ctx.fixes.get(node_key(node)), code, start)


def _on_demand(ctx: ScanContext, view: View, node: Node, code: str, start: int) -> WarpFix | None:
    """The node's fix, found now and recorded in ctx.fixes as fix_nodes records it (whatever
    finding it resolves: the fixes recorded decide where PORTKIT_WAVEFRONT_SIZE is defined)."""
    key = node_key(node)
    fix = ctx.fixes.get(key)
    if fix is None:
        fix = ctx.fix_of(view, node)
        if fix is not None:
            ctx.fixes[key] = fix
    return _resolving(fix, code, start)


def _resolving(fix: WarpFix | None, code: str, start: int) -> WarpFix | None:
    return fix if fix is not None and fix.code == code and fix.anchor == start else None


def newline_of(data: bytes) -> bytes:
    return b"\r\n" if data[:data.find(b"\n") + 1].endswith(b"\r\n") else b"\n"
