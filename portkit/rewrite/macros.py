"""Macro bodies: tree-sitter leaves `#define` bodies as opaque text (preproc_arg).

The body is parsed again on its own and the same rewriters run over that small tree, offset to
the body's place in the file. This is the token pass the design asks for, with more reach: a
body is usually a statement or an expression, so calls and launches inside it are seen as such,
and where it is a fragment the parser's error recovery still lexes comments, strings and names.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from ..core import parse
from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from . import preproc_names

MACRO_DEFINITIONS = ("preproc_def", "preproc_function_def")


def handle(ctx: ScanContext, view: View, node: Node) -> None:
    parent = node.parent
    if parent is None or parent.type not in MACRO_DEFINITIONS or view.base:
        return  # #pragma/#error text, or already inside a re-parsed body
    params = parent.child_by_field_name("parameters")
    names = frozenset(p.text for p in params.named_children) if params is not None else frozenset()
    preproc_names.check_pastes(ctx, view, node, names)   # names made by ## are never seen whole
    body = view.text(node)
    tree = parse.parse(_PASTE.sub(lambda m: _unpasted(m, ctx.db.names_by_bytes), body))
    ctx.dispatch(ctx, View(body, view.start(node)), tree.root_node)


# a `##` and the name left of it
_PASTE = re.compile(rb"(\w*)(\s*)##")


def _unpasted(m: re.Match, names) -> bytes:
    """The body is parsed with each `##` as `__`, the two pieces one name as the paste makes one
    token: read as it is, `r_##T(int k, cudaStream_t s)` lexed `#T(...` as a directive, opaque to
    the end of the body, and the names after it stayed CUDA (faiss's BLOCK_SELECT_IMPL: 24 units
    at `unknown type name 'cudaStream_t'`). A CUDA name left of it stays a name of its own
    (`cudaMalloc##Async` -> `hipMalloc##Async`). Same length, so offsets hold; the view keeps the bytes."""
    return m.group(1) + m.group(2) + (b"  " if m.group(1) in names else b"__")


# a body's names, launches and markers are the file's bytes: the other passes' keywords find them;
# its own finding is a CUDA name pasted with `##` (preproc_names.check_pastes)
PASSES = (Pass("macro_bodies", "walk", handle, capture="node", kinds=("preproc_arg",),
               keywords=(preproc_names.may_paste_cuda,)),)
