"""HIP has this name only in a newer ROCm release than the target.

Reported by the converter (portkit/rewrite/), from the mapping tables; and by the audit for the
members of the cooperative-groups types, which the name tables cannot hold (mappings/
coop_members.toml: `warp.any(valid)` from ROCm 6.3, `tile.meta_group_rank()` from 5.7), where the
receiver's declaration says which group it is.

What it finds:
    A CUDA name whose HIP counterpart first appears in a ROCm release later than the one given
    with --rocm (default: the newest release the tables know). It is left as it is.

Why it matters on AMD GPUs:
    The converted file would not compile against the ROCm release the team actually deploys.

Example:
    cudaMallocAsync(&p, bytes, stream);   // hipMallocAsync needs ROCm 5.3, target is 5.2

Instead:
    Raise the target ROCm release, or rewrite the call with an API the target release has.

Effort:
    An hour or two per call site when an older API does the same job.
"""

import re

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..core.tables import coop_members
from ..core.tables.mappings import format_version
from ..engine.rule import define
from ._cgroups import group_of

RULE = define(__doc__, code="PK002", name="needs-newer-rocm", severity="high", category="api",
              breaks_build=True, outcome="left")
# Members of the cooperative-groups types that some ROCm release lacks (mappings/coop_members.toml:
# `warp.any(valid)` needs 6.3, `tile.meta_group_rank()` 5.7, `num_threads()` no release yet).
NAMES = tuple(name.encode() for name in coop_members.names())
# check_name reads a member of a group object only (`warp.any(p)`, `block->sync()`): a file without
# one needs no parse for it, though `any` and `all` are names of much else (engine/keywords.py)
_MEMBER_CALL = re.compile(rb"(?:\.|->)\s*(?:template\s+)?(?:" + b"|".join(sorted(NAMES)) + rb")\b")


def _may_find(text) -> bool:
    """A member's name among the file's tokens, read off an object (engine/keywords.FileText)."""
    return not _MEMBERS.isdisjoint(text.tokens) and _MEMBER_CALL.search(text.data) is not None


_MEMBERS = frozenset(NAMES)
KEYWORDS = (_may_find,)


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    """`warp.any(valid)`: a call of a group's member that the target release lacks."""
    parent = node.parent
    if node.type != "field_identifier" or parent is None or parent.type != "field_expression" \
            or parent.parent is None or parent.parent.type != "call_expression":
        return
    receiver = parent.child_by_field_name("argument")
    group = group_of(receiver) if receiver is not None else None
    name = node.text.decode()
    record = coop_members.member(name, group) if group is not None else None
    if record is None or (record.since is not None and ctx.target >= record.since):
        return
    has = (f"needs ROCm {format_version(record.since)} (HIP's cooperative groups have it from there)"
           if record.since is not None else "is in no ROCm release portkit knows")
    ctx.flag(RULE, view.start(node), view.end(node),
             f"{group}::{name}() {has}, the target is {format_version(ctx.target)}: "
             f"{'raise --rocm, or ' if record.since is not None else ''}{record.instead}", subject=name)
