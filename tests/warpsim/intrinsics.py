"""Warp intrinsics and device built-ins: shuffles, votes, bit counts, atomics, a little math.

Shuffle source lanes follow the published semantics shared by CUDA and HIP's ds_bpermute
implementation (a `width` segment; out-of-segment sources return the caller's own value). A
shuffle reading a lane that is not executing reads 0, deterministically. The `_sync` forms check
their mask as CUDA specifies (every executing lane named; every named lane executing or exited),
and on AMD also as HIP does (the mask must be a 64-bit integer: a `static_assert` in ROCm), so a
32-bit `0xffffffff` at 64 lanes is an error, not a silent answer. Ballot and active-mask results
are 32-bit on CUDA and 64-bit on HIP, and `__popc` takes an `unsigned int`: a 64-lane ballot
passed to it loses lanes 32-63 exactly as on the GPU. The mask-less votes (`__ballot`) exist on AMD
only: nvcc compiles them to a vote that ptxas refuses for sm_70 and later, so on CUDA and through
HIP's NVIDIA backend they are an error, as they are there.
"""

from __future__ import annotations

import math

from .cvalues import DOUBLE, FLOAT, INT, LONG, UINT, ULONG, PtrType, SimError, arith, common, convert
from .memory import MemRef, Vec


def _scalar(fn, ctype, *param_types):
    """A per-lane function of converted arguments returning `ctype` (None: the common type)."""
    def run(m, args, mask, node):
        if len(args) != len(param_types):
            raise SimError(f"wrong number of arguments at {m.where(node)}")
        result = ctype or common(*[a.ctype for a in args])
        types = [t or result for t in param_types]
        vals = [0] * m.wave
        for lane in m.lanes(mask):
            vals[lane] = convert(fn(*[convert(a.vals[lane], t) for a, t in zip(args, types)]), result)
        return Vec(result, vals)
    return run


def check_mask(m, vec: Vec, mask: int, node, name: str) -> None:
    if not m.strict:
        return
    if m.platform == "amd" and vec.ctype.bits != 64:
        raise SimError(f"{name}: HIP requires a 64-bit mask, got {vec.ctype} at {m.where(node)}")
    lanes = m.lanes(mask)
    named = convert(vec.vals[lanes[0]], ULONG)
    for lane in lanes:
        if not named >> lane & 1:
            raise SimError(f"{name}: lane {lane} executes it but its mask {named:#x} does not name it at {m.where(node)}")
    stray = named & ((1 << m.wave) - 1) & ~mask & ~m.exited_lanes()
    if stray:
        raise SimError(f"{name}: mask {named:#x} names lanes that do not execute it "
                       f"(first: lane {(stray & -stray).bit_length() - 1}) at {m.where(node)}")


def _source(kind: str, lane: int, arg: int, width: int) -> int:
    base = lane & ~(width - 1)
    if kind == "idx":
        return base + (arg & (width - 1))
    if kind == "up":
        return lane if lane - arg < base else lane - arg
    if kind == "down":
        return lane if (lane & (width - 1)) + arg >= width else lane + arg
    source = lane ^ arg
    return lane if source >= ((lane + width) & ~(width - 1)) else source


def _shuffle(kind: str, sync: bool):
    def run(m, args, mask, node):
        name = node.child_by_field_name("function").text.decode()
        if sync:
            check_mask(m, args[0], mask, node, name)
            args = args[1:]
        var, arg = args[0], args[1]
        widths = args[2] if len(args) > 2 else Vec.uniform(INT, m.wave, m.wave)
        ctype = var.ctype if var.ctype.floating or var.ctype.bits >= 32 else INT
        vals = [0] * m.wave
        for lane in m.lanes(mask):
            width = widths.vals[lane]
            if width < 1 or width > m.wave or width & (width - 1):
                raise SimError(f"{name}: width {width} is not a power of two up to {m.wave} at {m.where(node)}")
            source = _source(kind, lane, convert(arg.vals[lane], UINT if kind != "idx" else INT), width)
            vals[lane] = convert(var.vals[source], ctype) if mask >> source & 1 else 0
        return Vec(ctype, vals)
    return run


def _vote(kind: str, sync: bool):
    def run(m, args, mask, node):
        if not sync and m.platform != "amd":   # nvcc for sm_70+ (the simulator's CUDA is sm_80, HIP-NVIDIA sm_90)
            raise SimError(f"{node.child_by_field_name('function').text.decode()}: vote without .sync, which "
                           f"ptxas refuses for sm_70 and later, at {m.where(node)}")
        if sync:
            check_mask(m, args[0], mask, node, node.child_by_field_name("function").text.decode())
            args = args[1:]
        bits = m.truth(args[0], mask) if args else mask
        if kind == "ballot":
            ctype = ULONG if m.platform == "amd" else UINT
            return Vec.uniform(ctype, convert(bits, ctype), m.wave)
        result = bool(bits) if kind == "any" else bits == mask
        return Vec.uniform(INT, int(result), m.wave)
    return run


