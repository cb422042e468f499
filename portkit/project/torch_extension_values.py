"""The expressions of a setup.py, valued without running them (torch_extension_eval.py's half).

A value is a Python str, int, bool, None, list, tuple or dict the file built from literals, a
PathValue, one of the file's own functions, an outside name (Sym: what an import binds, a
builtin), a method bound to a value, or UNKNOWN. Calls go to torch_extension_calls.py; any
Python error an operation raises (a str method on odd arguments) makes its value UNKNOWN.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass

from .torch_extension_calls import CONSTANTS, ITEMS, UNKNOWN, WIDE, call, method
from .torch_extension_fs import PathValue, norm

OUTER = "\0outer"   # an environment's key for the one it is nested in
_KNOWN = (str, int, float, bool, type(None), list, tuple, dict, PathValue)
_BINARY = {ast.Add: operator.add, ast.Mod: operator.mod, ast.Sub: operator.sub, ast.FloorDiv: operator.floordiv}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
            ast.NotIn: lambda a, b: a not in b, ast.Is: operator.is_, ast.IsNot: operator.is_not}


@dataclass(frozen=True)
class Sym:
    """A name from outside the file: an import (`torch.utils.cpp_extension.CUDAExtension`), a builtin."""

    name: str


@dataclass(eq=False)
class Function:
    node: ast.FunctionDef
    outer: dict


@dataclass(eq=False)
class Method:
    obj: object
    name: str


def truth(v) -> bool | None:
    if isinstance(v, PathValue):
        return True
    return bool(v) if isinstance(v, _KNOWN) else None


def join(a, b):
    """What a name holds after two branches that bound it to a and b: a list both items lists may
    hold (either build may be the one torch runs; a list one branch left UNKNOWN is the other's),
    else the value both bound, else UNKNOWN (`is_rocm = ... if c else False` is not False)."""
    if a is b:
        return a
    if a is UNKNOWN or b is UNKNOWN:
        known = b if a is UNKNOWN else a
        return known if isinstance(known, list) else UNKNOWN
    if isinstance(a, list) and isinstance(b, list):
        return a + [x for x in b if x not in a]
    if type(a) is type(b) and isinstance(a, (str, int, bool, tuple, PathValue)) and a == b:
        return a
    return UNKNOWN


def extension(sym: Sym) -> str:
    """"CUDAExtension" or "load" where the outside name is torch's, else ""."""
    last = sym.name.rsplit(".", 1)[-1]
    if last == "CUDAExtension" or (last == "load" and (sym.name == "load" or "cpp_extension" in sym.name)):
        return last
    return ""


class Expressions:
    """expr() and what it needs; the reader (torch_extension_eval._Reader) gives tick, lookup,
    invoke, record and spec."""

    def expr(self, node: ast.expr | None, env: dict):
        self.tick()
        try:
            return self._expr(node, env)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError, OverflowError):
            return UNKNOWN

    def _expr(self, node, env):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.lookup(node.id, env)
        if isinstance(node, ast.Attribute):
            return self.attribute(self.expr(node.value, env), node.attr)
        if isinstance(node, ast.JoinedStr):
            parts = [self.expr(v.value, env) if isinstance(v, ast.FormattedValue) and v.format_spec is None
                     else v.value if isinstance(v, ast.Constant) else UNKNOWN for v in node.values]
            return "".join(p.p if isinstance(p, PathValue) else str(p) for p in parts) \
                if all(isinstance(p, (str, int, PathValue)) for p in parts) else UNKNOWN
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = []
            for e in node.elts:
                value = self.expr(e.value if isinstance(e, ast.Starred) else e, env)
                items += list(value) if isinstance(e, ast.Starred) and isinstance(value, (list, tuple)) else [value]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Dict):
            return {self.expr(k, env): self.expr(v, env) for k, v in zip(node.keys, node.values) if k is not None}
        if isinstance(node, ast.BinOp):
            return self.binary(node.op, self.expr(node.left, env), self.expr(node.right, env))
        if isinstance(node, ast.Call):
            return self.call_node(node, env)
        return self._expr_more(node, env)

    def _expr_more(self, node, env):
        if isinstance(node, ast.Subscript):
            box, key = self.expr(node.value, env), self.expr(node.slice, env)
            return box[key] if isinstance(box, (str, list, tuple, dict)) and isinstance(key, (int, str, slice)) else UNKNOWN
        if isinstance(node, ast.Slice):
            parts = [self.expr(p, env) if p is not None else None for p in (node.lower, node.upper, node.step)]
            return slice(*parts) if all(isinstance(p, (int, type(None))) for p in parts) else UNKNOWN
        if isinstance(node, ast.BoolOp):
            return self.boolean(node, env)
        if isinstance(node, ast.UnaryOp):
            value = self.expr(node.operand, env)
            if isinstance(node.op, ast.Not):
                known = truth(value)
                return UNKNOWN if known is None else not known
            return -value if isinstance(node.op, ast.USub) and isinstance(value, (int, float)) else UNKNOWN
        if isinstance(node, ast.Compare):
            return self.compare(node, env)
        if isinstance(node, ast.IfExp):
            known = truth(self.expr(node.test, env))
            if known is not None:
                return self.expr(node.body if known else node.orelse, env)
            self.spec += 1
            try:
                return join(self.expr(node.body, env), self.expr(node.orelse, env))
            finally:
                self.spec -= 1
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.comprehension(node.generators, node.elt, dict(env, **{OUTER: env}))
        if isinstance(node, ast.NamedExpr):
            value = self.expr(node.value, env)
            env[node.target.id] = value
            return value
        return UNKNOWN

    def attribute(self, base, name: str):
        if isinstance(base, Sym):
            dotted = f"{base.name}.{name}"
            return CONSTANTS.get(dotted, Sym(dotted))
        if isinstance(base, PathValue):
            value = base.attribute(name)
            return Method(base, name) if value is None else value
        return Method(base, name) if isinstance(base, (str, list, dict)) else UNKNOWN

    def boolean(self, node: ast.BoolOp, env: dict):
        """`a and b` / `a or b` over three values: a known deciding operand decides."""
        stop = isinstance(node.op, ast.Or)
        value, unsure = UNKNOWN, False
        for operand in node.values:
            value = self.expr(operand, env)
            known = truth(value)
            if known is stop:
                return value
            unsure |= known is None
        return UNKNOWN if unsure else value

    def binary(self, op: ast.operator, a, b):
        if isinstance(op, ast.Div) and isinstance(a, PathValue) and isinstance(b, (str, PathValue)):
            return PathValue(norm(a.p + "/" + (b.p if isinstance(b, PathValue) else b)) if a.p else norm(
                b.p if isinstance(b, PathValue) else b))
        if isinstance(op, ast.Mult) and isinstance(a, (str, list, tuple)) and isinstance(b, int):
            return a * b if len(a) * b <= ITEMS * 64 else UNKNOWN
        if isinstance(op, ast.Mod) and isinstance(a, str) and "%" in a:
            return UNKNOWN if WIDE.search(a) else a % b
        fn = _BINARY.get(type(op))
        if fn is None or not isinstance(a, _KNOWN) or not isinstance(b, _KNOWN) or isinstance(a, PathValue):
            return UNKNOWN
        return fn(a, b)

    def compare(self, node: ast.Compare, env: dict):
        left = self.expr(node.left, env)
        for op, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node, env)
            if not isinstance(left, _KNOWN) or not isinstance(right, _KNOWN):
                return UNKNOWN
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def call_node(self, node: ast.Call, env: dict):
        func = self.expr(node.func, env)
        args: list = []
        for a in node.args:
            value = self.expr(a.value if isinstance(a, ast.Starred) else a, env)
            args += list(value) if isinstance(a, ast.Starred) and isinstance(value, (list, tuple)) else [value]
        kw = {k.arg: self.expr(k.value, env) for k in node.keywords if k.arg is not None}
        if isinstance(func, Sym):
            callee = extension(func)
            if callee:
                self.record(node, callee, args, kw)
                return UNKNOWN
            return call(func.name, args, kw, self.tree)
        if isinstance(func, Function):
            return self.invoke(func, args, kw)
        if isinstance(func, Method):
            return method(func.obj, func.name, args, kw, self.tree)
        return UNKNOWN

    def comprehension(self, generators: list[ast.comprehension], elt: ast.expr, env: dict) -> list:
        """A list comprehension's items; an `if` on UNKNOWN keeps the item (either build may hold)."""
        if not generators:
            return [self.expr(elt, env)]
        first, out = generators[0], []
        items = self.expr(first.iter, env)
        if not isinstance(items, (list, tuple, str, dict)):
            return []
        for item in list(items)[:ITEMS]:
            self.assign(first.target, item, env)
            if all(truth(self.expr(test, env)) is not False for test in first.ifs):
                out += self.comprehension(generators[1:], elt, env)
            if len(out) > ITEMS:
                break
        return out
