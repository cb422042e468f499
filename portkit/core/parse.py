"""tree-sitter-cuda parsing: one parser per process, and the query the scanner walks with."""

from __future__ import annotations

from functools import lru_cache

import tree_sitter_cuda
from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

# Node kinds the scanner dispatches on. One query captures them all, so the tree is walked once,
# in C; Python only sees the nodes some rewriter or rule asked for.
NAME_KINDS = ("identifier", "type_identifier", "namespace_identifier")
CAPTURE_KINDS = ("preproc_arg", "preproc_include", "kernel_call_syntax", "string_literal", "gnu_asm_expression")
DEVICE_MARKERS = ("__global__", "__device__", "__shared__", "__constant__", "__managed__")
# C++ that hip-clang rejects and nvcc accepts (rewrite/strictness.py): `register`, and the brace
# initialisers of declarations (not every initializer_list: launch configurations, nested lists).
STRICT_PATTERNS = '"register" @strict (init_declarator value: (initializer_list) @strict)'


@lru_cache(maxsize=1)
def language() -> Language:
    return Language(tree_sitter_cuda.language())


@lru_cache(maxsize=1)
def parser() -> Parser:
    return Parser(language())


@lru_cache(maxsize=16)
def scan_query(with_rules: tuple[str, ...] = ()) -> Query:
    """The converter's query, plus `@rule` captures for the node kinds audit rules inspect."""
    names = " ".join(f"({kind})" for kind in NAME_KINDS)
    named = " ".join(f"({kind})" for kind in CAPTURE_KINDS)
    anonymous = " ".join(f'"{kind}"' for kind in DEVICE_MARKERS)
    text = f"[{names}] @name [{named}] @node [{anonymous}] @device {STRICT_PATTERNS}"
    extra = [kind for kind in with_rules if kind not in CAPTURE_KINDS and kind not in NAME_KINDS
             and not kind.startswith("(")]
    if extra:
        text += " [" + " ".join(f"({kind})" for kind in extra) + "] @rule (field_identifier) @field"
    # a kind given as a pattern captures only where the pattern says (`(parent (kind) @rule)`)
    text += "".join(" " + kind for kind in with_rules if kind.startswith("("))
    return Query(language(), text)


def parse(data: bytes) -> Tree:
    return parser().parse(data)


# the bytes and tree of the last whole file a scan parsed: convert's summary scans the same bytes
# again with the rules on (commands/convert_audit.py), and a tree is never changed once made
_KEPT: list = [None, None]


def kept(data: bytes) -> Tree | None:
    """The tree `keep` kept, when `data` are its bytes: the second scan of a file parses nothing."""
    known, tree = _KEPT
    return tree if known is not None and (known is data or known == data) else None


def keep(data: bytes, tree: Tree) -> Tree:
    _KEPT[:] = (data, tree)
    return tree


def captures(node: Node, with_rules: tuple[str, ...] = ()) -> dict[str, list[Node]]:
    """The scan query's captures under `node`, by capture name."""
    return QueryCursor(scan_query(with_rules)).captures(node)


def first_error(node: Node) -> Node | None:
    """The first ERROR or MISSING node under `node` (for the partial-parse note), if any."""
    if not node.has_error:
        return None
    stack = [node]
    while stack:
        current = stack.pop()
        if current.is_error or current.is_missing:
            return current
        if current.has_error:
            stack.extend(reversed(current.children))
    return None
