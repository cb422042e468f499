"""Values and storage: per-lane vectors, registers, and bounds-checked arrays (global, shared, local).

Every access to an array goes through `Buffer.check`, because an out-of-bounds write to a
32-entry per-warp shared array is exactly what a 64-lane wavefront does to code written for 32;
on a GPU it corrupts a neighbour silently, here it is an `OutOfBounds` naming array, index and lane.

Shared memory starts unwritten, as on a GPU (nothing zeroes it): a strict run refuses a read of an
element no thread has written (`UnwrittenRead`, naming array, index, lane and line), a lenient one
reads a poison value (NaN, or an integer sentinel) that makes any sum or maximum detectably wrong.
Zero-filled, a per-warp array of 64 read at every lane after 16 wavefronts wrote theirs passed.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cvalues import CType, OutOfBounds, PtrType, SimError, UnwrittenRead, convert

# what a lenient run reads from unwritten shared memory: no fixture sums to it by chance
POISON_INT = 0x5A5A5A5A5A5A5A5A


class Buffer:
    """One array in one address space; `data` holds converted scalars."""

    def __init__(self, name: str, ctype: CType, data: list, space: str, dims: tuple[int, ...] = ()):
        self.name, self.ctype, self.data, self.space = name, ctype, data, space
        self.dims = dims or (len(data),)
        self.unwritten: set[int] | None = None   # the elements no thread has written (shared memory)
        self.strict = True

    def poison(self, strict: bool) -> None:
        """Every element unwritten (a block's shared memory as it starts)."""
        self.unwritten, self.strict = set(range(len(self.data))), strict

    def read(self, index: int, lane: int):
        self.check(index, lane)
        if self.unwritten and index in self.unwritten:
            if self.strict:
                shape = "".join(f"[{d}]" for d in self.dims)
                raise UnwrittenRead(f"{self.space} array {self.name}{shape}: element {index} is read before any "
                                    f"thread wrote it (lane {lane})")
            return float("nan") if self.ctype.floating else convert(POISON_INT, self.ctype)
        return self.data[index]

    def write(self, index: int, lane: int, value) -> None:
        self.check(index, lane)
        self.data[index] = value
        if self.unwritten:
            self.unwritten.discard(index)

    def check(self, index: int, lane: int) -> None:
        if not 0 <= index < len(self.data):
            shape = "".join(f"[{d}]" for d in self.dims)
            raise OutOfBounds(
                f"{self.space} array {self.name}{shape}: element {index} is out of bounds (lane {lane})")


@dataclass(frozen=True)
class Pointer:
    buf: Buffer
    off: int


class Vec:
    """An rvalue: one value per lane of the wavefront (lanes outside the mask hold a stale 0)."""

    __slots__ = ("ctype", "vals")

    def __init__(self, ctype, vals: list):
        self.ctype, self.vals = ctype, vals

    @classmethod
    def uniform(cls, ctype, value, wave: int) -> "Vec":
        return cls(ctype, [value] * wave)


class Var:
    """A register: a named per-lane scalar or pointer."""

    def __init__(self, name: str, ctype, wave: int, const: bool = False):
        self.name, self.ctype, self.const = name, ctype, const
        self.vals = [0] * wave

    def ref(self) -> "VarRef":
        return VarRef(self)


class ArrayVar:
    """A named array: its value is the pointer to its first element (per lane for local arrays)."""

    def __init__(self, name: str, ctype: PtrType, pointers: list):
        self.name, self.ctype, self.pointers = name, ctype, pointers

    def ref(self):
        raise SimError(f"array {self.name} is not assignable")


class Alias:
    """A name bound to storage elsewhere: a `__shared__` scalar, a reference parameter."""

    def __init__(self, name: str, target):
        self.name, self.target = name, target

    def ref(self):
        return self.target


class VarRef:
    def __init__(self, var: Var):
        self.var = var
        self.ctype = var.ctype

    def load(self, lanes: list[int]) -> Vec:
        return Vec(self.ctype, list(self.var.vals))

    def store(self, lanes: list[int], value: Vec) -> None:
        if self.var.const:
            raise SimError(f"assignment to const {self.var.name}")
        for lane in lanes:
            self.var.vals[lane] = convert(value.vals[lane], self.ctype)


class MemRef:
    """Per-lane element addresses; stores happen in lane order, so a race has a fixed winner."""

    def __init__(self, ctype, pointers: list):
        self.ctype, self.pointers = ctype, pointers

    def load(self, lanes: list[int]) -> Vec:
        vals = [0] * len(self.pointers)
        for lane in lanes:
            ptr = self.pointers[lane]
            vals[lane] = ptr.buf.read(ptr.off, lane)
        return Vec(self.ctype, vals)

    def store(self, lanes: list[int], value: Vec) -> None:
        for lane in lanes:
            ptr = self.pointers[lane]
            ptr.buf.write(ptr.off, lane, convert(value.vals[lane], self.ctype))


def lanes_of(mask: int, wave: int) -> list[int]:
    return [lane for lane in range(wave) if mask >> lane & 1]
