"""C++ that nvcc accepts and hip-clang rejects: fixed where the fix is certain, reported always.

- `register` (PK011): an error in C++17, hip-clang's default from ROCm 6 (a warning before);
  the keyword and the whitespace after it are dropped. Not in .c files, nor beside `asm(...)`
  (a GNU explicit register variable needs it).
- a __device__ function HIP's headers already define with the same parameter types (PK012):
  `atomicAdd(double*, double)` written for sm < 60, `atomicMax(double*, double)`, shuffle
  wrappers, `make_float4`. hip-clang reports a redefinition; the user's definition is put under
  `#if !defined(__HIP_PLATFORM_AMD__)`. The table is rewrite/signatures.py's, by ROCm release.
- narrowing in a brace initialiser (PK013): `int a[] = {v.size()}`, `dim3 b{n}` with an int n,
  `float f{d}` with a double d. nvcc warns, hip-clang errors. Only where both types are known
  from the source alone (an arithmetic type or dim3 declared; the element a `.size()` call, a
  sizeof, or a variable declared in the function with an arithmetic type, not const): the
  element becomes `static_cast<T>(element)`, which is what the initialisation did under nvcc.

scan.py sends the `register` keywords and the brace initialisers of declarations (query capture
`@strict`) and the `__device__` markers it already captures; nothing else is walked.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from ..core.edits import EditKind
from ..core.tables.mappings import format_version
from ..engine.syntax import declarations
from . import signatures
from ..engine.codes import Code

# the codes of the findings (ctx.flag finds their rules in the registry the scan installs)
REGISTER = Code.REGISTER_STORAGE_CLASS
REDEFINED = Code.REDEFINES_HIP_DEVICE_FUNCTION
NARROWING = Code.NARROWING_BRACE_INIT
GUARD = b"#if !defined(__HIP_PLATFORM_AMD__)"
_INDEX_BUILTINS = frozenset({b"threadIdx", b"blockIdx", b"blockDim", b"gridDim"})
# (signed, bits) of the arithmetic types a declaration names; floating types have bits < 0.
_INTEGERS = {
    "char": (True, 8), "signed char": (True, 8), "unsigned char": (False, 8), "short": (True, 16),
    "unsigned short": (False, 16), "int": (True, 32), "unsigned int": (False, 32), "long": (True, 64),
    "unsigned long": (False, 64), "long long": (True, 64), "unsigned long long": (False, 64),
    "int8_t": (True, 8), "uint8_t": (False, 8), "int16_t": (True, 16), "uint16_t": (False, 16),
    "int32_t": (True, 32), "uint32_t": (False, 32), "int64_t": (True, 64), "uint64_t": (False, 64),
    "size_t": (False, 64), "ptrdiff_t": (True, 64), "ssize_t": (True, 64),
}
_FLOATS = {"float": 32, "double": 64}
_INTEGER_OPERATORS = ("<<", ">>", "&", "|", "^")   # integer operands only: a shift has its left one's type
SIZE_T = "size_t"
_QUALIFIERS = frozenset({b"const", b"constexpr", b"volatile"})
_TOP_LEVEL = frozenset({"translation_unit", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
                        "linkage_specification", "declaration_list"})


def handle(ctx: ScanContext, view: View, node: Node) -> None:
    """A captured `register` keyword or brace initialiser."""
    if node.type == "register":
        _register(ctx, view, node)
    elif node.type == "initializer_list" and not view.base:
        _narrowing(ctx, view, node)


def _register(ctx: ScanContext, view: View, node: Node) -> None:
    declaration = node.parent.parent if node.parent is not None else None
    if ctx.source.rel.endswith(".c") or declaration is None or b"asm" in declaration.text:
        return
    data = view.data
    end = node.end_byte
    while end < len(data) and data[end] in b" \t\r\n":
        end += 1
    ctx.edit(view.start(node), view.base + end, b"", what="register", kind=EditKind.REGISTER)
    ctx.flag(REGISTER, view.start(node), view.end(node), "`register` dropped: ISO C++17 does not allow the "
             "storage class, and hip-clang compiles C++17 by default from ROCm 6 (nvcc accepts it)",
             subject="register", severity="info")


def device_functions(ctx: ScanContext, view: View, markers: list[Node]) -> None:
    """The file's __global__/__device__ markers: device functions that redefine one HIP's headers
    define. A name no header defines is passed over before any work on its types."""
    provided = signatures.names()
    for node in markers:
        if node.type == "__device__" and node.parent is not None and node.parent.type != "ERROR" and \
                _declared_name(node.parent) in provided and not _not_amd(ctx, view, node):
            device_function(ctx, view, node)


def _declared_name(function: Node) -> bytes | None:
    """The name a function definition or declaration declares, cheaply (no pointer return types)."""
    declarator = function.child_by_field_name("declarator")
    if declarator is None or declarator.type != "function_declarator":
        return None
    name = declarator.child_by_field_name("declarator")
    return name.text if name is not None else None


def _not_amd(ctx: ScanContext, view: View, node: Node) -> bool:
    """Code an AMD build does not compile as CUDA (AMD-only, NVIDIA-only, ported): a definition
    there cannot clash with HIP's, and one guarded by the converter stays guarded once."""
    regions_ = ctx.regions
    return bool(regions_.ranges or regions_.shim) and regions_.kind_at(view.start(node)) is not None


