"""#include lines: CUDA headers -> HIP headers, no duplicates, and the HIP runtime header when needed."""

from __future__ import annotations

from tree_sitter import Node

from ..context import IncludeSeen, ScanContext, View
from ..source import LINE_BREAK
from . import codes

RUNTIME_HEADER = "hip/hip_runtime.h"
RUNTIME_API_HEADER = "hip/hip_runtime_api.h"


def handle(ctx: ScanContext, view: View, node: Node) -> None:
    path = node.child_by_field_name("path")
    if path is None or path.type not in ("system_lib_string", "string_literal"):
        return  # #include MACRO: nothing to map
    data, at = view.data, node.start_byte
    if data[data.rfind(b"\n", 0, at) + 1:at].strip(b" \t\r\f\v\xef\xbb\xbf"):
        return  # `x #include <...>` mid-line is not a directive; error recovery may still call it one
    raw = view.text(path)
    name = raw[1:-1].decode("utf-8", "replace")
    parent = node.parent
    parent_key = (parent.type, parent.start_byte, parent.end_byte) if parent is not None else None
    seen = IncludeSeen(view.start(node), view.end(node), hash(parent_key), name, converted=False)
    ctx.includes.append(seen)
    mapping = ctx.db.headers.get(name)
    if mapping is None:
        if ctx.options.rename is not None:
            _renamed_project_header(ctx, view, path, raw, name)
        return
    hip, problem, reason = mapping.resolve(ctx.target, ctx.options.prefer_roc)
    if hip == name:
        return
    start, end = view.start(path), view.end(path)
    ctx.metrics.refs_found += 1
    if hip is None:
        ctx.metrics.refs_left += 1
        ctx.flag(codes.PROBLEM_CODES[problem], start, end, reason, name)
        return
    ctx.edit(start, end, raw[:1] + hip.encode("utf-8") + raw[-1:], what=name)
    ctx.metrics.refs_converted += 1
    if mapping.status == "partial":
        ctx.flag(codes.PARTIAL_CONVERSION, start, end, f"{name} -> {hip}: {mapping.note}", name)
    seen.header = hip
    seen.converted = True


def _renamed_project_header(ctx: ScanContext, view: View, path: Node, raw: bytes, name: str) -> None:
    """--rename: `#include "kernels.cuh"` of a project file that is renamed -> its new name."""
    new = ctx.options.rename.include(name, ctx.source.rel)
    if new is not None:
        ctx.edit(view.start(path), view.end(path), raw[:1] + new.encode("utf-8") + raw[-1:], what=name)


def finish(ctx: ScanContext, root: Node, add_runtime: bool = True) -> None:
    """After the walk: make sure the HIP runtime header comes first where needed, drop duplicates."""
    if add_runtime and _needs_runtime_header(ctx):
        at, parent_key = insertion_point(ctx, root)
        line = b"#include <" + RUNTIME_HEADER.encode() + b">" + ctx.source.newline
        data = ctx.source.data
        if at > 0 and data[at - 1:at] not in (b"\n", b"\r"):
            line = ctx.source.newline + line  # the file ends without a newline
        ctx.edit(at, at, line, what="hip runtime header")
        # the inserted line takes part in duplicate removal like a converted include
        ctx.includes.insert(0, IncludeSeen(at, at, hash(parent_key), RUNTIME_HEADER, converted=True))
    _drop_duplicates(ctx)


def _needs_runtime_header(ctx: ScanContext) -> bool:
    """Device code or HIP runtime calls, and no hip_runtime.h ahead of the other HIP headers.

    ROCm's hip/*.h headers (cooperative groups among them) expect hip_runtime.h to be included
    first; nvcc includes cuda_runtime.h implicitly, so CUDA code rarely does it explicitly.
    """
    device = ctx.metrics.has_device_code or ctx.metrics.launches > 0
    if not device and not ctx.uses_runtime_api:
        return False
    runtime = [s.node_start for s in ctx.includes if s.header == RUNTIME_HEADER]
    if not device and any(s.header == RUNTIME_API_HEADER for s in ctx.includes):
        return False
    if not runtime:
        return True
    other_hip = [s.node_start for s in ctx.includes
                 if s.converted and s.header.startswith("hip/") and s.header != RUNTIME_HEADER]
    return bool(other_hip) and min(other_hip) < min(runtime)


def _drop_duplicates(ctx: ScanContext) -> None:
    """Two CUDA headers can map to one HIP header (cuda.h, cuda_runtime.h): keep one line.

    Only includes the converter rewrote are removed, and only against another include of the
    same header under the same #if branch, so each preprocessor configuration keeps one.
    """
    groups: dict[tuple[int, str], list[IncludeSeen]] = {}
    for seen in sorted(ctx.includes, key=lambda s: s.node_start):
        groups.setdefault((seen.parent_id, seen.header), []).append(seen)
    for group in groups.values():
        if len(group) < 2:
            continue
        keep_one = all(seen.converted for seen in group)
        converted = [seen for seen in group if seen.converted]
        for seen in converted[1:] if keep_one else converted:
            ctx.edit(seen.node_start, _line_end(ctx.source.data, seen.node_end), b"",
                     what=f"duplicate {seen.header}", covers=True)


def _line_end(data: bytes, pos: int) -> int:
    """`pos`, moved past the end of its line unless it already stands at a line start."""
    if pos == 0 or data[pos - 1:pos] == b"\n" or (data[pos - 1:pos] == b"\r" and data[pos:pos + 1] != b"\n"):
        return pos
    match = LINE_BREAK.search(data, pos)   # a lone CR ends a line too (old Mac files)
    return len(data) if match is None else match.end()


def insertion_point(ctx: ScanContext, root: Node) -> tuple[int, tuple]:
    """After the leading comment block, then after `#pragma once` or the include guard's #define;
    with the key of the block the new line lands in (for duplicate removal)."""
    data = ctx.source.parse_bytes
    children = root.children
    pos = 3 if ctx.source.has_bom else 0
    parent = root
    index = 0
    while index < len(children) and children[index].type == "comment":
        pos = children[index].end_byte
        index += 1
    if index < len(children):
        first = children[index]
        if first.type == "preproc_call" and _is_pragma_once(data, first):
            pos = first.end_byte
        elif first.type == "preproc_ifdef" and data[first.start_byte:first.start_byte + 7] == b"#ifndef":
            guard = _guard_define(data, first)
            if guard is not None:
                pos = guard.end_byte
                parent = first
    return _line_end(ctx.source.data, pos), (parent.type, parent.start_byte, parent.end_byte)


def _is_pragma_once(data: bytes, node: Node) -> bool:
    text = data[node.start_byte:node.end_byte]
    return text.split() [:2] == [b"#pragma", b"once"]


def _guard_define(data: bytes, ifdef: Node) -> Node | None:
    """The `#define NAME` right after `#ifndef NAME`, if the block is an include guard."""
    name = ifdef.child_by_field_name("name")
    named = [c for c in ifdef.named_children if c.type != "comment"]
    if name is None or len(named) < 2 or named[1].type != "preproc_def":
        return None
    define = named[1]
    define_name = define.child_by_field_name("name")
    if define_name is None or data[define_name.start_byte:define_name.end_byte] != data[name.start_byte:name.end_byte]:
        return None
    return define
