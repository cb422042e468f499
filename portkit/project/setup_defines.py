"""The macros a setup.py's default build gives its CUDA extensions, which the sources' `#if` may test.

pytorch_scatter's csrc/scatter.cpp calls its CUDA kernels under `#ifdef WITH_CUDA`, and its
setup.py gives that macro to every CUDAExtension it builds (`define_macros += [('WITH_CUDA', None)]`
when the loop's suffix is 'cuda'). A macro the build passes is defined in the build being ported,
as a CMake add_compile_definitions or a command-line -D is, so code under it is no optional feature
(optional.py reads a `WITH_X` no one defines as one). Two readings agree on each macro:

- the file evaluated without running it (torch_extension_eval.extension_keywords): the macro is in
  a CUDAExtension's or cpp_extension.load's `define_macros` (`('X', None)`, `('X', '1')`) or its
  `extra_compile_args` (`-DX`, `-DX=1`, `'-D', 'X'`, for nvcc or cxx). Only calls torch compiles
  for the GPU count: a CppExtension's macros say nothing of CUDA code;
- where the macro is written: not inside an `if` branch a setup.py switch alone takes
  (setup_switches.py: `if os.getenv('FORCE_X') == '1':`, a `--flag`, unless the switch is the
  default build, apex's `--cuda_ext`), nor one the CUDA build on Linux does not take: the ROCm
  side of a vendor test (`if torch.version.hip:` adds USE_ROCM for the AMD build; its else side is
  the CUDA build's), a Windows or macOS branch (`if sys.platform == 'win32':`). Other tests
  (versions, what torch was built with) are taken to hold, as setup_switches.py takes them.

The evaluation joins both sides of a test it cannot decide, so it alone would take a switch's or
the AMD build's macros as given; the place a macro is written alone would take a macro no GPU
extension receives. The file is parsed, never run; one over MAX_BYTES or one that does not parse
gives nothing.
"""

from __future__ import annotations

import ast
import posixpath
import re

from ..buildfiles import setup_switches
from ..buildfiles.setup_torch import ROCM_NAMES
from .torch_extension_eval import extension_keywords

MAX_BYTES = setup_switches.MAX_BYTES
_MACRO = re.compile(r"-D([A-Za-z_]\w*)(?:=.*)?\Z", re.S)
_NAME = re.compile(r"[A-Za-z_]\w*\Z")


def default_macros(path: str, data: bytes, paths: frozenset[str]) -> frozenset[str]:
    """The macros setup.py `path` gives its GPU extensions in a default build; `paths`: the
    tree's files, which answer its globs and path tests."""
    if len(data) > MAX_BYTES or b"Extension" not in data and b"load" not in data:
        return frozenset()
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    base = posixpath.dirname(path)
    under = {p[len(base) + 1:] if base else p for p in paths if not base or p.startswith(base + "/")}
    passed: set[str] = set()
    for _, _, given in extension_keywords(tree, posixpath.basename(path), under):
        for values in given.values():
            for value in values:
                passed |= _macros(value)
    if not passed:
        return frozenset()
    switches, default = setup_switches.read(tree, base, paths)
    try:
        written = _Written(switches, default, tree)
        written.visit(tree, False)
    except RecursionError:   # an expression nested past Python's stack (`a + a + ...` a thousand times)
        return frozenset()
    return frozenset(passed & written.names)


def _macros(value) -> set[str]:
    """The macro names a define_macros or extra_compile_args value holds."""
    if isinstance(value, str):
        m = _MACRO.match(value)
        return {m.group(1)} if m else set()
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str) and _NAME.match(value[0]):
        return {value[0]}   # define_macros' (name, value)
    if isinstance(value, dict):
        value = list(value.values())
    out: set[str] = set()
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            after = value[i + 1] if i + 1 < len(value) else None
            if item == "-D" and isinstance(after, str) and _NAME.match(after):
                out.add(after)
            else:
                out |= _macros(item)
    return out


