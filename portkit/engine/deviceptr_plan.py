"""Which integer uses of a CUdeviceptr convert rewrites, keeping their meaning, and their edits.

CUdeviceptr is an integer, hipDeviceptr_t a void* on AMD (deviceptr.py). So `cuMemMap(m_base_address + m_size, ...)` (tiny-cuda-nn's gpu_memory.h) stops hip-clang after the
rename: arithmetic on a pointer to void. The rewrite keeps CUDA's arithmetic itself: each device
pointer inside the expression is read as the integer CUDA had, `(unsigned long long)P` (CUdeviceptr's
own type, so every operator, conversion and overload sees what nvcc saw), and the result goes back
to `(hipDeviceptr_t)(...)` only where the place it flows to is a device pointer:

    cuMemMap(P + N, ...)      -> hipMemMap((hipDeviceptr_t)((unsigned long long)P + N), ...)
    P += N;                   -> P = (hipDeviceptr_t)((unsigned long long)P + N);
    size_t d = P - Q;         -> size_t d = (unsigned long long)P - (unsigned long long)Q;
    if (P % 256 == 0)         -> if ((unsigned long long)P % 256 == 0)

An expression is rewritten only where that place is known: a declaration, assignment or return
typed CUdeviceptr (back to hipDeviceptr_t) or an arithmetic type (left an integer), a cast, a
condition or a comparison, an index, a statement of its own, or an argument of a driver API call
(whose parameter is a device pointer when the expression is one pointer plus or minus integers,
an integer when it is a difference of two: a wrong guess would not compile, never change a value).
Everything else (an argument of the project's own function, `auto`, `++`, a brace initialiser)
stays a PK014 finding. rules/PK014 and rewrite/deviceptr.py both read `plan`, so convert rewrites
exactly what the audit does not report. Nothing here reads a hipDeviceptr_t declaration: its
arithmetic is hand-written HIP, broken on AMD, which PK014 reports.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from .deviceptr import ARITHMETIC, COMPOUND, CUDA_NAMES, ORDER, integer_use, plain_name, uses
from .syntax import declarations, declared_name, unparen

_LOGIC = frozenset((b"&&", b"||"))
_UNARY = frozenset((b"-", b"+", b"~", b"!"))
# Places whose type nothing in the conversion changes (tree-sitter-cuda reads size_t, uint64_t ...
# as primitive types): CUDA's integer goes there as it did.
_ARITHMETIC_TYPES = ("primitive_type", "sized_type_specifier")
_KEEPS = ("condition_clause", "expression_statement", "subscript_argument_list")
INTEGER = b"(unsigned long long)"   # CUdeviceptr_v2's own type on every 64-bit CUDA platform
BACK = b"(hipDeviceptr_t)("


@dataclass(frozen=True)
class Plan:
    """A file's rewrites: the edits (start, end, text) on its bytes, and the start bytes of the
    device-pointer operands they convert (PK014 reports the others)."""

    edits: tuple[tuple[int, int, bytes], ...] = ()
    converted: frozenset[int] = frozenset()
    expressions: int = 0


def plan(root: Node, data: bytes, db, protected=None) -> Plan:
    """Every integer use of a CUDA device pointer under `root` that keeps its meaning rewritten (`db`:
    the mapping tables, which say what a driver API call is);
    `protected(offset)`: code convert leaves alone (AMD-only, ported, not compiled), whose
    declarations type nothing and whose expressions are not rewritten."""
    if not any(name in data for name in CUDA_NAMES):
        return Plan()
    keep = protected or (lambda offset: False)
    leaves: dict[int, Node] = {}
    for type_name in _type_names(root):
        if not keep(type_name.start_byte):
            for use in uses(type_name):
                leaves[use.start_byte] = use
    _drop_ambiguous_members(root, leaves)
    edits: list[tuple[int, int, bytes]] = []
    converted: set[int] = set()
    groups: dict[tuple[int, int], Node] = {}
    for leaf in leaves.values():
        found = integer_use(leaf)
        if found is not None and found[0].type != "update_expression":
            top = _group(leaf)
            groups.setdefault((top.start_byte, top.end_byte), top)
    count = 0
    for top in groups.values():
        rewritten = None if keep(top.start_byte) else _rewrite(top, leaves, data, db)
        if rewritten is not None:
            edits.extend(rewritten[0])
            converted.update(rewritten[1])
            count += 1
    return Plan(tuple(sorted(edits)), frozenset(converted), count)


def _type_names(root: Node):
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "type_identifier" and node.text in CUDA_NAMES:
            yield node
        stack.extend(node.children)


def _drop_ambiguous_members(root: Node, leaves: dict[int, Node]) -> None:
    """A member name some declaration in the file gives another type (`other.m_base` of another
    class) is read by its spelling alone: not certain enough to cast."""
    members = {leaf.child_by_field_name("field").text for leaf in leaves.values() if leaf.type == "field_expression"}
    if not members:
        return
    other = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "field_declaration":
            kind = node.child_by_field_name("type")
            for d in node.children_by_field_name("declarator"):
                name = declared_name(d)
                if name in members and (kind is None or kind.text not in CUDA_NAMES or plain_name(d) != name):
                    other.add(name)
        stack.extend(node.children)
    for start, leaf in list(leaves.items()):
        if leaf.type == "field_expression" and leaf.child_by_field_name("field").text in other:
            del leaves[start]


def _climbs(node: Node) -> bool:
    """Whether `node` computes from its operand as CUDA's integer (arithmetic, comparisons, logic)."""
    if node.type == "parenthesized_expression":
        return True
    op = node.child_by_field_name("operator")
    if op is None:
        return False
    if node.type == "binary_expression":
        return op.text in ARITHMETIC or op.text in ORDER or op.text in _LOGIC
    return node.type == "unary_expression" and op.text in _UNARY


