"""The CUDA version used as a value in code, which no header of the AMD build defines.

What it finds:
    `CUDA_VERSION`, `CUDART_VERSION` or nvcc's `__CUDACC_VER_MAJOR__`/`_MINOR__`/`_BUILD__` read
    as a value outside a preprocessor condition: returned, assigned, printed, passed
    (`return CUDA_VERSION;`, `int v = CUDART_VERSION;`), also in a macro's body. A condition
    (`#if CUDA_VERSION >= 11000`, `defined(CUDA_VERSION)`) is PK103's, and so is a static_assert
    on the toolkit's release, which convert puts under `#if !defined(__HIP_PLATFORM_AMD__)`
    (rewrite/toolkit_asserts.py); a file that defines the name itself is left.

Why it matters on AMD GPUs:
    In `#if` an undefined macro is 0; in code it is an undeclared identifier. HIP's headers and
    hip-clang define none of these names, and convert has no HIP name for them (HIP numbers its
    releases in its own encoding). In a PyTorch extension's source, torch's build-time hipify
    rewrites `CUDA_VERSION` to `TORCH_HIP_VERSION`, which torch defines for its own build only,
    not in the headers an extension compiles with (checked with the torch 2.5.1 pack): the AMD
    build stops either way. pytorch_scatter's version.cpp returns CUDA_VERSION; its ROCm port
    returns HIP_VERSION there.

Example:
    SCATTER_API int64_t cuda_version() noexcept {
      return CUDA_VERSION;
    }

Instead:
    Give the AMD build its own value: `#ifdef USE_ROCM` (or `__HIP_PLATFORM_AMD__`) `return
    HIP_VERSION;` (from `<hip/hip_version.h>`, which `<hip/hip_runtime.h>` includes), `#else`
    the CUDA line. HIP_VERSION is major * 10,000,000 + minor * 100,000 + patch, CUDA_VERSION
    major * 1000 + minor * 10: whoever reads the number must know which build made it.

Effort:
    Minutes per site, plus the callers that compare the number.
"""

import re

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.rule import define

RULE = define(__doc__, code="PK104", name="cuda-version-value", severity="medium", category="api",
              breaks_build=True)
NAMES = (b"CUDA_VERSION", b"CUDART_VERSION", b"__CUDACC_VER_MAJOR__", b"__CUDACC_VER_MINOR__",
         b"__CUDACC_VER_BUILD__")
# a directive's condition: the node that holds it, and the field it is in
_CONDITIONS = {"preproc_if": "condition", "preproc_elif": "condition", "preproc_ifdef": "name",
               "preproc_elifdef": "name"}
_TORCH_HIPIFIED = "TORCH_HIP_VERSION"


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    if _in_condition(node) or _declared(node) or _asserted(node):
        return
    name = node.text.decode()
    if re.search(rb"#\s*define\s+" + node.text + rb"\b", ctx.source.data):
        return   # the file gives it a value of its own (`#ifndef CUDA_VERSION` / `#define CUDA_VERSION 0`)
    if name == "CUDA_VERSION" and ctx.source.rel in ctx.facts.torch_sources:
        why = (f"torch's hipify writes it {_TORCH_HIPIFIED}, which no header an extension compiles with "
               "defines")
    else:
        why = "HIP's headers and hip-clang do not define it"
    ctx.flag(RULE, view.start(node), view.end(node),
             f"{name} is read as a value, and the AMD build has no such name ({why}): give the AMD build "
             "its own value, HIP_VERSION (<hip/hip_version.h>; another encoding), under `#ifdef USE_ROCM` "
             "or `__HIP_PLATFORM_AMD__`",
             subject=name)


def _in_condition(node: Node) -> bool:
    """The name is in an `#if`/`#elif` condition or an `#ifdef`'s name (PK103 reads those)."""
    child, parent = node, node.parent
    while parent is not None:
        if parent.type == "preproc_defined":
            return True
        field = _CONDITIONS.get(parent.type)
        if field is not None:
            held = parent.child_by_field_name(field)
            return held is not None and held.id == child.id
        if parent.type in ("compound_statement", "translation_unit", "function_definition"):
            return False
        child, parent = parent, parent.parent
    return False


def _asserted(node: Node) -> bool:
    """In a static_assert: rewrite/toolkit_asserts.py's, which reports it as PK103."""
    parent = node.parent
    while parent is not None and parent.type not in ("compound_statement", "translation_unit"):
        if parent.type == "static_assert_declaration":
            return True
        parent = parent.parent
    return False


def _declared(node: Node) -> bool:
    """The name is what a `#define`/`#undef` names, not a use (a project that defines it itself)."""
    parent = node.parent
    return parent is not None and parent.type in ("preproc_def", "preproc_function_def") \
        and parent.child_by_field_name("name") is not None and parent.child_by_field_name("name").id == node.id
