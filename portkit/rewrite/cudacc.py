"""Tests of the CUDA compiler's macros in an `#if`: the HIP build takes the same side (issues 31, 48).

`#if defined(__CUDA__) || defined(__NVCC__)` around `#define PROJ_DEVICE __host__ __device__` leaves
the macro empty under hipcc, and every device function the project declares with it becomes host
code. Each macro has its HIP counterpart: `__CUDACC__` and `__NVCC__` (nvcc) -> `__HIPCC__`,
`__CUDA__` (clang's CUDA mode) -> `__HIP__` (its HIP mode), `__CUDA_ARCH__` (nvcc's device pass)
-> `__HIP_DEVICE_COMPILE__` (hip-clang's), HIP's own documented counterparts. hipify-clang renames
`__CUDACC__` only (CUDA2HIP_Driver_API_types.cpp) and leaves the other three.

A shared header (ggml's include/ggml.h, tiny-cuda-nn's common.h) is compiled by nvcc, by hipcc and
by host compilers, often before any HIP header. HIP defines `__HIPCC__` and `__HIP_DEVICE_COMPILE__`
on its NVIDIA backend only from hip/hip_common.h, so a plain rename there loses the branch on
NVIDIA builds. In a header the test keeps the NVIDIA macro beside the HIP one:
`defined(__NVCC__)` -> `(defined(__HIPCC__) || defined(__NVCC__))`; `#ifdef`/`#ifndef` become the
`#if` forms. Sources (.cu) include the HIP runtime header first: there the plain rename, except in
a PyTorch extension's sources, which stay CUDA for nvcc (keeps_both).

Left as they are: a directive that already tests a HIP macro (`__HIPCC__`, `__HIP__`,
`__HIP_PLATFORM_AMD__`, `__HIP_DEVICE_COMPILE__`: a re-run writes the same bytes, and a port the
author wrote stays); a test in a group whose other branches name an AMD selector (`#ifdef __CUDACC__`
/ `#elif defined(GGML_USE_HIP)`: the platform model keeps hip-clang's reading there,
engine/platform/compilers.py, so the AMD build still takes the author's branch); code the platform
model protects (AMD-only, already ported); and
`__CUDA_ARCH__` on a line that compares it (`__CUDA_ARCH__ >= 800` picks GPU-specific code: PK103
reports it, --rewrite-guards rewrites it, and under that option guards.py owns every
`__CUDA_ARCH__` test, so that one directive gets one edit).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from ..core.edits import EditKind
from ..engine.context import ScanContext, View

NAME = b"__CUDACC__"   # the one the tables rename (driver.toml); the others are this module's alone
HIP_SIDE = {b"__CUDACC__": b"__HIPCC__", b"__NVCC__": b"__HIPCC__", b"__CUDA__": b"__HIP__",
            b"__CUDA_ARCH__": b"__HIP_DEVICE_COMPILE__"}
OWN_NAMES = frozenset(HIP_SIDE) - {NAME}   # identifiers.py sends these here, not to the tables
# defined in every pass of their compiler, so that after convert an AMD build takes their side (the
# platform model's list too: mappings/platforms.toml's [nvidia] compilers)
COMPILERS = (b"__CUDACC__", b"__NVCC__", b"__CUDA__")
HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".hxx", ".cuh", ".inl", ".inc", ".ipp", ".tcc")
_HIP_TESTED = re.compile(rb"\b(?:__HIPCC__|__HIP__|__HIP_PLATFORM_\w+|__HIP_DEVICE_COMPILE__)\b")
_ARCH = b"__CUDA_ARCH__"
# `defined(__CUDA_ARCH__)`, `defined __CUDA_ARCH__`, `#ifdef __CUDA_ARCH__`: a device-pass test; what
# is left of the line after these naming __CUDA_ARCH__ compares it
_ARCH_TESTED = re.compile(rb"\bdefined\s*\(\s*__CUDA_ARCH__\s*\)|\bdefined\s+__CUDA_ARCH__\b"
                          rb"|#\s*(?:ifdef|ifndef|elifdef|elifndef)\s+__CUDA_ARCH__\b")


def _directive_line(view: View, node: Node) -> bytes:
    data = view.data
    start = data.rfind(b"\n", 0, node.start_byte) + 1
    end = data.find(b"\n", node.end_byte)
    return data[start:end if end >= 0 else len(data)]


def keeps_nvidia(ctx: ScanContext, view: View, node: Node) -> bool:
    """Handle a CUDA compiler macro in a directive: True when it was written (or left) here, False
    when the tables' plain rename applies (`__CUDACC__` in a source file, or outside `#if`)."""
    parent = node.parent
    if parent is None or parent.type not in ("preproc_defined", "preproc_ifdef"):
        return False
    line = _directive_line(view, node)
    at = view.start(node)
    if _HIP_TESTED.search(line) or ctx.regions.protected(at) or ctx.regions.compiler_tests.keeps(at):
        return True    # tests both already, a port the model protects, or a group that chose its AMD branch
    name = node.text
    if name == _ARCH and (ctx.options.rewrite_guards or _ARCH in _ARCH_TESTED.sub(b"", line)):
        return True    # a comparison of the architecture, or guards.py's
    hip = HIP_SIDE[name]
    if not keeps_both(ctx):
        if name == NAME:
            return False
        ctx.edit(view.start(node), view.end(node), hip, what=name.decode(), kind=EditKind.NAME)
    elif parent.type == "preproc_defined":
        both = b"(defined(" + hip + b") || defined(" + name + b"))"
        ctx.edit(view.start(parent), view.end(parent), both, what=name.decode(), kind=EditKind.NAME)
    else:
        negated = view.data[parent.start_byte:node.start_byte].rstrip().endswith(b"ifndef")
        text = (b"#if !defined(" + hip + b") && !defined(" + name + b")" if negated
                else b"#if defined(" + hip + b") || defined(" + name + b")")
        ctx.edit(view.start(parent), view.end(node), text, what=name.decode(), kind=EditKind.NAME)
    ctx.metrics.refs_found += 1
    ctx.metrics.refs_converted += 1
    ctx.metrics.compiler_tests += (ctx.source.position(view.start(node))[0],)
    return True


def keeps_both(ctx: ScanContext) -> bool:
    """Whether a test here keeps the NVIDIA macro beside the HIP one: in a header, and in a source
    a PyTorch extension builds (ProjectFacts.torch_sources), which stays CUDA and is compiled by
    nvcc for NVIDIA and, after torch's hipify, by hip-clang for AMD (commands/scan/torch_gaps.py
    writes such an edit: nvcc compiles it too)."""
    rel = ctx.source.rel.lower()
    return rel.endswith(HEADER_SUFFIXES) or "." not in rel.rsplit("/", 1)[-1] or ctx.source.rel in ctx.facts.torch_sources
