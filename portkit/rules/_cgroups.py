"""Which cooperative-groups type an expression is, read from its declaration (rule PK002's members).

`warp.any(valid)` is only a cooperative-groups call when `warp` is a group: any, all, size and
sync are everyday member names (std::bitset::any, Eigen's all()). So a member is judged only
where the receiver's type is written out, or where its initializer is a call whose result type
is known (`auto warp = cg::tiled_partition<32>(block)`); a template parameter (`CG const& g`)
stays unknown and is never reported.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from ..engine.syntax import declarations, declared_name, unparen

# The group a written type names, most specific first (thread_block_tile before thread_block).
_TYPES = ((re.compile(rb"\bthread_block_tile\b"), "thread_block_tile"),
          (re.compile(rb"\bcoalesced_group\b"), "coalesced_group"),
          (re.compile(rb"\bgrid_group\b"), "grid_group"),
          (re.compile(rb"\bthread_block\b"), "thread_block"))
# The group a call returns: tiled_partition<N> a tile (without <N>, a thread_group: unknown here);
# the partitions of a tile or coalesced group are coalesced groups.
_CALLS = ((re.compile(rb"\btiled_partition\s*<"), "thread_block_tile"),
          (re.compile(rb"\b(?:coalesced_threads|labeled_partition|binary_partition)\b"), "coalesced_group"),
          (re.compile(rb"\bthis_thread_block\b"), "thread_block"),
          (re.compile(rb"\bthis_grid\b"), "grid_group"))
_DECLARATORS = ("init_declarator", "identifier", "reference_declarator", "pointer_declarator")


def group_of(receiver: Node) -> str | None:
    """The cooperative-groups type of `receiver` (a group variable or a call making one), or None."""
    receiver = unparen(receiver)
    if receiver.type == "call_expression":
        return _returned(receiver)
    if receiver.type != "identifier":
        return None
    for declaration, kind in declarations(receiver):
        if kind == "template":
            continue
        for declarator in _declarators(declaration):
            if declared_name(declarator) == receiver.text:
                return _declared(declaration, declarator)
    return None


def _declarators(declaration: Node) -> list[Node]:
    return [c for c in declaration.named_children if c.type in _DECLARATORS]


def _declared(declaration: Node, declarator: Node) -> str | None:
    written = declaration.child_by_field_name("type")
    text = written.text if written is not None else b""
    for pattern, group in _TYPES:
        if pattern.search(text):
            return group
    if text.strip() != b"auto" or declarator.type != "init_declarator":
        return None
    value = declarator.child_by_field_name("value")
    return _returned(value) if value is not None else None


def _returned(call: Node) -> str | None:
    """The group a call's result is, from the function it calls (never from its arguments)."""
    call = unparen(call)
    function = call.child_by_field_name("function") if call.type == "call_expression" else None
    if function is None:
        return None
    for pattern, group in _CALLS:
        if pattern.search(function.text):
            return group
    return None
