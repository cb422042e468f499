"""A setup.py's extension calls and their sources, read by evaluating the file without running it.

Extensions list their sources in many shapes: pytorch_scatter's setup.py loops over
`product(glob.glob(osp.join('csrc', '*.cpp')), suffices)`, derives each name with
`main.split(os.sep)[-1][:-4]`, adds `osp.join('csrc', 'cuda', f'{name}_cuda.cu')` when
`osp.exists(path)`, and calls `Extension(...)` after `Extension = CppExtension if suffix == 'cpu'
else CUDAExtension`. A pattern match over the text sees none of that (issue 53), so this module
walks the file's ast as an interpreter would, over a tiny safe subset of Python:

- statements: assignments (also `+=` in place, unpacking, `d[k] = v`), if/elif/else, for (with
  break/continue), with, try (its body), def and calls of the file's own functions, return,
  imports (bound as outside names: `osp.join` is the name `os.path.join`);
- expressions: literals, f-strings, names, attributes, subscripts and slices, + % / * on known
  values, comparisons, and/or/not, `x if c else y`, comprehensions, and the calls
  torch_extension_calls.py answers (os.path, glob, os.listdir/os.walk, pathlib, builtins, str and
  list methods), the disk asked through the walked tree, never the real one.

What it cannot know (an environment variable, `torch.cuda.is_available()`, `sys.argv`) is
UNKNOWN. An `if` on UNKNOWN runs both branches and joins what they bind (lists: the union, so
`['cpu', 'cuda'] if WITH_CUDA else ['cpu']` is both), since either build may be the one torch
runs; a loop over UNKNOWN runs its body once that way. A function the module never calls runs once
with UNKNOWN arguments. Bounded: STEPS nodes, ITEMS per list or loop, DEPTH nested calls; past
them the reader keeps what it found. No code of the file is executed, imported or compiled.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .torch_extension_calls import ITEMS, UNKNOWN
from .torch_extension_fs import PathValue, Tree
from .torch_extension_values import OUTER, Expressions, Function, Sym, join, truth

STEPS = 50_000
DEPTH = 8
KEYWORDS = ("define_macros", "extra_compile_args")


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Budget(Exception):
    pass


def extension_calls(tree: ast.Module, filename: str, files: set[str]) -> list[tuple[int, str, list[str]]]:
    """(line, callee, source paths) of each CUDAExtension / cpp_extension.load call the module makes,
    the paths relative to its folder; `files`: the walked files there, relative to it."""
    reader = _Reader(Tree(files), filename)
    try:
        reader.module(tree)
    except (_Budget, RecursionError):
        pass
    return [(line, callee, list(paths)) for (line, callee), paths in sorted(reader.found.items())]


def extension_keywords(tree: ast.Module, filename: str, files: set[str]) -> list[tuple[int, str, dict[str, list]]]:
    """(line, callee, {keyword: the values passed, one per run of the call}) of the KEYWORDS each
    CUDAExtension / load call is given: project/setup_defines.py reads the macros the build gives."""
    reader = _Reader(Tree(files), filename)
    try:
        reader.module(tree)
    except (_Budget, RecursionError):
        pass
    return [(line, callee, given) for (line, callee), given in sorted(reader.keywords.items())]


def _copy(v):
    if isinstance(v, (list, tuple)):
        return type(v)(_copy(x) for x in v)
    return {k: _copy(x) for k, x in v.items()} if isinstance(v, dict) else v


def _flatten(v) -> list[str]:
    if isinstance(v, (str, PathValue)):
        return [v.p if isinstance(v, PathValue) else v]
    if isinstance(v, (list, tuple)):
        return [s for item in v for s in _flatten(item)]
    return []


@dataclass
class _Reader(Expressions):
    tree: Tree
    filename: str
    found: dict = field(default_factory=dict)      # (line, callee) -> {path: None}, in order
    keywords: dict = field(default_factory=dict)   # (line, callee) -> {KEYWORDS name: [value per run]}
    steps: int = 0
    spec: int = 0                                  # how many UNKNOWN branches we are inside
    loops: list = field(default_factory=list)      # spec at each enclosing loop's entry
    returns: list = field(default_factory=list)    # the values each running function returned
    called: set = field(default_factory=set)

    def tick(self) -> None:
        self.steps += 1
        if self.steps > STEPS:
            raise _Budget

    def module(self, tree: ast.Module) -> None:
        env: dict = {"__file__": self.filename, "__name__": "__main__"}
        try:
            self.block(tree.body, env)
        except _Return:
            pass
        self.spec += 1
        for value in list(env.values()):
            if isinstance(value, Function) and value.node not in self.called:
                self.invoke(value, [], {})

    def block(self, body: list[ast.stmt], env: dict) -> None:
        for node in body:
            self.stmt(node, env)

    def stmt(self, node: ast.stmt, env: dict) -> None:
        self.tick()
        if isinstance(node, ast.Expr):
            self.expr(node.value, env)
        elif isinstance(node, ast.Assign):
            value = self.expr(node.value, env)
            for target in node.targets:
                self.assign(target, value, env)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.assign(node.target, self.expr(node.value, env), env)
        elif isinstance(node, ast.AugAssign):
            self.augassign(node, env)
        elif isinstance(node, ast.If):
            self.branch(self.expr(node.test, env), node.body, node.orelse, env)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.loop(node, env)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, UNKNOWN, env)
            self.block(node.body, env)
        elif isinstance(node, ast.Try):
            self.block(node.body + node.orelse + node.finalbody, env)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            env[node.name] = Function(node, env)
        elif isinstance(node, ast.ClassDef):
            env[node.name] = Sym(node.name)
        else:
            self.other(node, env)

    def other(self, node: ast.stmt, env: dict) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                env[a.asname or a.name.split(".")[0]] = Sym(a.name if a.asname else a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if a.name != "*":
                    env[a.asname or a.name] = Sym(f"{node.module or ''}.{a.name}".lstrip("."))
        elif isinstance(node, ast.Return):
            raise _Return(self.expr(node.value, env) if node.value is not None else None)
        elif isinstance(node, ast.Raise):
            raise _Return(UNKNOWN)
        elif isinstance(node, (ast.Break, ast.Continue)) and self.loops and self.loops[-1] == self.spec:
            raise _Break if isinstance(node, ast.Break) else _Continue

    def branch(self, test, body: list[ast.stmt], orelse: list[ast.stmt], env: dict) -> None:
        known = truth(test)
        if known is not None:
            self.block(body if known else orelse, env)
            return
        before, after = dict(env), []
        self.spec += 1
        try:
            for part in (body, orelse):
                env.clear()
                env.update(before)
                try:
                    self.block(part, env)
                except _Return as r:
                    if self.returns:
                        self.returns[-1].append(r.value)
                after.append(dict(env))
        finally:
            self.spec -= 1
        env.clear()
        for name in {**after[0], **after[1]}:
            a, b = after[0].get(name, UNKNOWN), after[1].get(name, UNKNOWN)
            env[name] = join(a, b) if name in after[0] and name in after[1] else a if name in after[0] else b

    def loop(self, node: ast.For, env: dict) -> None:
        items = self.expr(node.iter, env)
        if not isinstance(items, (list, tuple, str, dict)):
            self.assign(node.target, UNKNOWN, env)
            self.branch(UNKNOWN, node.body, [], env)
            return
        self.loops.append(self.spec)
        try:
            for item in list(items)[:ITEMS]:
                self.assign(node.target, item, env)
                try:
                    self.block(node.body, env)
                except _Break:
                    break
                except _Continue:
                    continue
            else:
                self.block(node.orelse, env)
        finally:
            self.loops.pop()

    def assign(self, target: ast.expr, value, env: dict) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            parts = list(value) if isinstance(value, (list, tuple)) else []
            if len(parts) != len(target.elts):
                parts = [UNKNOWN] * len(target.elts)
            for t, v in zip(target.elts, parts):
                self.assign(t, v, env)
        elif isinstance(target, ast.Subscript):
            box, key = self.expr(target.value, env), self.expr(target.slice, env)
            if isinstance(box, dict) and isinstance(key, (str, int, tuple)):
                box[key] = value

    def augassign(self, node: ast.AugAssign, env: dict) -> None:
        now, value = self.expr(node.target, env), self.expr(node.value, env)
        if isinstance(now, list) and isinstance(node.op, ast.Add) and isinstance(value, (list, tuple)):
            now.extend(value)   # `sources += [...]` extends the list in place, as Python does
            return
        self.assign(node.target, self.binary(node.op, now, value), env)

    def lookup(self, name: str, env: dict):
        scope = env
        while scope is not None:
            if name in scope:
                return scope[name]
            scope = scope.get(OUTER)
        return Sym(name)

    def invoke(self, func: Function, args: list, kw: dict):
        """The value of calling one of the file's own functions (the join of what it returns)."""
        if len(self.returns) >= DEPTH:
            return UNKNOWN
        self.called.add(func.node)
        params, local = func.node.args, {OUTER: func.outer}
        names = [a.arg for a in params.posonlyargs + params.args]
        defaults = [None] * (len(names) - len(params.defaults)) + list(params.defaults)
        for i, (name, default) in enumerate(zip(names, defaults)):
            given = args[i] if i < len(args) else kw.get(name, UNKNOWN)
            local[name] = self.expr(default, func.outer) if given is UNKNOWN and default is not None else given
        for a in params.kwonlyargs:
            local[a.arg] = kw.get(a.arg, UNKNOWN)
        if params.vararg:
            local[params.vararg.arg] = tuple(args[len(names):])
        if params.kwarg:
            local[params.kwarg.arg] = {k: v for k, v in kw.items() if k not in names}
        self.returns.append([])
        try:
            self.block(func.node.body, local)
        except _Return as r:
            self.returns[-1].append(r.value)
        finally:
            values = self.returns.pop()
        result = values[0] if values else None
        for v in values[1:]:
            result = join(result, v)
        return result

    def record(self, node: ast.Call, callee: str, args: list, kw: dict) -> None:
        value = kw.get("sources", args[1] if len(args) > 1 else None)
        paths = _flatten(value)
        if paths:
            self.found.setdefault((node.lineno, callee), {}).update(dict.fromkeys(paths))
        for name in KEYWORDS:
            if name in kw:   # a copy: the file may extend the list it passed after the call
                self.keywords.setdefault((node.lineno, callee), {}).setdefault(name, []).append(_copy(kw[name]))

