"""A CUdeviceptr used as an integer: its uses, as PK014 reports them and deviceptr_plan.py rewrites them.

CUDA declares `typedef unsigned long long CUdeviceptr` (an integer); HIP declares `hipDeviceptr_t`
`void*` on AMD (and `CUdeviceptr` itself through its NVIDIA backend, nvidia_hip_runtime_api.h).
The type is read from the source: a variable, parameter or member declared `CUdeviceptr name` in the
file, or a `(CUdeviceptr)` cast. Both the rule and the rewrite read the uses from here, so that they
agree on what a use is.
"""

from __future__ import annotations

from tree_sitter import Node

from .syntax import declarations, declared_name, unparen

CUDA_NAMES = frozenset((b"CUdeviceptr", b"CUdeviceptr_v1", b"CUdeviceptr_v2"))
NAMES = CUDA_NAMES | {b"hipDeviceptr_t"}   # PK014 reads a converted file's (verify scans it) too

ARITHMETIC = frozenset((b"+", b"-", b"*", b"/", b"%", b"&", b"|", b"^", b"<<", b">>"))
COMPOUND = frozenset((b"+=", b"-=", b"*=", b"/=", b"%=", b"&=", b"|=", b"^=", b"<<=", b">>="))
ORDER = frozenset((b"<", b">", b"<=", b">=", b"==", b"!="))
_DECLARATIONS = ("declaration", "field_declaration", "parameter_declaration")
# Where a declared name can be used: a local's block, a parameter's function, a member's or a
# global's whole file (members are used in out-of-class method definitions too).
_SCOPES = ("compound_statement", "function_definition")


def plain_name(declarator: Node) -> bytes:
    """The name a declarator gives the type itself (`CUdeviceptr p = 0`), none for `CUdeviceptr* p`
    or an array: a pointer to CUdeviceptr or an element access is arithmetic that ports as it is."""
    if declarator.type == "init_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is not None and declarator.type in ("identifier", "field_identifier"):
        return declarator.text
    return b""


def uses(type_name: Node) -> list[Node]:
    """The operands typed by `type_name`: the cast it is part of, or the uses of the plain names its
    declaration declares (a member's as its field_expression where it has one)."""
    parent = type_name.parent
    if type_name.type != "type_identifier" or parent is None:
        return []
    if parent.type == "type_descriptor" and parent.parent is not None and parent.parent.type == "cast_expression":
        return [parent.parent]
    if parent.type not in _DECLARATIONS or parent.child_by_field_name("type") != type_name:
        return []
    names = {n for d in parent.children_by_field_name("declarator") if (n := plain_name(d))}
    if not names:
        return []
    after = 0 if parent.type == "field_declaration" else parent.end_byte
    found = []
    for use in _named(_scope(parent), names, after):
        if use.type == "field_identifier":
            if use.parent is None or use.parent.type != "field_expression":
                continue   # the member's own declaration
            found.append(use.parent)
        elif _declared_by(use, parent):
            found.append(use)
    return found


def integer_use(operand: Node) -> tuple[Node, bytes] | None:
    """(the expression, its operator) where it uses `operand` as an integer, else None: arithmetic,
    `+=` and its kin, `++`, and comparisons with a non-zero literal."""
    while operand.parent is not None and operand.parent.type == "parenthesized_expression":
        operand = operand.parent
    parent = operand.parent
    if parent is None:
        return None
    if parent.type == "update_expression":
        return parent, parent.child_by_field_name("operator").text
    op_node = parent.child_by_field_name("operator")
    if op_node is None:
        return None
    op = op_node.text
    if parent.type == "binary_expression":
        if op in ARITHMETIC:
            return parent, op
        other = parent.child_by_field_name("right" if parent.child_by_field_name("left") == operand else "left")
        other = unparen(other) if other is not None else None
        if op in ORDER and other is not None and other.type == "number_literal" and other.text not in (b"0", b"0ULL", b"0ull"):
            return parent, op
        return None
    if parent.type == "assignment_expression" and op in COMPOUND and parent.child_by_field_name("left") == operand:
        return parent, op
    return None


def _scope(declaration: Node) -> Node:
    if declaration.type == "parameter_declaration":
        function = declaration
        while function is not None and function.type != "function_definition":
            function = function.parent
        return function.child_by_field_name("body") if function is not None else declaration
    if declaration.type == "declaration" and declaration.parent is not None \
            and declaration.parent.type in _SCOPES:
        return declaration.parent
    node = declaration
    while node.parent is not None:
        node = node.parent
    return node


def _declared_by(name: Node, declaration: Node) -> bool:
    """Whether `declaration` is the nearest one of `name`: a local or a parameter spelled the same
    in between (`for (int pool_addr = 0; ...)`) is another variable."""
    for candidate, _ in declarations(name):
        if any(plain_name(d) == name.text or declared_name(d) == name.text
               for d in candidate.children_by_field_name("declarator")):
            return candidate == declaration
    return True


def _named(scope: Node | None, names: set[bytes], after: int):
    """Identifiers and member names in `scope` spelled as one of `names` from `after` on (a member's:
    the whole file, a class's methods often come before its members)."""
    stack = [scope] if scope is not None else []
    while stack:
        node = stack.pop()
        if node.type in ("identifier", "field_identifier"):
            if node.text in names and node.start_byte >= after:
                yield node
            continue
        stack.extend(reversed(node.children))
