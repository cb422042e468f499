"""`#if` expressions evaluated in three-valued logic: true, false, or unknown.

The platform model (regions.py) asks one question of every `#if`: is this branch compiled in an
AMD build, in an NVIDIA build? Only some macros are known in each build (the selector macros
of mappings/platforms.toml, the user's -D/-U); everything else stays unknown, and unknown
propagates: `0 && X` is false, `1 || X` is true, `X > 3` is unknown. An expression this
evaluator cannot read is unknown too, never an error: a `#if` we do not understand is compiled
in both builds as far as portkit is concerned.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Mapping

# What a world knows of a macro: its integer value, UNDEFINED, or DEFINED (defined, value unknown).
UNDEFINED = "undefined"
DEFINED = "defined"
Value = int | None   # None: unknown

_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*|([A-Za-z_]\w*)|"
                    r"(&&|\|\||<<|>>|<=|>=|==|!=|[-+*/%<>!~&|^?:(),])|('(?:\\.|[^'])'))")
_BINARY = {   # operator -> precedence (higher binds tighter), as in C
    "*": 10, "/": 10, "%": 10, "+": 9, "-": 9, "<<": 8, ">>": 8, "<": 7, ">": 7, "<=": 7, ">=": 7,
    "==": 6, "!=": 6, "&": 5, "^": 4, "|": 3, "&&": 2, "||": 1,
}


class _Unreadable(Exception):
    """The expression is outside what this evaluator reads: the whole #if is unknown."""


@lru_cache(maxsize=4096)
def tokens(text: str) -> tuple[str, ...]:
    """The expression's tokens (cached: the same guards recur across a tree's files)."""
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise _Unreadable(text[pos:pos + 20])
        out.append(m.group(1) or m.group(2) or m.group(3) or "'")
        pos = m.end()
    return tuple(out)


def evaluate(text: str, world: Mapping[str, object]) -> Value:
    """The value of a `#if` expression in `world` ({macro: int | UNDEFINED | DEFINED}), or None."""
    try:
        parser = _Parser(tokens(text), world)
        value = parser.expression(0)
        if parser.pos != len(parser.toks):
            return None
        return value
    except (_Unreadable, IndexError, ZeroDivisionError, RecursionError):
        return None


# The preprocessor computes in intmax_t: 64 bits. Python's ints are unbounded, so without a bound a
# tree's `#if 1 << 99999999999` would build a number of gigabytes, and a 5,000-digit literal is
# past what int() converts. A literal longer than any 64-bit one (0x + 16 digits, 22 octal digits,
# 20 decimal ones, with room for leading zeros) cannot be a value the compiler reads either.
_BITS = 64
_LONGEST_LITERAL = 40


def _number(tok: str) -> int:
    if len(tok) > _LONGEST_LITERAL:
        raise _Unreadable(tok[:20])
    try:
        value = int(tok, 0) if not tok.startswith("0") or tok.lower().startswith("0x") or tok == "0" else int(tok, 8)
    except ValueError:   # `09`: no octal number; the compiler refuses it too
        raise _Unreadable(tok) from None
    return _wrap(value)


def _wrap(value: int) -> int:
    """`value` kept within what intmax_t or uintmax_t hold: a value in range is as it was (an
    unsigned literal stays positive); one past it wraps modulo 2**64, so no value grows."""
    if -(1 << (_BITS - 1)) <= value < (1 << _BITS):
        return value
    return value % (1 << _BITS)


def _shift(a: int, b: int, left: bool) -> Value:
    """A shift by a negative count or by the width or more is undefined in C: unknown."""
    if not 0 <= b < _BITS:
        return None
    return a << b if left else a >> b


def _divide(a: int, b: int) -> int:
    """C's division truncates toward zero (exactly: int(a / b) goes through a float)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def truth(value: Value) -> bool | None:
    return None if value is None else value != 0


class _Parser:
    """Precedence climbing over the tokens; every operator knows what unknown operands give."""

    def __init__(self, toks: tuple[str, ...], world: Mapping[str, object]):
        self.toks, self.pos, self.world = toks, 0, world

    def peek(self) -> str | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def take(self) -> str:
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    def expression(self, min_prec: int) -> Value:
        left = self.unary()
        while True:
            op = self.peek()
            if op == "?" and min_prec == 0:
                self.take()
                then = self.expression(0)
                if self.take() != ":":
                    raise _Unreadable("?")
                other = self.expression(0)
                cond = truth(left)
                left = then if cond is True else other if cond is False else (then if then == other else None)
                continue
            prec = _BINARY.get(op or "")
            if prec is None or prec < min_prec:
                return left
            self.take()
            right = self.expression(prec + 1)
            left = _apply(op, left, right)

    def unary(self) -> Value:
        tok = self.take()
        if tok == "(":
            value = self.expression(0)
            if self.take() != ")":
                raise _Unreadable(")")
            return value
        if tok in ("!", "~", "-", "+"):
            value = self.unary()
            if value is None:
                return None
            return _wrap({"!": int(not value), "~": ~value, "-": -value, "+": value}[tok])
        if tok == "defined":
            return self.defined()
        if tok == "'":
            return None
        if tok[0].isdigit():
            return _number(tok)
        if tok[0].isalpha() or tok[0] == "_":
            if self.peek() == "(":   # a function-like macro or __has_include(...): unknown
                self.skip_call()
                return None
            known = self.world.get(tok)
            if known is UNDEFINED:
                return 0
            return known if isinstance(known, int) else None
        raise _Unreadable(tok)

    def defined(self) -> Value:
        paren = self.peek() == "("
        if paren:
            self.take()
        name = self.take()
        if paren and self.take() != ")":
            raise _Unreadable("defined(")
        known = self.world.get(name)
        if known is UNDEFINED:
            return 0
        return None if known is None else 1

    def skip_call(self) -> None:
        depth = 0
        while True:
            tok = self.take()
            depth += tok == "("
            depth -= tok == ")"
            if depth == 0:
                return


def _apply(op: str, left: Value, right: Value) -> Value:
    if op == "&&":
        if left == 0 or right == 0:
            return 0
        return None if left is None or right is None else 1
    if op == "||":
        if (left is not None and left != 0) or (right is not None and right != 0):
            return 1
        return None if left is None or right is None else 0
    if left is None or right is None:
        return None
    if op in ("<<", ">>"):
        value = _shift(left, right, op == "<<")
        return None if value is None else _wrap(value)
    return _wrap(_ARITH[op](left, right))


_ARITH: dict[str, Callable[[int, int], int]] = {
    "*": lambda a, b: a * b, "/": _divide, "%": lambda a, b: a - _divide(a, b) * b,
    "+": lambda a, b: a + b, "-": lambda a, b: a - b,
    "<": lambda a, b: int(a < b), ">": lambda a, b: int(a > b), "<=": lambda a, b: int(a <= b),
    ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
    "&": lambda a, b: a & b, "^": lambda a, b: a ^ b, "|": lambda a, b: a | b,
}
