"""Qualified CUDA names in the tree: how a name is spelled with its namespaces (`thrust::cuda`,
`cub::DispatchScan`), and when a namespace must keep CUDA's spelling because the member it
qualifies has no HIP counterpart, and when a namespace named like a CUDA library's is the
project's own (`ctranslate2::cuda`: `owned`, with project/own_namespaces.py's facts); identifiers.py
reads all three."""

from __future__ import annotations

import re

from tree_sitter import Node

from ..engine.context import ScanContext, View


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


# A project's own namespace named like a CUDA library's (issue 48): CTranslate2 declares
# `namespace ctranslate2 { namespace cuda { ... } }` and, inside `namespace ctranslate2`, calls
# `cuda::get_device_properties(...)`. C++ looks an unqualified `cuda` up from the innermost
# enclosing namespace outwards, so that `cuda` is ctranslate2::cuda, never libcu++'s ::cuda; its
# 216 uses were reported as libcu++ (PK001, high). Only `::cuda::`, `cuda::std::` and a `cuda::`
# that no such namespace is visible from are libcu++'s.
_NAMESPACE_NAME = ("namespace_identifier", "nested_namespace_specifier")
_SCOPES = ("translation_unit", "declaration_list", "compound_statement")


def namespace_path(definition: Node) -> tuple[str, ...]:
    """`("a", "b")` for `namespace a::b {` or `namespace b {` inside `namespace a {` (an anonymous
    or inline namespace adds nothing: lookup passes through it)."""
    path: list[str] = []
    current: Node | None = definition
    while current is not None:
        if current.type == "namespace_definition":
            name = next((c for c in current.children if c.type in _NAMESPACE_NAME), None)
            if name is not None:
                path[:0] = [part.strip() for part in name.text.decode("latin-1").split("::") if part.strip()]
        current = current.parent
    return tuple(path)


def declared(definition: Node, names: frozenset[str]) -> tuple[str, ...] | None:
    """The full path of a namespace definition whose innermost name is one of `names` and that
    sits inside another namespace (`ctranslate2::cuda`); None for a top-level one (libcu++'s own
    `namespace cuda::std {`, which cuCollections reopens) or another name."""
    path = namespace_path(definition)
    return path if len(path) > 1 and path[-1] in names else None


_DEFINITION = re.compile(rb"\bnamespace\s+(?:\w+\s*::\s*)*(\w+)\s*\{")


def declarations(root: Node, data: bytes, names: frozenset[str]) -> set[tuple[str, ...]]:
    """The full paths of the nested namespaces named one of `names` that the tree `root` (of
    `data`) defines; a regular expression finds the candidates, the tree their enclosing scopes."""
    found = set()
    for match in _DEFINITION.finditer(data):
        if match.group(1).decode("latin-1") not in names:
            continue
        node = root.descendant_for_byte_range(match.start(), match.start() + len(b"namespace"))
        while node is not None and node.type != "namespace_definition":
            node = node.parent
        path = declared(node, names) if node is not None else None
        if path is not None:
            found.add(path)
    return found


def owned(ctx: ScanContext, view: View, node: Node, parents: frozenset[tuple[str, ...]]) -> bool:
    """Whether the namespace name `node` (`cuda`) is the project's own here: a nested definition
    of it, or an unqualified use from a scope that sees one of `parents`' namespace of that name
    (`parents`: the outer paths the tree declares it under, ("ctranslate2",))."""
    qualified = node.parent
    if qualified is not None and qualified.type in ("namespace_definition", "nested_namespace_specifier"):
        if qualified.type == "nested_namespace_specifier":
            if qualified.children[0].id != node.id:
                return True   # namespace a::cuda {
            qualified = qualified.parent
        return qualified is not None and qualified.parent is not None and bool(namespace_path(qualified.parent))
    if not parents or qualified is None or qualified.type != "qualified_identifier" or not _is(qualified, "scope", node):
        return False
    outer = qualified.parent
    if outer is not None and outer.type == "qualified_identifier" and outer.child_by_field_name("scope") is None:
        return False   # ::cuda::x names the global namespace: libcu++'s
    member = qualified.child_by_field_name("name")
    if member is not None and member.text.split(b"::", 1)[0].strip() == b"std":
        return False   # cuda::std:: is libcu++'s
    anchor = node if not view.base else ctx.root.descendant_for_byte_range(view.start(node), view.end(node))
    if anchor is None:
        return False
    scope = namespace_path(anchor)
    if any(scope[:i] in parents for i in range(1, len(scope) + 1)):
        return True
    return b"using" in ctx.source.data and _using_owner(anchor, scope, parents)


def _using_owner(anchor: Node, scope: tuple[str, ...], parents: frozenset[tuple[str, ...]]) -> bool:
    """A `using namespace P;` before `anchor`, in a scope around it, where P (as written, or
    relative to the enclosing namespaces) is one of `parents`."""
    current = anchor.parent
    while current is not None:
        if current.type in _SCOPES:
            for child in current.named_children:
                if child.start_byte >= anchor.start_byte:
                    break
                if child.type == "using_declaration" and any(c.type == "namespace" for c in child.children):
                    named = child.named_children[-1].text.decode("latin-1") if child.named_children else ""
                    path = tuple(p.strip() for p in named.split("::") if p.strip())
                    if path in parents or any(scope[:i] + path in parents for i in range(1, len(scope) + 1)):
                        return True
        current = current.parent
    return False


def namespace_names(names_by_bytes: dict) -> frozenset[str]:
    """The CUDA libraries' namespaces a project may name its own (cuda, cub, nvtx3, ...): the
    tables' namespace records that are one plain name."""
    return frozenset(m.cuda for m in names_by_bytes.values() if m.kind == "namespace" and "::" not in m.cuda)


def _file_parents(ctx: ScanContext) -> dict[bytes, frozenset[tuple[str, ...]]]:
    """The outer paths of the nested CUDA-named namespaces this file defines itself, by name (what
    the tree's facts hold, for a file converted on its own)."""
    data = ctx.source.data
    if ctx.root is None or b"namespace" not in data:
        return {}
    out: dict[bytes, set[tuple[str, ...]]] = {}
    for path in declarations(ctx.root, data, namespace_names(ctx.db.names_by_bytes)):
        out.setdefault(path[-1].encode("latin-1"), set()).add(path[:-1])
    return {name: frozenset(paths) for name, paths in out.items()}


def own_use(ctx: ScanContext, view: View, node: Node, text: bytes) -> bool:
    """Whether the CUDA-named namespace `node` (its text `text`) is the project's own here
    (`owned`), by the tree's facts and this file's own definitions."""
    parents = ctx.facts.namespace_parents(text) | ctx.derived(_file_parents).get(text, frozenset())
    return owned(ctx, view, node, parents)
