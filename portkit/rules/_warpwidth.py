"""Warp width as data (PK208, `--fix warp`): which kernels rely on their block being one 32-lane
warp, which constant of the file makes it so, and every use that depends on that constant.

A kernel that reduces with `cub::WarpReduce<T>` (no logical width) in blocks of 32 threads gets
the hardware warp as its width: 32 lanes under CUB, the wavefront under hipCUB (64 lanes on CDNA),
so on AMD it reduces 32 threads and 32 lanes that do not exist. The width the kernel needs is the
block's, and the block's is a constant somewhere in the file (`uint32_t constexpr kBlockThreads =
32;`), used at the launch, as a template argument, in a `static_assert`, as a loop stride... The
defect is that one constant: it is reported once, at its definition, with its uses listed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node

from ..engine import syntax

# cub/hipcub warp primitives -> the index of their LOGICAL_WARP_THREADS template argument
PRIMITIVES = {b"WarpReduce": 1, b"WarpScan": 1, b"WarpExchange": 2, b"WarpLoad": 3, b"WarpStore": 3,
              b"WarpMergeSort": 2}
_NAMESPACES = (b"cub", b"hipcub")
_SHUFFLES = re.compile(rb"__shfl(?:_up|_down|_xor)?(?:_sync)?$")
_COMMENT = re.compile(rb"//.*|/\*.*?\*/", re.S)
_DEPTH = 6   # a constant defined through another: `kBlock = kWarps * 32` (bounded: a crafted chain stays cheap)


@dataclass(frozen=True)
class Constant:
    """A file constant whose value is 32: `#define`, const/constexpr variable or enumerator."""
    name: bytes
    value: Node | None  # the node whose text is the value (the literal 32, or the define's value); None: a header's
    literal: bool      # the value is the literal 32 itself (what a fix can replace)
    header: str = ""   # defined in this header, which the file includes (project/warp_constants.py): reported there


@dataclass
class Launch:
    kernel: Node           # the __global__ function_definition
    call: Node             # the call_expression with `<<<...>>>`
    block: Node            # the block argument
    constant: Constant | None   # the constant the block size comes from, if one


@dataclass
class OneWarp:
    """A kernel that relies on being one warp, with its width-less primitives and one-warp launches."""
    kernel: Node
    primitives: list[Node] = field(default_factory=list)   # template_type nodes without a width
    launches: list[Launch] = field(default_factory=list)
    asserts: list[Node] = field(default_factory=list)      # static_assert(P == 32) on its block size


def widthless(node: Node) -> Node | None:
    """The template_type of `cub::WarpReduce<T>` (hipcub:: too) when `node`, its name, has no
    logical width argument; None otherwise."""
    template = node.parent
    if template is None or template.type != "template_type" or node.text not in PRIMITIVES:
        return None
    scope = template.parent
    if scope is None or scope.type != "qualified_identifier":
        return None
    namespace = scope.child_by_field_name("scope")
    if namespace is None or namespace.text.split(b"::")[-1].strip() not in _NAMESPACES:
        return None
    args = template.child_by_field_name("arguments")
    count = len([a for a in args.named_children if a.type != "comment"]) if args is not None else 0
    return template if count <= PRIMITIVES[node.text] else None


def kernel_of(node: Node) -> Node | None:
    function = syntax.enclosing(node, "function_definition")
    if function is None:
        return None
    qualifiers = {c.text for c in function.children if c.type not in ("compound_statement", "function_declarator")}
    return function if b"__global__" in qualifiers else None


def function_name(function: Node) -> bytes:
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    name = declarator.child_by_field_name("declarator") if declarator is not None else None
    return name.text.split(b"::")[-1] if name is not None else b""


def one_warp(root: Node, kernel: Node, extra: dict[bytes, Constant] | None = None) -> OneWarp | None:
    """The kernel as a one-warp kernel: its width-less primitives, its launches in this file whose
    block is 32 threads, its static_asserts that its block size is 32; None unless it has a
    width-less primitive and either a one-warp launch or such an assertion. `extra`: the constants
    of 32 the file's headers define (the file's own of the same name win)."""
    found = OneWarp(kernel)
    for node in syntax.walk(kernel):
        if node.type == "type_identifier" and (template := widthless(node)) is not None:
            found.primitives.append(template)
    if not found.primitives:
        return None
    params = template_params(kernel)
    constants = {**extra, **file_constants(root)} if extra else file_constants(root)
    for node in syntax.walk(kernel):
        if node.type == "static_assert_declaration" and (asserted := _asserted_32(node)) is not None \
                and (asserted in params or syntax.block_size_name(asserted) or asserted in constants):
            found.asserts.append(node)
    name = function_name(kernel)
    for call in _launches(root, name):
        block = _block_argument(call)
        resolved = _block_size(call, block, constants) if block is not None else None
        if resolved is not None:
            found.launches.append(Launch(kernel, call, block, resolved[1]))
    return found if found.launches or found.asserts else None


def template_params(function: Node) -> list[bytes]:
    holder = function.parent
    if holder is None or holder.type != "template_declaration":
        return []
    plist = holder.child_by_field_name("parameters")
    names = []
    for param in plist.named_children if plist is not None else ():
        declarator = param.child_by_field_name("declarator")
        names.append(syntax.declared_name(declarator) if declarator is not None else b"")
    return names


def _asserted_32(node: Node) -> bytes | None:
    """`static_assert(P == 32, ...)` (or `32 == P`): P."""
    condition = next((c for c in node.named_children if c.type == "binary_expression"), None)
    if condition is None or syntax.operator(condition) != b"==":
        return None
    left, right = syntax.unparen(condition.child_by_field_name("left")), syntax.unparen(condition.child_by_field_name("right"))
    for a, b in ((left, right), (right, left)):
        if b.type == "number_literal" and syntax.int_value(b) == 32 and a.type == "identifier":
            return a.text
    return None


def file_constants(root: Node) -> dict[bytes, Constant]:
    """The file's constants whose value is 32 (directly, or through other constants: `2 * 16`)."""
    definitions: dict[bytes, Node] = {}
    for node in syntax.walk(root):
        if node.type == "preproc_def":
            name, (_, value) = node.child_by_field_name("name"), syntax.define_value(node)
            if name is not None and value is not None:
                definitions.setdefault(name.text, value)
        elif node.type == "enumerator" and (value := node.child_by_field_name("value")) is not None:
            definitions.setdefault(node.child_by_field_name("name").text, value)
        elif node.type == "init_declarator" and (value := node.child_by_field_name("value")) is not None \
                and _constant_declaration(node) and (target := node.child_by_field_name("declarator")).type == "identifier":
            definitions.setdefault(target.text, value)
    definitions.pop(b"PORTKIT_WAVEFRONT_SIZE", None)   # --fix warp's own, per target: 32 only in its NVIDIA branch
    found = {}
    for name, value in definitions.items():
        if _evaluate(value, definitions, 0) == 32:
            node = syntax.unparen(value)
            found[name] = Constant(name, value, node.type == "number_literal" and syntax.int_value(node) == 32)
    return found


