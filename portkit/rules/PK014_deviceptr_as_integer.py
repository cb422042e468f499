"""A CUdeviceptr used as an integer, which hipDeviceptr_t (a void*) cannot be.

What it finds:
    Integer arithmetic on a value whose declared type is the driver API's `CUdeviceptr`
    (`CUdeviceptr_v1`, `CUdeviceptr_v2`): `base + offset`, `ptr - base`, `ptr % align`, bit
    operations, `+=`/`-=`, `++`, and comparisons with a non-zero integer. The type is read from the
    source: a variable, parameter or class member declared `CUdeviceptr name` in the file, or a
    `(CUdeviceptr)` cast; the same for `hipDeviceptr_t` (a converted file, as verify scans it, or
    hand-written HIP), whose message says only the HIP half. Passing the value to a driver call, `= 0`/`{}`, `if (ptr)`, comparing two
    of them and casting to a pointer type are the same on both platforms and are not reported.

Why it matters on AMD GPUs:
    CUDA declares `typedef unsigned long long CUdeviceptr_v2; typedef CUdeviceptr_v2 CUdeviceptr;`:
    an integer. convert writes `hipDeviceptr_t`, which HIP declares `void*`, so `base + offset`
    becomes arithmetic on a pointer to void and hip-clang rejects it ("arithmetic on a pointer to
    void"); `%` and bit operations on a pointer are errors too.

Example:
    CUdeviceptr m_base_address = {};
    cuMemMap(m_base_address + m_size, n_bytes, 0, handle, 0);

Instead:
    Do the arithmetic in bytes or in integers and convert back, which means the same on both:
    `(CUdeviceptr)((char*)m_base_address + m_size)` (HIP: `(hipDeviceptr_t)((char*)m_base_address
    + m_size)`), or `(uintptr_t)ptr % align` for alignment.

Effort:
    Minutes per expression.
"""

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.rule import define
from ..engine.syntax import declarations, declared_name, unparen

RULE = define(__doc__, code="PK014", name="deviceptr-as-integer", severity="high", category="language",
              breaks_build=True)

# hipDeviceptr_t too: verify explains a compile error by scanning the converted file, where the
# declaration reads hipDeviceptr_t, and arithmetic on it fails in hand-written HIP alike.
NAMES = (b"CUdeviceptr", b"CUdeviceptr_v1", b"CUdeviceptr_v2", b"hipDeviceptr_t")

_ARITHMETIC = frozenset((b"+", b"-", b"*", b"/", b"%", b"&", b"|", b"^", b"<<", b">>"))
_COMPOUND = frozenset((b"+=", b"-=", b"*=", b"/=", b"%=", b"&=", b"|=", b"^=", b"<<=", b">>="))
_ORDER = frozenset((b"<", b">", b"<=", b">=", b"==", b"!="))
_DECLARATIONS = ("declaration", "field_declaration", "parameter_declaration")
# Where a declared name can be used: a local's block, a parameter's function, a member's or a
# global's whole file (members are used in out-of-class method definitions too).
_SCOPES = ("compound_statement", "function_definition")

MESSAGE = ("CUdeviceptr is an integer in CUDA, hipDeviceptr_t is void* in HIP: integer arithmetic on it "
           "does not compile: cast through uintptr_t / char*")
HIP_MESSAGE = "hipDeviceptr_t is void* in HIP: integer arithmetic on it does not compile: cast through uintptr_t / char*"


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    """`node` names the type: a declaration's (its plain variables' uses) or a cast's (the cast)."""
    parent = node.parent
    if node.type != "type_identifier" or parent is None:
        return
    if parent.type == "type_descriptor" and parent.parent is not None and parent.parent.type == "cast_expression":
        _check_use(ctx, view, parent.parent, b"(" + node.text + b")", node.text)
        return
    if parent.type not in _DECLARATIONS or parent.child_by_field_name("type") != node:
        return
    names = {n for d in parent.children_by_field_name("declarator") if (n := _plain_name(d))}
    if not names:
        return
    after = 0 if parent.type == "field_declaration" else parent.end_byte
    for use in _uses(_scope(parent), names, after):
        if use.type == "field_identifier" or _declared_by(use, parent):
            _check_use(ctx, view, use, use.text, node.text)


def _plain_name(declarator: Node) -> bytes:
    """The name a declarator gives the type itself (`CUdeviceptr p = 0`), none for `CUdeviceptr* p`
    or an array: a pointer to CUdeviceptr or an element access is arithmetic that ports as it is."""
    if declarator.type == "init_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is not None and declarator.type in ("identifier", "field_identifier"):
        return declarator.text
    return b""


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
        if any(_plain_name(d) == name.text or declared_name(d) == name.text
               for d in candidate.children_by_field_name("declarator")):
            return candidate == declaration
    return True


def _uses(scope: Node | None, names: set[bytes], after: int):
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


def _check_use(ctx: ScanContext, view: View, operand: Node, what: bytes, type_name: bytes) -> None:
    """Flag `operand` where its expression treats it as an integer."""
    if operand.type == "field_identifier":
        if operand.parent is None or operand.parent.type != "field_expression":
            return   # the member's own declaration
        operand = operand.parent
    while operand.parent is not None and operand.parent.type == "parenthesized_expression":
        operand = operand.parent
    parent = operand.parent
    op = _integer_use(parent, operand) if parent is not None else None
    if op is None:
        return
    ctx.flag(RULE, view.start(parent), view.end(parent),
             f"{what.decode(errors='replace')} {op.decode()}: {HIP_MESSAGE if type_name == b'hipDeviceptr_t' else MESSAGE}",
             subject=f"{type_name.decode()} {op.decode()}")


def _integer_use(parent: Node, operand: Node) -> bytes | None:
    """The operator by which `parent` uses `operand` as an integer, or None."""
    if parent.type == "update_expression":
        return parent.child_by_field_name("operator").text
    op_node = parent.child_by_field_name("operator")
    if op_node is None:
        return None
    op = op_node.text
    if parent.type == "binary_expression":
        if op in _ARITHMETIC:
            return op
        other = parent.child_by_field_name("right" if parent.child_by_field_name("left") == operand else "left")
        other = unparen(other) if other is not None else None
        if op in _ORDER and other is not None and other.type == "number_literal" and other.text not in (b"0", b"0ULL", b"0ull"):
            return op
        return None
    if parent.type == "assignment_expression" and op in _COMPOUND and parent.child_by_field_name("left") == operand:
        return op
    return None
