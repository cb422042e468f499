"""Compile errors that a defect of the HIP compiler's own headers causes, read from the diagnostic.

No scan of the converted file can see them: the code is right for nvcc and for the C++ standard,
and the error is inside the compiler's wrapper headers. The diagnostic's notes say which call of
the project reached it, and with which types; verify places the error at that call
(diagnostics.locate) and explains it by the rule that names the defect and the way around it.

- PK703: `call to '__test' is ambiguous` in `__clang_hip_cmath.h`, while deducing clang's
  template for a <cmath> name called with `__half` (llvm/llvm-project#101239, fixed by #101341).
  tiny-cuda-nn's encodings/grid.h stopped at it through vec.h's `fma(a, b[i], c[i])`.
- PK704: `use of overloaded operator 'OP' is ambiguous` where a note is clang's "built-in candidate"
  on a vector type (`__attribute__((__vector_size__(...)))`): the project's operator for its wrapper
  of an SSE vector against clang's built-in vector operator, which GCC (nvcc's host compiler) does
  not weigh so (bitsandbytes' include/Algo-Direct2.h `vz < vxm`). Not a header defect: a language
  difference of the host compiler, read from the same kind of evidence.
"""

from __future__ import annotations

import re

from ...engine.codes import Code
from .diagnostics import Located
from .hidden_overload import hidden_overload

_CMATH = "__clang_hip_cmath.h"
_NUMERIC = re.compile(r"in instantiation of template class '__hip::__numeric_type<(?P<type>.+)>' requested here")
_DEDUCING = re.compile(r"while substituting deduced template arguments into function template '(?P<name>\w+)'")


def beyond_scan(error: Located, facts) -> tuple[str, str, str] | None:
    """(code, subject, message) for an error the diagnostic or its file explains, which no scan of the
    converted file sees: a defect of the compiler's headers, an overload only nvcc's guard defines
    (hidden_overload.py). (An error inside a library with no drop-in is explain.py's first case.)"""
    found = cmath_ambiguity(error) or vector_operator_ambiguity(error)
    hidden = None if found else hidden_overload(error, facts)
    if hidden is not None:
        rel, line, guard = hidden
        name = error.diagnostic.subject or ""
        found = (Code.CUDA_VERSION_GUARD, name, f"{name}'s overload for these arguments is defined only under `{guard}` "
                 f"({rel}:{line}), which hip-clang never takes (no __CUDA_ARCH__, no CUDA release): PK103 there")
    return found


_AMBIGUOUS_OPERATOR = re.compile(r"use of overloaded operator '(?P<op>[^']+)' is ambiguous \(with operand types "
                                 r"'(?P<a>[^']+)' and '(?P<b>[^']+)'")
_VECTOR_CANDIDATE = re.compile(r"built-in candidate operator.*(?:__vector_size__|ext_vector_type)")


def vector_operator_ambiguity(error: Located) -> tuple[str, str, str] | None:
    """(code, subject, message) for an operator clang finds ambiguous against its built-in vector
    operator (PK704), else None."""
    found = _AMBIGUOUS_OPERATOR.match(error.diagnostic.message)
    if found is None or not any(_VECTOR_CANDIDATE.search(text) for *_, text in error.diagnostic.notes):
        return None
    op, a, b = found.group("op"), found.group("a"), found.group("b")
    return (Code.VECTOR_OPERATOR_AMBIGUITY, f"operator{op}",
            f"operator{op} on '{a}' and '{b}': hip-clang offers its built-in vector operator{op} beside the "
            f"project's (GCC, nvcc's host compiler, does not weigh it so), and neither is better: call the "
            f"project's by name, `operator{op}(x, y)`, or convert the raw vector to the project's type first")


def cmath_ambiguity(error: Located) -> tuple[str, str, str] | None:
    """(code, subject, message) for clang's HIP <cmath> trait failing on a half type, else None."""
    diagnostic = error.diagnostic
    if diagnostic.message != "call to '__test' is ambiguous" or not (diagnostic.path or "").endswith(_CMATH):
        return None
    kind = next((m.group("type") for *_, text in diagnostic.notes if (m := _NUMERIC.search(text))), None)
    called = next((m.group("name") for *_, text in diagnostic.notes if (m := _DEDUCING.search(text))), None)
    if kind is None or called is None:
        return None
    message = (f"{called}() called with {kind}: clang's HIP <cmath> template {called} is deduced for it (argument-"
               f"dependent lookup on {kind}), and __hip::__numeric_type<{kind}> cannot choose one of its "
               f"conversions, an error before the project's own {called} is chosen (clang's header before "
               f"llvm/llvm-project#101341): call the project's {called} qualified or as ({called})(...)")
    return Code.HIP_MATH_TEMPLATE_AMBIGUITY, called, message
