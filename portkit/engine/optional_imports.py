"""Python imports the code runs without: those inside `try:` blocks that catch ImportError.

mamba's modules/mha.py imports flash_attn in `try: ... except ImportError: flash_attn_with_kvcache
= None` and falls back without it; the estimate priced "adopt the ROCm counterpart of flash-attn"
(30.6 h) in its headline. Such an import is optional interop: the estimate prices it apart
(estimate/scope.py), as it does code the default build leaves out.

Read with `ast`, never run; a file that does not parse (Python 2, a template) guards nothing.
"""

from __future__ import annotations

import ast

# handlers that let the code go on without the module: these names, a tuple holding one, or a bare except
_CATCHES = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
MAX_BYTES = 2_000_000   # a generated Python file of this size is not worth an ast


def guarded_lines(data: bytes) -> tuple[tuple[int, int], ...]:
    """(first, last) lines of every `try:` body whose handlers catch a failed import, in order."""
    if b"try" not in data or b"except" not in data or len(data) > MAX_BYTES:
        return ()
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    found = [(node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno)
             for node in ast.walk(tree) if isinstance(node, ast.Try) and node.body
             and any(_catches_import(handler.type) for handler in node.handlers)]
    return tuple(sorted(found))


def _catches_import(kind: ast.expr | None) -> bool:
    if kind is None:
        return True
    if isinstance(kind, ast.Tuple):
        return any(_catches_import(element) for element in kind.elts)
    name = kind.attr if isinstance(kind, ast.Attribute) else kind.id if isinstance(kind, ast.Name) else ""
    return name in _CATCHES