def _literals(node: ast.AST) -> list[str]:
    """The macros a literal writes: the string `-DX...`, the tuple `('X', ...)`, a list's `'-D', 'X'`
    (a name alone, in `os.getenv('WITH_X')`, writes none)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        m = _MACRO.match(node.value)
        return [m.group(1)] if m else []
    if not isinstance(node, (ast.List, ast.Tuple)):
        return []
    values = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
    if isinstance(node, ast.Tuple) and len(values) == 2 and isinstance(values[0], str) and _NAME.match(values[0]):
        return [values[0]]
    return [b for a, b in zip(values, values[1:]) if a == "-D" and isinstance(b, str) and _NAME.match(b)]


class _Written:
    """The macro names written outside the branches a default CUDA build on Linux does not take."""

    def __init__(self, switches, default: frozenset[str], tree: ast.Module):
        self.switches, self.default = switches, default
        self.known = {name: False for name in ROCM_NAMES}   # a name's truth in that build
        self.names: set[str] = set()
        self._learn(tree)

    def sides(self, test: ast.expr) -> tuple[bool, bool]:
        """Whether that build skips the body, and the else, of an `if` on `test`."""
        label, inverted = self.switches.switch(test)
        optional = bool(label) and label not in self.default
        holds = _holds(test, self.known)
        return optional and not inverted or holds is False, optional and inverted or holds is True

    def visit(self, node: ast.AST, hidden: bool) -> None:
        if isinstance(node, (ast.If, ast.IfExp)):
            skip_body, skip_else = self.sides(node.test)
            self.visit(node.test, hidden)
            body, orelse = (node.body, node.orelse) if isinstance(node, ast.If) else ([node.body], [node.orelse])
            for part in body:
                self.visit(part, hidden or skip_body)
            for part in orelse:
                self.visit(part, hidden or skip_else)
            return
        if not hidden:
            self.names.update(_literals(node))
        for child in ast.iter_child_nodes(node):
            self.visit(child, hidden)

    def _learn(self, tree: ast.Module) -> None:
        """Module-level names that hold a ROCm test (`HIP_BUILD = bool(torch.version.hip)`: false),
        and those set to a constant that only a switch's branch sets again (tiny-cuda-nn's
        `include_networks = True`, False under `if "--no-networks" in sys.argv:`: true)."""
        sets: dict[str, list[tuple[bool, ast.expr]]] = {}
        todo = [(node, False) for node in tree.body]
        while todo:
            node, hidden = todo.pop(0)
            if isinstance(node, ast.If):
                skip_body, skip_else = self.sides(node.test)
                todo += [(n, hidden or skip_body) for n in node.body] + [(n, hidden or skip_else) for n in node.orelse]
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        sets.setdefault(target.id, []).append((hidden, node.value))
        for name, assigned in sets.items():
            (hidden, first), later = assigned[0], assigned[1:]
            if _holds(first, self.known) is False:
                self.known[name] = False
            elif not hidden and isinstance(first, ast.Constant) and all(h for h, _ in later):
                self.known[name] = bool(first.value)


def _holds(test: ast.expr, known: dict[str, bool]) -> bool | None:
    """Whether the test holds in the build being ported, CUDA on Linux: a ROCm test does not
    (`torch.version.hip`, IS_HIP_EXTENSION), `sys.platform == 'win32'` does not; None: unknown."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _holds(test.operand, known)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        parts = [_holds(v, known) for v in test.values]
        decides = isinstance(test.op, ast.Or)   # one True decides `or`, one False decides `and`
        return decides if decides in parts else None if None in parts else not decides
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "bool" and len(test.args) == 1:
        return _holds(test.args[0], known)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return _compare(test, known)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith" \
            and len(test.args) == 1 and isinstance(_const(test.args[0]), str) and _platform(test.func.value):
        return _platform(test.func.value).startswith(test.args[0].value)
    if isinstance(test, ast.Name):
        return known.get(test.id)
    if isinstance(test, ast.Attribute) and test.attr == "hip" and isinstance(test.value, ast.Attribute) \
            and test.value.attr == "version":
        return False
    return None


def _compare(test: ast.Compare, known: dict[str, bool]) -> bool | None:
    op, right = test.ops[0], test.comparators[0]
    if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None:
        inner = _holds(test.left, known)   # `ROCM_HOME is not None` holds where ROCM_HOME does
        return None if inner is None else inner == isinstance(op, ast.IsNot)
    here = _platform(test.left)
    values = [_const(e) for e in right.elts] if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [_const(right)]
    if not here or not all(isinstance(v, str) for v in values):
        return None
    if isinstance(op, (ast.Eq, ast.NotEq)) and len(values) == 1:
        return (here == values[0]) == isinstance(op, ast.Eq)
    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        return (here in values) == isinstance(op, ast.In)
    return None


_PLATFORM = {"sys.platform": "linux", "os.name": "posix", "platform.system()": "Linux"}


def _platform(node: ast.expr) -> str:
    """The value `sys.platform`, `os.name` or `platform.system()` has on the Linux a port builds on."""
    text = ast.unparse(node) if isinstance(node, (ast.Attribute, ast.Call)) else ""
    return _PLATFORM.get(text, "")


def _const(node: ast.expr):
    return node.value if isinstance(node, ast.Constant) else None
