"""A CUB warp-transpose load or store instantiated with a block that is not a multiple of 64 threads.

What it finds:
    A function template called with a literal block size that is not a multiple of 64
    (`selective_scan_fwd_launch<32, 4, input_t, weight_t>(params, stream)`), where that template
    parameter becomes, in the same file, the thread count of a `cub::BlockLoad` or
    `cub::BlockStore` whose algorithm is `BLOCK_LOAD_WARP_TRANSPOSE` / `BLOCK_STORE_WARP_TRANSPOSE`
    (or their `_TIMESLICED` forms): directly, or through the parameter of a traits struct template
    (`Kernel_traits<kNThreads, ...>`) and a `static constexpr int kNThreads = kNThreads_;` there.
    Each call's argument is read as written: a count written as an expression (bitsandbytes'
    `BLOCK_SIZE/NUM_PER_TH`), an explicit instantiation built by a macro, or a value a
    conditional chooses is not followed.

Why it matters on AMD GPUs:
    hipCUB's warp-transpose loads and stores are rocPRIM's, which assert that the block is a
    multiple of the hardware warp: `static_assert ... "BlockSize must be a multiple of hardware
    warpsize"`, 64 lanes on CDNA (gfx90a, gfx942). A 32-thread instantiation that nvcc compiles
    stops the AMD device pass. mamba's AMD port moved its 32-thread selective-scan configurations
    to 64 threads, and bitsandbytes' dropped its 32-thread blockwise quantisation.

Example:
    using BlockLoadT = cub::BlockLoad<input_t, kNThreads, kNItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    ...
    if (params.seqlen <= 128) { selective_scan_fwd_launch<32, 4, input_t, weight_t>(params, stream); }

Instead:
    Give the AMD build block sizes that are multiples of 64 (under `#ifdef USE_ROCM`, or from
    the wavefront size: mamba's port launches <64, 4> where CUDA launches <32, 8>), or use
    `BLOCK_LOAD_DIRECT` / `BLOCK_LOAD_STRIPED`, which have no such requirement, for small blocks.

Effort:
    An hour or two: choose the AMD configurations and check their results against CUDA's.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.rule import define

RULE = define(__doc__, code="PK209", name="warp-transpose-block-size", severity="high", category="warp",
              breaks_build=True)
# The rule reads the whole file once: its root is its one node (tree-sitter makes the root an
# ERROR node where a line at file level does not parse; the file is read all the same).
NODES = ("translation_unit", "ERROR")
WAVEFRONT = 64
PRIMITIVES = (b"BlockLoad", b"BlockStore")
_TRANSPOSE = re.compile(rb"^(?:::)?(?:hip)?cub::BLOCK_(?:LOAD|STORE)_WARP_TRANSPOSE(?:_TIMESLICED)?$")
_GATE = b"_WARP_TRANSPOSE"


def check(ctx: ScanContext, view: View, node: Node) -> None:
    if view.base or node.parent is not None or _GATE not in ctx.source.data:
        return
    nodes = _by_type(node, ("template_type", "template_function", "template_declaration"))
    sinks = _primitive_sinks(nodes["template_type"])
    if not sinks:
        return
    functions = _function_sinks(nodes["template_declaration"], sinks)
    for call in nodes["template_function"]:
        name = call.child_by_field_name("name")
        target = functions.get(name.text) if name is not None else None
        if target is None or call.parent is None or call.parent.type != "call_expression":
            continue
        position, primitive = target
        listed = _arguments(call)
        value = _literal(listed[position]) if position < len(listed) else None
        if value is None or value % WAVEFRONT == 0:
            continue
        ctx.flag(RULE, view.start(call), view.end(call),
                 f"{_squash(call.text)} makes a block of {value} threads for {primitive}: rocPRIM, under hipCUB, "
                 f"requires a multiple of the {WAVEFRONT}-lane wavefront for warp-transpose loads and stores "
                 "(static_assert 'BlockSize must be a multiple of hardware warpsize')",
                 subject=f"{name.text.decode(errors='replace')}<{value}>")


def _primitive_sinks(types: list[Node]) -> dict[bytes, tuple[int, str]]:
    """Template name -> (the position of its parameter that is a warp-transpose primitive's
    thread count, the primitive as written, with its line), for the templates whose body holds one."""
    sinks: dict[bytes, tuple[int, str]] = {}
    for node in types:
        name = node.child_by_field_name("name")
        scope = node.parent.child_by_field_name("scope") if node.parent is not None and \
            node.parent.type == "qualified_identifier" else None
        if name is None or name.text not in PRIMITIVES or scope is None or scope.text not in (b"cub", b"hipcub"):
            continue
        listed = _arguments(node)
        if len(listed) < 4 or not _TRANSPOSE.match(listed[3].text.strip()):
            continue
        declaration = _enclosing_template(node)
        owner = _declared_name(declaration) if declaration is not None else None
        if owner is None:
            continue
        position = _parameter_position(declaration, _alias_of(declaration, listed[1].text.strip()))
        if position is not None:
            line = node.start_point[0] + 1
            sinks.setdefault(owner, (position, f"{scope.text.decode()}::{name.text.decode()} (line {line})"))
    return sinks


def _function_sinks(templates: list[Node], sinks: dict[bytes, tuple[int, str]]) -> dict[bytes, tuple[int, str]]:
    """Function template name -> (position, primitive) for the function templates whose
    parameter reaches a sink: named as that argument of a sink's template (`Traits<kNThreads, ...>`)
    or of a call to another such function; to a fixed point."""
    found = dict(sinks)
    changed = True
    while changed:
        changed = False
        for declaration in templates:
            owner = _declared_name(declaration)
            if owner is None or owner in found:
                continue
            uses = _by_type(declaration, ("template_type", "template_function"))
            for use in uses["template_type"] + uses["template_function"]:
                name = use.child_by_field_name("name")
                target = found.get(name.text) if name is not None else None
                listed = _arguments(use) if target is not None else []
                if target is None or target[0] >= len(listed):
                    continue
                position = _parameter_position(declaration, listed[target[0]].text.strip())
                if position is not None:
                    found[owner] = (position, target[1])
                    changed = True
                    break
    return found


def _by_type(root: Node, kinds: tuple[str, ...]) -> dict[str, list[Node]]:
    found: dict[str, list[Node]] = {kind: [] for kind in kinds}
    stack = [root]
    while stack:
        current = stack.pop()
        if current.type in found:
            found[current.type].append(current)
        stack.extend(reversed(current.children))
    return found


def _arguments(node: Node) -> list[Node]:
    listed = node.child_by_field_name("arguments")
    return [a for a in listed.named_children if a.type != "comment"] if listed is not None else []


def _enclosing_template(node: Node) -> Node | None:
    current = node.parent
    while current is not None and current.type != "template_declaration":
        current = current.parent
    return current


def _declared_name(declaration: Node) -> bytes | None:
    """The name of the struct, class or function a template declaration declares."""
    for child in declaration.named_children:
        if child.type in ("struct_specifier", "class_specifier"):
            name = child.child_by_field_name("name")
            return name.text if name is not None else None
        if child.type in ("function_definition", "declaration"):
            declarator = child.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            name = declarator.child_by_field_name("declarator") if declarator is not None else None
            return name.text if name is not None and name.type == "identifier" else None
    return None


def _parameter_position(declaration: Node, name: bytes) -> int | None:
    parameters = declaration.child_by_field_name("parameters")
    if parameters is None:
        return None
    for position, parameter in enumerate(p for p in parameters.named_children if p.type != "comment"):
        declared = parameter.child_by_field_name("declarator") or parameter.child_by_field_name("name")
        if declared is not None and declared.text == name:
            return position
    return None


def _alias_of(declaration: Node, name: bytes) -> bytes:
    """`kNThreads` -> `kNThreads_` where the template's body says `static constexpr int kNThreads
    = kNThreads_;` (mamba's and causal-conv1d's traits), else the name itself."""
    match = re.search(rb"\bconstexpr\s+(?:unsigned\s+)?(?:int|size_t)\s+" + re.escape(name) + rb"\s*=\s*(\w+)\s*;",
                      declaration.text)
    return match.group(1) if match else name


def _literal(node: Node) -> int | None:
    text = node.text.strip().rstrip(b"uUlL")
    return int(text) if node.type == "number_literal" and text.isdigit() else None


def _squash(text: bytes) -> str:
    return " ".join(text.decode(errors="replace").split())
