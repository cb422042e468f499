"""Kernel launches: kept as <<<...>>> by default (HIP compiles it), or rewritten as hipify-clang's
--hip-kernel-execution-syntax writes them (HipifyAction::cudaLaunchKernel):

    k<<<g, b>>>(x, y)            hipLaunchKernelGGL(k, dim3(g), dim3(b), 0, 0, x, y)
    t<float><<<g, b, s, q>>>()   hipLaunchKernelGGL(HIP_KERNEL_NAME(t<float>), dim3(g), dim3(b), s, q)

- grid and block are wrapped in `dim3(...)` unless their text starts with `dim3(`: hipify-clang
  tests the text, not the type, so `dim3 grid; k<<<grid, ...` gives `dim3(grid)` too;
- the kernel goes in HIP_KERNEL_NAME(...) when it is a template instance: explicit template
  arguments, or a name this file declares as a function template (hipify-clang asks clang, which
  also knows the templates of headers; there the name stays bare, which compiles the same);
- a missing shared-memory size or stream is `0`; the gaps between the pieces become ", " as
  hipify-clang rebuilds the call from them (a block comment in a gap is kept, hipify-clang drops it).

The edits touch only the delimiters and gaps, never the kernel name, configuration or arguments,
so the names inside them are converted by the identifier rewriter like anywhere else. A launch is
kept as <<<...>>> and reported (PK006) where the rewrite would not compile or would not be
hipify-clang's: hipLaunchKernelGGL is a statement (`do { ... } while (0)`), so a launch used as
an expression stays; hipify-clang keeps launches through a pointer (no direct callee).
"""

from __future__ import annotations

from functools import lru_cache

from tree_sitter import Node, Query, QueryCursor

from ..core import parse
from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from ..core.edits import EditKind
from . import codes

# What a launched kernel can be: a name, a template instance, a member, a pointer, an element.
# Anything else (a call, a binary expression) is tree-sitter's error recovery at work.
CALLEES = frozenset({"identifier", "qualified_identifier", "template_function", "field_expression",
                     "pointer_expression", "subscript_expression", "parenthesized_expression"})
# A launch through these has no direct callee in clang: hipify-clang leaves it as it is.
INDIRECT = frozenset({"field_expression", "pointer_expression", "subscript_expression"})
# Missing configuration arguments get HIP's defaults: no dynamic shared memory, the null stream.
DEFAULTS = {2: b", 0, 0", 3: b", 0", 4: b""}
DIM3 = b"dim3("
# the declarator kinds that wrap the declared name (`(*kp)(int)`, `&r`, `a[4]`, `x = ...`)
WRAPPING_DECLARATORS = frozenset({"init_declarator", "pointer_declarator", "function_declarator",
                                  "parenthesized_declarator", "reference_declarator", "array_declarator"})
KEPT = "kernel launch kept as <<<...>>>: "


def handle(ctx: ScanContext, view: View, node: Node) -> None:
    ctx.metrics.launches += 1
    ctx.metrics.has_device_code = True
    if ctx.options.launch_syntax != "hip":
        return
    call = node.parent
    function = call.child_by_field_name("function") if call is not None else None
    arguments = call.child_by_field_name("arguments") if call is not None else None
    config = [c for c in node.named_children if c.type != "comment"]
    why = _kept_because(ctx, view, call, function, arguments, config)
    if why:
        ctx.flag(codes.LAUNCH_NOT_CONVERTED, view.start(node), view.end(node), KEPT + why, "launch")
        return
    open_name = b"hipLaunchKernelGGL(" + (b"HIP_KERNEL_NAME(" if _templated(ctx, view, function) else b"")
    ctx.edit(view.start(function), view.start(function), open_name, what="launch", kind=EditKind.LAUNCH)
    pieces = [function, *config]
    wraps = [_dim3(view, c) if i < 2 else (b"", b"") for i, c in enumerate(config)]
    closing = [b")" if open_name.endswith(b"NAME(") else b""] + [close for _, close in wraps]
    for i, piece in enumerate(config):
        _gap(ctx, view, call, pieces[i].end_byte, piece.start_byte, closing[i] + b", ", wraps[i][0])
    args = [a for a in arguments.named_children if a.type != "comment"]
    tail = closing[-1] + DEFAULTS[len(config)]
    if args:
        _gap(ctx, view, call, config[-1].end_byte, args[0].start_byte, tail + b", ", b"")
        _gap(ctx, view, call, args[-1].end_byte, arguments.end_byte - 1, b"", b"", trailing=True)
    else:
        _gap(ctx, view, call, config[-1].end_byte, arguments.end_byte - 1, tail, b"", trailing=True)
    ctx.metrics.refs_found += 1
    ctx.metrics.refs_converted += 1


