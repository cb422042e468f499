"""Call-argument rewrites the mapping tables ask for (hipify-clang's FuncArgCasts, as data).

A converted call may need its arguments changed as well as its name: a device symbol wrapped
in HIP_SYMBOL(), a kernel cast to the `const void*` HIP's C signature takes, an argument HIP
does not take dropped, a constant inserted or replaced, CUDA default arguments that HIP's
declaration lacks written out, arguments moved or copied (the ROCm libraries' orders). The
fields and their exact output are in docs/mapping-format.md ("Call arguments"). Where the call
cannot be seen (the name is not called here, or a macro may hide commas) nothing is guessed:
a PK004 finding says which rewrite is still to do.
"""

from __future__ import annotations

import re

from typing import NamedTuple

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..core.edits import EditKind
from ..core.tables.mappings import Mapping
from . import codes


class TextArgument(NamedTuple):
    """One argument of a list the parser could not split, by its bytes: what the rewrites read
    of an argument node (its span and text), so `__shfl_sync(m, v##_x, 1)` still drops its mask."""

    start_byte: int
    end_byte: int
    text: bytes
    type: str = "argument"


def call_arguments(name: Node) -> list | None:
    """The arguments when `name` is the callee of a call expression (`f(...)`, `::f(...)`): nodes,
    or, where the parser's error recovery cut the list up (`f(&t##_start)` in a macro body, where
    `##` is an ERROR node that would count as a second argument), spans between its top-level commas."""
    arguments = argument_list(name)
    if arguments is None:
        return None
    if garbled(arguments):
        return split_by_commas(arguments)
    return [a for a in arguments.named_children if a.type != "comment"]


def argument_list(name: Node) -> Node | None:
    """The argument_list of the call whose callee is `name`, else None."""
    callee, call = name, name.parent
    while call is not None and call.type == "qualified_identifier":
        callee, call = call, call.parent
    if call is None or call.type != "call_expression":
        return None
    function = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if function is None or function.id != callee.id or arguments is None:
        return None
    return arguments if arguments.type == "argument_list" else None


def garbled(arguments: Node) -> bool:
    """An argument list the parser's error recovery cut up (token pasting, a stray `#`). A list
    with no error anywhere under it (has_error, kept by tree-sitter) has no such child."""
    return arguments.has_error and any(c.type == "ERROR" or c.is_missing for c in arguments.children)


def split_by_commas(arguments: Node) -> list[TextArgument] | None:
    """The arguments between the list's top-level commas (strings, character literals and nested
    brackets skipped), each trimmed of blanks; None when the list does not close."""
    text, base = arguments.text, arguments.start_byte
    if not (text.startswith(b"(") and text.endswith(b")")):
        return None
    spans, depth, start, i, quote = [], 0, 1, 1, 0
    while i < len(text) - 1:
        c = text[i]
        if quote:
            if c == 0x5C:
                i += 1
            elif c == quote:
                quote = 0
        elif c in (0x22, 0x27):
            quote = c
        elif c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
        elif c == 0x2C and depth == 0:
            spans.append((start, i))
            start = i + 1
        i += 1
    spans.append((start, len(text) - 1))
    out = []
    for a, b in spans:
        while a < b and text[a] in b" \t\r\n\\":
            a += 1
        while b > a and text[b - 1] in b" \t\r\n\\":
            b -= 1
        out.append(TextArgument(base + a, base + b, text[a:b]))
    return [] if len(out) == 1 and not out[0].text else out


def applies(mapping: Mapping, name: str, ctx: ScanContext) -> bool:
    """Whether `mapping`'s argument rewrites go with the name written (`args_for` hip or roc)."""
    if not mapping.rewrites_args:
        return False
    wrote_roc = name == mapping.roc and name != mapping.hip   # a roc name that is also the hip one is hip's
    return wrote_roc == (mapping.args_for == "roc")


def _defaults(ctx: ScanContext, mapping: Mapping) -> tuple[tuple[int, str], ...]:
    if mapping.defaults_in_hip is not None and ctx.target >= mapping.defaults_in_hip:
        return ()   # the target's HIP declares these defaults itself
    return mapping.default_args


