"""setup.py tests of CUDA_HOME that turn a ROCm build into a CPU-only one (issue 53).

pytorch_scatter's setup.py builds its CUDA sources when
`WITH_CUDA = torch.cuda.is_available() and CUDA_HOME is not None`. On ROCm's PyTorch, CUDA_HOME
is None (torch.utils.cpp_extension finds no CUDA toolkit; ROCM_HOME is the ROCm one), so the
GPU extension is silently never built: no error, a CPU-only package. Its AMD port wrote
`CUDA_HOME is not None or torch.version.hip`. The test is a gate when it decides a branch or a
boolean: `CUDA_HOME is not None`, `CUDA_HOME is None`, or `CUDA_HOME` itself read as a truth value (an
`if`/`while` test, a `not` operand, through `and`/`or` there), in code both builds run, whose
expression names no ROCm test already, and not the test of a branch that uses the path itself
(mamba's `if CUDA_HOME is not None: get_cuda_bare_metal_version(CUDA_HOME)` runs CUDA's nvcc: the
ROCm build must not take it).

convert writes the ROCm build into the test, with the file's own name for it (setup_torch.Branches:
its HIP_BUILD-like name, `torch.version.hip`, else IS_HIP_EXTENSION, imported): `(CUDA_HOME is not
None or TEST)`, `(CUDA_HOME is None and not TEST)`, `(CUDA_HOME or TEST)`. The NVIDIA build tests
what it tested (TEST is false there). Rule PK506 reports the same gates (one decision, both sides).
Nothing is executed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

NAME = "CUDA_HOME"
# the statements and expressions whose `test` is read as a truth value
_TESTS = (ast.If, ast.IfExp, ast.While, ast.Assert)


@dataclass(frozen=True)
class Gate:
    node: ast.expr          # the Compare or the Name
    kind: str               # "is not None", "is None" or "truthy"

    @property
    def on_rocm(self) -> str:
        """What the test is on ROCm's PyTorch, whose CUDA_HOME is None."""
        return "true" if self.kind == "is None" else "false"

    def rewritten(self, text: str, test: str) -> str:
        """`text` (the node's source) with the ROCm build's test beside it."""
        if self.kind == "is None":
            return f"({text} and not {test})"
        return f"({text} or {test})"


def gates(tree: ast.Module, branches) -> list[Gate]:
    """The CUDA_HOME tests in `tree` that would leave ROCm's PyTorch without the GPU build, in
    source order (`branches`: setup_torch.Branches of the same tree)."""
    found: list[Gate] = []
    for node in ast.walk(tree):
        gate = _gate(node, branches.parents)
        if gate is None or branches.side(gate.node) != "both" or _names_rocm(gate.node, branches) or \
                _guards_a_use(gate.node, branches.parents):
            continue
        found.append(gate)
    return sorted(found, key=lambda g: (g.node.lineno, g.node.col_offset))


def _gate(node: ast.AST, parents: dict) -> Gate | None:
    if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == NAME \
            and len(node.ops) == 1 and isinstance(node.comparators[0], ast.Constant) \
            and node.comparators[0].value is None and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
        return Gate(node, "is not None" if isinstance(node.ops[0], ast.IsNot) else "is None")
    if isinstance(node, ast.Name) and node.id == NAME and isinstance(node.ctx, ast.Load) and _tested(node, parents):
        return Gate(node, "truthy")
    return None


def _tested(node: ast.AST, parents: dict) -> bool:
    """The name is read as a truth value only: an `if`/`while`/conditional/assert test or a `not`
    operand, directly or through `and`/`or` there. A value use (`CUDA_HOME or "/usr/local/cuda"`
    assigned to a path) is not a gate: `or TEST` there would make the path the HIP version."""
    child, parent = node, parents.get(node)
    while isinstance(parent, ast.BoolOp):
        child, parent = parent, parents.get(parent)
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return True
    return isinstance(parent, _TESTS) and parent.test is child


def _guards_a_use(node: ast.AST, parents: dict) -> bool:
    """Whether the test guards a use of the path itself: mamba's `if CUDA_HOME is not None:
    get_cuda_bare_metal_version(CUDA_HOME)` runs CUDA's nvcc, which a ROCm build has not got, so
    the ROCm build must not take that branch (with `or TEST` it would call it with None)."""
    child, parent = node, parents.get(node)
    while parent is not None and not (isinstance(parent, _TESTS) and parent.test is child):
        if isinstance(parent, ast.stmt):
            return False     # the gate is not a branch's test (an assignment: WITH_CUDA = ...)
        child, parent = parent, parents.get(parent)
    if parent is None:
        return False
    branches = [parent.body, parent.orelse] if isinstance(parent, ast.IfExp) else \
        [*getattr(parent, "body", []), *getattr(parent, "orelse", [])]
    return any(isinstance(n, ast.Name) and n.id == NAME for part in branches for n in ast.walk(part))


def _names_rocm(node: ast.AST, branches) -> bool:
    """Whether the whole expression the gate sits in already tests the ROCm build
    (`CUDA_HOME is not None or torch.version.hip`, the port's own form)."""
    top = node
    parent = branches.parents.get(top)
    while isinstance(parent, (ast.BoolOp, ast.UnaryOp, ast.Compare, ast.Call)):
        top, parent = parent, branches.parents.get(parent)
    return any(branches.vendor_test(part) is not None for part in ast.walk(top) if isinstance(part, (ast.Name, ast.Attribute)))