def _group(leaf: Node) -> Node:
    """The whole expression CUDA computes as integers from `leaf`: the compound assignment it is
    the left of, or the largest arithmetic, comparison and logic around it."""
    parent = leaf.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is not None and parent.type == "assignment_expression" and parent.child_by_field_name("left") == leaf:
        return parent
    node = leaf
    while node.parent is not None and _climbs(node.parent):
        node = node.parent
    return node


def _rewrite(top: Node, leaves: dict[int, Node], data: bytes, db):
    """(edits, the operands converted) for one expression, or None where its place is not known."""
    if top.type == "assignment_expression":
        return _compound(top, leaves, data)
    back = _place(top, leaves, db)
    if back is None:
        return None
    operands = _operands(top, leaves)
    inserts: dict[int, list[bytes]] = {}
    if back:
        inserts.setdefault(top.start_byte, []).append(BACK)
    for operand in operands:
        inserts.setdefault(operand.start_byte, []).append(INTEGER)
    if back:
        inserts.setdefault(top.end_byte, []).append(b")")
    return [(at, at, b"".join(texts)) for at, texts in inserts.items()], {o.start_byte for o in operands}


def _operands(top: Node, leaves: dict[int, Node]) -> list[Node]:
    """The device pointers `top` computes with (those whose group it is)."""
    found, stack = [], [top]
    while stack:
        node = stack.pop()
        if node.start_byte in leaves and leaves[node.start_byte] == node and node != top:
            if _group(node) == top:
                found.append(node)
            continue
        if node == top or _climbs(node):
            stack.extend(node.named_children)
    return sorted(found, key=lambda n: n.start_byte)


def _compound(assign: Node, leaves: dict[int, Node], data: bytes):
    """`P op= N;` -> `P = (hipDeviceptr_t)((unsigned long long)P op (N));`: P read twice, so only a
    name or a member of a name, and only as a statement of its own (its value is CUDA's integer)."""
    left, right = assign.child_by_field_name("left"), assign.child_by_field_name("right")
    op = assign.child_by_field_name("operator")
    statement = assign.parent
    if right is None or op.text not in COMPOUND or not _plain(left) or statement is None \
            or statement.type != "expression_statement":
        return None
    text = data[left.start_byte:left.end_byte]
    opened = b"= " + BACK + INTEGER + text + b" " + op.text[:-1]
    simple = right.type in ("identifier", "number_literal", "field_expression", "call_expression",
                            "parenthesized_expression", "subscript_expression")
    edits = [(op.start_byte, op.end_byte, opened)]
    operands = _operands(right, leaves) if _climbs(right) else []
    if right.start_byte in leaves and leaves[right.start_byte] == right:
        operands = [right]
    inserts: dict[int, list[bytes]] = {}
    if not simple:
        inserts.setdefault(right.start_byte, []).append(b"(")
    for operand in operands:
        inserts.setdefault(operand.start_byte, []).append(INTEGER)
    inserts.setdefault(right.end_byte, []).append(b")" if simple else b"))")
    edits += [(at, at, b"".join(texts)) for at, texts in inserts.items()]
    return edits, {left.start_byte} | {o.start_byte for o in operands}


def _plain(node: Node | None) -> bool:
    """A name, `this->m` or `a.b.c`: reading it twice reads the same."""
    while node is not None and node.type == "field_expression":
        node = node.child_by_field_name("argument")
    return node is not None and (node.type == "identifier" or node.type == "this")