def _kept_because(ctx: ScanContext, view: View, call: Node | None, function: Node | None, arguments: Node | None,
                  config: list[Node]) -> str:
    """Why this launch stays as <<<...>>>, or "" when it is rewritten."""
    if (call is None or call.type != "call_expression" or function is None or arguments is None
            or arguments.type != "argument_list" or len(config) not in DEFAULTS
            or function.type not in CALLEES or arguments.children[-1].type != ")"
            or arguments.children[-1].is_missing):
        return "its configuration could not be read"   # e.g. `k<<<CONFIG>>>`, error recovery
    if _indirect(function):
        return "it launches through a pointer or member, which hipify-clang leaves as it is"
    if _local_variable(function, call):
        return (f"{view.text(function).decode('utf-8', 'replace')} is a variable here (a pointer to "
                "the kernel), which hipify-clang leaves as it is")
    if not _statement(ctx, view, call):
        holder = call.parent.parent if call.parent is not None and call.parent.type == "argument_list" else None
        name = holder.child_by_field_name("function") if holder is not None else None
        where = (f"it is an argument of {name.text.decode('utf-8', 'replace')}, not a statement"
                 if name is not None else "it is used as an expression")
        return where + ", and hipLaunchKernelGGL is a statement (do { ... } while (0))"
    if any(c.type == "comment" and c.text.startswith(b"//") for c in _gap_comments(call)):
        return "a // comment sits between its pieces, which one line cannot hold"
    return ""


def _indirect(function: Node) -> bool:
    while function.type == "parenthesized_expression" and function.named_child_count == 1:
        function = function.named_children[0]
    return function.type in INDIRECT


def _local_variable(function: Node, call: Node) -> bool:
    """True when a plain-name callee is a parameter or local of the enclosing function: a pointer."""
    if function.type != "identifier":
        return False
    scope = call.parent
    while scope is not None and scope.type not in ("function_definition", "lambda_expression"):
        scope = scope.parent
    if scope is None:
        return False
    stack = [scope]
    while stack:   # every declaration before the launch (scopes are not followed: a rare shadowing)
        current = stack.pop()
        if current.type in ("declaration", "parameter_declaration"):
            if any(_declared_name(d) == function.text for d in current.children_by_field_name("declarator")):
                return True
        stack.extend(c for c in current.named_children if c.start_byte < call.start_byte)
    return False


def _declared_name(declarator: Node) -> bytes:
    """The variable a declarator declares; b"" for a function prototype (`void k(int);`)."""
    inner = declarator.child_by_field_name("declarator")
    if declarator.type == "function_declarator" and inner is not None and inner.type == "identifier":
        return b""
    while declarator.type in WRAPPING_DECLARATORS:
        inner = declarator.child_by_field_name("declarator")
        if inner is None:   # parenthesized_declarator has no field: its one named child
            inner = next((c for c in declarator.named_children), None)
        if inner is None:
            return b""
        declarator = inner
    return declarator.text if declarator.type == "identifier" else b""


def _statement(ctx: ScanContext, view: View, call: Node) -> bool:
    """A launch that is a whole statement, the whole body of a macro (used as `LAUNCH(...);`), or
    the whole argument of a macro of this file that uses it as a statement (`CHECK(k<<<...>>>())`)."""
    parent = call.parent
    if parent is not None and parent.type == "expression_statement":
        return True
    blank = b" \t\r\n\\"
    if view.base:
        return not view.data[:call.start_byte].strip(blank) and view.data[call.end_byte:].strip(blank) in (b"", b";")
    invocation = parent.parent if parent is not None and parent.type == "argument_list" else None
    if invocation is None or invocation.type != "call_expression":
        return False
    name = invocation.child_by_field_name("function")
    args = [a for a in parent.named_children if a.type != "comment"]
    params = _file_facts(ctx, view, call)[1].get(name.text if name is not None else b"")
    return params is not None and len(params) == len(args) and params[args.index(call)]


