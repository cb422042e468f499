"""A CUDA-only library or programming model that has no drop-in on AMD: a rewrite.

What it finds:
    Uses of what mappings/rewrites.toml catalogues: CUTLASS and CuTe, Hopper TMA/WGMMA code built
    on CuTe's SM90 atoms (FlashAttention-3 style kernels), TensorRT and TensorRT-LLM, the cuDNN
    frontend graph API, NVSHMEM, cuDLA, OptiX, NPP, nvJPEG, NVDEC/NVENC, cuFile and the MathDx
    device libraries. It looks at includes, namespace-qualified names (once per function for the
    kernel libraries, once per distinct API for the API libraries), C API calls, Python imports,
    and CMake `find_package` and link names.

Why it matters on AMD GPUs:
    hipify renames APIs that exist on both sides; these do not. A kernel built on CUTLASS or CuTe
    is written again on composable_kernel, an engine built with TensorRT moves to MIGraphX, an
    NVSHMEM program to rocSHMEM's API; some (cuDLA, OptiX, NVENC) have nothing on ROCm. Each is a
    decision first (which library, which kernels, keep a CUDA path?), then a rewrite.

Example:
    #include <cute/tensor.hpp>
    using namespace cute;
    Tensor sQ = make_tensor(make_smem_ptr(smem), SmemLayoutQ{});

Instead:
    The alternative the finding names, with the first ROCm release that ships it (composable_kernel
    or CK Tile for CUTLASS/CuTe kernels, MIGraphX for TensorRT, rocSHMEM, rocJPEG, rocDecode ...).
    Keep the CUDA path behind a vendor switch while the AMD one is written.

Effort:
    Per use, from mappings/rewrites.toml: per kernel built on the library (days to weeks), per
    distinct API (hours to days), or per call line; includes, imports and build lines cost
    minutes each. TMA/WGMMA PTX is PK301's and clusters PK306's finding, not counted again here.
"""

import re

from tree_sitter import Node

from ..core.tables import ecosystem, blockers as rewrites
from ..engine.context import ScanContext, View
from ..engine.textlines import lines
from ..engine import syntax
from ..engine.keywords import Headers
from ..engine.rule import define
from .PK401_cuda_only_library import LINKS

RULE = define(__doc__, code="PK402", name="rewrite-blocker", severity="blocker", category="library",
              breaks_build=True, rewrite=True)
NODES = ("preproc_include", "call_expression")
REFINES = ("PK001", "PK508")   # a rewrite blocker says more than "not migrated"
FILE_KINDS = ("cmake", "make", "python")
NAMES = tuple(sorted({ns.encode() for ns in rewrites._index(rewrites.default())[2]}))
# check() finds a call only by a name with one of these prefixes: a file holding none of them
# needs no call captured (commands/scan/walk.py; ggml has 115,000 calls and none of these)
GATES = {"call_expression": tuple(p.encode() for p in rewrites.default().call_prefixes())}


def _keywords() -> tuple:
    """An include of a library's header, a call by one of the catalogue's prefixes, a namespace."""
    return (Headers(*ecosystem.default().header_keywords()), *GATES["call_expression"], frozenset(NAMES))


KEYWORDS = _keywords
_FIND_PACKAGE = re.compile(r"\bfind_package\s*\(\s*([A-Za-z_][\w-]*)", re.I)
_IMPORT = re.compile(r"^\s*(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)|from\s+([\w.]+)\s+import\b)")
# what marks a function as device code, also through CUTLASS's and CuTe's own macros
_DEVICE = re.compile(rb"\b(?:__global__|__device__|CUTLASS_DEVICE|CUTLASS_HOST_DEVICE|CUTE_DEVICE|CUTE_HOST_DEVICE)\b")
WORK = {"rewrite": "the kernels are rewritten", "different-library": "the code moves to another library",
        "no-equivalent": "ROCm has no equivalent"}


def check(ctx: ScanContext, view: View, node: Node) -> None:
    if node.type == "preproc_include":
        _include(ctx, view, node)
        return
    function = node.child_by_field_name("function")
    if function is not None and function.type == "field_expression":
        function = function.child_by_field_name("field")
    if function is None or function.type not in ("identifier", "field_identifier"):
        return
    name = function.text.decode("utf-8", "replace")
    entry = rewrites.default().by_call(name)
    if entry is not None:
        _api(ctx, entry, view.start(function), view.end(function), name, f"{name}()")


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    """`cute::`, `cutlass::`, `nvinfer1::` ... and `using namespace cute;`."""
    parent = node.parent
    if parent is None or parent.type == "namespace_definition":
        return
    using = parent.type == "using_declaration"
    if node.type != "namespace_identifier" and not using:
        return
    cat = rewrites.default()
    namespace = node.text.decode("utf-8", "replace")
    entry = cat.by_namespace(namespace)
    member = parent.child_by_field_name("name") if parent.type == "qualified_identifier" else None
    member_text = _first_name(member)
    if member is not None and member.type == "qualified_identifier" and cat.by_namespace(member_text) not in (None, entry):
        return   # cute::SM90::GMMA::...: the inner namespace names the model (Hopper), not CuTe
    if member_text:
        entry = cat.by_prefix(member_text) or entry
    if entry is None:
        return
    what = f"{namespace}::{member_text}" if member_text else f"using namespace {namespace}"
    if entry.per == "kernel":
        _kernel_use(ctx, view, node, entry, what)
    else:
        _api(ctx, entry, view.start(node), view.end(parent if member else node), member_text or namespace, what)


