"""The fix a warp rule owns (ruff's model: the check reports the finding and attaches its fix):
one fix = the edits resolving one finding, their applicability, and what `--fix warp` needs to
apply them (rules/_warpfix.py); the per-target wavefront-size constant it defines.

The scan's one walk records each node's fix in `ScanContext.fixes` before the rules' checks
run (rules/_warpfix.py, `fix_nodes`); a check takes its node's fix from there (`attached`)
and its finding carries it.
"""

from __future__ import annotations

from dataclasses import dataclass
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


def attached(ctx: ScanContext, view: View, node: Node, code: str, start: int) -> WarpFix | None:
    """The fix the finding of rule `code` at byte `start` about `node` carries: the node's fix,
    where it resolves that finding. A macro body re-parsed (view.base > 0) has none."""
    fix = None if view.base else ctx.fixes.get(node_key(node))
    return fix if fix is not None and fix.code == code and fix.anchor == start else None


def newline_of(data: bytes) -> bytes:
    return b"\r\n" if data[:data.find(b"\n") + 1].endswith(b"\r\n") else b"\n"
