"""Expression evaluation over a wavefront: every expression yields one value per active lane.

The active mask is a bit set of lanes; `&&`, `||` and `?:` narrow it for their operands, so a
lane that would divide by zero or index out of bounds on a path it does not take never does.
The same class evaluates constant expressions (array sizes, `#if`, template arguments) with one
lane and no thread built-ins, so `warpSize` used where a constant is required is an error here as
it is on ROCm 7 (where `warpSize` is no longer constexpr) and on CUDA.
"""

from __future__ import annotations

import math

from tree_sitter import Node

from .cvalues import BOOL, INT, LONG, ULONG, CType, PtrType, SimError, UnwrittenRead, arith, common, convert, literal, unary
from .memory import Alias, ArrayVar, MemRef, Pointer, Var, Vec, lanes_of
from .program import Const, base_type, text

BUILTIN_STRUCTS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
CASTS = ("static_cast", "reinterpret_cast", "const_cast")


class Scope:
    def __init__(self, parent: "Scope | None" = None):
        self.names: dict[str, object] = {}
        self.parent = parent

    def find(self, name: str):
        scope = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None


class ExprMachine:
    """Evaluates expressions for `wave` lanes; subclasses add statements, calls and barriers."""

    def __init__(self, program, wave: int, builtins: dict, platform: str):
        self.program, self.wave, self.builtins, self.platform = program, wave, builtins, platform
        self.scope = Scope()
        self.strict = True
        self.types: dict[str, CType] = {}
        self._lanes: dict[int, list[int]] = {}

    def lanes(self, mask: int) -> list[int]:
        found = self._lanes.get(mask)
        if found is None:
            found = self._lanes[mask] = lanes_of(mask, self.wave)
        return found

    def where(self, node: Node) -> str:
        return f"line {node.start_point[0] + 1}: {' '.join(text(node).split())[:60]}"

    def type_of(self, node: Node):
        """The type a type_descriptor (or type node) names, pointers included."""
        kinds = self.program.types | self.types
        if node.type != "type_descriptor":
            return base_type(node, kinds)
        ctype = base_type(node.child_by_field_name("type"), kinds)
        pointer = node.child_by_field_name("declarator")
        return PtrType(ctype) if pointer is not None and "*" in text(pointer) else ctype

    # -- evaluation -------------------------------------------------------------------------

    def eval(self, node: Node, mask: int) -> Vec:
        method = getattr(self, "e_" + node.type, None)
        if method is None:
            raise SimError(f"unsupported expression {node.type} at {self.where(node)}")
        try:
            return method(node, mask)
        except UnwrittenRead as err:   # placed on the innermost expression that read
            raise err.at(self.where(node)) from None

    def truth(self, vec: Vec, mask: int) -> int:
        bits = 0
        for lane in self.lanes(mask):
            if vec.vals[lane]:
                bits |= 1 << lane
        return bits

    def e_number_literal(self, node: Node, mask: int) -> Vec:
        ctype, value = literal(text(node))
        return Vec.uniform(ctype, value, self.wave)

    def e_true(self, node: Node, mask: int) -> Vec:
        return Vec.uniform(BOOL, 1, self.wave)

    def e_false(self, node: Node, mask: int) -> Vec:
        return Vec.uniform(BOOL, 0, self.wave)

    def e_char_literal(self, node: Node, mask: int) -> Vec:
        body = text(node)[1:-1]
        return Vec.uniform(INT, ord(body.encode().decode("unicode_escape")), self.wave)

    def e_parenthesized_expression(self, node: Node, mask: int) -> Vec:
        return self.eval(node.named_children[-1], mask)

    def e_comma_expression(self, node: Node, mask: int) -> Vec:
        self.eval(node.child_by_field_name("left"), mask)
        return self.eval(node.child_by_field_name("right"), mask)

    def e_identifier(self, node: Node, mask: int) -> Vec:
        name = text(node)
        entry = self.scope.find(name) or self.program.globals.get(name)
        if entry is None:
            if name in self.builtins:
                return self.builtins[name]
            raise SimError(f"unknown name {name!r} at {self.where(node)}"
                           + (" (not a constant expression)" if not self.builtins else ""))
        if isinstance(entry, Const):
            return Vec.uniform(entry.ctype, entry.value, self.wave)
        if isinstance(entry, ArrayVar):
            return Vec(entry.ctype, entry.pointers)
        return entry.ref().load(self.lanes(mask))

    e_qualified_identifier = e_type_identifier = e_identifier

    def e_field_expression(self, node: Node, mask: int) -> Vec:
        key = f"{text(node.child_by_field_name('argument'))}.{text(node.child_by_field_name('field'))}"
        if key not in self.builtins:
            raise SimError(f"unsupported member {key} at {self.where(node)}"
                           + (" (not a constant expression)" if not self.builtins else ""))
        return self.builtins[key]

    def e_binary_expression(self, node: Node, mask: int) -> Vec:
        op = node.child_by_field_name("operator").type
        left = self.eval(node.child_by_field_name("left"), mask)
        if op in ("&&", "||"):
            true = self.truth(left, mask)
            rest = mask & true if op == "&&" else mask & ~true
            right = self.truth(self.eval(node.child_by_field_name("right"), rest), rest) if rest else 0
            decided = 0 if op == "&&" else true
            return Vec(BOOL, [1 if (decided | right) >> lane & 1 else 0 for lane in range(self.wave)])
        return self.binop(op, left, self.eval(node.child_by_field_name("right"), mask), mask, node)

    def binop(self, op: str, left: Vec, right: Vec, mask: int, node: Node) -> Vec:
        if isinstance(left.ctype, PtrType) or isinstance(right.ctype, PtrType):
            return self.pointer_op(op, left, right, mask, node)
        vals, ctype = [0] * self.wave, None
        try:
            for lane in self.lanes(mask):
                ctype, vals[lane] = arith(op, left.vals[lane], right.vals[lane], left.ctype, right.ctype)
        except SimError as err:
            raise SimError(f"{err} at {self.where(node)} (lane {lane})") from None
        return Vec(ctype, vals)

    def pointer_op(self, op: str, left: Vec, right: Vec, mask: int, node: Node) -> Vec:
        lanes = self.lanes(mask)
        if isinstance(left.ctype, PtrType) and isinstance(right.ctype, PtrType):
            if op == "-":
                return Vec(LONG, [left.vals[i].off - right.vals[i].off if i in lanes else 0 for i in range(self.wave)])
            if op in ("==", "!=", "<", ">", "<=", ">="):
                return self.binop(op, Vec(LONG, [p.off if p else 0 for p in left.vals]),
                                  Vec(LONG, [p.off if p else 0 for p in right.vals]), mask, node)
        pointer, offset = (left, right) if isinstance(left.ctype, PtrType) else (right, left)
        if op not in ("+", "-") or (op == "-" and pointer is right) or offset.ctype.floating:
            raise SimError(f"unsupported pointer arithmetic {op} at {self.where(node)}")
        stride = math.prod(pointer.ctype.inner)
        sign = -1 if op == "-" else 1
        vals = list(pointer.vals)
        for lane in lanes:
            vals[lane] = Pointer(vals[lane].buf, vals[lane].off + sign * stride * offset.vals[lane])
        return Vec(pointer.ctype, vals)

    def e_unary_expression(self, node: Node, mask: int) -> Vec:
        op = node.child_by_field_name("operator").type
        arg = self.eval(node.child_by_field_name("argument"), mask)
        if isinstance(arg.ctype, PtrType) and op == "!":
            return Vec(BOOL, [0 if p else 1 for p in arg.vals])
        vals, ctype = [0] * self.wave, None
        for lane in self.lanes(mask):
            ctype, vals[lane] = unary(op, arg.vals[lane], arg.ctype)
        return Vec(ctype, vals)

    def e_update_expression(self, node: Node, mask: int) -> Vec:
        op = node.child_by_field_name("operator").type
        ref = self.ref(node.child_by_field_name("argument"), mask)
        lanes = self.lanes(mask)
        old = ref.load(lanes)
        one = Vec.uniform(INT, 1, self.wave)
        new = self.binop(op[0], old, one, mask, node)
        ref.store(lanes, new)
        prefix = node.children[0].type == op
        return ref.load(lanes) if prefix else old

    def e_assignment_expression(self, node: Node, mask: int) -> Vec:
        op = node.child_by_field_name("operator").type
        value = self.eval(node.child_by_field_name("right"), mask)
        ref = self.ref(node.child_by_field_name("left"), mask)
        lanes = self.lanes(mask)
        if op != "=":
            value = self.binop(op[:-1], ref.load(lanes), value, mask, node)
        ref.store(lanes, value)
        return ref.load(lanes)

    def e_conditional_expression(self, node: Node, mask: int) -> Vec:
        true = self.truth(self.eval(node.child_by_field_name("condition"), mask), mask)
        parts = [(mask & true, node.child_by_field_name("consequence")),
                 (mask & ~true, node.child_by_field_name("alternative"))]
        results = [(m, self.eval(branch, m)) for m, branch in parts if m]
        types = [vec.ctype for _, vec in results]
        ctype = types[0] if len(types) == 1 or isinstance(types[0], PtrType) else common(*types)
        vals = [0] * self.wave
        for m, vec in results:
            for lane in self.lanes(m):
                vals[lane] = convert(vec.vals[lane], ctype)
        return Vec(ctype, vals)

    def e_cast_expression(self, node: Node, mask: int) -> Vec:
        return self.cast(self.type_of(node.child_by_field_name("type")), self.eval(node.child_by_field_name("value"), mask), mask)

    def cast(self, ctype, vec: Vec, mask: int) -> Vec:
        if isinstance(ctype, PtrType) or isinstance(vec.ctype, PtrType):
            if not (isinstance(ctype, PtrType) and isinstance(vec.ctype, PtrType) and ctype.elem == vec.ctype.elem):
                raise SimError(f"cast from {vec.ctype} to {ctype} is not simulated")
            return Vec(ctype, vec.vals)
        vals = list(vec.vals)
        for lane in self.lanes(mask):
            vals[lane] = convert(vec.vals[lane], ctype)
        return Vec(ctype, vals)

    def e_sizeof_expression(self, node: Node, mask: int) -> Vec:
        described = node.child_by_field_name("type")
        ctype = self.type_of(described) if described is not None else self.eval(node.child_by_field_name("value"), mask).ctype
        return Vec.uniform(ULONG, 8 if isinstance(ctype, PtrType) else max(1, ctype.bits // 8), self.wave)

    def e_subscript_expression(self, node: Node, mask: int) -> Vec:
        found = self.element(node, mask)
        return found if isinstance(found, Vec) else found.load(self.lanes(mask))

    def e_pointer_expression(self, node: Node, mask: int) -> Vec:
        op = node.child_by_field_name("operator").type
        if op == "*":
            return self.ref(node, mask).load(self.lanes(mask))
        target = self.ref(node.child_by_field_name("argument"), mask)
        if not isinstance(target, MemRef):
            raise SimError(f"address of a register is not simulated at {self.where(node)}")
        return Vec(PtrType(target.ctype), list(target.pointers))

    def e_call_expression(self, node: Node, mask: int) -> Vec:
        raise SimError(f"call in a constant expression at {self.where(node)}")

    # -- lvalues ----------------------------------------------------------------------------

    def ref(self, node: Node, mask: int):
        kind = node.type
        if kind == "parenthesized_expression":
            return self.ref(node.named_children[-1], mask)
        if kind == "identifier":
            entry = self.scope.find(text(node)) or self.program.globals.get(text(node))
            if isinstance(entry, (Var, Alias)):
                return entry.ref()
            raise SimError(f"{text(node)} is not assignable at {self.where(node)}")
        if kind == "subscript_expression":
            found = self.element(node, mask)
            if isinstance(found, MemRef):
                return found
        if kind == "pointer_expression" and node.child_by_field_name("operator").type == "*":
            pointer = self.eval(node.child_by_field_name("argument"), mask)
            return MemRef(pointer.ctype.elem, pointer.vals)
        raise SimError(f"not an lvalue: {self.where(node)}")

    def element(self, node: Node, mask: int):
        """`a[i]`: a MemRef to an element, or (for a row of a 2-D array) the row's pointer Vec."""
        base = self.eval(node.child_by_field_name("argument"), mask)
        indices = node.child_by_field_name("indices")
        index = self.eval(indices.named_children[0] if indices.type == "subscript_argument_list" else indices, mask)
        if not isinstance(base.ctype, PtrType):
            raise SimError(f"subscript of a non-pointer at {self.where(node)}")
        if index.ctype.floating:
            raise SimError(f"floating-point array index at {self.where(node)}")
        moved = self.pointer_op("+", base, index, mask, node)
        if base.ctype.inner:
            return Vec(PtrType(base.ctype.elem, base.ctype.inner[1:]), moved.vals)
        return MemRef(base.ctype.elem, moved.vals)


def constant_machine(program, platform: str) -> ExprMachine:
    return ExprMachine(program, 1, {}, platform)


def const_value(machine: ExprMachine, node: Node) -> tuple:
    vec = machine.eval(node, 1)
    return vec.ctype, vec.vals[0]