def _lane_id(m, args, mask, node):
    return Vec(INT, list(range(m.wave)))


def _syncthreads(m, args, mask, node):
    m.barrier(mask, node)
    return Vec.uniform(INT, 0, m.wave)


def _syncwarp(m, args, mask, node):
    if args:
        check_mask(m, Vec(ULONG, args[0].vals) if m.platform == "amd" else args[0], mask, node, "__syncwarp")
    return Vec.uniform(INT, 0, m.wave)


def _noop(m, args, mask, node):
    return Vec.uniform(INT, 0, m.wave)


def _atomic(op: str):
    def run(m, args, mask, node):
        pointer = args[0]
        if not isinstance(pointer.ctype, PtrType):
            raise SimError(f"atomic on a non-pointer at {m.where(node)}")
        ref = MemRef(pointer.ctype.elem, pointer.vals)
        old = [0] * m.wave
        for lane in m.lanes(mask):  # lane order: a fixed, documented serialisation
            current = ref.load([lane]).vals[lane]
            old[lane] = current
            operands = [a.vals[lane] for a in args[1:]]
            ref.store([lane], Vec(ref.ctype, [_combine(op, current, operands, ref.ctype)] * m.wave))
        return Vec(ref.ctype, old)
    return run


def _combine(op: str, current, operands, ctype):
    value = operands[0]
    if op == "cas":
        return operands[1] if current == convert(value, ctype) else current
    if op == "exch":
        return value
    if op in ("max", "min"):
        return max(current, convert(value, ctype)) if op == "max" else min(current, convert(value, ctype))
    return arith({"add": "+", "sub": "-", "or": "|", "and": "&", "xor": "^"}[op], current, value, ctype, ctype)[1]


def _ffs(bits: int):
    return lambda x: (x & -x).bit_length() if x else 0


def _clz(bits: int):
    return lambda x: bits - (x & ((1 << bits) - 1)).bit_length()


def _brev(x: int) -> int:
    return int(f"{x & 0xFFFFFFFF:032b}"[::-1], 2)


def _minmax(fn):
    return _scalar(fn, None, None, None)


INTRINSICS = {
    "__syncthreads": _syncthreads, "__syncwarp": _syncwarp, "__threadfence": _noop,
    "__threadfence_block": _noop, "__lane_id": _lane_id,
    "__popc": _scalar(lambda x: bin(x).count("1"), INT, UINT),
    "__popcll": _scalar(lambda x: bin(x).count("1"), INT, ULONG),
    "__ffs": _scalar(lambda x: _ffs(32)(x & 0xFFFFFFFF), INT, INT),
    "__ffsll": _scalar(lambda x: _ffs(64)(x & (1 << 64) - 1), INT, LONG),
    "__clz": _scalar(_clz(32), INT, INT), "__clzll": _scalar(_clz(64), INT, LONG),
    "__brev": _scalar(_brev, UINT, UINT),
    "min": _minmax(min), "max": _minmax(max), "fminf": _scalar(min, FLOAT, FLOAT, FLOAT),
    "fmaxf": _scalar(max, FLOAT, FLOAT, FLOAT), "fabsf": _scalar(abs, FLOAT, FLOAT),
    "fabs": _scalar(abs, DOUBLE, DOUBLE), "abs": _scalar(abs, INT, INT),
    "sqrtf": _scalar(math.sqrt, FLOAT, FLOAT), "expf": _scalar(math.exp, FLOAT, FLOAT),
    "__expf": _scalar(math.exp, FLOAT, FLOAT), "logf": _scalar(math.log, FLOAT, FLOAT),
    "floorf": _scalar(math.floor, FLOAT, FLOAT), "ceilf": _scalar(math.ceil, FLOAT, FLOAT),
    "rsqrtf": _scalar(lambda x: 1 / math.sqrt(x), FLOAT, FLOAT),
}
for _kind, _name in (("idx", "shfl"), ("up", "shfl_up"), ("down", "shfl_down"), ("xor", "shfl_xor")):
    INTRINSICS[f"__{_name}"] = _shuffle(_kind, sync=False)
    INTRINSICS[f"__{_name}_sync"] = _shuffle(_kind, sync=True)
for _kind in ("ballot", "any", "all"):
    INTRINSICS[f"__{_kind}"] = _vote(_kind, sync=False)
    INTRINSICS[f"__{_kind}_sync"] = _vote(_kind, sync=True)
INTRINSICS["__activemask"] = lambda m, args, mask, node: Vec.uniform(ULONG if m.platform == "amd" else UINT,
                                                                      mask, m.wave)
for _op in ("add", "sub", "max", "min", "exch", "or", "and", "xor", "cas"):
    INTRINSICS["atomic" + _op.capitalize() if _op != "cas" else "atomicCAS"] = _atomic(_op)
