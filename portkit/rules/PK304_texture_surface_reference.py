"""Texture and surface references (the pre-CUDA-12 binding API).

What it finds:
    `texture<T, dim, mode>` and `surface<...>` reference declarations and the calls that bind
    them (`cudaBindTexture`, `cudaBindTexture2D`, `cudaBindTextureToArray`, `cudaUnbindTexture`,
    `cudaBindSurfaceToArray`, `cudaGetTextureReference`).

Why it matters on AMD GPUs:
    Texture references are deprecated in HIP (since ROCm 3.8) and removed from CUDA 12; they are
    module-scope globals bound at run time, which HIP supports only partially. The port is the
    moment to move to texture objects, which both vendors support.

Example:
    texture<float, 1, cudaReadModeElementType> tex;
    cudaBindTexture(0, tex, d_data, bytes);

Instead:
    Create a `hipTextureObject_t` with `hipCreateTextureObject` (resource + texture descriptors),
    pass it to the kernel as an argument and read with `tex1Dfetch<float>(obj, i)`.

Effort:
    Two to six hours per texture, more when many kernels share it.
"""

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.rule import define

RULE = define(__doc__, code="PK304", name="texture-surface-reference", severity="high", category="kernel",
              breaks_build=True, gpu_only=True)
BIND_CALLS = (b"cudaBindTexture", b"cudaBindTexture2D", b"cudaBindTextureToArray",
              b"cudaBindTextureToMipmappedArray", b"cudaUnbindTexture", b"cudaBindSurfaceToArray",
              b"cudaGetTextureReference", b"cudaGetSurfaceReference")
NAMES = (b"texture", b"surface", *BIND_CALLS)
REFINES = ("PK001", "PK003", "PK004", "PK101")


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    name = node.text.decode()
    if node.text in BIND_CALLS:
        if node.parent is not None and node.parent.type == "call_expression":
            ctx.flag(RULE, view.start(node), view.end(node),
                     f"{name}: binds a texture/surface reference (removed from CUDA 12, deprecated in HIP)",
                     subject=name)
        return
    if node.type != "type_identifier" or node.parent is None or node.parent.type != "template_type":
        return
    ctx.flag(RULE, view.start(node), view.end(node),
             f"{name}<...> reference: removed from CUDA 12 and deprecated in HIP; use {name} objects",
             subject=name)
