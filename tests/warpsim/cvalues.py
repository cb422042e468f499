"""C scalar types and their arithmetic, per lane: the part of C whose corner cases decide warp bugs.

A 32-bit `unsigned` that silently drops lanes 32-63, a shift by 32, a signed division that
truncates: the simulator is only an oracle if these behave as on the GPU, so every operation goes
through the usual arithmetic conversions and wraps to the result type's width. Undefined shifts
(count negative or not below the width) raise instead of picking one vendor's answer.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass


class SimError(Exception):
    """The kernel did something the oracle refuses to guess about (UB, OOB, unsupported)."""


class OutOfBounds(SimError):
    """An array access outside the array: the bug class a 32-entry per-warp array shows at 64 lanes."""


class UnwrittenRead(SimError):
    """A read of a `__shared__` element no thread has written: garbage on a GPU (shared memory is
    not zeroed), so a per-warp array widened for 64 lanes but read at every lane is caught here."""

    def __init__(self, message: str, where: str | None = None):
        super().__init__(message if where is None else f"{message} at {where}")
        self.message, self.where = message, where

    def at(self, where: str) -> "UnwrittenRead":
        """The error placed on the innermost expression that read (the first caller to know it)."""
        return self if self.where is not None else UnwrittenRead(self.message, where)


@dataclass(frozen=True)
class CType:
    name: str
    bits: int
    signed: bool = True
    floating: bool = False

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class PtrType:
    """Pointer to `elem`; `inner` are the dimensions of the pointee when it is an array row."""

    elem: CType
    inner: tuple[int, ...] = ()

    def __str__(self) -> str:
        return f"{self.elem}*"


BOOL = CType("bool", 1, False)
CHAR = CType("char", 8)
SHORT = CType("short", 16)
INT = CType("int", 32)
UINT = CType("unsigned int", 32, False)
LONG = CType("long long", 64)
ULONG = CType("unsigned long long", 64, False)
FLOAT = CType("float", 32, True, True)
DOUBLE = CType("double", 64, True, True)

# Spellings as tree-sitter gives them (primitive_type, sized_type_specifier, type_identifier).
NAMED = {
    "bool": BOOL, "char": CHAR, "signed char": CHAR, "unsigned char": CType("unsigned char", 8, False),
    "short": SHORT, "unsigned short": CType("unsigned short", 16, False), "int": INT,
    "signed": INT, "signed int": INT, "unsigned": UINT, "unsigned int": UINT, "long": LONG,
    "long int": LONG, "unsigned long": ULONG, "unsigned long int": ULONG, "long long": LONG,
    "long long int": LONG, "unsigned long long": ULONG, "unsigned long long int": ULONG,
    "float": FLOAT, "double": DOUBLE, "int8_t": CHAR, "int16_t": SHORT, "int32_t": INT,
    "uint8_t": CType("unsigned char", 8, False), "uint16_t": CType("unsigned short", 16, False),
    "uint32_t": UINT, "int64_t": LONG, "uint64_t": ULONG, "size_t": ULONG, "uint": UINT,
    "__int64": LONG, "ptrdiff_t": LONG, "lane_mask_t": ULONG,
    # a stream handle: host code passes it to the launch, whose stream the oracle ignores
    "cudaStream_t": ULONG, "hipStream_t": ULONG,
}


def wrap(value: int, ctype: CType) -> int:
    mask = (1 << ctype.bits) - 1
    value &= mask
    if ctype.signed and ctype.bits > 1 and value >> (ctype.bits - 1):
        value -= 1 << ctype.bits
    return value


def f32(value: float) -> float:
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def convert(value, ctype):
    """`value` converted to `ctype` as an implicit conversion or a cast does."""
    if isinstance(ctype, PtrType):
        return value
    if ctype is BOOL:
        return 1 if value else 0
    if ctype.floating:
        return f32(float(value)) if ctype.bits == 32 else float(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise SimError(f"conversion of {value} to {ctype} is undefined")
        value = int(value)  # truncation toward zero
    return wrap(int(value), ctype)


def promote(ctype: CType) -> CType:
    if ctype.floating or ctype.bits >= 32:
        return ctype
    return INT


def common(a: CType, b: CType) -> CType:
    """The usual arithmetic conversions (C11 6.3.1.8), LP64."""
    if a.floating or b.floating:
        return DOUBLE if DOUBLE in (a, b) else FLOAT
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.signed == b.signed:
        return a if a.bits >= b.bits else b
    unsigned, signed = (a, b) if not a.signed else (b, a)
    if unsigned.bits >= signed.bits:
        return unsigned
    return signed


def literal(text: str):
    """(ctype, value) of a number literal: hex literals too big for int are unsigned, as in C."""
    body = text.replace("'", "").lower()
    if body.startswith("0x") and not any(c in body for c in ".p"):
        return _integer(body, int(body[2:].rstrip("ul"), 16), hexadecimal=True)
    if any(c in body for c in ".e") or (body.endswith("f") and not body.startswith("0x")):
        is_float = body.endswith("f")
        value = float(body.rstrip("fl"))
        return (FLOAT, f32(value)) if is_float else (DOUBLE, value)
    digits = body.rstrip("ul")
    if digits.startswith("0b"):
        value = int(digits[2:], 2)
    else:
        value = int(digits, 8) if len(digits) > 1 and digits.startswith("0") else int(digits)
    return _integer(body, value, hexadecimal=digits.startswith("0") and len(digits) > 1)


def _integer(body: str, value: int, hexadecimal: bool):
    suffix = body[len(body.rstrip("ul")):]
    unsigned = "u" in suffix
    wide = "l" in suffix
    candidates = [ULONG] if unsigned and wide else [UINT, ULONG] if unsigned else [LONG] if wide else [INT, LONG]
    if hexadecimal and not unsigned:
        candidates = [LONG, ULONG] if wide else [INT, UINT, LONG, ULONG]
    for ctype in candidates:
        limit = 1 << (ctype.bits - 1 if ctype.signed else ctype.bits)
        if value < limit:
            return ctype, value
    return ULONG, wrap(value, ULONG)


def arith(op: str, a, b, ta: CType, tb: CType):
    """(result type, value) of a binary operator on two scalars of types ta and tb."""
    if op in ("<<", ">>"):
        return shift(op, a, b, promote(ta), tb)
    ctype = common(ta, tb)
    a, b = convert(a, ctype), convert(b, ctype)
    if op in ("==", "!=", "<", ">", "<=", ">="):
        return BOOL, int(_compare(op, a, b))
    if op in ("&", "|", "^") and ctype.floating:
        raise SimError(f"operator {op} on {ctype}")
    if op == "/" or op == "%":
        return ctype, _divide(op, a, b, ctype)
    result = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
              "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b}[op]()
    return ctype, convert(result, ctype)


def _compare(op: str, a, b) -> bool:
    return {"==": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]


def _divide(op: str, a, b, ctype: CType):
    if ctype.floating:
        if op == "%":
            raise SimError("operator % on floating operands")
        if b == 0:
            return convert(math.copysign(math.inf, a) if a else math.nan, ctype)
        return convert(a / b, ctype)
    if b == 0:
        raise SimError(f"integer division by zero ({ctype})")
    quotient = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
    return wrap(quotient if op == "/" else a - quotient * b, ctype)


def shift(op: str, a, count, ctype: CType, count_type: CType):
    if ctype.floating or count_type.floating:
        raise SimError(f"shift of a floating value ({ctype})")
    if count < 0 or count >= ctype.bits:
        raise SimError(f"shift by {count} is undefined for {ctype} ({ctype.bits} bits)")
    a = convert(a, ctype)
    return ctype, wrap(a << count if op == "<<" else a >> count, ctype)


def unary(op: str, a, ctype: CType):
    if op == "!":
        return BOOL, int(not a)
    ctype = promote(ctype)
    if op == "-":
        return ctype, convert(-a, ctype)
    if op == "+":
        return ctype, a
    if op == "~":
        if ctype.floating:
            raise SimError("operator ~ on a floating value")
        return ctype, wrap(~a, ctype)
    raise SimError(f"unsupported unary operator {op}")
