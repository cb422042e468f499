"""A static_assert on the CUDA toolkit's release or architecture, which no HIP compiler can evaluate (issue 48).

`static_assert(__CUDACC_VER_MAJOR__ > 10 || (__CUDACC_VER_MAJOR__ == 10 && __CUDACC_VER_MINOR__ >= 2),
"tiny-cuda-nn requires at least CUDA 10.2");` (tiny-cuda-nn's src/common_host.cu:44). In an `#if` an
undefined macro is 0 and PK103 reports the branch; in C++ it is an identifier, and hip-clang stops
at `use of undeclared identifier '__CUDACC_VER_MAJOR__'`. HIP has no counterpart to map it to:
hipcc's release is not nvcc's (HIP_VERSION 60200000 is ROCm 6.2, not CUDA 6.2), which is why ports
keep such code for nvcc (detectron2's cuda_version.cu: `#if !defined(__HIP_PLATFORM_AMD__) return
CUDART_VERSION; #else ...`).

A static_assert whose condition names the toolkit's macros and otherwise only configuration
constants (upper-case macro names: `__CUDA_ARCH__ >= TCNN_MIN_GPU_ARCH * 10`) checks the CUDA
toolkit or the NVIDIA target and nothing of the code: an AMD build has no CUDA toolkit, so the assertion goes under the guard
PK012's definitions get, `#if !defined(__HIP_PLATFORM_AMD__)`, and nvcc builds still check it. It
is reported as PK103 info. One that shares its lines with other code, or names other identifiers
(a variable, a function, a type), is left and reported as PK103: the reader decides what the AMD build should assert. A
file that `#define`s the macro itself (its own compat value) is left alone.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from ..core.edits import EditKind
from ..engine.codes import Code
from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from ..engine.platform.regions import AMD, PORTED

# nvcc's own release macros and the toolkit headers' (cuda.h, cuda_runtime_api.h), and nvcc's
# architecture numbers (tiny-cuda-nn's common.h: `static_assert(__CUDA_ARCH__ >= TCNN_MIN_GPU_ARCH * 10,
# ...)` in the device pass, which convert's `__HIP_DEVICE_COMPILE__` now reaches): none has a HIP
# counterpart of the same meaning, a gfx target is no sm_ number
TOOLKIT = frozenset((b"__CUDACC_VER_MAJOR__", b"__CUDACC_VER_MINOR__", b"__CUDACC_VER_BUILD__",
                     b"CUDA_VERSION", b"CUDART_VERSION", b"__CUDA_API_VERSION", b"__CUDA_ARCH__",
                     b"__CUDA_ARCH_LIST__"))
GUARD = b"#if !defined(__HIP_PLATFORM_AMD__)"
_ASSERT = re.compile(rb"\bstatic_assert\b")
_MENTIONS = re.compile(rb"\b(?:" + rb"|".join(sorted(TOOLKIT)) + rb")\b")
_DEFINES = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)
# a configuration constant the assertion compares the toolkit with (TCNN_MIN_GPU_ARCH): a macro's name
_CONSTANT = re.compile(rb"[A-Z_][A-Z0-9_]*")
_IDENTIFIERS = ("identifier", "field_identifier", "type_identifier", "namespace_identifier")


def rewrite(ctx: ScanContext, view: View, root: Node) -> None:
    data = view.data
    if view.base or not _MENTIONS.search(data) or not _ASSERT.search(data):
        return
    own = set(_DEFINES.findall(data))
    for match in _ASSERT.finditer(data):
        node = root.descendant_for_byte_range(match.start(), match.end())
        while node is not None and node.type != "static_assert_declaration":
            node = node.parent
        condition = node.child_by_field_name("condition") if node is not None else None
        if condition is None or _chosen(ctx, view.start(node)):
            continue
        names = set(_names(condition))
        macros = sorted(names & TOOLKIT)
        if not macros or set(macros) & own:
            continue
        start, end = view.start(node), view.end(node)
        listed = ", ".join(m.decode() for m in macros)
        rule = ctx.rule(Code.CUDA_VERSION_GUARD)
        if any(not _CONSTANT.fullmatch(n) for n in names - TOOLKIT) or not _guard(ctx, start, end):
            ctx.report(rule.code, rule.name, rule.severity, rule.category, start, end,
                       f"static_assert on {listed}, which hip-clang does not define (use of undeclared "
                       f"identifier): put it under `{GUARD.decode()}` or assert on HIP_VERSION for the AMD build",
                       subject=macros[0].decode(), fix=rule.fix)
            continue
        ctx.report(rule.code, rule.name, "info", rule.category, start, end,
                   f"static_assert on the CUDA toolkit's release ({listed}), which hip-clang does not define: "
                   f"now checked by nvcc builds only (`{GUARD.decode()}`)", subject=macros[0].decode(), fix=rule.fix)


def _chosen(ctx: ScanContext, offset: int) -> bool:
    """In code an author or an earlier run already gave to one platform: AMD-only, ported, or right
    under this module's own guard (a second run writes the same bytes). NVIDIA-only code with no AMD
    branch is converted like shared code: `#if defined(__CUDA_ARCH__)` becomes the device pass of
    both (rewrite/cudacc.py), and tiny-cuda-nn's common.h asserts `__CUDA_ARCH__` there."""
    regions = ctx.regions
    if (regions.ranges or regions.shim) and regions.kind_at(offset) in (AMD, PORTED):
        return True
    data = ctx.source.data
    line_start = data.rfind(b"\n", 0, offset) + 1
    previous = data[data.rfind(b"\n", 0, max(line_start - 1, 0)) + 1:max(line_start - 1, 0)]
    return previous.strip() == GUARD


def _names(node: Node):
    """The identifiers of an expression, `defined` and literals aside."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in _IDENTIFIERS:
            yield current.text
        stack.extend(current.children)


def _guard(ctx: ScanContext, start: int, end: int) -> bool:
    """The guard around the assertion's own lines; False when it shares a line with other code."""
    data, newline = ctx.source.data, ctx.source.newline
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    rest = data[end:len(data) if line_end < 0 else line_end].strip()
    if data[line_start:start].strip() or (rest and not rest.startswith(b"//")):
        return False
    ctx.edit(line_start, line_start, GUARD + newline, what="guard", kind=EditKind.GUARD)
    after = len(data) if line_end < 0 else line_end + 1
    ctx.edit(after, after, (newline if line_end < 0 else b"") + b"#endif" + newline, what="guard",
             kind=EditKind.GUARD)
    return True


# Last of the finish passes: its two guard lines touch nothing another pass reads, and a declared
# place keeps the order independent of where the module sits in rewrite.MODULES.
def _may_mention(text) -> bool:
    """A TOOLKIT macro among the file's tokens (engine/keywords.FileText); each holds CUDA."""
    return b"CUDA" in text.data and not TOOLKIT.isdisjoint(text.tokens)


PASSES = (Pass("toolkit_asserts", "finish", rewrite, after=("nvidia_thrust",), keywords=(_may_mention,)),)
