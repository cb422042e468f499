"""A `__device__` function with a return type that has no `return` statement at all.

What it finds:
    A `__device__` (or `__host__ __device__`) function definition whose declared return type is
    neither `void` nor deduced (`auto`, `decltype(auto)`), and whose body holds no `return`
    statement of its own (one inside a lambda does not count): it falls off its end on every
    path. Not reported where the body ends the path another way or may hide a `return`: a
    `throw`, `asm`, `__trap`/`abort`/`__builtin_unreachable`, an `assert`, a `for(;;)` or
    `while (true)` loop, a call of an ALL-CAPS macro, or a region tree-sitter could not parse.

Why it matters on AMD GPUs:
    Flowing off the end of a function that returns a value is undefined behaviour in C++, and
    hip-clang acts on it: at -O3 the end of the function is unreachable, so the caller reads
    whatever the optimiser left, or the code after the call is dropped. nvcc compiles the same
    source with a warning, and its code often returns the last value computed, so the bug never
    showed on NVIDIA GPUs. mamba's AMD port added the missing `return inclusive;` to the
    reverse scan's `ThreadReverseScanInclusive`.

Example:
    template <int LENGTH, typename T, typename ScanOp>
    __device__ __forceinline__ T ThreadReverseScanInclusive(const T (&input)[LENGTH],
                                                            T (&output)[LENGTH], ScanOp op, const T postfix) {
        T inclusive = postfix;
        for (int i = LENGTH - 1; i >= 0; --i) { inclusive = op(inclusive, input[i]); output[i] = inclusive; }
    }

Instead:
    Return the value the callers expect (`return inclusive;`), or declare the function `void`
    if no caller reads its result.

Effort:
    Minutes: one line, and a look at what the callers read.
"""

from tree_sitter import Node

from ..engine import syntax
from ..engine.context import ScanContext, View
from ..engine.rule import define

RULE = define(__doc__, code="PK313", name="device-function-without-return", severity="medium", category="kernel",
              gpu_only=True)
NODES = ("function_definition",)
GATES = {"function_definition": (b"__device__",)}
KEYWORDS = (b"__device__",)

_DEDUCED = (b"auto", b"decltype(auto)", b"void")
# what tree-sitter-cuda takes for the type of a constructor written `__host__ __device__ explicit
# constexpr window_extent() {}` (cuCollections' extent.inl): a constructor returns nothing
_NOT_TYPES = (b"explicit", b"virtual", b"friend", b"constexpr", b"inline", b"static")
# what ends a path without a return, or may expand to one (a macro)
_ENDS = (b"throw", b"asm", b"__trap", b"abort", b"__builtin_unreachable", b"assert", b"for (;;)", b"for(;;)",
         b"while (true)", b"while(true)", b"while (1)", b"while(1)", b"exit")


def check(ctx: ScanContext, view: View, node: Node) -> None:
    if b"__device__" not in syntax.function_qualifiers(node):
        return
    kind = node.child_by_field_name("type")
    body = node.child_by_field_name("body")
    declarator = node.child_by_field_name("declarator")
    if kind is None or body is None or declarator is None or body.type != "compound_statement" or body.has_error:
        return
    if b" ".join(kind.text.split()) in _DEDUCED + _NOT_TYPES or any(end in body.text for end in _ENDS):
        return
    if _has_return(body) or _calls_macro(body):
        return
    name = declarator
    while name.child_by_field_name("declarator") is not None:
        name = name.child_by_field_name("declarator")
    written = " ".join(name.text.decode(errors="replace").split())
    # at the closing brace: where the path falls off, and where the return goes
    ctx.flag(RULE, view.end(body) - 1, view.end(body),
             f"{written} returns {' '.join(kind.text.decode(errors='replace').split())} but has no return statement: "
             "it falls off its end here, undefined behaviour that hip-clang's optimiser acts on (nvcc only warns)",
             subject=f"{written} without return")


def _has_return(body: Node) -> bool:
    stack = list(body.children)
    while stack:
        current = stack.pop()
        if current.type == "return_statement":
            return True
        if current.type != "lambda_expression":
            stack.extend(current.children)
    return False


def _calls_macro(body: Node) -> bool:
    """A call of an ALL-CAPS name (BOOL_SWITCH, a CHECK macro): it may expand to a return."""
    stack = list(body.children)
    while stack:
        current = stack.pop()
        if current.type == "call_expression":
            function = current.child_by_field_name("function")
            text = function.text if function is not None else b""
            if function is not None and function.type == "identifier" and text.upper() == text and \
                    any(c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ" for c in text):
                return True
        stack.extend(current.children)
    return False