def check_text(ctx: ScanContext) -> None:
    eco, cat = ecosystem.default(), rewrites.default()
    python = ctx.metrics.kind == "python"
    for line in lines(ctx):
        if python:
            _python(ctx, eco, cat, line)
            continue
        for match in _FIND_PACKAGE.finditer(line.code):
            entry = cat.by_cmake(match.group(1))
            if entry is not None:
                _mention(ctx, entry, line.offset(match.start(1)), line.offset(match.end(1)),
                         f"find_package({match.group(1)})")
        for match in LINKS.finditer(line.code):
            links = match.group(3)
            for name in (links.split() if links is not None else [match.group(1) or match.group(2)]):
                library = eco.link(name.strip('"'))
                entry = cat.by_library(library.id) if library is not None else cat.by_cmake(name.strip('"'))
                if entry is not None and ctx.first(("PK402", entry.id, line.number)):
                    if entry.library:
                        ctx.uses_library(entry.library, line.offset(match.start()))
                    _mention(ctx, entry, line.offset(match.start()), line.offset(match.end()), f"links {name}")


def _include(ctx: ScanContext, view: View, node: Node) -> None:
    path = node.child_by_field_name("path")
    if path is None or path.type not in ("system_lib_string", "string_literal"):
        return
    name = path.text[1:-1].decode("utf-8", "replace").strip()
    library = ecosystem.default().header(name)
    entry = rewrites.default().by_library(library.id) if library is not None else None
    if entry is not None:
        ctx.uses_library(library.id, view.start(path))
        _mention(ctx, entry, view.start(path), view.end(path), f"#include <{name}>")


def _python(ctx: ScanContext, eco: ecosystem.Ecosystem, cat: rewrites.Catalogue, line) -> None:
    match = _IMPORT.match(line.code)
    if match is None:
        return
    for module in (match.group(1).split(",") if match.group(1) else [match.group(2)]):
        top = module.strip().split(".")[0]
        package = eco.module(top) if top else None
        entry = cat.by_package(package.name) if package is not None else None
        if entry is not None and ctx.first(("PK402", entry.id, "import", top)):
            col = line.code.find(top)
            _mention(ctx, entry, line.offset(col), line.offset(col + len(top)), f"import {top}")


def _kernel_use(ctx: ScanContext, view: View, node: Node, entry: rewrites.Entry, what: str) -> None:
    """Once per function: a device function built on the library is a kernel to rewrite; a host
    function (a launcher, an explicit instantiation) or code outside functions is a use."""
    scope = syntax.enclosing(node, "function_definition")
    key = view.base + scope.start_byte if scope is not None else "file"
    if not ctx.first(("PK402", entry.id, key)):
        return
    unit = "kernel" if scope is not None and _device(scope) else "use"
    _flag(ctx, entry, view.start(node), view.end(node), what, unit)


def _api(ctx: ScanContext, entry: rewrites.Entry, start: int, end: int, api: str, what: str) -> None:
    """Per distinct API name in the file (`per = api`), or every use (`per = line`)."""
    if entry.per == "api" and not ctx.first(("PK402", entry.id, "api", api)):
        return
    _flag(ctx, entry, start, end, what, entry.per, api)


def _mention(ctx: ScanContext, entry: rewrites.Entry, start: int, end: int, what: str) -> None:
    _flag(ctx, entry, start, end, what, "use")


def _flag(ctx: ScanContext, entry: rewrites.Entry, start: int, end: int, what: str, unit: str,
          api: str = "") -> None:
    related = f"; see also {', '.join(entry.related)}" if entry.related else ""
    ctx.flag(RULE, start, end, f"{what}: {entry.name} has no drop-in on AMD ({WORK[entry.work]}); "
             f"instead: {entry.instead}{related}", subject="/".join(filter(None, (entry.id, unit, api))))


def _first_name(node: Node | None) -> str:
    """The leading name of a qualified member: `SM90_TMA_LOAD` in `SM90_TMA_LOAD{}`, `Tensor<...>`."""
    while node is not None and node.type in ("template_type", "template_function", "qualified_identifier"):
        node = node.child_by_field_name("name") if node.type != "qualified_identifier" else \
            node.child_by_field_name("scope")
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _device(function: Node) -> bool:
    body = function.child_by_field_name("body")
    head = function.text[:body.start_byte - function.start_byte] if body is not None else function.text
    return _DEVICE.search(head) is not None