def _templated(ctx: ScanContext, view: View, function: Node) -> bool:
    while function.type in ("qualified_identifier", "parenthesized_expression"):
        inner = (function.child_by_field_name("name") if function.type == "qualified_identifier"
                 else function.named_children[0] if function.named_child_count == 1 else None)
        if inner is None:
            return False
        function = inner
    if function.type == "template_function":
        return True
    return function.type == "identifier" and function.text in _template_names(ctx, view, function)


def _template_names(ctx: ScanContext, view: View, node: Node) -> frozenset[bytes]:
    return _file_facts(ctx, view, node)[0]


def _file_facts(ctx: ScanContext, view: View, node: Node) -> tuple[frozenset[bytes], dict[bytes, list[bool]]]:
    """What this file declares, once per file (a macro body asks the whole file): the function
    templates, and for each function-like macro which parameters its body uses only as statements."""
    return ctx.derived(_declarations)


def _declarations(ctx: ScanContext) -> tuple[frozenset[bytes], dict[bytes, list[bool]]]:
    root = ctx.root if ctx.root is not None else parse.parse(ctx.source.parse_bytes).root_node
    found = QueryCursor(_template_query()).captures(root)
    macros = {}
    for definition in found.get("macro", []):
        params = definition.child_by_field_name("parameters")
        body = definition.child_by_field_name("value")
        names = [p.text for p in params.named_children] if params is not None else []
        if params is not None and any(c.type == "..." for c in params.children):
            names.append(b"__VA_ARGS__")   # `CHECK(...)`: the launch is the whole variadic part
        macros[definition.child_by_field_name("name").text] = _statement_params(names, body)
    return frozenset(n.text for n in found.get("name", [])), macros


def _statement_params(names: list[bytes], body: Node | None) -> list[bool]:
    """For each macro parameter: does the body use it, and only as a statement (`x;` or all of it)?"""
    if body is None:
        return [False] * len(names)
    text = body.text
    if text.strip(b" \t\r\n\\") in names:
        return [n == text.strip(b" \t\r\n\\") for n in names]
    uses: dict[bytes, list[bool]] = {}
    stack = [parse.parse(text).root_node]
    while stack:
        current = stack.pop()
        if current.type == "identifier" and current.text in names:
            parent = current.parent
            uses.setdefault(current.text, []).append(parent is not None and parent.type == "expression_statement"
                                                     and parent.named_child_count == 1)
        stack.extend(current.children)
    return [bool(uses.get(n)) and all(uses[n]) and b"#" + n not in text for n in names]


@lru_cache(maxsize=1)
def _template_query() -> Query:
    name = "declarator: (function_declarator declarator: [(identifier) @name " \
           "(qualified_identifier name: (identifier) @name)])"
    return Query(parse.language(), f"(template_declaration [(function_definition {name}) (declaration {name})]) "
                                   "(preproc_function_def) @macro")


def _dim3(view: View, piece: Node) -> tuple[bytes, bytes]:
    """hipify-clang's test for grid and block: wrap unless the text already starts with `dim3(`."""
    return (b"", b"") if view.text(piece).startswith(DIM3) else (DIM3, b")")


def _gap_comments(call: Node) -> list[Node]:
    syntax = [c for c in call.children if c.type == "kernel_call_syntax"]
    holders = [call, *syntax, *call.children_by_field_name("arguments")]
    arguments = call.child_by_field_name("arguments")
    inside = [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []
    first, last = (inside[0].start_byte, inside[-1].end_byte) if inside else (call.end_byte, call.end_byte)
    return [c for h in holders for c in h.children
            if c.type == "comment" and not first <= c.start_byte < last]


def _gap(ctx: ScanContext, view: View, call: Node, start: int, end: int, before: bytes, after: bytes,
         trailing: bool = False) -> None:
    """Replace the bytes between two pieces of the launch with `before` + `after`, keeping comments."""
    kept = [c.text for c in _gap_comments(call) if start <= c.start_byte < end]
    if trailing:
        text = before + b"".join(b" " + c for c in kept) + after
    else:
        text = before + b"".join(c + b" " for c in kept) + after
    if text != view.data[start:end]:
        ctx.edit(view.base + start, view.base + end, text, what="launch", kind=EditKind.LAUNCH)


PASSES = (Pass("launches", "walk", handle, capture="node", kinds=("kernel_call_syntax",), keywords=(b"<<<",)),)
