"""`__ffs(x)` / `__ffsll(x)` whose argument hip-clang finds ambiguous: a cast where the type is known.

CUDA declares one `int __ffs(int)` and one `int __ffsll(long long)`; HIP declares two of each
(`int`/`unsigned int`, `long long`/`unsigned long long`, every release up to 6.2 and after). An
argument of another integer type converts equally well to both, so hip-clang rejects the call
("call to '__ffsll' is ambiguous"): `__ffsll` of a uint64_t, size_t, long or int, `__ffs` of a
long or a 64-bit integer. Where the source alone says the argument's type (a parameter or local
declared in the function, a cast, or arithmetic, bitwise and shift expressions of those and
literals: strictness.expression_type) and it is ambiguous, the argument is cast to the unsigned
overload's type, which keeps its bits, which is all find-first-set reads:
`__ffsll((unsigned long long)(x))`. Where the type is unknown,
`__ffsll` gets a PK004 naming that fix (a 64-bit value is usually a uint64_t or size_t); `__ffs`
gets nothing, its argument being almost always int or unsigned.
"""

from __future__ import annotations

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..core.edits import EditKind
from . import codes, signatures, strictness
from .arguments import TextArgument, call_arguments

# The CUDA name -> (the types HIP has an overload for, or that promote to one; the cast's type).
FIXES = {
    b"__ffs": (frozenset({"int", "unsigned int", "char", "signed char", "unsigned char", "short", "unsigned short",
                          "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "bool"}),
               "unsigned int"),
    b"__ffsll": (frozenset({"long long", "unsigned long long"}), "unsigned long long"),
}


def check(ctx: ScanContext, view: View, name: Node) -> None:
    """The call `name(arg)`: cast an argument of an ambiguous type, or say that it may need one."""
    exact, cast = FIXES[name.text]
    args = call_arguments(name)
    if args is None or len(args) != 1:
        return
    arg = args[0]
    kind = _type(arg)
    if kind in exact:
        return
    if kind in strictness.INTEGER_TYPES:   # two insertions: the names inside the argument are edits of their own
        what = f"{name.text.decode()} argument"
        ctx.edit(view.start(arg), view.start(arg), b"(" + cast.encode() + b")(", what=what, kind=EditKind.ARGUMENT)
        ctx.edit(view.end(arg), view.end(arg), b")", what=what, kind=EditKind.ARGUMENT)
        return
    if name.text == b"__ffsll":
        ctx.flag(codes.PARTIAL_CONVERSION, view.start(name), view.end(name),
                 "__ffsll: HIP declares __ffsll(long long) and __ffsll(unsigned long long), so hip-clang "
                 "rejects an argument of another type (uint64_t, size_t, long, int) as ambiguous; where it is "
                 "not a long long, cast it: __ffsll((unsigned long long)(x))", "__ffsll")


def _type(arg: Node) -> str | None:
    """The argument's type where the source alone says it, else None (an argument the parser
    could not split out, arguments.TextArgument, says nothing)."""
    if isinstance(arg, TextArgument):
        return None
    if arg.type == "cast_expression":
        kind = arg.child_by_field_name("type")
        return signatures.canonical(kind.text.decode("utf-8", "replace")) if kind is not None else None
    if arg.type == "number_literal":   # the suffix decides: 1ull, 1l, 1u
        suffix = arg.text.lower().lstrip(b"0123456789abcdefx.'")
        return {b"ull": "unsigned long long", b"llu": "unsigned long long", b"ll": "long long",
                b"ul": "unsigned long", b"lu": "unsigned long", b"l": "long", b"u": "unsigned int"}.get(suffix, "int")
    if arg.type == "parenthesized_expression" and arg.named_child_count == 1:
        return _type(arg.named_children[0])
    return strictness.expression_type(arg)
