"""A PyTorch C++/CUDA extension built with CUDAExtension.

What it finds:
    `CUDAExtension(...)` in setup.py and other Python build scripts (torch.utils.cpp_extension),
    also through a name bound to it: `from torch.utils.cpp_extension import CUDAExtension as X`,
    `Extension = CppExtension if suffix == "cpu" else CUDAExtension` (pytorch_scatter), then
    `Extension(...)`. The file is read with Python's parser, never run. At high severity: a
    test of `CUDA_HOME` that picks the GPU build (`torch.cuda.is_available() and CUDA_HOME is not
    None`), false on ROCm's PyTorch, whose CUDA_HOME is None (buildfiles/setup_cuda_home.py).

Why it matters on AMD GPUs:
    PyTorch for ROCm builds a CUDAExtension by running its own hipify over the sources and
    compiling them with hipcc, so the call itself can stay. What breaks is everything the
    hipify step does not fix: nvcc-only `extra_compile_args` (reported as PK505), inline PTX,
    warp-size assumptions and CUDA-only libraries in the kernels (reported in the sources).

Example:
    CUDAExtension("my_ext._C", ["csrc/ops.cu"], extra_compile_args={"nvcc": ["-arch=sm_80"]})

Instead:
    Keep CUDAExtension, make `extra_compile_args["nvcc"]` portable (no -arch, no -Xptxas), set
    `PYTORCH_ROCM_ARCH` for the AMD targets, and build and test the extension against a ROCm
    PyTorch wheel.

Effort:
    A day or two per extension for the build and its tests (in the effort table).
"""

import ast
import re

from ..engine.context import ScanContext
from ..engine.rule import define
from ..engine.textmatch import flag_matches

RULE = define(__doc__, code="PK506", name="torch-cuda-extension", severity="medium", category="build",
              build_file=True)
FILE_KINDS = ("python",)
CLASS = "CUDAExtension"
PATTERN = re.compile(r"\bCUDAExtension\s*\(")
MESSAGE = ("PyTorch CUDA extension ({}): built by PyTorch's hipify on ROCm; nvcc-only arguments and kernel code "
           "need review")


def check_text(ctx: ScanContext) -> None:
    before = len(ctx.findings)
    flag_matches(ctx, RULE, PATTERN, MESSAGE)
    data = ctx.source.data
    if CLASS.encode() in data:
        for call, name in _aliased_calls(data):
            start = ctx.source.line_starts()[call.lineno - 1] + call.col_offset
            ctx.flag(RULE, start, start + len(name.encode()), MESSAGE.format(f"`{name}`, bound to {CLASS}"),
                     subject=name)
    if len(ctx.findings) > before:
        ctx.metrics.cuda_extension = True


def _aliased_calls(data: bytes) -> list[tuple[ast.Call, str]]:
    """The calls of a plain name bound to CUDAExtension in the scope that calls it (the literal
    name is the pattern's). A file Python cannot parse has none: the pattern still reads it."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError):   # RecursionError: nesting past the parser's depth
        return []
    found: list[tuple[ast.Call, str]] = []
    _scope(tree, frozenset(), found)
    return sorted(found, key=lambda c: (c[0].lineno, c[0].col_offset))


def _scope(scope: ast.AST, outer: frozenset[str], found: list) -> None:
    """Python's scoping, simply: a name bound in a function is that function's (an alias or not),
    any other it reads from the scopes around it; a class body's names stay in the class."""
    nodes = list(_own_nodes(scope))
    bound = {name for node in nodes for name in _bound_names(node)}
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):   # its parameters
        a = scope.args
        bound |= {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None}
    aliases, grown = set(outer - bound), True
    while grown:   # `A = CUDAExtension`, `B = A`: until no assignment adds a name
        grown = False
        for node in nodes:
            for name in _aliases_of(node, aliases):
                if name != CLASS and name not in aliases:
                    aliases.add(name)
                    grown = True
    inherited = frozenset(aliases) if not isinstance(scope, ast.ClassDef) else outer
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in aliases:
            found.append((node, node.func.id))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            _scope(node, inherited, found)


def _own_nodes(scope: ast.AST):
    """The nodes of a scope, its nested functions and classes themselves but not their bodies."""
    todo = list(scope.body) if isinstance(scope.body, list) else [scope.body]
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def _bound_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        return [node.id]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    return []


def _aliases_of(node: ast.AST, aliases: set[str]) -> list[str]:
    """The names `node` binds to CUDAExtension: `import CUDAExtension as X`, `X = <a value that
    may be it>` (an annotated or walrus assignment too)."""
    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torch.utils.cpp_extension"):
        return [a.asname for a in node.names if a.name == CLASS and a.asname]
    if isinstance(node, ast.Assign) and _may_be(node.value, aliases):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None and \
            isinstance(node.target, ast.Name) and _may_be(node.value, aliases):
        return [node.target.id]
    return []


def _may_be(value: ast.AST, aliases: set[str]) -> bool:
    """The value may be the class: its name, an alias, `cpp_extension.CUDAExtension`, either
    branch of a conditional expression, an operand of `and`/`or`."""
    if isinstance(value, ast.Name):
        return value.id == CLASS or value.id in aliases
    if isinstance(value, ast.Attribute):
        return value.attr == CLASS
    if isinstance(value, ast.IfExp):
        return _may_be(value.body, aliases) or _may_be(value.orelse, aliases)
    if isinstance(value, ast.BoolOp):
        return any(_may_be(v, aliases) for v in value.values)
    return False
