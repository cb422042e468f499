"""The run-time 32/64 dispatch of a one-warp launch (`--fix warp`, PK208): where the host launches
a kernel templated on its block width with a warp-size constant, `k<WARP_SIZE><<<g, WARP_SIZE>>>`.

`--fix warp` makes that constant PORTKIT_WAVEFRONT_SIZE, right on every device pass, but the host
pass has no target: it takes 64 (CDNA), so on a wave32 GPU (RDNA) the host launches `k<64>` in
64-thread blocks, an instantiation the device pass (which saw 32) never compiled, and a width that
is not the device's. The host cannot know at compile time which GPU runs the launch, so the width
is asked of the device when it launches, and both instantiations exist on every pass:

    if (portkit_device_warp_size() == 64) { ...k<64>... } else { ...k<32>... }

as the human port of a gradient-boosting library's split evaluation did (hipDeviceAttributeWarpSize
and a 32/64 dispatch). Only where both instantiations compile on every device pass: the kernel is a
template on that argument, defined in the file, and asserts nothing of it (a `static_assert(kBlockSize
== 32)` would fail for one width on every pass: that kernel keeps the compile-time form, with a
PK008 note saying what to do by hand). The statements copied into each branch are the launch and the
dim3 shapes before it that it names (ggml's `const dim3 block_dims(WARP_SIZE, 1, 1);`), when nothing
after the launch uses them.
"""

from __future__ import annotations

from tree_sitter import Node

from ..core.edits import Edit
from ..engine import syntax
from ..engine.context import View
from . import _warpwidth

QUERY_GUARD = b"#ifndef PORTKIT_DEVICE_WARP_SIZE_QUERY"
QUERY = (QUERY_GUARD,
         b"#define PORTKIT_DEVICE_WARP_SIZE_QUERY 1",
         b"// the current device's warp width, asked when a one-warp block is launched (portkit --fix warp): the",
         b"// host pass cannot know it (64 on CDNA, 32 on RDNA and through HIP's NVIDIA backend)",
         b"static inline int portkit_device_warp_size()",
         b"{",
         b"    int device = 0;",
         b"    int width = 0;",
         b"    hipGetDevice(&device);",
         b"    hipDeviceGetAttribute(&width, hipDeviceAttributeWarpSize, device);",
         b"    return width;",
         b"}",
         b"#endif")
NOTE = ("one-warp launch dispatched at run time: {kernel} is instantiated for 32 and 64 threads and the host "
        "launches the one the device's warp width (hipDeviceAttributeWarpSize) names, since the host pass "
        "cannot know whether the GPU is wave32 or wave64")
_INDENT = b"    "


def dispatch(view: View, node: Node, fixed) -> tuple[int, tuple[Edit, ...], str] | None:
    """(anchor, edits, note) of the dispatch of the launch whose `kernel_call_syntax` is `node`;
    `fixed(name, node)` says whether `--fix warp` makes the constant `name` the wavefront."""
    call = node.parent if not view.base else None   # the file's own tree: a macro body's launch is left
    statement = call.parent if call is not None and call.type == "call_expression" else None
    block = statement.parent if statement is not None and statement.type == "expression_statement" else None
    function = call.child_by_field_name("function") if call is not None else None
    host = syntax.enclosing(call, "function_definition") if call is not None else None
    if block is None or block.type != "compound_statement" or function is None \
            or function.type != "template_function" or host is None or _qualified(host, b"__global__", b"__device__"):
        return None
    root = _root(node)
    constants = _warpwidth.file_constants(root)
    args = function.child_by_field_name("arguments")
    names = [a.text for a in (args.named_children if args is not None else ())]
    widths = [i for i, name in enumerate(names) if name in constants and fixed(name, node)]
    if len(widths) != 1:
        return None
    name, kernel_name = names[widths[0]], function.child_by_field_name("name").text.split(b"::")[-1]
    if not _width_parameter_free(root, kernel_name, widths[0]):
        return None
    statements = _range(view, block, statement, name)
    if statements is None:
        return None
    start, end = statements[0].start_byte, statement.end_byte
    indent = view.data[view.data.rfind(b"\n", 0, start) + 1:start]
    if indent.strip():
        return None   # another statement before it on its line: the copies would not line up
    newline = b"\r\n" if b"\r\n" in view.data[:view.data.find(b"\n") + 1] else b"\n"
    copies = [_copy(view, statements, name, width, start, end).replace(newline, newline + _INDENT) for width in (b"64", b"32")]
    text = (b"if (portkit_device_warp_size() == 64) {" + newline + indent + _INDENT + copies[0] + newline + indent
            + b"} else {" + newline + indent + _INDENT + copies[1] + newline + indent + b"}")
    at = _line_start(view, host.parent if host.parent is not None and host.parent.type == "template_declaration" else host)
    edits = (Edit(start, end, text, "warp"),
             Edit(at, at, newline.join(QUERY) + newline, "warp"))
    return view.start(call), edits, NOTE.format(kernel=kernel_name.decode(errors="replace"))


def _qualified(function: Node, *words: bytes) -> bool:
    return any(c.text in words for c in function.children if c.type not in ("compound_statement", "function_declarator"))


def _width_parameter_free(root: Node, kernel: bytes, index: int) -> bool:
    """The kernel, defined in the file as a template, takes the width at `index` and asserts
    nothing of it (both instantiations compile on every device pass)."""
    for node in syntax.walk(root):
        if node.type == "function_definition" and _qualified(node, b"__global__") \
                and _warpwidth.function_name(node) == kernel:
            params = _warpwidth.template_params(node)
            if index >= len(params) or not params[index]:
                return False
            return not any(n.type == "static_assert_declaration" and _names(n, params[index])
                           for n in syntax.walk(node))
    return False


def _range(view: View, block: Node, launch: Node, name: bytes) -> list[Node] | None:
    """The launch statement and the dim3 declarations just before it that use the constant and whose
    names the launch uses; None when a later statement of the block uses one of those names."""
    siblings = [c for c in block.named_children if c.type != "comment"]
    at = next(i for i, c in enumerate(siblings) if c.id == launch.id)
    first, declared = at, set()
    while first > 0 and siblings[first - 1].type == "declaration" \
            and syntax.declaration_type(siblings[first - 1]).split(b"(")[0].split()[-1:] == [b"dim3"] \
            and _names(siblings[first - 1], name):
        names = {d.text.split(b"(")[0].split(b"=")[0].split(b"{")[0].strip()
                 for d in siblings[first - 1].children_by_field_name("declarator")}
        if not any(_names(launch, n) for n in names):
            break
        declared |= names
        first -= 1
    if any(_names(later, n) for later in siblings[at + 1:] for n in declared):
        return None
    return siblings[first:at + 1]


def _names(node: Node, name: bytes) -> bool:
    return any(n.type in ("identifier", "type_identifier") and n.text == name for n in syntax.walk(node))


def _copy(view: View, statements: list[Node], name: bytes, width: bytes, start: int, end: int) -> bytes:
    """The statements' original text with each use of the constant as `width`."""
    uses = sorted(n.start_byte for s in statements for n in syntax.walk(s)
                  if n.type in ("identifier", "type_identifier") and n.text == name)
    text, last = b"", start
    for use in uses:
        text += view.data[last:use] + width
        last = use + len(name)
    return text + view.data[last:end]


def _line_start(view: View, node: Node) -> int:
    return view.data.rfind(b"\n", 0, node.start_byte) + 1


def _root(node: Node) -> Node:
    while node.parent is not None:
        node = node.parent
    return node
