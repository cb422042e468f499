"""`__CUDACC__` in a header's `#if`: keep the NVIDIA test beside the AMD one (issue 31).

A shared header (ggml's include/ggml.h, a CPU backend's simd-mappings.h) is compiled by nvcc, by
hipcc and by host compilers, often before any HIP header. HIP defines `__HIPCC__` on its NVIDIA
backend only from hip/hip_common.h, so writing `__HIPCC__` for `__CUDACC__` there loses the branch
on NVIDIA builds, where nvcc still defines `__CUDACC__`. In a header the test becomes
`(defined(__HIPCC__) || defined(__CUDACC__))`; `#ifdef`/`#ifndef` become the `#if` forms. A
directive that already tests `__HIPCC__` keeps its `__CUDACC__` (a re-run writes the same bytes).
Sources (.cu) include the HIP runtime header first: there the plain rename stays.
"""

from __future__ import annotations

from tree_sitter import Node

from ..core.edits import EditKind
from ..engine.context import ScanContext, View

NAME = b"__CUDACC__"
BOTH = b"(defined(__HIPCC__) || defined(__CUDACC__))"
HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".hxx", ".cuh", ".inl", ".inc", ".ipp", ".tcc")


def _directive_line(view: View, node: Node) -> bytes:
    data = view.data
    start = data.rfind(b"\n", 0, node.start_byte) + 1
    end = data.find(b"\n", node.end_byte)
    return data[start:end if end >= 0 else len(data)]


def keeps_nvidia(ctx: ScanContext, view: View, node: Node) -> bool:
    """Handle `__CUDACC__` in a directive: True when it was written (or left) here, False when the
    plain rename applies (a source file, or code outside `#if`)."""
    parent = node.parent
    if parent is None or parent.type not in ("preproc_defined", "preproc_ifdef"):
        return False
    if b"__HIPCC__" in _directive_line(view, node):
        return True    # already tests both
    rel = ctx.source.rel.lower()
    if not (rel.endswith(HEADER_SUFFIXES) or "." not in rel.rsplit("/", 1)[-1]):
        return False
    if parent.type == "preproc_defined":
        ctx.edit(view.start(parent), view.end(parent), BOTH, what="__CUDACC__", kind=EditKind.NAME)
    else:
        negated = view.data[parent.start_byte:node.start_byte].rstrip().endswith(b"ifndef")
        text = b"#if !defined(__HIPCC__) && !defined(__CUDACC__)" if negated else b"#if " + BOTH[1:-1]
        ctx.edit(view.start(parent), view.end(node), text, what="__CUDACC__", kind=EditKind.NAME)
    ctx.metrics.refs_found += 1
    ctx.metrics.refs_converted += 1
    return True