def _constant_declaration(init: Node) -> bool:
    declaration = init.parent
    if declaration is None or declaration.type not in ("declaration", "field_declaration"):
        return False
    kind = syntax.declaration_type(declaration)
    return b"const" in kind   # const and constexpr


def _evaluate(node: Node, definitions: dict[bytes, Node], depth: int) -> int | None:
    node = syntax.unparen(node)
    if depth > _DEPTH:
        return None
    if node.type == "number_literal":
        return syntax.int_value(node)
    text = _define_text(node.text) if node.type == "preproc_arg" else node.text
    if node.type in ("identifier", "preproc_arg") and text in definitions:
        target = definitions[text]
        return None if target.id == node.id else _evaluate(target, definitions, depth + 1)
    if node.type == "preproc_arg":   # a macro's value: a number or a name (an expression is not followed)
        return int(text.rstrip(b"uU")) if text.rstrip(b"uU").isdigit() else None
    if node.type == "binary_expression" and syntax.operator(node) in (b"*", b"+", b"-", b"/", b"<<"):
        left = _evaluate(node.child_by_field_name("left"), definitions, depth + 1)
        right = _evaluate(node.child_by_field_name("right"), definitions, depth + 1)
        if left is None or right is None:
            return None
        op = syntax.operator(node)
        if op == b"/" and (right == 0 or left % right):
            return None
        return {b"*": left * right, b"+": left + right, b"-": left - right,
                b"/": left // (right or 1), b"<<": left << right if 0 <= right < 16 else None}[op]
    return None


def _define_text(value: bytes) -> bytes:
    """A #define's value without comments or enclosing parentheses (syntax.define_value's text)."""
    text = _COMMENT.sub(b" ", value).strip()
    while text.startswith(b"(") and text.endswith(b")"):
        text = text[1:-1].strip()
    return text


def _launches(root: Node, name: bytes):
    for node in syntax.walk(root):
        if node.type == "kernel_call_syntax" and node.parent is not None and node.parent.type == "call_expression":
            function = node.parent.child_by_field_name("function")
            if function is not None and function.type == "template_function":
                function = function.child_by_field_name("name")
            if function is not None and function.text.split(b"::")[-1] == name:
                yield node.parent


def _block_argument(call: Node) -> Node | None:
    config = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
    args = [c for c in config.named_children if c.type != "comment"] if config is not None else []
    return args[1] if len(args) > 1 else None


def _block_size(call: Node, block: Node, constants: dict[bytes, Constant]) -> tuple[int, Constant | None] | None:
    """(32, the constant it comes from or None) when the launch's block is 32 threads: a literal,
    a constant of the file, `dim3(K)`, or a local `dim3 b(K)` of the launching function."""
    block = syntax.unparen(block)
    if block.type == "number_literal":
        return (32, None) if syntax.int_value(block) == 32 else None
    if block.type == "identifier" and block.text in constants:
        return 32, constants[block.text]
    if block.type == "call_expression" and block.child_by_field_name("function").text == b"dim3":
        return _dim3_x(block.child_by_field_name("arguments").text, constants)
    if block.type == "identifier":
        function = syntax.enclosing(call, "function_definition")
        pattern = rb"\bdim3\s+" + re.escape(block.text) + rb"\s*(?:=\s*(?:dim3\s*)?)?([({][^;]*?[)}])\s*;"
        shape = re.search(pattern, function.text) if function is not None else None
        return _dim3_x(shape.group(1), constants) if shape is not None else None
    return None


def _dim3_x(args: bytes, constants: dict[bytes, Constant]) -> tuple[int, Constant | None] | None:
    """`(K)`, `(K, 1)`, `{K, 1, 1}`: x is 32 threads and y, z are 1."""
    parts = [p.strip() for p in args.strip()[1:-1].split(b",")]
    if not parts or any(p not in (b"1", b"1u", b"1U") for p in parts[1:]):
        return None
    x = parts[0]
    if x.rstrip(b"uU") == b"32":
        return 32, None
    return (32, constants[x]) if x in constants else None


def uses(root: Node, constant: Constant, kernels: list[OneWarp]) -> list[tuple[int, str]]:
    """(line, what) for each use of the constant in the file, and what the kernels it makes one
    warp rely on (their width-less primitives, their assertions)."""
    found: list[tuple[int, str]] = []
    for node in syntax.walk(root):
        if node.type in ("identifier", "type_identifier") and node.text == constant.name and not _defines(node):
            found.append((node.start_point[0] + 1, _role(node)))
    for warp in kernels:
        kernel = function_name(warp.kernel).decode(errors="replace")
        for template in warp.primitives:
            found.append((template.start_point[0] + 1, f"{_squash(template.parent.text)} in {kernel}, with no logical width"))
        for assertion in warp.asserts:
            found.append((assertion.start_point[0] + 1, f"static_assert in {kernel}"))
        for launch in warp.launches:
            if launch.constant is not None and launch.constant.name == constant.name:
                found.append((launch.call.start_point[0] + 1, f"block size of the launch of {kernel}"))
    return sorted(set(found))


def _defines(node: Node) -> bool:
    parent = node.parent
    if parent is None or parent.type not in ("preproc_def", "enumerator", "init_declarator"):
        return False
    named = parent.child_by_field_name("declarator" if parent.type == "init_declarator" else "name")
    return named is not None and named.id == node.id


def _role(node: Node) -> str:
    """What a use of the constant is (the first context that says)."""
    current, child = node.parent, node
    while current is not None and current.type not in ("function_definition", "translation_unit"):
        if current.type == "kernel_call_syntax":
            args = [c for c in current.named_children if c.type != "comment"]
            kernel = current.parent.child_by_field_name("function") if current.parent is not None else None
            name = _squash(kernel.text.split(b"<")[0]) if kernel is not None else "a kernel"
            return f"block size of the launch of {name}" if len(args) > 1 and _within(node, args[1]) \
                else "launch configuration"
        if current.type == "declaration" and syntax.declaration_type(current).startswith(b"dim3"):
            return "a dim3 block shape"
        if current.type == "subscript_argument_list":
            return "index arithmetic"
        if current.type == "static_assert_declaration":
            return "static_assert"
        if current.type == "launch_bounds":
            return "__launch_bounds__"
        if current.type == "array_declarator" and child.id == (current.child_by_field_name("size") or child).id:
            return "array extent"
        if current.type == "template_argument_list":
            return f"template argument of {_squash(current.parent.text.split(b'<')[0])}"
        if current.type == "call_expression" and _SHUFFLES.match(syntax.callee_name(current) or b""):
            return "shuffle width"
        if current.type == "for_statement" and child.id != (current.child_by_field_name("body") or child).id:
            return "loop bound"
        if current.type == "binary_expression" and syntax.operator(current) in (b"&", b"%"):
            return "lane arithmetic"
        child, current = current, current.parent
    return "used"


def _within(node: Node, outer: Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _squash(text: bytes) -> str:
    return " ".join(text.decode("utf-8", "replace").split())


_MAX_LISTED = 12   # a message lists this many uses, then says how many more


def listed(uses: list[str]) -> str:
    return "; ".join(uses[:_MAX_LISTED]) + (f"; and {len(uses) - _MAX_LISTED} more" if len(uses) > _MAX_LISTED else "")


def listed_uses(uses) -> str:
    """A header constant's uses ((file, line, what), project/warp_constants.py) as a message lists them."""
    return listed([f"{rel} line {line} {what}" for rel, line, what in uses])


def defined_value(name: Node) -> Node | None:
    """The value node of the definition whose name `name` is (a #define's, a constant's, an enumerator's)."""
    parent = name.parent
    if parent is None:
        return None
    if parent.type == "preproc_def":
        return syntax.define_value(parent)[1]
    return parent.child_by_field_name("value")
