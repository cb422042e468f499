"""A CUB warp-transpose load or store instantiated with a block that is not a multiple of 64 threads.

What it finds:
    A function template instantiated with a block size that is not a multiple of 64, where that
    template parameter becomes, in the same file, the thread count of a `cub::BlockLoad` or
    `cub::BlockStore` with `BLOCK_LOAD_WARP_TRANSPOSE` / `BLOCK_STORE_WARP_TRANSPOSE` (or the
    `_TIMESLICED` forms): directly, through an expression of its parameters (bitsandbytes'
    `BLOCK_SIZE/NUM_PER_TH`), or through a traits struct template (`Kernel_traits<kNThreads,
    ...>`, `static constexpr int kNThreads = kNThreads_;`). The instantiation is a call or launch
    (`selective_scan_fwd_launch<32, 4, input_t, weight_t>(params, stream)`), an explicit
    instantiation, or a function-like macro whose body writes one
    (`MAKE_kQuantizeBlockwise(half, 64, 2, 0, NF4)`), with constant arguments. A value a variable
    or a conditional chooses, or a template in another file, is not followed.

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
from typing import Callable, NamedTuple

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.platform.ppexpr import evaluate
from ..engine.rule import define

RULE = define(__doc__, code="PK209", name="warp-transpose-block-size", severity="high", category="warp",
              breaks_build=True, gpu_only=True)
# The rule reads the whole file once: its root is its one node (tree-sitter makes the root an
# ERROR node where a line at file level does not parse; the file is read all the same).
NODES = ("translation_unit", "ERROR")
KEYWORDS = (b"WARP_TRANSPOSE",)   # _GATE
WAVEFRONT = 64
PRIMITIVES = (b"BlockLoad", b"BlockStore")
_TRANSPOSE = re.compile(rb"^(?:::)?(?:hip)?cub::BLOCK_(?:LOAD|STORE)_WARP_TRANSPOSE(?:_TIMESLICED)?$")
_GATE = b"_WARP_TRANSPOSE"
_NAME = re.compile(rb"\b[A-Za-z_]\w*")
# where a template is instantiated: a call or launch, an explicit instantiation or specialisation
_INSTANTIATING = ("call_expression", "function_declarator")
# a function-like macro's definition: name, parameters, body to the end of its last continued line
_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)\n]*)\)((?:[^\n]*\\\r?\n)*[^\n]*)", re.M)
_CONTINUED = re.compile(rb"\\\r?\n")
# where a macro's name is text, not code
_NOT_CODE = ("comment", "string_literal", "string_content", "raw_string_literal", "char_literal", "preproc_arg",
             "system_lib_string")
# how far an argument list is read for its closing bracket: a bound on untrusted text (an
# unclosed `MACRO(` would otherwise be read to the end of the file at each call)
_LONGEST = 1 << 14


class Count(NamedTuple):
    """A warp-transpose primitive's thread count as a template (or macro) sees it: a C expression
    over some of its parameters, each named with the position of its argument."""

    expr: bytes
    uses: tuple[tuple[bytes, int], ...]
    primitive: str    # the primitive as written, with its line (the message's)
    through: str = ""   # the function template a macro instantiates

    def value(self, arguments: list[bytes]) -> int | None:
        """The count at an instantiation whose arguments are these, or None where one it reads is
        not a constant expression as written."""
        if any(position >= len(arguments) for _, position in self.uses):
            return None
        return evaluate(_substitute(self.expr, self.uses, arguments).decode(errors="replace"), {})

    def over(self, arguments: list[bytes], position_of: Callable[[bytes], int | None]) -> "Count | None":
        """This count as a template or macro that writes `arguments` sees it, its parameters placed
        by `position_of`; None where an argument reads something else, or no parameter at all."""
        if any(position >= len(arguments) for _, position in self.uses):
            return None
        expr = _substitute(self.expr, self.uses, arguments)
        uses = _uses(expr, position_of)
        return self._replace(expr=expr, uses=uses) if uses else None


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
        count = functions.get(name.text) if name is not None else None
        if count is None or call.parent is None or call.parent.type not in _INSTANTIATING:
            continue
        value = count.value([a.text for a in _arguments(call)])
        if value is not None and value % WAVEFRONT:
            _flag(ctx, view.start(call), view.end(call), _squash(call.text), name.text, count, value)
    defines = _defines(node, view.data) if b"define" in view.data else []
    for macro, count in _macro_sinks(defines, functions).items():
        for start, end, arguments in _macro_calls(node, view.data, macro, defines):
            value = count.value(arguments)
            if value is not None and value % WAVEFRONT:
                _flag(ctx, start, end, f"{_squash(view.data[start:end])} (a macro that instantiates {count.through})",
                      count.through.encode(), count, value)


def _flag(ctx: ScanContext, start: int, end: int, text: str, name: bytes, count: Count, value: int) -> None:
    ctx.flag(RULE, start, end,
             f"{text} makes a block of {value} threads for {count.primitive}: rocPRIM, under hipCUB, "
             f"requires a multiple of the {WAVEFRONT}-lane wavefront for warp-transpose loads and stores "
             "(static_assert 'BlockSize must be a multiple of hardware warpsize')",
             subject=f"{name.decode(errors='replace')}<{value}>")


def _primitive_sinks(types: list[Node]) -> dict[bytes, Count]:
    """Template name -> the thread count of a warp-transpose primitive its body holds, over its
    own parameters."""
    sinks: dict[bytes, Count] = {}
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
        if owner is None or owner in sinks:
            continue
        written = listed[1].text.strip()
        uses = _uses(written, lambda n, d=declaration: _parameter_position(d, _alias_of(d, n)))
        if uses:
            line = node.start_point[0] + 1
            shown = "" if _NAME.fullmatch(written) else f"{_squash(written)}, "
            sinks[owner] = Count(written, uses, f"{scope.text.decode()}::{name.text.decode()} ({shown}line {line})")
    return sinks


def _function_sinks(templates: list[Node], sinks: dict[bytes, Count]) -> dict[bytes, Count]:
    """Function template name -> its thread count, for the function templates whose parameters
    reach a sink: written into the argument of a sink's template (`Traits<kNThreads, ...>`) or of
    a call to another such function that holds the count; to a fixed point."""
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
                mine = target.over([a.text for a in _arguments(use)],
                                   lambda n, d=declaration: _parameter_position(d, n)) if target else None
                if mine is not None:
                    found[owner] = mine
                    changed = True
                    break
    return found


def _macro_sinks(definitions: list["Define"], functions: dict[bytes, Count]) -> dict[bytes, Count]:
    """Function-like macro name -> the thread count over its parameters, for the macros whose body
    instantiates a function template that holds one (or calls such a macro): a macro body is text
    to tree-sitter, read here as tokens; to a fixed point."""
    found: dict[bytes, Count] = {}
    changed = True
    while changed:
        changed = False
        for define in definitions:
            if define.name in found:
                continue
            position_of = lambda n, ns=define.params: ns.index(n) if n in ns else None   # noqa: E731
            for target, count, opening in _uses_in(define.body, functions, found):
                listed = _split(define.body, opening)
                mine = None if listed is None else count.over(listed, position_of)
                if mine is not None:
                    found[define.name] = mine if mine.through else mine._replace(through=target.decode(errors="replace"))
                    changed = True
                    break
    return found


class Define(NamedTuple):
    """A function-like macro: its name, parameters, body (continuations joined) and where it stands."""

    name: bytes
    params: list[bytes]
    body: bytes
    start: int
    end: int


def _defines(root: Node, data: bytes) -> list[Define]:
    """The file's function-like macros, read off the text: where file-level macro calls leave
    tree-sitter an ERROR region, a `#define` after them is tokens in it, not a preproc_function_def."""
    found = []
    for match in _DEFINE.finditer(data):
        at = root.descendant_for_byte_range(match.start(1), match.end(1))
        if at is None or at.type in _NOT_CODE:
            continue
        params = [p.strip() for p in match.group(2).split(b",")]
        found.append(Define(match.group(1), params, _CONTINUED.sub(b" ", match.group(3)), match.start(), match.end()))
    return found


def _uses_in(body: bytes, functions: dict[bytes, Count], macros: dict[bytes, Count]):
    """(name, its count, the offset of its `<` or `(`) for each template or macro of these the
    body writes with arguments."""
    for names, bracket in ((functions, b"<"), (macros, b"(")):
        for name, count in list(names.items()):
            for match in re.finditer(rb"\b" + re.escape(name) + rb"\s*" + re.escape(bracket), body):
                yield name, count, match.end() - 1


def _macro_calls(root: Node, data: bytes, macro: bytes, defines: list[Define]):
    """(start, end, arguments) of each call of `macro` in the file: its name followed by its
    parenthesised arguments, in code (not a comment, a string or a macro's body)."""
    for match in re.finditer(rb"\b" + re.escape(macro) + rb"\s*\(", data):
        if any(d.start <= match.start() < d.end for d in defines):
            continue
        at = root.descendant_for_byte_range(match.start(), match.start() + len(macro))
        if at is None or at.type in _NOT_CODE:
            continue
        listed = _split(data, match.end() - 1)
        if listed is not None:
            yield match.start(), _closing(data, match.end() - 1), listed


def _split(text: bytes, opening: int) -> list[bytes] | None:
    """The top-level, comma-separated arguments between the bracket at `opening` (`<` or `(`) and
    its partner; angle brackets count only outside parentheses (`(DATA_TYPE > 0) ? N/2 : N`)."""
    end = _closing(text, opening)
    if end < 0:
        return None
    listed, depth, angle, start = [], 0, 0, opening + 1
    for at in range(opening + 1, end - 1):
        char = text[at:at + 1]
        depth += char in (b"(", b"[", b"{")
        depth -= char in (b")", b"]", b"}")
        if text[opening:opening + 1] == b"<" and depth == 0:
            angle += char == b"<"
            angle -= char == b">" and text[at - 1:at] != b"-"
        if char == b"," and depth == 0 and angle == 0:
            listed.append(text[start:at].strip())
            start = at + 1
    return listed + [text[start:end - 1].strip()]


def _closing(text: bytes, opening: int) -> int:
    """The offset just past the partner of the bracket at `opening`, or -1 where it has none."""
    angled = text[opening:opening + 1] == b"<"
    depth = angle = 0
    for at in range(opening, min(len(text), opening + _LONGEST)):
        char = text[at:at + 1]
        depth += char in (b"(", b"[", b"{")
        depth -= char in (b")", b"]", b"}")
        if angled and depth == 0:
            angle += char == b"<"
            angle -= char == b">" and text[at - 1:at] != b"-"
            if angle == 0:
                return at + 1
        elif not angled and depth == 0:
            return at + 1
        if depth < 0 or char == b";" and depth == 0:
            return -1
    return -1


def _uses(expr: bytes, position_of: Callable[[bytes], int | None]) -> tuple[tuple[bytes, int], ...]:
    """Each name of `expr` with its position; () where a name is none of the parameters."""
    uses = {}
    for name in _NAME.findall(expr):
        position = position_of(name)
        if position is None:
            return ()
        uses[name] = position
    return tuple(uses.items())


def _substitute(expr: bytes, uses: tuple[tuple[bytes, int], ...], arguments: list[bytes]) -> bytes:
    by_name = {name: b"(" + arguments[position].strip() + b")" for name, position in uses}
    return _NAME.sub(lambda m: by_name.get(m.group(0), m.group(0)), expr)


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


def _squash(text: bytes) -> str:
    return " ".join(text.decode(errors="replace").split())
