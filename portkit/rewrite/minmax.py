"""`min(a, b)` / `max(a, b)` of mixed types in device code: the argument cast as CUDA converts it.

CUDA declares min and max for mixed signedness (`unsigned int min(int, unsigned int)`, the same for
long and long long: the signed argument converts to the unsigned type, as the usual arithmetic
conversions do) and for float with double (double). hip-clang's headers (clang's
__clang_hip_math.h, every release to 19) have a template `T min(T, T)` and int, float and double
overloads only, and refuse mixed-sign overloads on purpose (llvm-project #82956), so `min(C - 1,
i + u * blockDim.x)` (llm.c's softmax), `max(n, blockDim.x)` or `min(x, 0.5)` with a float x is
ambiguous there, or picks float. Where both types are known from the source alone
(strictness.expression_type: locals, parameters, casts, literals, the thread-index builtins) and
the call is in a `__global__` or `__device__` (not `__host__`) function, the argument CUDA
converts is cast to the type CUDA converts it to: `min((unsigned int)(C - 1), i + u * blockDim.x)`,
which is CUDA's comparison, and the template's exact match on HIP. An integer literal gets the
`u` suffix instead (`max(n, 1u)`). `threadIdx.x` and the other index builtins are cast even beside
an unsigned int: HIP's are proxy objects, which no template deduces as unsigned int. Host code is left: HIP's host min is `int min(int, int)` alone,
so no cast there gives CUDA's unsigned comparison; `std::min` is left (it is ill-formed on mixed
types everywhere).
"""

from __future__ import annotations

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.keywords import DEVICE_CODE
from ..engine.passes import Pass
from ..core.edits import EditKind
from ..engine import syntax
from . import ffs, strictness

NAMES = frozenset({b"min", b"max"})
# The unsigned partner of each signed type, at the width CUDA's overloads have.
_UNSIGNED = {"int": "unsigned int", "long": "unsigned long", "long long": "unsigned long long"}
_SUFFIX = {"unsigned int": b"u", "unsigned long": b"ul", "unsigned long long": b"ull"}
# Narrower types promote to int first (as the call's conversion does).
_PROMOTED = {"char": "int", "signed char": "int", "unsigned char": "int", "short": "int", "unsigned short": "int",
             "bool": "int", "int8_t": "int", "uint8_t": "int", "int16_t": "int", "uint16_t": "int",
             "int32_t": "int", "uint32_t": "unsigned int", "int64_t": "long", "uint64_t": "unsigned long",
             "size_t": "unsigned long", "ptrdiff_t": "long", "ssize_t": "long"}


def check(ctx: ScanContext, view: View, name: Node) -> None:
    """The call `name(a, b)`: cast the argument CUDA's overload converts, where both types are known."""
    call = name.parent
    if call is None or call.type != "call_expression" or call.child_by_field_name("function") != name:
        return
    arguments = call.child_by_field_name("arguments")
    args = [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []
    if len(args) != 2 or not _device_only(call):
        return
    types = [_type(a) for a in args]
    if None in types:
        return
    target = types[0] if types[0] == types[1] else _cuda_overload(types[0], types[1])
    if target is None:
        return
    for arg, kind in zip(args, types):
        if kind != target or _index_builtin(arg):
            _cast(ctx, view, arg, target, f"{name.text.decode()} argument")


def _cast(ctx: ScanContext, view: View, arg: Node, target: str, what: str) -> None:
    """A plain decimal literal gets the suffix (1 -> 1u); anything else `(T)(` before and `)` after,
    two insertions, so that what other passes write inside it stays theirs (`--builtins hip`
    rewrites the `threadIdx.x` this casts: one edit replacing the whole argument overlapped it)."""
    text = view.text(arg)
    if arg.type == "number_literal" and target in _SUFFIX and text.isdigit():
        ctx.edit(view.start(arg), view.end(arg), text + _SUFFIX[target], what=what, kind=EditKind.ARGUMENT)
        return
    ctx.edit(view.start(arg), view.start(arg), b"(" + target.encode() + b")(", what=what, kind=EditKind.ARGUMENT)
    ctx.edit(view.end(arg), view.end(arg), b")", what=what, kind=EditKind.ARGUMENT)


def _index_builtin(arg: Node) -> bool:
    """`threadIdx.x` and its kin: unsigned int in CUDA, a proxy object converting to it in HIP, so
    not even `min(threadIdx.x, 31u)` deduces the template's T there."""
    while arg.type == "parenthesized_expression" and arg.named_child_count == 1:
        arg = arg.named_children[0]
    return arg.type == "field_expression" and strictness.expression_type(arg) == "unsigned int"


def _type(arg: Node) -> str | None:
    kind = ffs._type(arg)   # casts, suffixed literals, parentheses, then strictness.expression_type
    return _PROMOTED.get(kind, kind) if kind is not None else None


def _cuda_overload(a: str, b: str) -> str | None:
    """The parameter type of the CUDA overload a mixed call resolves to, where it is one of CUDA's
    mixed overloads (same width, other signedness; float with double), else None."""
    if {a, b} == {"float", "double"}:
        return "double"
    for signed, unsigned in _UNSIGNED.items():
        if {a, b} == {signed, unsigned}:
            return unsigned
    return None


def _device_only(node: Node) -> bool:
    """Whether `node` is in a function compiled for the device only (`__global__`, or `__device__`
    without `__host__`); a lambda inside one counts as its enclosing function."""
    function = syntax.enclosing(node, "function_definition")
    quals = syntax.function_qualifiers(function) if function is not None else set()
    return bool(quals & {b"__global__", b"__device__"}) and b"__host__" not in quals


# after the other name passes, as the walk always called them on a name
PASSES = (Pass("minmax", "walk", check, capture="name", names=lambda ctx: (NAMES,), after=("builtins",),
               keywords=DEVICE_CODE),)   # device functions only
