"""Statements, declarations and calls for one wavefront, in lockstep under an active mask.

Divergence is modelled as AMD hardware runs it (and as pre-Volta NVIDIA did): both sides of an
`if` execute with complementary masks, a loop runs until no lane is left in it, and lanes that
`break`, `continue` or `return` leave the mask until the construct ends. A shuffle inside a loop
therefore sees exactly the lanes still looping, which is what the warp idioms rely on.
"""

from __future__ import annotations

import math

from tree_sitter import Node

from .collectives import CollectiveStatements
from .cvalues import CType, PtrType, SimError, convert
from .expr import CASTS, ExprMachine, Scope
from .intrinsics import INTRINSICS
from .memory import Alias, ArrayVar, Buffer, MemRef, Pointer, Var, Vec
from .program import Const, Function, declared, qualifiers, text

MAX_STEPS = 200_000
MAX_DEPTH = 64


class Frame:
    def __init__(self, ret_type, wave: int):
        self.ret_type, self.ret, self.ret_vals, self.loops = ret_type, 0, [0] * wave, []


class Loop:
    def __init__(self):
        self.brk = self.cont = 0


class WarpMachine(CollectiveStatements, ExprMachine):
    """One wavefront of a block; `block` owns shared memory and the barrier."""

    def __init__(self, program, wave, builtins, platform, block, exited: int):
        super().__init__(program, wave, builtins, platform)
        self.block, self.frames, self.steps, self.absent = block, [], 0, exited

    def exited_lanes(self) -> int:
        """Lanes outside the block, or returned from the kernel (they may sit out a shuffle)."""
        return self.absent | (self.frames[0].ret if self.frames else 0)

    def barrier(self, mask: int, node: Node) -> None:
        self.block.barrier(self)

    def exited(self) -> int:
        frame = self.frames[-1]
        loop = frame.loops[-1] if frame.loops else None
        return frame.ret | (loop.brk | loop.cont if loop else 0)

    def step(self, node: Node) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise SimError(f"more than {MAX_STEPS} loop iterations at {self.where(node)}")

    # -- statements --------------------------------------------------------------------------

    def run_block(self, nodes, mask: int) -> None:
        for node in nodes:
            mask &= ~self.exited()
            if not mask:
                return
            self.exec(node, mask)

    def exec(self, node: Node, mask: int) -> None:
        method = getattr(self, "s_" + node.type, None)
        if method is None:
            raise SimError(f"unsupported statement {node.type} at {self.where(node)}")
        method(node, mask)

    def scoped(self, fn, *args) -> None:
        self.scope = Scope(self.scope)
        try:
            fn(*args)
        finally:
            self.scope = self.scope.parent

    def s_compound_statement(self, node: Node, mask: int) -> None:
        self.scoped(self.run_block, [c for c in node.named_children if c.type != "comment"], mask)

    def s_expression_statement(self, node: Node, mask: int) -> None:
        if node.named_child_count:
            self.eval(node.named_children[0], mask)

    def condition(self, node: Node, mask: int) -> int:
        if node.type == "condition_clause":
            node = node.child_by_field_name("value")
        return mask & self.truth(self.eval(node, mask), mask)

    def s_if_statement(self, node: Node, mask: int) -> None:
        true = self.condition(node.child_by_field_name("condition"), mask)
        if true:
            self.scoped(self.exec, node.child_by_field_name("consequence"), true)
        alternative = node.child_by_field_name("alternative")
        if alternative is not None and mask & ~true:
            branch = alternative.named_children[-1] if alternative.type == "else_clause" else alternative
            self.scoped(self.exec, branch, mask & ~true)

    def loop(self, node: Node, mask: int, cond: Node | None, update: Node | None, test_first: bool) -> None:
        frame, loop = self.frames[-1], Loop()
        frame.loops.append(loop)
        try:
            while True:
                mask &= ~(frame.ret | loop.brk)
                if cond is not None and mask and test_first:
                    mask = self.condition(cond, mask)
                if not mask:
                    return
                self.step(node)
                loop.cont = 0
                self.scoped(self.exec, node.child_by_field_name("body"), mask)
                loop.cont = 0
                mask &= ~(frame.ret | loop.brk)
                if update is not None and mask:
                    self.eval(update, mask)
                test_first = True
        finally:
            frame.loops.pop()

    def s_for_statement(self, node: Node, mask: int) -> None:
        def run():
            init = node.child_by_field_name("initializer")
            if init is not None:
                self.exec(init, mask) if init.type == "declaration" else self.eval(init, mask)
            self.loop(node, mask, node.child_by_field_name("condition"), node.child_by_field_name("update"), True)
        self.scoped(run)

    def s_while_statement(self, node: Node, mask: int) -> None:
        self.loop(node, mask, node.child_by_field_name("condition"), None, True)

    def s_do_statement(self, node: Node, mask: int) -> None:
        self.loop(node, mask, node.child_by_field_name("condition"), None, False)

    def s_break_statement(self, node: Node, mask: int) -> None:
        self.frames[-1].loops[-1].brk |= mask

    def s_continue_statement(self, node: Node, mask: int) -> None:
        self.frames[-1].loops[-1].cont |= mask

    def s_return_statement(self, node: Node, mask: int) -> None:
        frame = self.frames[-1]
        if node.named_child_count:
            value = self.eval(node.named_children[0], mask)
            if frame.ret_type is None:
                frame.ret_type = value.ctype
            for lane in self.lanes(mask):
                frame.ret_vals[lane] = convert(value.vals[lane], frame.ret_type)
        frame.ret |= mask

    # -- declarations ------------------------------------------------------------------------

    def s_declaration(self, node: Node, mask: int) -> None:
        if self.bind_storage(node):
            return
        quals = qualifiers(node)
        type_node = node.child_by_field_name("type")
        auto = type_node.type == "placeholder_type_specifier"
        base = None if auto else self.type_of(type_node)
        for declarator in node.children_by_field_name("declarator"):
            found = declared(declarator, base)
            entry = self.bind(found, quals, mask, declarator)
            self.scope.names[found.name] = entry

    def bind(self, found, quals, mask: int, node: Node):
        dims = [self.constant(size) for size in found.dims if size is not None]
        if "__shared__" in quals or "__constant__" in quals or "__device__" in quals:
            return self.static(found, dims, quals, node)
        if found.dims:
            return self.local_array(found, dims, mask)
        value = self.eval(found.value, mask) if found.value is not None else None
        ctype = found.ctype if found.ctype is not None else value.ctype
        if found.reference:
            return Alias(found.name, self.ref(found.value, mask))
        if quals & {"constexpr", "const"} and value is not None and not isinstance(ctype, PtrType):
            try:
                return Const(ctype, convert(self.constant(found.value), ctype))
            except SimError:
                pass
        var = Var(found.name, ctype, self.wave)
        if value is not None:
            var.ref().store(self.lanes(mask), value)
        # `const float* p` points to const data; the pointer itself may be reassigned.
        var.const = bool(quals & {"const", "constexpr"}) and not isinstance(ctype, PtrType)
        return var

    def constant(self, node: Node) -> int:
        """A constant expression, evaluated with this scope's constants only."""
        machine = ExprMachine(self.program, 1, {}, self.platform)
        machine.types = self.types
        scope, chain = self.scope, []
        while scope is not None:
            chain.append(scope)
            scope = scope.parent
        for scope in reversed(chain):
            machine.scope.names.update({k: v for k, v in scope.names.items() if isinstance(v, Const)})
        return machine.eval(node, 1).vals[0]

    def static(self, found, dims, quals, node: Node):
        """`__shared__` (per block) or `__device__`/`__constant__` (per program) storage."""
        pool = self.block.shared if "__shared__" in quals else self.block.globals
        key = (node.start_byte, found.name)
        if key not in pool:
            size = math.prod(dims) if dims else (self.block.dynamic_shared(found.ctype) if found.dims else 1)
            space = "__shared__" if "__shared__" in quals else "__device__"
            pool[key] = Buffer(found.name, found.ctype, [convert(0, found.ctype)] * size, space, tuple(dims))
            if space == "__shared__" and found.value is None:
                pool[key].poison(self.strict)   # not zeroed on a GPU: a read before a write is garbage
            if found.value is not None:
                self.initialize(pool[key], found.value)
        buf = pool[key]
        if not found.dims:
            return Alias(found.name, MemRef(found.ctype, [Pointer(buf, 0)] * self.wave))
        return ArrayVar(found.name, PtrType(found.ctype, tuple(dims[1:])), [Pointer(buf, 0)] * self.wave)

    def local_array(self, found, dims, mask: int):
        size = math.prod(dims)
        pointers = []
        for lane in range(self.wave):
            buf = Buffer(f"{found.name}", found.ctype, [convert(0, found.ctype)] * size, "local", tuple(dims))
            pointers.append(Pointer(buf, 0))
        if found.value is not None:
            values = self.initializer(found.value, mask)
            for lane in self.lanes(mask):
                for index, vec in enumerate(values):
                    pointers[lane].buf.check(index, lane)
                    pointers[lane].buf.data[index] = convert(vec.vals[lane], found.ctype)
        return ArrayVar(found.name, PtrType(found.ctype, tuple(dims[1:])), pointers)

    def initializer(self, node: Node, mask: int) -> list[Vec]:
        if node.type != "initializer_list":
            raise SimError(f"unsupported array initializer at {self.where(node)}")
        return [self.eval(item, mask) for item in node.named_children]

    def initialize(self, buf: Buffer, node: Node) -> None:
        for index, item in enumerate(node.named_children if node.type == "initializer_list" else [node]):
            buf.check(index, 0)
            buf.data[index] = convert(self.constant(item), buf.ctype)

    # -- calls ---------------------------------------------------------------------------------

    def e_call_expression(self, node: Node, mask: int) -> Vec:
        function = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments").named_children
        targs: list[Node] = []
        if function.type == "field_expression" and (result := self.collective_call(node, mask)) is not None:
            return result
        if function.type == "template_function":
            targs = function.child_by_field_name("arguments").named_children
            function = function.child_by_field_name("name")
        name = text(function).split("::")[-1]
        if name in CASTS:
            return self.cast(self.type_of(targs[0]), self.eval(args[0], mask), mask)
        user = self.program.function(name, len(args))
        if user is not None:
            return self.call(user, targs, args, mask, node)
        if name in INTRINSICS:
            return INTRINSICS[name](self, [self.eval(a, mask) for a in args], mask, node)
        raise SimError(f"unknown function {name} at {self.where(node)}")

    def call(self, fn: Function, targs: list[Node], args: list[Node], mask: int, node: Node) -> Vec:
        if len(self.frames) > MAX_DEPTH:
            raise SimError(f"call depth over {MAX_DEPTH} at {self.where(node)}")
        params = fn.params
        values = [self.ref(a, mask) if declared(p.child_by_field_name("declarator"), None).reference
                  else self.eval(a, mask) for p, a in zip(params, args)]
        scope, types = Scope(), {}
        self.bind_template(fn, targs, scope, types, params, values)
        saved = self.scope, self.types
        self.scope, self.types = scope, types
        try:
            for index, param in enumerate(params):
                found = declared(param.child_by_field_name("declarator"), self.type_of(param.child_by_field_name("type")))
                if found.reference:
                    scope.names[found.name] = Alias(found.name, values[index])
                    continue
                var = Var(found.name, found.ctype, self.wave)
                given = values[index] if index < len(values) else self.eval(param.child_by_field_name("default_value"), mask)
                var.ref().store(self.lanes(mask), given)
                scope.names[found.name] = var
            return self.invoke(fn, mask)
        finally:
            self.scope, self.types = saved

    def invoke(self, fn: Function, mask: int) -> Vec:
        ret_node = fn.node.child_by_field_name("type")
        ret_type = None if ret_node.type == "placeholder_type_specifier" or text(ret_node) == "void" else self.type_of(ret_node)
        frame = Frame(ret_type, self.wave)
        self.frames.append(frame)
        try:
            self.s_compound_statement(fn.node.child_by_field_name("body"), mask)
        finally:
            self.frames.pop()
        return Vec(frame.ret_type or CType("void", 0), frame.ret_vals)

    def bind_template(self, fn: Function, targs, scope: Scope, types: dict, params, values, preset=None) -> None:
        """Template parameters: explicit, preset (a launched kernel's), defaulted or deduced."""
        preset = preset or {}
        for index, decl in enumerate(fn.template):
            given = targs[index] if index < len(targs) else None
            if decl.type in ("type_parameter_declaration", "optional_type_parameter_declaration"):
                name = text(decl.child_by_field_name("name") or decl.named_children[0])
                if name in preset:
                    types[name] = preset[name]
                    continue
                default = decl.child_by_field_name("default_type")
                chosen = given if given is not None else default
                if chosen is not None:
                    types[name] = self.type_of(chosen)
                else:
                    types[name] = self.deduce(name, params, values)
                continue
            found = declared(decl.child_by_field_name("declarator"), self.type_of(decl.child_by_field_name("type")))
            if found.name in preset:
                scope.names[found.name] = Const(found.ctype, convert(preset[found.name], found.ctype))
                continue
            source = given if given is not None else decl.child_by_field_name("default_value")
            if source is None:
                raise SimError(f"template argument {found.name} of {fn.name} cannot be deduced")
            scope.names[found.name] = Const(found.ctype, convert(self.constant(source), found.ctype))

    def deduce(self, name: str, params, values) -> CType:
        for param, value in zip(params, values):
            if text(param.child_by_field_name("type")) == name:
                ctype = value.ctype
                return ctype.elem if isinstance(ctype, PtrType) and "*" in text(param) else ctype
        raise SimError(f"template type {name} cannot be deduced")
