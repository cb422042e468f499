"""A CUDA library with no drop-in ROCm counterpart.

What it finds:
    Includes of the headers (and, in CMake and Makefiles, links to the libraries) of CUDA
    libraries that mappings/ecosystem.toml marks as having no ROCm counterpart (TensorRT,
    cuFFTDx, OptiX: blockers), a counterpart with a different API (cuDNN -> MIOpen, CUTLASS ->
    composable_kernel, NVML -> AMD SMI, NVSHMEM -> rocSHMEM ...), or only a partial one. Drop-in
    libraries (cuBLAS, cuFFT, NCCL ...) are converted and only listed as dependencies; those
    mappings/rewrites.toml catalogues (CUTLASS, TensorRT, NVSHMEM ...) are reported by PK402.

Why it matters on AMD GPUs:
    A library without a drop-in counterpart is not a renaming: the code that calls it is
    rewritten against another API, or, for the blockers, the design has to change (TensorRT
    engines become MIGraphX or ONNX Runtime models).

Example:
    #include <NvInfer.h>
    #include <cudnn.h>

Instead:
    The ROCm counterpart named in the finding (from mappings/ecosystem.toml), behind a thin
    interface so both vendors can be built.

Effort:
    Per library (mappings/effort.toml): days for NVML, weeks for cuDNN or CUTLASS; TensorRT is a
    decision before it is a cost.
"""

import re

from tree_sitter import Node

from ..core.tables import ecosystem, blockers as rewrites
from ..engine.context import ScanContext, View
from ..engine.textlines import lines
from ..engine.keywords import Headers
from ..engine.rule import define

RULE = define(__doc__, code="PK401", name="cuda-only-library", severity="high", category="library",
              breaks_build=True)
NODES = ("preproc_include",)


def _keywords() -> tuple:
    """An include of a library's header (its name, or its folder's prefix): what check() reads."""
    return (Headers(*ecosystem.default().header_keywords()),)


KEYWORDS = _keywords
FILE_KINDS = ("cmake", "make")
REFINES = ("PK001", "PK508")   # a CUDA-only library: this says more than "not migrated"
LINKS = re.compile(r"(?<![\w-])-l([A-Za-z_][\w+-]*)|\bCUDA::([A-Za-z_]\w*)|\btarget_link_libraries\s*\(([^)]*)")


def check(ctx: ScanContext, view: View, node: Node) -> None:
    path = node.child_by_field_name("path")
    if path is None or path.type not in ("system_lib_string", "string_literal"):
        return
    name = path.text[1:-1].decode("utf-8", "replace").strip()
    library = ecosystem.default().header(name)
    # a carried copy, a header the tree generates (NCCL's own nccl.h), or one of its own files
    # (pytorch_scatter's "cuda/scatter_cuda.h": project/own_headers.py) is the project's
    if library is not None and not ctx.facts.carries_header(name) and not ctx.facts.generates(name) \
            and not ctx.facts.own_header(name, ctx.source.rel):
        _use(ctx, library, view.start(path), view.end(path), f"#include <{name}>")


def check_text(ctx: ScanContext) -> None:
    eco = ecosystem.default()
    for line in lines(ctx):
        for match in LINKS.finditer(line.code):
            # `target_link_libraries(` may end the line: group 3 is then empty, not absent
            links = match.group(3)
            names = links.split() if links is not None else [match.group(1) or match.group(2)]
            for name in names:
                library = eco.link(name.strip('"'))
                if library is not None and ctx.first(("PK401", library.id, line.number)):
                    _use(ctx, library, line.offset(match.start()), line.offset(match.end()), f"links {name}")


def _use(ctx: ScanContext, library: ecosystem.Library, start: int, end: int, what: str) -> None:
    if ctx.facts.owns(library):
        return   # the project is the library (Transformer Engine's own headers): no dependency
    ctx.uses_library(library.id, start)
    if library.status == "drop-in" or rewrites.default().by_library(library.id) is not None:
        return   # rewrite blockers are PK402's (mappings/rewrites.toml)
    instead = f"; ROCm: {library.rocm}" if library.rocm else ""
    ctx.flag(RULE, start, end, f"{what}: {library.name} {library.phrase}{instead}",
             subject=library.id, severity=library.severity)