def device_function(ctx: ScanContext, view: View, marker: Node) -> None:
    """A `__device__` marker: its function, when HIP's headers define one with the same types."""
    function = marker.parent
    if function is None or function.type not in ("function_definition", "declaration"):
        return
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator"):
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None or declarator.type != "function_declarator":
        return
    name = declarator.child_by_field_name("declarator")
    if name is None or name.type != "identifier" or name.text not in signatures.names():
        return
    params = signatures.param_types(declarator)
    release = signatures.provided(name.text.decode(), params, ctx.target) if params is not None else None
    if release is None or not _file_level(function):
        return   # in a namespace, class or template it is another function than HIP's
    written = f"{name.text.decode()}({', '.join(params)})"
    where = f"HIP's headers define {written} (ROCm {format_version(release)})"
    guarded = not view.base and _guard(ctx, function)
    if guarded:
        message = f"{where}: hip-clang would report a redefinition; this one is now compiled by nvcc only " \
                  f"(`{GUARD.decode()}`)"
    else:
        message = f"{where}: hip-clang reports a redefinition; put this one under `{GUARD.decode()}`"
    ctx.flag(REDEFINED, view.start(name), view.end(name), message, subject=name.text.decode(),
             severity="info" if guarded else None)


def _guard(ctx: ScanContext, function: Node) -> bool:
    """Edits that put the function's own lines under the guard; False when it shares a line with
    other code."""
    data, newline = ctx.source.data, ctx.source.newline
    line_start = data.rfind(b"\n", 0, function.start_byte) + 1
    line_end = data.find(b"\n", function.end_byte)
    rest = data[function.end_byte:len(data) if line_end < 0 else line_end]
    if data[line_start:function.start_byte].strip() or (rest.strip() and not rest.strip().startswith(b"//")):
        return False
    ctx.edit(line_start, line_start, GUARD + newline, what="guard", kind=EditKind.GUARD)
    if line_end < 0:
        ctx.edit(len(data), len(data), newline + b"#endif" + newline, what="guard", kind=EditKind.GUARD)
    else:
        ctx.edit(line_end + 1, line_end + 1, b"#endif" + newline, what="guard", kind=EditKind.GUARD)
    return True


def _file_level(function: Node) -> bool:
    """At file level, in an #if there, or in an extern "C" block."""
    parent = function.parent
    while parent is not None and (parent.type in _TOP_LEVEL or parent.parent is None):
        if parent.type == "translation_unit" or parent.parent is None:
            return True   # the root, also where tree-sitter made it an ERROR for a line elsewhere
        if parent.type == "declaration_list" and (parent.parent is None or parent.parent.type != "linkage_specification"):
            return False
        parent = parent.parent
    return False