def needed(ctx: ScanContext, mapping: Mapping) -> int:
    """The fewest arguments a call must show for every rewrite to have its place (once per
    record and target: a generated file calls the same function 60,000 times)."""
    key = (id(mapping), ctx.target)
    hit = _NEEDED.get(key)
    if hit is not None and hit[0] is mapping:
        return hit[1]
    if len(_NEEDED) >= 4096:
        _NEEDED.clear()
    value = _needed(ctx, mapping)
    _NEEDED[key] = (mapping, value)
    return value


_NEEDED: dict[tuple, tuple[Mapping, int]] = {}


def _needed(ctx: ScanContext, mapping: Mapping) -> int:
    counts = [mapping.symbol_arg, *mapping.drop_args, *(i for i, _ in mapping.cast_args),
              *(i for i, _ in mapping.replace_args), *(i - 1 for i, _ in mapping.insert_args),
              *(f + c - 1 for f, _, c in mapping.move_args), *(f for f, _ in mapping.copy_args)]
    defaults = _defaults(ctx, mapping)
    if defaults:
        counts.append(defaults[0][0] - 1)
    return max(1, *counts)   # a call with no arguments has nowhere to put any


def describe(ctx: ScanContext, mapping: Mapping) -> str:
    """The rewrites in words, for a finding that could not apply them."""
    parts = [f"wrap argument {mapping.symbol_arg} in HIP_SYMBOL()"] if mapping.symbol_arg else []
    parts += [f"cast argument {i} with {cast_kind(t)}<{t}>" for i, t in mapping.cast_args]
    parts += [f"delete argument {i}" for i in mapping.drop_args]
    parts += [f"insert {t} before argument {i}" for i, t in mapping.insert_args]
    parts += [f"replace argument {i} with {t}" for i, t in mapping.replace_args]
    parts += [f"move argument{'s' if c > 1 else ''} {f}{f'-{f + c - 1}' if c > 1 else ''} before argument {b}"
              for f, b, c in mapping.move_args]
    parts += [f"copy argument {f} before argument {b}" for f, b in mapping.copy_args]
    parts += [f"pass {t} as argument {i} (a CUDA default HIP lacks)" for i, t in _defaults(ctx, mapping)]
    return "; ".join(parts)


def fix_call(ctx: ScanContext, view: View, mapping: Mapping, name: Node, hip: str) -> None:
    """Apply `mapping`'s argument rewrites to the call `name` is the callee of, or report them."""
    args = call_arguments(name)
    need = needed(ctx, mapping)
    if args is None or len(args) < need:
        seen = ("it is not called here, so its arguments are not in view" if args is None else
                f"this call shows {len(args)} argument{'s' * (len(args) != 1)} where {need} are expected "
                "(a macro may expand to several)")
        ctx.flag(codes.PARTIAL_CONVERSION, view.start(name), view.end(name),
                 f"{mapping.cuda} -> {hip}: {seen}; rewrite the arguments by hand: {describe(ctx, mapping)}",
                 mapping.cuda)
        return
    if not ctx.edits_read:   # the rest is edits, which an audit never reads (a generated line's 61,000 masks)
        return
    if mapping.symbol_arg:
        arg = args[mapping.symbol_arg - 1]
        if not view.text(arg).startswith(b"HIP_SYMBOL"):
            _wrap(ctx, view, arg, b"HIP_SYMBOL(", "HIP_SYMBOL", EditKind.SYMBOL)
    for index, cast in mapping.cast_args:
        if not _already_cast(view.text(args[index - 1])):
            _wrap(ctx, view, args[index - 1], f"{cast_kind(cast)}<{cast}>(".encode(), "cast", EditKind.CAST)
    for index in mapping.drop_args:
        _delete(ctx, view, args, index, 1, f"{mapping.cuda} argument {index}", EditKind.DROPPED_ARGUMENT)
    for index, text in mapping.replace_args:
        arg = args[index - 1]
        ctx.edit(view.start(arg), view.end(arg), text.encode(), what=f"{mapping.cuda} arguments", covers=True,
                 kind=EditKind.ARGUMENTS)
    _insertions(ctx, view, mapping, args)


