"""`std::min`/`std::max` in a constant expression of a source torch hipifies, which becomes HIP's `::min`/`::max`.

What it finds:
    In the `.cu` and `.cuh` files of a PyTorch CUDA extension (the sources torch's ROCm build
    hipifies: a setup.py `CUDAExtension`'s sources and the tree's headers they include), a call
    written `std::min(` or `std::max(` that must be a constant (the value of a `constexpr`
    variable or member, a template argument, a `static_assert`, an array bound, an enumerator),
    or that passes an initializer list (`std::max({a, b, c})`).

Why it matters on AMD GPUs:
    torch's build-time hipify rewrites every `std::min(` and `std::max(` of a `.cu`/`.cuh` file to
    `::min(` and `::max(` (its MATH_TRANSPILATIONS), which are HIP's two-argument device math
    functions: not constexpr, and without an initializer-list overload. hip-clang then rejects the
    hipified line ("constexpr variable must be initialized by a constant expression", "no matching
    function for call to 'max'"), though the CUDA source compiles with nvcc and with hip-clang as
    written. causal-conv1d's and mamba's AMD ports replaced each such call with a constexpr helper.

Example:
    static constexpr int kSmemIOSize = std::max({sizeof(typename BlockLoadT::TempStorage),
                                                 sizeof(typename BlockStoreT::TempStorage)});
    constexpr int kLPerThread = std::min(kChunkSizeL * kChunkSizeC / kNThreads, kChunkSizeL);

Instead:
    Name the template argument, which hipify's text match `std::max(` does not touch:
    `std::max<size_t>({...})`, `std::min<int>(a, b)`; or a constexpr helper of your own
    (`a < b ? a : b`). Both compile unchanged with nvcc.

Effort:
    Minutes per site.
"""

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.rule import define

RULE = define(__doc__, code="PK312", name="torch-hipify-min-max", severity="high", category="language",
              breaks_build=True)
NAMES = (b"min", b"max")
KEYWORDS = ()   # torch's hipified sources only, which are always parsed

_HIPIFIED = (".cu", ".cuh")   # hipify_python applies MATH_TRANSPILATIONS to these only
_CONSTANT = ("template_argument_list", "static_assert_declaration", "enumerator", "array_declarator")
_DECLARATIONS = ("declaration", "field_declaration")
_STOP = ("compound_statement", "function_definition", "field_declaration_list", "translation_unit")


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    qualified = node.parent
    if qualified is None or qualified.type != "qualified_identifier" or qualified.child_by_field_name("name") != node:
        return
    scope = qualified.child_by_field_name("scope")
    call = qualified.parent
    if scope is None or scope.text not in (b"std", b"::std") or call is None or call.type != "call_expression":
        return
    arguments = call.child_by_field_name("arguments")
    if arguments is None or arguments.start_byte != qualified.end_byte or not _torch_hipifies(ctx):
        return   # `std::max (` is not hipify's text `std::max(`
    listed = [a for a in arguments.named_children if a.type != "comment"]
    name = node.text.decode()
    if len(listed) == 1 and listed[0].type == "initializer_list":
        why = f"HIP's ::{name} takes two arguments (no matching function for call to '{name}')"
    elif _constant(call):
        why = f"HIP's ::{name} is not constexpr (must be initialized by a constant expression)"
    else:
        return
    ctx.flag(RULE, view.start(qualified), view.end(call),
             f"torch's hipify rewrites std::{name}( to ::{name}( in .cu/.cuh files, and {why}: write "
             f"std::{name}<T>(...) with the type named, which hipify leaves, or a constexpr helper",
             subject=f"std::{name}")


def _torch_hipifies(ctx: ScanContext) -> bool:
    """torch's build hipifies this file: a .cu/.cuh of a setup.py CUDAExtension's sources, as the
    pipeline found them (ProjectFacts.torch_sources: none with --extension-sources hip, where
    portkit converts them and torch's math rewrite is not applied to CUDA text)."""
    return ctx.source.rel.endswith(_HIPIFIED) and ctx.source.rel in ctx.facts.torch_sources


def _constant(call: Node) -> bool:
    """The call's value must be a constant: it is in a template argument, a static_assert, an
    enumerator or an array bound, or in the declaration of a constexpr variable or member."""
    current = call.parent
    while current is not None and current.type not in _STOP:
        if current.type in _CONSTANT:
            return True
        if current.type in _DECLARATIONS:
            return any(child.text == b"constexpr" for child in current.children
                       if child.type in ("type_qualifier", "storage_class_specifier"))
        current = current.parent
    return False