def _narrowing(ctx: ScanContext, view: View, braces: Node) -> None:
    declarator = braces.parent
    declaration = declarator.parent if declarator is not None else None
    if declarator is None or declaration is None or declaration.type != "declaration":
        return
    target, spelt = _target(declaration, declarator)
    elements = [e for e in braces.named_children if e.type != "comment"]
    if target is None or (spelt == "dim3" and len(elements) > 3):
        return
    if spelt != "dim3" and declarator.child_by_field_name("declarator").type != "array_declarator" \
            and len(elements) != 1:
        return
    for element in elements:
        if element.type not in _MAY_NARROW:   # literals and sizeof are constants; the rest unknown
            continue
        source = _type_of(element)
        if source is None or not _narrows(source, target):
            continue
        cast = "unsigned int" if spelt == "dim3" else spelt
        ctx.edit(view.start(element), view.start(element), f"static_cast<{cast}>(".encode(), what="cast", kind=EditKind.CAST)
        ctx.edit(view.end(element), view.end(element), b")", what="cast", kind=EditKind.CAST)
        text = view.text(element).decode("utf-8", "replace")
        ctx.flag(NARROWING, view.start(element), view.end(element),
                 f"`{text}` narrows from {source} to {target} in a brace initialiser: hip-clang rejects it "
                 f"(nvcc warns); written as static_cast<{cast}>({text})", subject=f"narrowing {text}",
                 severity="info")


# The initialiser elements whose type _typed can read without their being constant (a table of
# literals is skipped without a call per element).
_MAY_NARROW = frozenset({"parenthesized_expression", "binary_expression", "call_expression", "identifier"})


def _target(declaration: Node, declarator: Node) -> tuple[str | None, str]:
    """(the element type as the table names it, as written) of `T x{...}` or `T x[] = {...}`."""
    kind = declaration.child_by_field_name("type")
    inner = declarator.child_by_field_name("declarator")
    if kind is None or inner is None or inner.type not in ("identifier", "array_declarator"):
        return None, ""
    if inner.type == "array_declarator" and inner.child_by_field_name("declarator").type != "identifier":
        return None, ""
    spelt = signatures.canonical(kind.text.decode("utf-8", "replace"))
    if spelt == "dim3" and inner.type == "identifier":
        return "unsigned int", spelt
    return (spelt if spelt in _INTEGERS or spelt in _FLOATS else None), spelt


def _type_of(element: Node) -> str | None:
    """The type of a non-constant initialiser element where the source alone says it, else None
    (a constant that fits does not narrow, so constants are None too)."""
    typed = _typed(element)
    return typed[0] if typed is not None and not typed[1] else None


def _typed(node: Node) -> tuple[str, bool] | None:
    """(type, constant) of an expression made of what _type_of reads, arithmetic, bitwise and shift
    operators, and literals."""
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return _typed(node.named_children[0])
    if node.type == "binary_expression" and node.child_by_field_name("operator").type in _INTEGER_OPERATORS:
        left, right = _typed(node.child_by_field_name("left")), _typed(node.child_by_field_name("right"))
        if left is None or right is None or left[0] in _FLOATS or right[0] in _FLOATS:
            return None
        shifted = node.child_by_field_name("operator").type in ("<<", ">>")   # the promoted left operand's type
        return _common(left[0], "int" if shifted else right[0]), left[1] and right[1]
    if node.type == "number_literal":
        text = node.text.lower()
        if b"." in text or (b"e" in text and not text.startswith(b"0x")):
            return ("float" if text.endswith(b"f") else "double"), True
        return ("unsigned int" if b"u" in text else "int"), True
    if node.type == "binary_expression" and node.child_by_field_name("operator").type in ("+", "-", "*", "/", "%"):
        left, right = _typed(node.child_by_field_name("left")), _typed(node.child_by_field_name("right"))
        if left is None or right is None:
            return None
        return _common(left[0], right[0]), left[1] and right[1]
    if node.type == "sizeof_expression":
        return SIZE_T, True
    if node.type == "call_expression":
        function, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        field = function.child_by_field_name("field") if function.type == "field_expression" else None
        if field is not None and field.text in (b"size", b"length") and args is not None and not args.named_children:
            return SIZE_T, False   # std containers and strings: size_type is size_t
        return None
    if node.type == "identifier":
        return _declared_type(node)
    if node.type == "field_expression":   # threadIdx.x, blockDim.y: CUDA's uint3/dim3 members
        base, field = node.child_by_field_name("argument"), node.child_by_field_name("field")
        if base is not None and base.text in _INDEX_BUILTINS and field is not None and field.text in (b"x", b"y", b"z"):
            return "unsigned int", False
    return None


