"""#include lines: CUDA headers -> HIP headers, no duplicates, and the HIP runtime header when needed.

The layout follows hipify-clang (HipifyAction.cpp): the include keeps its delimiters; an
include that HIP does not need (`device_launch_parameters.h`) or that repeats a HIP header
loses the text from `#` to its path, the rest of the line stays; the runtime header goes in as
a line break, the include and a line break, after `#pragma once` or the include guard, else
before the first #include, else at the top of the file. Unlike hipify-clang, which inserts after
`#ifndef NAME`, the guard's place is after its `#define NAME` line when that line comes next: a
line between the two splits the guard (issue 48: 13 headers of one project), which no maintainer
takes. Every line a finish pass inserts (the polyfill header, the NVIDIA helpers) goes there too.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tree_sitter import Node

from . import cudacc, polyfills
from ..engine.context import IncludeSeen, ScanContext, View
from ..engine.keywords import Headers
from ..engine.passes import Pass
from ..core.edits import EditKind
from ..engine.platform import ppexpr, regions
from . import codes

RUNTIME_HEADER = "hip/hip_runtime.h"
RUNTIME_API_HEADER = "hip/hip_runtime_api.h"


def handle(ctx: ScanContext, view: View, node: Node) -> None:
    path = node.child_by_field_name("path")
    if path is None or path.type not in ("system_lib_string", "string_literal"):
        return  # #include MACRO: nothing to map
    data, at = view.data, node.start_byte
    if not _starts_line(data, at):
        return  # `x #include <...>` mid-line is not a directive; error recovery may still call it one
    raw = view.text(path)
    name = raw[1:-1].decode("utf-8", "replace")
    parent = node.parent
    parent_key = (parent.type, parent.start_byte, parent.end_byte) if parent is not None else None
    # node_end: the end of the path, where hipify-clang's deletion of a directive stops
    seen = IncludeSeen(view.start(node), view.end(path), hash(parent_key), name, converted=False)
    ctx.includes.append(seen)
    mapping = ctx.db.headers.get(name)
    if mapping is None:
        if ctx.facts.rename is not None:
            _renamed_project_header(ctx, view, path, raw, name)
        return
    if ctx.facts.carries_header(name) or ctx.facts.generates(name):   # the tree's own (carried.py, a template)
        return
    if ctx.facts.own_header(name, ctx.source.rel):   # a file of the tree's own (project/own_headers.py)
        return
    hip, problem, reason = mapping.resolve(ctx.target, ctx.options.prefer_roc)
    if hip == name:
        return
    start, end = view.start(path), view.end(path)
    ctx.metrics.refs_found += 1
    if hip is None:
        directive = polyfills.serve_header(ctx, name)
        if directive == b"":   # a header polyfill's header the file never calls into: deleted
            ctx.edit(seen.node_start, end, b"", what=f"removed {name}", covers=True, kind=EditKind.REMOVED_INCLUDE)
            ctx.metrics.refs_converted += 1
            seen.header = ""
            return
        if directive is not None:   # the generated header defines what it declares (polyfills.py)
            ctx.edit(seen.node_start, end, directive, what=polyfills.DIRECTIVE, kind=EditKind.POLYFILL_DIRECTIVE)
            ctx.metrics.refs_converted += 1
            return
        ctx.metrics.refs_left += 1
        ctx.flag(codes.PROBLEM_CODES[problem], start, end, reason, name)
        return
    if hip == "":   # the runtime header declares it all (hipify-clang deletes these too)
        ctx.edit(seen.node_start, end, b"", what=f"removed {name}", covers=True, kind=EditKind.REMOVED_INCLUDE)
        ctx.metrics.refs_converted += 1
        seen.header = ""
        return
    ctx.edit(start, end, raw[:1] + hip.encode("utf-8") + raw[-1:], what=name, kind=EditKind.INCLUDE)
    ctx.metrics.refs_converted += 1
    if mapping.status == "partial":
        ctx.flag(codes.PARTIAL_CONVERSION, start, end, f"{name} -> {hip}: {mapping.note}", name)
    seen.header = hip
    seen.converted = True


def _renamed_project_header(ctx: ScanContext, view: View, path: Node, raw: bytes, name: str) -> None:
    """--rename: `#include "kernels.cuh"` of a project file that is renamed -> its new name."""
    new = ctx.facts.rename.include(name, ctx.source.rel)
    if new is not None:
        ctx.edit(view.start(path), view.end(path), raw[:1] + new.encode("utf-8") + raw[-1:], what=name,
                 kind=EditKind.INCLUDE)


def finish(ctx: ScanContext, root: Node, add_runtime: bool = True) -> None:
    """After the walk: make sure the HIP runtime header comes first where needed, drop duplicates."""
    if add_runtime and _needs_runtime_header(ctx):
        at, parent_key = insertion_point(ctx, root)
        newline = ctx.source.newline
        # hipify-clang's bytes: the leading line break ends the `#pragma once` / `#ifndef` line
        ctx.edit(at, at, newline + b"#include <" + RUNTIME_HEADER.encode() + b">" + newline,
                 what="hip runtime header", kind=EditKind.HIP_RUNTIME_HEADER)
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
    """Two CUDA headers can map to one HIP header (cuda.h, cuda_runtime.h): keep the first.

    Only includes the converter rewrote are removed, and only against another include of the
    same header under the same #if branch, so each preprocessor configuration keeps one. As
    hipify-clang does, the text from `#` to the path goes and the rest of the line stays.
    """
    groups: dict[tuple[int, str], list[IncludeSeen]] = {}
    for seen in sorted(ctx.includes, key=lambda s: s.node_start):
        if seen.header:
            groups.setdefault((seen.parent_id, seen.header), []).append(seen)
    for group in groups.values():
        if len(group) < 2:
            continue
        keep_one = all(seen.converted for seen in group)
        converted = [seen for seen in group if seen.converted]
        for seen in converted[1:] if keep_one else converted:
            ctx.edit(seen.node_start, seen.node_end, b"", what=seen.header, covers=True,
                     kind=EditKind.DUPLICATE_INCLUDE)


_PRAGMA_ONCE = re.compile(rb"#[ \t]*pragma[ \t]+once\b")


def insertion_point(ctx: ScanContext, root: Node) -> tuple[int, tuple]:
    """Where the runtime header (and every line a finish pass adds) goes, with the key of the
    block it lands in.

    The earlier of the end of `#pragma once` and the include guard's place (_guard_end); else
    the `#` of the first #include (one at file level: hipify-clang sees only the active branch,
    and a header inserted inside an #if would be conditional); else the file's start.
    """
    data = ctx.source.parse_bytes
    guard = _include_guard(data, root)
    blocks = [root] if guard is None else [root, guard[0]]
    spots = [(_pragma_once_end(data, block), block) for block in blocks]
    if guard is not None:
        spots.append((guard[1], guard[0]))
    spots = [(at, block) for at, block in spots if at is not None]
    if spots:
        at, block = min(spots, key=lambda spot: spot[0])
    else:
        at, block = _before_first_include(data, root), root
        if at is None:
            at = 3 if ctx.source.has_bom else 0
    return at, (block.type, block.start_byte, block.end_byte)


def _include_guard(data: bytes, root: Node) -> tuple[Node, int] | None:
    """The include guard around everything but comments (clang's controlling macro) and where a
    line goes in it: `#ifndef NAME` or `#if !defined(NAME)` ... `#endif`, no #else."""
    code = []
    for i in range(root.child_count):   # two are enough to say no (a generated file's root has 120,000)
        child = root.child(i)
        if child.type != "comment":
            code.append(child)
            if len(code) > 1:
                return None
    if len(code) != 1 or code[0].child_by_field_name("alternative") is not None:
        return None
    guard = code[0]
    if guard.type == "preproc_ifdef" and data[guard.start_byte:guard.start_byte + 7] == b"#ifndef":
        name = guard.child_by_field_name("name")
    elif guard.type == "preproc_if":
        name = _not_defined(guard.child_by_field_name("condition"))
    else:
        return None
    if name is None:
        return None
    at = _guard_end(data, guard, name)
    if at is None and guard.type == "preproc_if":
        return None   # not a guard clang knows without its #define: as before, no guard
    return guard, name.end_byte if at is None else at


def _not_defined(condition: Node | None) -> Node | None:
    """NAME of `!defined(NAME)` / `!defined NAME`, the one #if form clang takes for a guard."""
    if condition is None or condition.type != "unary_expression" or condition.child(0).type != "!":
        return None
    test = condition.child_by_field_name("argument")
    if test is None or test.type != "preproc_defined":
        return None
    return next((c for c in test.children if c.type == "identifier"), None)


def _guard_end(data: bytes, guard: Node, name: Node) -> int | None:
    """The end of the guard's `#define NAME` line, before its line break, when that #define comes
    right after the test (comments and blank lines between): a line inserted there is inside the
    guard and after it; the test's own line ends (`#ifndef NAME`, hipify-clang's place) would
    split the two."""
    after = False
    for child in guard.children:
        if not after:
            after = child.end_byte >= name.end_byte
            continue
        if child.type == "comment" or not child.type.strip():   # the `\n` ending an #if's condition
            continue
        defined = child.child_by_field_name("name") if child.type == "preproc_def" else None
        if defined is None or data[defined.start_byte:defined.end_byte] != data[name.start_byte:name.end_byte]:
            return None
        end = child.end_byte
        return end - 2 if data[end - 2:end] == b"\r\n" else end - 1 if data[end - 1:end] == b"\n" else end
    return None


def _pragma_once_end(data: bytes, block: Node) -> int | None:
    if b"pragma" not in data:   # no child to look at (a generated file's root has 120,000)
        return None
    for child in block.children:
        if child.type == "preproc_call":
            match = _PRAGMA_ONCE.match(data, child.start_byte, child.end_byte)
            if match is not None:
                return match.end()
    return None


def _starts_line(data: bytes, at: int) -> bool:
    """Only blanks (or a BOM) before `at` on its line: a directive, not text error recovery named one."""
    return not data[data.rfind(b"\n", 0, at) + 1:at].strip(b" \t\r\f\v\xef\xbb\xbf")


def _before_first_include(data: bytes, root: Node) -> int | None:
    """The first #include at file level; failing that, the file-level block holding the first one."""
    if b"include" not in data:   # none anywhere: no child to look at
        return None
    nested = None
    for child in root.children:
        if child.type == "preproc_include" and _starts_line(data, child.start_byte):
            return child.start_byte
        if nested is None and _holds_include(child):
            nested = child.start_byte
    return nested


def _holds_include(node: Node) -> bool:
    """An #include somewhere inside this preprocessor block, however deeply its #ifs nest (a
    walk with a stack of its own: a recursive one hit Python's limit at 3,000 levels)."""
    stack = [node]
    while stack:
        block = stack.pop()
        if not block.type.startswith("preproc_"):
            continue
        for child in block.children:
            if child.type == "preproc_include":
                return True
            stack.append(child)
    return False


def _finish_pass(ctx: ScanContext, view: View, root: Node) -> None:
    """A file with an AMD path chose its own headers there: no runtime header is added."""
    finish(ctx, root, add_runtime=not ctx.regions.shim and _no_amd_path(ctx))


def _no_amd_path(ctx: ScanContext) -> bool:
    """No AMD-only branch once the CUDA compiler's tests take the HIP side (cudacc.py): the #else
    of `#ifdef __NVCC__` is the host compilers' code, AMD-only in the model only because hipcc
    skipped the test convert now gives it; counting it, a re-run added the header the first omitted."""
    if not any(kind == regions.AMD for _, _, kind in ctx.regions.ranges):
        return True
    worlds = regions.selectors(ctx.facts.amd_macros, one_world=ctx.facts.one_world)
    taken = {name.decode(): ppexpr.DEFINED for name in cudacc.COMPILERS}
    converted = regions.classify(ctx.source.data, regions.Selectors({**worlds.amd, **taken}, worlds.nvidia))
    return not any(kind == regions.AMD for _, _, kind in converted.ranges)


def _polyfills_wanted(ctx: ScanContext, view: View) -> bool:
    """A file that calls a polyfill, or includes the header already (an earlier run)."""
    return ctx.options.polyfills and bool(ctx.metrics.polyfills or polyfills.HEADER.encode() in view.data)


def _polyfills_pass(ctx: ScanContext, view: View, root: Node) -> None:
    """The polyfill header's #include goes where this module puts the runtime header's."""
    polyfills.include(ctx, insertion_point(ctx, root)[0])


def _keywords(ctx: ScanContext) -> tuple:
    """What `handle` acts on: a header the tables map (its name, as written between the delimiters),
    or, under --rename, a project header whose suffix changes (.cu, .cuh)."""
    return (_header_names(ctx.db), *((b".cu",) if ctx.facts.rename is not None else ()))


@lru_cache(maxsize=4)
def _header_names(db) -> Headers:
    return Headers(frozenset(name.encode() for name in db.headers))


# guards first: the runtime header is decided over every rewrite of the file, its guards' too; the
# polyfill header's #include then comes after the runtime header this adds
PASSES = (
    Pass("include_directives", "walk", handle, capture="node", kinds=("preproc_include",), keywords=_keywords),
    Pass("includes", "finish", _finish_pass, after=("guards",), keywords=()),   # reads what the walk found
    Pass("polyfills", "finish", _polyfills_pass, after=("includes",), when=_polyfills_wanted,
         keywords=(polyfills.HEADER.encode(),)),   # or a polyfill the name passes chose
)
