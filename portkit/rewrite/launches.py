"""Kernel launches: kept as <<<...>>> by default (HIP compiles it), or rewritten to hipLaunchKernelGGL.

The rewrite edits only the delimiters, never the kernel name, configuration or arguments, so the
names inside them are converted by the identifier rewriter like anywhere else.
"""

from __future__ import annotations

from tree_sitter import Node

from ..context import ScanContext, View
from . import codes

# What a launched kernel can be: a name, a template instance, a member, a pointer, an element.
# Anything else (a call, a binary expression) is tree-sitter's error recovery at work.
CALLEES = frozenset({"identifier", "qualified_identifier", "template_function", "field_expression",
                     "pointer_expression", "subscript_expression", "parenthesized_expression"})
# Missing configuration arguments get HIP's defaults: no dynamic shared memory, the null stream.
DEFAULTS = {2: b", 0, 0", 3: b", 0", 4: b""}


def handle(ctx: ScanContext, view: View, node: Node) -> None:
    ctx.metrics.launches += 1
    ctx.metrics.has_device_code = True
    if ctx.options.launch_syntax != "hip":
        return
    call = node.parent
    function = call.child_by_field_name("function") if call is not None else None
    arguments = call.child_by_field_name("arguments") if call is not None else None
    config = [c for c in node.named_children if c.type != "comment"]
    if (call is None or call.type != "call_expression" or function is None or arguments is None
            or arguments.type != "argument_list" or len(config) not in DEFAULTS
            or function.type not in CALLEES):   # e.g. error recovery nesting one launch in another
        start, end = view.start(node), view.end(node)
        ctx.flag(codes.LAUNCH_NOT_CONVERTED, start, end,
               "kernel launch kept as <<<...>>>: its configuration could not be read", "launch")
        return
    name = view.text(function)
    templated = function.type == "template_function" or b"<" in name or b"," in name
    args = [a for a in arguments.named_children if a.type != "comment"]
    ctx.edit(view.start(function), view.start(function),
             b"hipLaunchKernelGGL(" + (b"HIP_KERNEL_NAME(" if templated else b""), what="launch")
    ctx.edit(view.end(function), view.start(config[0]), (b")" if templated else b"") + b", ", what="launch")
    ctx.edit(view.end(config[-1]), view.start(arguments) + 1,
             DEFAULTS[len(config)] + (b", " if args else b""), what="launch")
    ctx.metrics.refs_found += 1
    ctx.metrics.refs_converted += 1
