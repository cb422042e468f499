"""Qualified CUDA names in the tree: how a name is spelled with its namespaces (`thrust::cuda`,
`cub::DispatchScan`), and when a namespace must keep CUDA's spelling because the member it
qualifies has no HIP counterpart (identifiers.py reads both)."""

from __future__ import annotations

from tree_sitter import Node

from ..engine.context import ScanContext


def nested_scope(node: Node) -> bool:
    """`x::NAME::y`: NAME is a namespace inside another one, not a top-level library namespace."""
    qualified = node.parent
    outer = qualified.parent if qualified is not None else None
    if qualified is None or outer is None or outer.type != "qualified_identifier":
        return False
    name = outer.child_by_field_name("name")
    scope = outer.child_by_field_name("scope")
    return name is not None and name.id == qualified.id and scope is not None and scope.text != b""


def spelled(node: Node) -> bytes:
    """`thrust::cuda` for the `cuda` of `thrust::cuda::par` (or `::thrust::cuda::par`);
    `thrust::cuda_category` for a member's name; `cub::DispatchScan` in `cub::DispatchScan<...>::Dispatch`."""
    name, current, parent = node.text, node, node.parent
    if parent is not None and parent.type in ("template_type", "template_function") and _is(parent, "name", current):
        current, parent = parent, parent.parent   # DispatchScan<...>: the template is what is qualified
    if parent is not None and parent.type == "qualified_identifier" and _is(parent, "scope", current):
        current = parent   # X::member: X's qualifiers are those of X::member
    while current is not None and current.parent is not None and current.parent.type == "qualified_identifier":
        outer = current.parent
        inner, scope = outer.child_by_field_name("name"), outer.child_by_field_name("scope")
        if inner is None or inner.id != current.id or scope is None or not scope.text:
            break
        name = scope.text + b"::" + name
        current = outer
    return name


def _is(parent: Node, field: str, child: Node) -> bool:
    found = parent.child_by_field_name(field)
    return found is not None and found.id == child.id


def member_left(ctx: ScanContext, node: Node) -> bool:
    """`cub::DispatchScan`, `thrust::system::cuda::detail`: the namespace `node` qualifies a
    member the tables list without a HIP name at the target, so the namespace stays as CUDA
    spells it (hipcub::DispatchScan does not exist); the member's own record reports it."""
    qualified = node.parent
    if qualified is None or qualified.type != "qualified_identifier" or not _is(qualified, "scope", node):
        return False
    member = qualified.child_by_field_name("name")
    while member is not None and member.type in ("qualified_identifier", "template_type", "template_function"):
        member = member.child_by_field_name("scope" if member.type == "qualified_identifier" else "name")
    if member is None or member.text not in ctx.db.qualified:
        return False
    mapping = ctx.db.qualified[member.text].get(spelled(node) + b"::" + member.text)
    return mapping is not None and mapping.resolve(ctx.target, ctx.options.prefer_roc)[0] is None
