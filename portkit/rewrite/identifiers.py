"""CUDA names in code -> HIP names (the call arguments that come with them: arguments.py).

Only identifier nodes are touched, so comments are never rewritten (string literals have their
own, hipify-clang-compatible rule in strings.py), and a name that merely contains a CUDA name
(my_cudaMalloc) is a different identifier.
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from tree_sitter import Node

from . import cudacc, polyfills
from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from ..core.edits import EditKind
from ..core.needles import finditer_from
from ..core.source import begins_line
from ..engine.platform import regions
from ..core.tables.mappings import Mapping, format_version, tables_dir
from ..core.tables.records import table
from . import arguments, atomics, codes, ffs, qualified_names, sparse_buffers

# Families whose converted names mean the file needs the HIP runtime header.
RUNTIME_FAMILIES = frozenset({"runtime", "driver", "device"})


def _matches_kind(node: Node, mapping: Mapping) -> bool:
    """A namespace entry (cub) only matches `cub::`; types may also appear as `Type::`."""
    if node.type == "namespace_identifier":
        if mapping.kind == "namespace" and qualified_names.nested_scope(node):
            return False  # at::cuda::, thrust::cuda::: someone else's namespace called cuda
        return mapping.kind in ("namespace", "type", "enum")
    if mapping.kind == "type" and mapping.cuda.isalpha() and mapping.cuda.islower():
        return node.type == "type_identifier"  # `texture<...>` is the type, a variable `texture` is not
    return mapping.kind != "namespace"


def audit_notes(ctx: ScanContext, mapping: Mapping, start: int, end: int) -> None:
    """PK101/PK102, audit only, for names that do convert (the others already have a PK00x):
    a CUDA API on its way out, or a HIP counterpart still experimental."""
    if mapping.cuda_deprecated or mapping.cuda_removed:
        when = [f"deprecated in CUDA {format_version(mapping.cuda_deprecated)}" if mapping.cuda_deprecated else "",
                f"removed in CUDA {format_version(mapping.cuda_removed)}" if mapping.cuda_removed else ""]
        ctx.flag(codes.DEPRECATED_CUDA_API, start, end,
               f"{mapping.cuda} is {' and '.join(w for w in when if w)}", mapping.cuda)
    if mapping.status == "experimental":
        note = f": {mapping.note}" if mapping.note else ""
        ctx.flag(codes.EXPERIMENTAL_HIP_API, start, end,
               f"{mapping.cuda}: the HIP counterpart is experimental{note}", mapping.cuda)


def handle(ctx: ScanContext, view: View, node: Node, text: bytes | None = None) -> None:
    """Convert or report one CUDA name (`text`: the node's, where the caller has it already)."""
    text = node.text if text is None else text
    if node.type == "namespace_identifier" and qualified_names.member_left(ctx, node):
        return
    qualified = ctx.db.qualified.get(text)
    if qualified and qualified_names.spelled(node) in qualified:
        _convert(ctx, view, node, qualified[qualified_names.spelled(node)])
        return
    if text in cudacc.OWN_NAMES:
        cudacc.keeps_nvidia(ctx, view, node)   # __NVCC__, __CUDA__, __CUDA_ARCH__: no table entry
        return
    mapping = ctx.db.names_by_bytes.get(text)
    if mapping is None or not _matches_kind(node, mapping):
        return
    if ctx.facts.carried and ctx.facts.carries_name(mapping.family, mapping.cuda):
        return   # declared by the tree's own copy of the library (project/carried.py)
    if ctx.facts.generated_headers and mapping.family in ctx.facts.own_libraries:
        return   # the tree is the library (NCCL, whose nccl.h it generates): its own API
    if text == cudacc.NAME and cudacc.keeps_nvidia(ctx, view, node):
        return   # a header's #if keeps its NVIDIA test beside the AMD one
    parent = node.parent
    if mapping.family in RUNTIME_FAMILIES and _class_member(view, node, parent):
        return   # Backend::cudaMalloc, a class's own member: not CUDA's C API
    if mapping.kind == "type" and text in ctx.derived(own_types):
        return   # ggml-sycl's `struct __nv_fp8_e4m3 {...}`: the file's own type, not CUDA's
    if mapping.kind == "macro" and text in ctx.derived(own_macros):
        return   # faiss's `#ifdef USE_AMD_ROCM #define CUDART_NAN_F ...`: the AMD build's own definition
    if mapping.kind == "namespace" and text in ctx.derived(own_namespaces):
        return   # mamba's `#else namespace cuda { namespace std = ::std; }`: the AMD build's own cuda::std
    if mapping.kind == "namespace" and qualified_names.own_use(ctx, view, node, text):
        return   # ctranslate2's `namespace cuda` and its `cuda::` uses: the project's, not libcu++'s
    if mapping.kind == "function" and mapping.rewrites_args and _declared_here(node, parent):
        return   # pytorch_scatter's `at::Half __shfl_up_sync(mask, at::Half, delta) {...}`: its own overload
    if parent is not None and parent.is_error and _inside_string(view.data, node.start_byte):
        return   # error recovery split a string literal: "cudaMalloc failed" is text, not code
    if mapping.arity_alias:
        mapping = _by_arity(ctx, node, mapping)
    _convert(ctx, view, node, mapping, text)


def _declared_here(node: Node, parent: Node | None) -> bool:
    """Whether `node` names the function a declaration or definition declares (`T f(params)`):
    the project's own function, an overload of CUDA's name for its own types (pytorch_scatter's
    __shfl_up_sync for at::Half, issue 53), not a use of CUDA's. Asked only of a record that
    rewrites its calls' arguments: renamed, the definition would no longer take the calls it
    serves (they lose their mask and reach HIP's __shfl_up), while a plain rename
    (fake::cudaDeviceSynchronize) keeps the definition and its calls together. The calls stay
    reported, since without types they cannot be told from CUDA's."""
    return parent is not None and parent.type == "function_declarator" \
        and parent.child_by_field_name("declarator") == node


_TYPE_WORDS = (b"struct", b"class", b"union", b"using", b"typedef")   # where an _OWN_TYPE match starts
_OWN_TYPE = re.compile(rb"\b(?:struct|class|union)\s+(?:alignas\s*\([^)]*\)\s*)?(\w+)\s*(?:final\s*)?[{:]"
                       rb"|\busing\s+(\w+)\s*=|\btypedef\b[^;{}]{0,200}?\b(\w+)\s*;")


def own_types(ctx: ScanContext) -> frozenset[bytes]:
    """CUDA type names the file defines itself (`struct __nv_fp8_e4m3 { ... };`, a SYCL backend's
    stand-in for CUDA's type; `using X = ...;`, `typedef ... X;`): renaming the definition and its uses to HIP's name made another
    vendor's file include HIP (issue 31, ggml's ggml-sycl/type.hpp)."""
    data = ctx.source.data
    if not any(word in data for word in _TYPE_WORDS):
        return frozenset()
    names = ctx.db.names_by_bytes
    found = (m.group(1) or m.group(2) or m.group(3) for m in finditer_from(_OWN_TYPE, data, _TYPE_WORDS))
    return frozenset(n for n in found if n in names and names[n].kind == "type")


_DEFINE = re.compile(rb"#[ \t]*define[ \t]+(\w+)")   # from the '#' (core/source.begins_line)


def own_macros(ctx: ScanContext) -> frozenset[bytes]:
    """CUDA macro names the file `#define`s itself where the AMD build compiles the definition
    (shared code, or a branch only the AMD build takes): faiss's VectorResidual.cu defines
    CUDART_NAN_F under `#ifdef USE_AMD_ROCM` and includes math_constants.h only in the #else.
    Renaming the uses to HIP_NAN_F left the AMD build with a name nothing defines (no
    hip_math_constants.h there): found by verifying faiss at ROCm 6.2. A definition only an
    NVIDIA build compiles (an old-CUDA shim) is not the AMD build's, and the uses convert."""
    data = ctx.source.data
    if b"define" not in data:
        return frozenset()
    names = ctx.db.names_by_bytes
    region_map = ctx.regions
    found = set()
    for match in _DEFINE.finditer(data):
        if not begins_line(data, match.start()):
            continue
        name = match.group(1)
        mapping = names.get(name)
        if mapping is None or mapping.kind != "macro":
            continue
        line_start = data.rfind(b"\n", 0, match.start()) + 1
        kind = region_map.kind_at(line_start) if (region_map.ranges or region_map.shim) else None
        if kind is None or kind == regions.AMD:
            found.add(name)
    return frozenset(found)


_NAMESPACE = re.compile(rb"\bnamespace\s+(\w+)\s*[{=]")


def own_namespaces(ctx: ScanContext) -> frozenset[bytes]:
    """CUDA namespaces (libcu++'s `cuda`) the file defines itself in a branch only the AMD build
    takes: mamba's uninitialized_copy.cuh includes <cuda/std/type_traits> under `#ifndef
    USE_ROCM` and, in the #else, maps `namespace cuda { namespace std = ::std; }`; its shared
    `::cuda::std::forward` is then the AMD build's own, not "no HIP equivalent" (7 high findings
    and libcu++'s 30.6 h). A definition in shared code is not a port: the name still reports."""
    data = ctx.source.data
    region_map = ctx.regions
    if not (region_map.ranges or region_map.shim):
        return frozenset()
    names = ctx.db.names_by_bytes
    found = set()
    for match in finditer_from(_NAMESPACE, data, (b"namespace",)):
        mapping = names.get(match.group(1))
        if mapping is not None and mapping.kind == "namespace" and region_map.kind_at(match.start()) == regions.AMD:
            found.add(match.group(1))
    return frozenset(found)


def _class_member(view: View, node: Node, parent: Node | None) -> bool:
    """`Backend::cudaMalloc` where the file defines `struct Backend`/`class Backend`: the class's
    own static member (whose declaration, a field, is never renamed), not CUDA's C API. Renaming
    the call made it call another member, silently (issue 31). A namespace's look-alike
    (`fake::cudaDeviceSynchronize`) is renamed with its definition, as hipify-clang does.
    `parent`: the node's."""
    if parent is None or parent.type != "qualified_identifier" or parent.child_by_field_name("name") != node:
        return False
    scope = parent.child_by_field_name("scope")
    if scope is None or not scope.text.strip():
        return False
    return scope.text.strip() in _class_names(view.data)


_CLASS_NAME = re.compile(rb"\b(?:class|struct)\s+(\w+)\b")


@lru_cache(maxsize=8)
def _class_names(data: bytes) -> frozenset[bytes]:
    """Every name the file writes after `class` or `struct`, found once per file: a search per
    qualified call (a new pattern each, over the whole file) took 3.6 s of an audit of ggml."""
    return frozenset(m.group(1) for m in finditer_from(_CLASS_NAME, data, (b"class", b"struct")))


class _Plan(NamedTuple):
    """What a CUDA name becomes in this file, the same at each of its uses: worked out once per
    file and record (a generated file names cudaMemcpy 60,000 times)."""

    hip: str | None        # what is written (a polyfill's name where one serves), None: left
    resolved: str | None   # what the tables resolved it to at the target
    problem: str           # why it is left ("missing", "newer", "removed")
    reason: str
    same: bool             # hip is the CUDA name itself (nothing to rename)
    written: bytes         # the bytes of the rename (a qualified name's innermost part)
    rewrites_args: bool    # the record's argument rewrites go with the name written
    note: str              # PK004's message: what the reader must check ("" if nothing)
    notes: bool            # the record has an audit note (PK101/PK102: audit_notes)
    runtime: bool          # a runtime API name: the file needs the HIP runtime header
    sparse: bool           # a cuSPARSE call that needs its extra buffer (sparse_buffers)


def _plans(ctx: ScanContext) -> dict:
    """This file's plans by (id of the record, own_api): a ScanContext.derived fact."""
    return {}


def _plan(ctx: ScanContext, node: Node, mapping: Mapping, own_api: bool) -> _Plan:
    """The name's plan at the target (`node`: a use, read only under --roc for the call around it)."""
    prefer_roc = ctx.options.prefer_roc
    hip, problem, reason = mapping.resolve(ctx.target, prefer_roc, legacy=own_api)
    if prefer_roc and mapping.cuda in roc_datatypes():   # rocSPARSE has its own enum
        hip = roc_datatypes()[mapping.cuda].get(_callee_family(ctx, node), hip)
    resolved, hip = hip, polyfills.serve(ctx, mapping.cuda, hip)
    notes = bool(mapping.cuda_deprecated or mapping.cuda_removed or mapping.status == "experimental")
    if hip is None or hip == mapping.cuda:
        return _Plan(hip, resolved, problem, reason, hip is not None, b"", False, "", notes, False, False)
    # a qualified namespace (thrust::cuda -> thrust::hip) renames its innermost name only
    written = hip.rsplit("::", 1)[-1] if "::" in mapping.cuda else hip   # roc names may be qualified
    note = mapping.conversion_note(hip)   # a roc function whose arguments differ, or a partial mapping
    return _Plan(hip, resolved, problem, reason, False, written.encode("ascii"), arguments.applies(mapping, hip, ctx),
                 f"{mapping.cuda} -> {hip}: {note}" if note else "", notes, mapping.family in RUNTIME_FAMILIES,
                 mapping.cuda in sparse_buffers.EXTRA_BUFFER and not prefer_roc)


def _convert(ctx: ScanContext, view: View, node: Node, mapping: Mapping, text: bytes | None = None) -> None:
    """Rename one use of a CUDA name (`text`: the node's), or report why it stays."""
    own_api = not mapping.legacy or not _argument_of_other_family(ctx, node, mapping)
    if ctx.options.prefer_roc and mapping.cuda in roc_datatypes():
        plan = _plan(ctx, node, mapping, own_api)   # the call it is an argument of decides
    else:
        plans = ctx.derived(_plans)
        key = (id(mapping), own_api)   # the records outlive the scan: their ids name them
        plan = plans.get(key)
        if plan is None:
            plan = plans[key] = _plan(ctx, node, mapping, own_api)
    hip = plan.hip
    if hip is not None:
        if plan.notes and ctx.options.audit:
            audit_notes(ctx, mapping, view.start(node), view.end(node))
        text = node.text if text is None else text
        if text in ffs.FIXES:   # HIP's two overloads: some arguments are ambiguous
            ffs.check(ctx, view, node)
        if text in atomics.NAMES:   # CUDA's 16-bit float overloads HIP lacks
            atomics.check(ctx, view, node)
        if plan.same:
            if plan.resolved is None:   # a polyfill of the same name: converted all the same (audit prices it as review)
                ctx.metrics.refs_found += 1
                ctx.metrics.refs_converted += 1
                return
            if mapping.status == "partial":  # same name, different behaviour: say so, change nothing
                ctx.flag(codes.PARTIAL_CONVERSION, view.start(node), view.end(node),
                         f"{mapping.cuda}: {mapping.note}", mapping.cuda)
            return
    start, end = view.base + node.start_byte, view.base + node.end_byte
    metrics = ctx.metrics
    metrics.refs_found += 1
    if hip is None:
        metrics.refs_left += 1
        ctx.flag(codes.PROBLEM_CODES[plan.problem], start, end, plan.reason, mapping.cuda)
        return
    ctx.edit(start, end, plan.written, mapping.cuda, False, (), EditKind.NAME)
    metrics.refs_converted += 1
    if plan.runtime:
        ctx.uses_runtime_api = True
    if plan.rewrites_args:
        arguments.fix_call(ctx, view, mapping, node, hip)
    elif plan.sparse:
        sparse_buffers.fix(ctx, view, mapping.cuda, node, hip)
    if plan.note:
        ctx.flag(codes.PARTIAL_CONVERSION, start, end, plan.note, mapping.cuda)


@dataclass(frozen=True)
class RocDatatype:
    """mappings/roc_datatypes.toml: a cudaDataType value as an argument of a `family` call under --roc."""

    cuda: str
    family: str
    roc: str


@lru_cache(maxsize=1)
def roc_datatypes() -> dict[str, dict[str, str]]:
    """cudaDataType value -> {family of the call it is an argument of: the roc library's own name}."""
    out: dict[str, dict[str, str]] = {}
    for entry in table(tables_dir() / "roc_datatypes.toml", "datatype", RocDatatype, ("cuda", "family")):
        out.setdefault(entry.cuda, {})[entry.family] = entry.roc
    return out


def _callee_family(ctx: ScanContext, node: Node) -> str:
    """The table family of the call `node` is a direct argument of ("" when it is not one)."""
    arglist = node.parent
    if arglist is None or arglist.type != "argument_list" or arglist.parent is None:
        return ""
    function = arglist.parent.child_by_field_name("function")
    callee = ctx.db.names_by_bytes.get(function.text) if function is not None else None
    return callee.family if callee is not None else ""


def _argument_of_other_family(ctx: ScanContext, node: Node, mapping: Mapping) -> bool:
    """`cusparseCreateDnVec(..., CUDA_R_32F)`: a data type passed to another library's call, which
    takes hipDataType on every ROCm release; hipBLAS before 6.0 takes only hipblasDatatype_t. A file
    that never names the legacy names' library (a cuSPARSE-only program's `cudaDataType dt`) has
    no use for them either (issue 31: hipblasDatatype_t, undeclared without hipBLAS, was written)."""
    if not mapping.legacy:
        return False
    if mapping.family.encode() not in ctx.source.data:
        return True
    family = _callee_family(ctx, node)
    return family not in ("", mapping.family)


STRING_WINDOW = 4096   # bytes of the line looked at: bounded work on megabyte-long lines


def _inside_string(data: bytes, pos: int) -> bool:
    """Whether `pos` is inside a "..." literal on its line, read lexically (for names that
    tree-sitter's error recovery put in an ERROR node, where the tree cannot say)."""
    start = max(data.rfind(b"\n", 0, pos) + 1, pos - STRING_WINDOW)
    inside, i = False, start
    while i < pos:
        c = data[i]
        if c == 0x5C:                                   # backslash: skip the escaped byte
            i += 2
            continue
        if c == 0x22:                                   # "
            inside = not inside
        elif c == 0x27 and not inside:                  # a character literal such as '"'
            end = data.find(b"'", i + 1, pos)
            i = end if end > 0 and end - i <= 4 else i
        i += 1
    return inside


def _by_arity(ctx: ScanContext, node: Node, mapping: Mapping) -> Mapping:
    """A call whose argument count marks it as another CUDA API (CUDA 12's three-argument
    cudaGraphInstantiate is cudaGraphInstantiateWithFlags) converts as that API."""
    args = arguments.call_arguments(node)
    if args is None:
        return mapping
    alias = dict(mapping.arity_alias).get(len(args))
    return ctx.db.names[alias] if alias else mapping


def _names(ctx: ScanContext) -> tuple:
    """The tables' names, the namespaces whose innermost name need not be one (thrust::cuda), and
    the CUDA compiler macros cudacc.py gives their HIP side."""
    return ctx.db.names_by_bytes, ctx.db.qualified, cudacc.OWN_NAMES


def acting_names(ctx: ScanContext) -> frozenset[bytes]:
    """The tables' names a use of which this run does something with: all but those written the same
    at the target with nothing to say (`sqrt`, `expf`, `ncclAllReduce`; 720 of 10,500). A file that
    uses only those is left as it is, so they are no keyword of it (engine/keywords.py); in AMD or
    inactive branches every name counts, and such a file is always parsed (commands/scan/prefilter.py)."""
    return _acting(ctx.db, ctx.target, ctx.options.prefer_roc)


@lru_cache(maxsize=4)
def _acting(db, target, prefer_roc: bool) -> frozenset[bytes]:
    return frozenset(name for name, m in db.names_by_bytes.items() if not _inert(m, target, prefer_roc))


def _inert(m: Mapping, target, prefer_roc: bool) -> bool:
    """_convert changes nothing, counts nothing and reports nothing for a use of `m` (_plan: the
    same name both ways, no note, no polyfill; no per-use check: ffs, atomics, arity)."""
    same = (m.cuda, "", "")
    return (m.resolve(target, prefer_roc) == same and m.resolve(target, prefer_roc, legacy=False) == same
            and m.status == "supported" and not (m.cuda_deprecated or m.cuda_removed) and not m.arity_alias
            and m.cuda.encode() not in ffs.FIXES and m.cuda.encode() not in atomics.NAMES)


PASSES = (Pass("identifiers", "walk", handle, capture="name", names=_names,
               keywords=lambda ctx: (acting_names(ctx), ctx.db.qualified, cudacc.OWN_NAMES)),)