def _place(top: Node, leaves: dict[int, Node], db) -> bool | None:
    """Whether the value of `top` goes back to a device pointer (True), stays CUDA's integer
    (False), or goes where the type is not known here (None)."""
    op = top.child_by_field_name("operator") if top.type != "parenthesized_expression" else None
    if op is not None and (op.text in ORDER or op.text in _LOGIC or op.text == b"!"):
        return False   # a comparison: CUDA's bool, whatever reads it
    parent = top.parent
    if parent is None:
        return None
    kind = parent.type
    if kind in _KEEPS or kind == "cast_expression":
        return False
    if kind == "argument_list":
        return _argument(parent, top, leaves, db)
    if kind == "init_declarator" and parent.child_by_field_name("value") == top:
        return _typed(parent.parent, parent.child_by_field_name("declarator"))
    if kind == "assignment_expression" and parent.child_by_field_name("right") == top \
            and parent.child_by_field_name("operator").text == b"=":
        target = parent.child_by_field_name("left")
        if target.start_byte in leaves and leaves[target.start_byte] == target:
            return True
        return _declared_type(target)
    if kind == "return_statement":
        function = top
        while function is not None and function.type not in ("function_definition", "lambda_expression"):
            function = function.parent
        if function is None or function.type != "function_definition":
            return None
        return _typed(function, function.child_by_field_name("declarator"))
    return None


def _typed(declaration: Node | None, declarator: Node | None) -> bool | None:
    """A device pointer (True) or an arithmetic type (False) by its written type; else None."""
    if declaration is None or declarator is None:
        return None
    kind = declaration.child_by_field_name("type")
    if kind is None or declarator.type in ("pointer_declarator", "reference_declarator", "array_declarator"):
        return None
    if kind.type == "type_identifier" and kind.text in CUDA_NAMES:
        return True
    return False if kind.type in _ARITHMETIC_TYPES else None


def _declared_type(target: Node) -> bool | None:
    """The type of an assigned local or parameter, by its declaration; None where not found."""
    if target.type != "identifier":
        return None
    for declaration, _ in declarations(target):
        for d in declaration.children_by_field_name("declarator"):
            if declared_name(d) == target.text:
                return _typed(declaration, d.child_by_field_name("declarator") if d.type == "init_declarator" else d)
    return None


def _argument(arguments: Node, top: Node, leaves: dict[int, Node], db) -> bool | None:
    """A named cast's operand, or an argument of a driver API call: a device pointer when `top` is one
    pointer plus or minus integers, an integer when it is a difference of two; None for any other call."""
    call = arguments.parent
    function = call.child_by_field_name("function") if call is not None and call.type == "call_expression" else None
    if function is not None and function.type == "template_function":
        return _named_cast(function)
    if function is None or function.type != "identifier" or not driver_function(db, function.text):
        return None
    pointers = _pointers(top, leaves)
    return None if pointers not in (0, 1) else pointers == 1


def _named_cast(function: Node) -> bool | None:
    """`reinterpret_cast<T>(E)` reads CUDA's integer as it did; `static_cast<T>(E)` where T is arithmetic."""
    name = function.child_by_field_name("name")
    listed = function.child_by_field_name("arguments")
    kind = listed.named_children[0] if listed is not None and listed.named_child_count == 1 else None
    if name is None or kind is None:
        return None
    if name.text == b"reinterpret_cast":
        return False
    written = kind.child_by_field_name("type") if kind.type == "type_descriptor" else None
    if name.text == b"static_cast" and written is not None and written.type in _ARITHMETIC_TYPES \
            and kind.child_by_field_name("declarator") is None:
        return False
    return None


def driver_function(db, name: bytes) -> bool:
    """A function of the driver API the tables convert, whose arguments convert as they are: not a
    template, not variadic, so a wrong guess of a parameter's type does not compile."""
    mapping = db.names_by_bytes.get(name) if name.startswith(b"cu") else None
    return bool(mapping is not None and mapping.family == "driver" and mapping.hip and mapping.kind == "function"
                and not mapping.rewrites_args)


def _pointers(node: Node, leaves: dict[int, Node]) -> int | None:
    """How many device pointers `node` adds up (P + N: 1, P - Q: 0); None when it does more than add
    and subtract them (an operand it does not know stays hipDeviceptr_t, which no arithmetic takes)."""
    node = unparen(node)
    if leaves.get(node.start_byte) == node:
        return 1
    if node.type != "binary_expression":
        return 0
    op = node.child_by_field_name("operator").text
    left = _pointers(node.child_by_field_name("left"), leaves)
    right = _pointers(node.child_by_field_name("right"), leaves)
    if left is None or right is None:
        return None
    if op == b"+":
        return left + right
    if op == b"-":
        return left - right
    return 0 if left == right == 0 else None


def of_file(ctx, view) -> Plan:
    """The file's plan, made once per scan (ScanContext.derived); none in a macro body re-parsed."""
    if view.base or ctx.root is None:
        return Plan()
    return ctx.derived(_file_plan)


def _file_plan(ctx) -> Plan:
    regions, options = ctx.regions, ctx.options

    def left(offset: int) -> bool:   # what convert leaves as it is: AMD-only, ported, not compiled
        return regions.protected(offset) or bool(options.active_only and regions.inactive
                                                 and regions.is_inactive(offset))
    return plan(ctx.root, ctx.source.parse_bytes, ctx.db, left)