def _common(a: str, b: str) -> str:
    """The usual arithmetic conversions (LP64)."""
    if a in _FLOATS or b in _FLOATS:
        return max((t for t in (a, b) if t in _FLOATS), key=_FLOATS.get)
    (a_signed, a_bits), (b_signed, b_bits) = (_promoted(a), _promoted(b))
    bits = max(a_bits, b_bits)
    wider_signed = (a_signed if a_bits > b_bits else b_signed) if a_bits != b_bits else (a_signed and b_signed)
    return ("" if wider_signed else "unsigned ") + ("int" if bits == 32 else "long")


def _promoted(name: str) -> tuple[bool, int]:
    signed, bits = _INTEGERS[name]
    return (True, 32) if bits < 32 else (signed, bits)


def _declared_type(name: Node) -> tuple[str, bool] | None:
    """(arithmetic type, const) of the variable `name` from its declaration in the enclosing
    function: an earlier declaration in an enclosing block, a parameter, or a template int
    parameter (a constant). A const local counts as a constant (its initialiser is not read: the
    fix is left rather than risked)."""
    for declaration, kind in declarations(name):
        found = _declares(declaration, name.text)
        if found is not None:
            return ((found[0], True) if kind == "template" else found) if found else None
    return None


def _declares(declaration: Node, name: bytes) -> tuple[str, bool] | str | None:
    """(type, const) `declaration` gives `name`, "" when it declares it otherwise (a pointer, a
    type this module does not know), None when it does not declare it."""
    for child in declaration.children:
        target = child.child_by_field_name("declarator") if child.type == "init_declarator" else child
        if target is None or target.type != "identifier" or target.text != name:
            continue
        if child.type != "identifier" and child.type != "init_declarator":
            return ""
        constant = declaration.type == "declaration" and any(
            c.type == "type_qualifier" and c.text in _QUALIFIERS for c in declaration.children)
        kind = declaration.child_by_field_name("type")
        spelt = signatures.canonical(kind.text.decode("utf-8", "replace")) if kind is not None else ""
        return (spelt, constant) if spelt in _INTEGERS or spelt in _FLOATS else ""
    return None


def _narrows(source: str, target: str) -> bool:
    """C++ [dcl.init.list]: the conversions a non-constant value may not take in braces."""
    if target in _FLOATS:
        return source in _INTEGERS or _FLOATS.get(source, 0) > _FLOATS[target]
    if source in _FLOATS:
        return True
    (s_signed, s_bits), (t_signed, t_bits) = _INTEGERS[source], _INTEGERS[target]
    if s_signed and not t_signed:
        return True
    if not s_signed and t_signed:
        return t_bits <= s_bits
    return t_bits < s_bits


INTEGER_TYPES = frozenset(_INTEGERS)


def expression_type(node: Node) -> str | None:
    """The arithmetic type of `node` where the source alone says it (what PK013 reads), else None:
    rewrite/ffs.py casts an ambiguous __ffsll argument with it."""
    typed = _typed(node)
    return typed[0] if typed is not None else None


# What _narrowing needs first: a declaration of one of its arithmetic types (or dim3) whose
# declarator, perhaps an array's, takes a brace initialiser (`int a[] = {n}`, `float f{d}`) with an
# element that is not a number (a name, a call, a parenthesis: a table of literals never narrows).
# Over the bytes, comments included; `[\w\s]` keeps `int main() {` out, so a declarator with an
# attribute in parentheses before its braces is not seen (no tree, fixture or generated file has one).
NARROWING_DECLARATION = re.compile(
    rb"\b(?:char|short|int|long|signed|unsigned|float|double|dim3|u?int(?:8|16|32|64)_t|s?size_t|ptrdiff_t)\b"
    rb"[\w\s]*?(?:\[[^\]\n]*\]\s*)*=?\s*\{[^}]*?(?<![\w.'])[A-Za-z_(]")



def _may_narrow(text) -> bool:
    """NARROWING_DECLARATION over the bytes, where a brace is (engine/keywords.FileText)."""
    return b"{" in text.data and NARROWING_DECLARATION.search(text.data) is not None


_may_narrow.cost = 3   # a pattern tried at every byte: after the tests that read tokens


PASSES = (
    Pass("strictness", "walk", handle, capture="strict", keywords=((b"register", re.compile(rb"\bregister\b")), _may_narrow),
         gpu_only=True),
    Pass("device_functions", "walk", device_functions, capture="device", keywords=(b"__device__",)),
)
