"""Device code that calls host-only parts of the C++ standard library.

What it finds:
    In `__global__`, `__device__` and `__host__ __device__` functions: `.at()` on a `std::array`
    (it throws `std::out_of_range`), `std::vector` and `std::string` (host-only `std::allocator`);
    in `__global__` and `__device__`-only functions also iostreams (`std::cout`, `std::cerr`,
    `std::clog`) and exceptions (`throw`, `try`). Constexpr calls that are fine on either vendor
    (`std::array::operator[]`, `std::min`, `std::numeric_limits`) are not reported.

Why it matters on AMD GPUs:
    nvcc with `--expt-relaxed-constexpr` accepts `std::array::at()` in device code, and a
    `__host__ __device__` function that builds a `std::vector` or `std::string` is only a
    warning there; hip-clang rejects all of them where a kernel reaches them ("reference to
    __host__ function '__throw_out_of_range_fmt'", "'~allocator' in __host__ __device__ function").
    Exceptions and iostreams are rejected by both compilers in device code, but nvcc's code
    often hides them behind `#ifndef __CUDA_ARCH__`, which hip-clang does not define: on AMD the
    branch is compiled for the device ("cannot use 'throw' in __device__ function").

Example:
    __device__ float pick(const std::array<float, 4>& w, int i) { return w.at(i); }

Instead:
    `operator[]` (with an `assert` for the bound) instead of `.at()`; a fixed-size array or a
    buffer passed in instead of `std::vector`; `const char*` instead of `std::string`; `printf`
    instead of iostreams; an error code or `assert` instead of exceptions.

Effort:
    Minutes to an hour per site; a container in a device helper may need its callers changed.
"""

import re

from tree_sitter import Node

from ..engine import syntax
from ..engine.context import ScanContext, View
from ..engine.keywords import DEVICE_CODE
from ..engine.rule import define

RULE = define(__doc__, code="PK310", name="host-only-std-in-device-code", severity="high", category="kernel",
              breaks_build=True, gpu_only=True)
NAMES = (b"at", b"vector", b"string", b"cout", b"cerr", b"clog")
NODES = ("throw_statement", "try_statement")
KEYWORDS = DEVICE_CODE   # its names and nodes count in device functions only

_CONTAINERS = {b"vector": "std::vector allocates with the host-only std::allocator: use a fixed-size array "
                          "or a buffer passed in",
               b"string": "std::string allocates with the host-only std::allocator: use const char* or a "
                          "fixed char array"}
_STREAM = "iostreams are host-only (hip-clang: reference to __host__ variable): use printf"
_STD_ARRAY = re.compile(rb"^(?:const\s+)?(?:::)?std::array\s*<")


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    name = node.text
    if name == b"at":
        if _array_at(ctx, node) and _device(node, with_host=True):
            call = node.parent.parent
            ctx.flag(RULE, view.start(call), view.end(call),
                     "std::array::at() throws std::out_of_range, a host-only path: hip-clang rejects it in device "
                     "code (reference to __host__ function); use operator[] with an assert for the bound",
                     subject="std::array::at")
        return
    if not _in_std(node):
        return
    if name in _CONTAINERS and _device(node, with_host=True):
        ctx.flag(RULE, view.start(node), view.end(node), _CONTAINERS[name], subject=f"std::{name.decode()}")
    elif name in (b"cout", b"cerr", b"clog") and _device(node, with_host=False):
        ctx.flag(RULE, view.start(node), view.end(node), f"std::{name.decode()}: {_STREAM}", subject="iostream")


def check(ctx: ScanContext, view: View, node: Node) -> None:
    if not _device(node, with_host=False):
        return
    word = "throw" if node.type == "throw_statement" else "try"
    first = node.children[0] if node.children else node
    ctx.flag(RULE, view.start(first), view.end(first),
             f"'{word}' in device code: hip-clang rejects exceptions there (__CUDA_ARCH__ guards do not hide it: "
             "hip-clang does not define it); return an error code or assert", subject="exception")


def _device(node: Node, with_host: bool) -> bool:
    """The nearest function with a qualifier is a kernel or device function (`with_host`: a
    __host__ __device__ one counts, for what nvcc accepts there and hip-clang does not)."""
    function = syntax.enclosing(node, "function_definition")
    while function is not None:
        quals = syntax.function_qualifiers(function)
        if quals & {b"__global__", b"__device__"}:
            return with_host or b"__host__" not in quals
        if b"__host__" in quals:
            return False
        function = syntax.enclosing(function, "function_definition")
    return False


def _in_std(node: Node) -> bool:
    """`std::NAME` (also `::std::NAME` and `std::NAME<...>`)."""
    parent = node.parent
    if parent is not None and parent.type == "template_type":
        parent = parent.parent
    if parent is None or parent.type != "qualified_identifier":
        return False
    scope = parent.child_by_field_name("scope")
    return scope is not None and scope.text in (b"std", b"::std")


def _array_at(ctx: ScanContext, node: Node) -> bool:
    """`x.at(...)` where `x` is declared in the function as a `std::array` (a local or a parameter),
    or as a name the file aliases to one (`using Shape = std::array<int64_t, 3>;`)."""
    field = node.parent
    if field is None or field.type != "field_expression" or field.child_by_field_name("field") != node:
        return False
    call = field.parent
    if call is None or call.type != "call_expression" or call.child_by_field_name("function") != field:
        return False
    target = syntax.unparen(field.child_by_field_name("argument"))
    if target is None or target.type != "identifier":
        return False
    for declaration, _ in syntax.declarations(target):
        type_node = declaration.child_by_field_name("type")
        if type_node is None or not _declares(declaration, target.text):
            continue
        written = b" ".join(type_node.text.split())
        return _STD_ARRAY.match(written) is not None or written in ctx.derived(_array_aliases)
    return False


def _declares(declaration: Node, name: bytes) -> bool:
    """The declaration declares `name` (one of its declarators, through `&`, `*` and `=`)."""
    for declarator in declaration.children_by_field_name("declarator"):
        node = declarator
        while node is not None and node.type not in ("identifier", "field_identifier"):
            node = node.child_by_field_name("declarator") or next(
                (c for c in node.named_children if c.type.endswith("declarator") or c.type == "identifier"), None)
        if node is not None and node.text == name:
            return True
    return False


_ALIAS = re.compile(rb"\busing\s+(\w+)\s*=\s*(?:::)?std::array\s*<|\btypedef\s+(?:::)?std::array\s*<[^;]*>\s*(\w+)\s*;")


def _array_aliases(ctx: ScanContext) -> frozenset[bytes]:
    """The names the file declares as std::array types."""
    return frozenset(m.group(1) or m.group(2) for m in _ALIAS.finditer(ctx.source.data))
