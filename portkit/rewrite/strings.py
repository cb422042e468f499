"""CUDA API names inside string literals, rewritten exactly as hipify-clang rewrites them.

hipify-clang (HipifyAction::RewriteString) looks in every ordinary "..." literal for the text
"cu", takes the run of characters from there to the next space (or the end of the literal) and,
when that whole run is a CUDA name it converts, replaces it: `printf("cudaMalloc failed\\n")`
becomes `printf("hipMalloc failed\\n")`, while `"cudaMalloc: failed"` or `"cudaFree()"` stay,
since the run there is `cudaMalloc:` or `cudaFree()`. Users diff portkit's output against
hipify-clang's, so the same rule is followed here, quirks included (a run is cut only at a space,
and the search resumes after that space). Raw (R"(...)"), wide and u8 literals are left: clang
lexes the prefixed ones as other token kinds, and for raw strings hipify-clang misplaces the
replacement by the prefix's length, which is not worth copying.

A name is written only when it converts at the target release (the same resolution as code), and
it counts as no reference: a message is not an API use.
"""

from __future__ import annotations

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from . import identifiers
from ..core.edits import EditKind


def handle(ctx: ScanContext, view: View, node: Node) -> None:
    text = view.text(node)
    if len(text) < 2 or text[:1] != b'"' or text[-1:] != b'"':
        return
    content = text[1:-1]
    base = view.start(node) + 1
    table = ctx.db.names_by_bytes
    begin = content.find(b"cu")
    while begin != -1:
        end = content.find(b" ", begin + 4)
        name = content[begin:end if end != -1 else len(content)]
        mapping = table.get(name)
        if mapping is not None:
            hip, _, _ = mapping.resolve(ctx.target, ctx.options.prefer_roc)
            if hip is not None and hip != mapping.cuda:
                ctx.edit(base + begin, base + begin + len(name), hip.encode("ascii"), what=mapping.cuda, kind=EditKind.NAME)
        if end == -1:
            break
        begin = content.find(b"cu", end + 1)


PASSES = (Pass("strings", "walk", handle, capture="node", kinds=("string_literal",),
               keywords=lambda ctx: (identifiers.acting_names(ctx),)),)   # the tables' names that change, inside strings
