"""A dependent type used as a temporary without `typename`, which nvcc accepts and clang rejects.

What it finds:
    `P::Name(args).member(...)` inside a template whose parameter `P` is a type, where `Name` is
    a type: the file declares it as one (`using Name = ...`, `typedef ... Name;`, `struct Name`),
    or the member called is one of CUB's block and warp collectives (`Load`, `Store`, `Sum`,
    `Reduce`, `InclusiveScan`, `BlockedToStriped`, ...), whose idiom this is:
    `Ktraits::BlockLoadT(smem).Load(...)`, `Ktraits::BlockReduceT(smem).Sum(x)`.

Why it matters on AMD GPUs:
    In a template, a name that depends on a type parameter is taken for a value unless `typename`
    says it is a type. nvcc's front end (EDG) forgives the missing keyword when the instantiation
    shows a type; hip-clang does not: "missing 'typename' prior to dependent type name
    'Traits<...>::BlockLoadT'", once per instantiation, and the unit does not compile. Kernels
    that keep their CUB collectives in a traits struct (causal-conv1d, mamba) write it at every
    load, store and reduction; their AMD ports added `typename` at each one.

Example:
    template <typename Ktraits> __global__ void kernel(const float* x) {
        __shared__ typename Ktraits::BlockLoadT::TempStorage smem;
        float v[4];
        Ktraits::BlockLoadT(smem).Load(x, v);
    }

Instead:
    Write `typename` before the dependent type: `typename Ktraits::BlockLoadT(smem).Load(x, v);`
    (nvcc accepts it too, so the NVIDIA build is unchanged).

Effort:
    Seconds per site: one keyword, the same edit at every collective call.
"""

import re

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.rule import define

RULE = define(__doc__, code="PK311", name="dependent-type-without-typename", severity="high", category="language",
              breaks_build=True, gpu_only=True)
NODES = ("field_expression",)
GATES = {"field_expression": (b"::",)}
_QUALIFIED_CALL = re.compile(rb"\b[A-Za-z_]\w*\s*::\s*[A-Za-z_]\w*\s*\(")
_MEMBER_OF_CALL = re.compile(rb"\)\s*(?:\.|->)")


def _may_find(text) -> bool:
    """check()'s shape (engine/keywords.FileText): `T::name(...)` with a member read off the call, T
    a template's type parameter."""
    data = text.data
    return b"template" in data and b"::" in data and _QUALIFIED_CALL.search(data) is not None \
        and _MEMBER_OF_CALL.search(data) is not None


KEYWORDS = (_may_find,)   # the scope must be a template's type parameter

# The members CUB's collectives are called by: `Collective(temp_storage).Member(...)` is CUB's
# documented idiom, so a dependent name called this way is the collective's type.
_CUB_MEMBERS = re.compile(rb"(Load|Store|Sum|Reduce|Inclusive\w*|Exclusive\w*|\w*To(Blocked|Striped)\w*|"
                          rb"Sort\w*|Flag(Heads|Tails)\w*|Histo\w*|Composite|RunLengthDecode|Scatter\w*)\Z")
_TYPE_DECL = re.compile(rb"\busing\s+(\w+)\s*=|\btypedef\b[^;{}]*?\b(\w+)\s*;|\b(?:struct|class)\s+(\w+)\s*[:{<]")


def check(ctx: ScanContext, view: View, node: Node) -> None:
    inner = node.child_by_field_name("argument")
    member = node.child_by_field_name("field")
    if inner is None or member is None or inner.type != "call_expression":
        return
    callee = inner.child_by_field_name("function")
    if callee is None or callee.type != "qualified_identifier":
        return
    scope, name = callee.child_by_field_name("scope"), callee.child_by_field_name("name")
    if scope is None or name is None or name.type != "identifier" or scope.type != "namespace_identifier":
        return
    if scope.text not in _type_parameters(node) or _typename_before(view, callee):
        return
    if name.text not in ctx.derived(_declared_types) and not _CUB_MEMBERS.match(member.text):
        return
    spelled = callee.text.decode()
    ctx.flag(RULE, view.start(callee), view.end(callee),
             f"'{spelled}' names a type that depends on template parameter '{scope.text.decode()}': hip-clang "
             f"rejects it without typename (missing 'typename' prior to dependent type name), nvcc forgives it; "
             f"write 'typename {spelled}(...)'", subject=spelled)


def _typename_before(view: View, callee: Node) -> bool:
    """`typename` already written: tree-sitter reads `typename T::X(s).f()` as a broken declaration
    (PK005), so the keyword is looked for in the bytes, not the tree."""
    return view.data[max(0, callee.start_byte - 24):callee.start_byte].rstrip().endswith(b"typename")


def _type_parameters(node: Node) -> set[bytes]:
    """The type parameters of every template enclosing `node` (a member of a class template too)."""
    names: set[bytes] = set()
    current = node.parent
    while current is not None:
        if current.type == "template_declaration":
            params = current.child_by_field_name("parameters")
            for param in params.named_children if params is not None else ():
                if param.type in ("type_parameter_declaration", "optional_type_parameter_declaration",
                                  "variadic_type_parameter_declaration"):
                    names.update(c.text for c in param.named_children if c.type == "type_identifier")
        current = current.parent
    return names


def _declared_types(ctx: ScanContext) -> frozenset[bytes]:
    """The names the file declares as types (aliases, typedefs, structs and classes)."""
    return frozenset(next(g for g in m.groups() if g) for m in _TYPE_DECL.finditer(ctx.source.data))