def _insertions(ctx: ScanContext, view: View, mapping: Mapping, args: list[Node]) -> None:
    """Inserted, moved, copied and defaulted arguments: text placed before an argument, or after
    the last one; what lands on one spot is written as one edit, in the table's order. Moved and
    copied text is a range of the original, written with the conversions inside it (edits.py)."""
    if not (mapping.insert_args or mapping.move_args or mapping.copy_args or mapping.default_args):
        return   # most records (a shuffle's dropped mask): nothing to place
    at: dict[int, list] = {}
    tail: list = []

    def put(before: int, text) -> None:
        if before <= len(args):
            at.setdefault(before, []).extend((text, b", "))
        else:
            tail.extend((b", ", text))

    for index, text in mapping.insert_args:
        put(index, text.encode())
    for first, before, count in mapping.move_args:
        put(before, _span(view, args, first, count))
        _delete(ctx, view, args, first, count, f"{mapping.cuda} arguments", EditKind.ARGUMENTS)
    for first, before in mapping.copy_args:
        put(before, _span(view, args, first, 1))
    filled = len(args)
    for index, text in _defaults(ctx, mapping):
        if index == filled + 1:   # only defaults after the last argument written
            tail.extend((b", ", text.encode()))
            filled += 1
    what = f"{mapping.cuda} arguments"
    for before, parts in at.items():
        _put(ctx, view, view.start(args[before - 1]), parts, what, EditKind.ARGUMENTS)
    if tail:   # needed() guarantees at least one argument to write after
        defaults_only = filled > len(args) and len(tail) == 2 * (filled - len(args))
        if defaults_only:
            _put(ctx, view, view.end(args[-1]), tail, f"{mapping.cuda} default arguments", EditKind.DEFAULT_ARGUMENTS)
        else:
            _put(ctx, view, view.end(args[-1]), tail, what, EditKind.ARGUMENTS)


def _span(view: View, args: list[Node], first: int, count: int) -> tuple[int, int]:
    return view.start(args[first - 1]), view.end(args[first + count - 2])


def _put(ctx: ScanContext, view: View, at: int, parts: list, what: str, kind: str) -> None:
    """One insertion of literal bytes and original ranges (`parts` only when there are ranges)."""
    text = b"".join(p if isinstance(p, bytes) else view.data[p[0] - view.base:p[1] - view.base] for p in parts)
    ranges = any(not isinstance(p, bytes) for p in parts)
    ctx.edit(at, at, text, what=what, parts=tuple(parts) if ranges else (), kind=kind)


def _delete(ctx: ScanContext, view: View, args: list[Node], first: int, count: int, what: str, kind: str) -> None:
    """Delete arguments first..first+count-1 with one of their commas. Only the arguments'
    own bytes swallow the edits inside them: text inserted before the next argument stays."""
    last = first + count - 1
    start, end = view.start(args[first - 1]), view.end(args[last - 1])
    ctx.edit(start, end, b"", what=what, covers=True, kind=kind)
    if last < len(args):
        ctx.edit(end, view.start(args[last]), b"", what=what, kind=kind)
    elif first > 1:
        ctx.edit(view.end(args[first - 2]), start, b"", what=what, kind=kind)


def cast_kind(cast: str) -> str:
    """`const_cast` to a pointer to pointers to const (`const char**`: `char**` and `const char* const*`
    both reach it, and reinterpret_cast would cast away qualifiers), else `reinterpret_cast`."""
    return "const_cast" if re.fullmatch(r"const \w+ ?\*\*", cast) else "reinterpret_cast"


def _wrap(ctx: ScanContext, view: View, arg: Node, before: bytes, what: str, kind: str) -> None:
    ctx.edit(view.start(arg), view.start(arg), before, what=what, kind=kind)
    ctx.edit(view.end(arg), view.end(arg), b")", what=what, kind=kind)


def _already_cast(text: bytes) -> bool:
    """`(void**)&p`, `reinterpret_cast<const void*>(k)`, `NULL`...: no cast needed."""
    squashed = text.replace(b" ", b"")
    return squashed.startswith((b"(void*", b"(constvoid*", b"reinterpret_cast<", b"const_cast<", b"static_cast<void")) \
        or squashed in (b"NULL", b"nullptr", b"0")
