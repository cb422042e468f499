"""The fix a warp rule owns (engine/fix.py's Fix, with what the warp family needs to apply it:
rules/warpfix.py): the per-target wavefront-size constant it may need defined.

Each warp rule declares its fix functions beside its check (`FIX_NODES`, `FIX_LITERALS`) and the
family (`FIX_FAMILY = warpfix.FAMILY`); under `--fix warp` the scan's one walk records each node's
fix before the rules' checks run, and a check takes its node's fix from there (`attached`), so its
finding carries it. An audit shows only the fixes of the findings it keeps: there a finding's fix
is found when the finding is kept (`ScanContext.fix_of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tree_sitter import Node

from ..engine import fix
from ..engine.context import ScanContext, View
from ..engine.fix import UNSAFE, Fix

CONSTANT = b"PORTKIT_WAVEFRONT_SIZE"


@dataclass(frozen=True)
class WarpFix(Fix):
    # ruff's applicability: the edits change what the code computes (on purpose), so only the
    # family's fix option applies them; audit shows them as suggestions
    applicability: str = UNSAFE
    constant: bool = False     # needs PORTKIT_WAVEFRONT_SIZE defined before it
    query: bool = False        # a run-time dispatch: its last edit defines portkit_device_warp_size (once a file)
    family: ClassVar[str] = "warp"   # `convert --fix warp`


def attached(ctx: ScanContext, view: View, node: Node, code: str, start: int):
    """The warp fix the finding of rule `code` at byte `start` about `node` carries (engine/fix.py)."""
    return fix.attached(ctx, view, node, "warp", code, start)


def newline_of(data: bytes) -> bytes:
    return b"\r\n" if data[:data.find(b"\n") + 1].endswith(b"\r\n") else b"\n"
