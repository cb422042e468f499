"""atomicAdd on 16-bit floats: CUDA has the overloads, HIP does not (issue 32).

CUDA declares `atomicAdd(__half2*, __half2)` and `atomicAdd(__half*, __half)` (sm_70+),
`atomicAdd(__nv_bfloat162*, __nv_bfloat162)` and `atomicAdd(__nv_bfloat16*, __nv_bfloat16)`
(sm_80+). HIP's atomicAdd takes int, unsigned int, unsigned long (long), float and double on every
release the tables know (mappings/hip_device_functions.toml, through 6.2), so such a call has
no match (karpathy/llm.c's layernorm_backward.cu, verified at 6.2). The name converts as it is;
the call is reported (PK001) where the pointer's declaration says it points to one of these
types, or where the pointer is a cast to one (pytorch_scatter's atomicAdd on at::Half,
`atomicAdd(reinterpret_cast<__half *>(address), val)`, verified at 6.2), with the usual port:
a compare-and-swap loop on the enclosing 32-bit word, or unsafeAtomicAdd where the ROCm
release has the overload.

With polyfills on (the default), `atomicAdd` on such a pointer becomes
`portkit_atomicAdd`, that very loop, defined by the generated header (mappings/polyfills.toml) for
both of HIP's platforms: CUDA's own atomicAdd on NVIDIA. The call is then a converted reference, not
a finding. Left as PK001: `atomicAdd_system` (the loop is device-scoped), a project that defines
portkit_atomicAdd itself, and a PyTorch extension's source, which stays CUDA for torch's build-time
hipify and never includes the generated header.
"""

from __future__ import annotations

from tree_sitter import Node

from ..core.edits import EditKind
from ..engine.context import ScanContext, View
from ..engine.syntax import declarations
from . import codes, polyfills
from .arguments import TextArgument, call_arguments

NAMES = frozenset({b"atomicAdd", b"atomicAdd_block", b"atomicAdd_system"})
POLYFILL = "portkit_atomicAdd"
POLYFILLED = frozenset({b"atomicAdd"})   # device scope: the loop's (CUDA has no 16-bit atomicAdd_block)
# the pointee types, CUDA's and HIP's spellings (the audit reads converted code too)
HALVES = frozenset({b"__half", b"__half2", b"half", b"half2", b"__nv_bfloat16", b"__nv_bfloat162", b"nv_bfloat16",
                    b"nv_bfloat162", b"__hip_bfloat16", b"__hip_bfloat162"})


def check(ctx: ScanContext, view: View, name: Node) -> None:
    """The call `name(ptr, value)`: PK001 when `ptr` is declared as a pointer to a 16-bit float."""
    args = call_arguments(name)
    if not args or isinstance(args[0], TextArgument):
        return
    pointee = _pointee(args[0])
    if pointee is None:
        return
    call = name.text.decode()
    kind = pointee.decode()
    if name.text in POLYFILLED and _polyfill(ctx):
        ctx.metrics.refs_found += 1
        ctx.metrics.refs_converted += 1
        ctx.metrics.polyfills.add(POLYFILL)
        ctx.edit(view.start(name), view.end(name), POLYFILL.encode(), f"{call}({kind}*)", kind=EditKind.OTHER)
        return
    ctx.flag(codes.NO_HIP_EQUIVALENT, view.start(name), view.end(name),
             f"{call} on {kind}: HIP's {call} has no {kind} overload (it takes int, unsigned, float, double); "
             f"add through a compare-and-swap loop on the enclosing 32-bit word", f"{call}({kind}*)")


def _polyfill(ctx: ScanContext) -> bool:
    """Whether the call goes through portkit_atomicAdd: polyfills on at a release the record serves,
    the project defines no portkit_atomicAdd of its own, and the file is no PyTorch extension source."""
    record = polyfills.by_name().get(POLYFILL)
    return ctx.options.polyfills and record is not None and record.serves_release(ctx.target) and \
        ctx.source.rel not in ctx.facts.torch_sources and POLYFILL not in ctx.facts.project_defined and \
        not polyfills.defined_here(ctx, (POLYFILL,))


_CASTS = frozenset({b"reinterpret_cast", b"static_cast", b"const_cast"})


def _pointee(arg: Node) -> bytes | None:
    """The 16-bit float type `arg` points to, from its declaration in the function or from the
    cast it is (`reinterpret_cast<__half *>(address)`, `(__half *)address`: pytorch_scatter's
    atomAdd on at::Half); else None."""
    if arg.type in ("cast_expression", "call_expression"):
        return _cast_pointee(arg)
    if arg.type != "identifier":
        return None
    for declaration, _kind in declarations(arg):
        for child in declaration.children:
            target = child.child_by_field_name("declarator") if child.type == "init_declarator" else child
            if target is None or target.type != "pointer_declarator":
                continue
            inner = target.child_by_field_name("declarator")
            if inner is None or inner.text != arg.text:
                continue
            kind = declaration.child_by_field_name("type")
            text = kind.text.strip() if kind is not None else b""
            return text if text in HALVES else None
    return None


def _cast_pointee(arg: Node) -> bytes | None:
    """The 16-bit float type a C-style or named cast to a pointer names; else None."""
    if arg.type == "call_expression":
        function = arg.child_by_field_name("function")
        name = function.child_by_field_name("name") if function is not None and function.type == "template_function" \
            else None
        if name is None or name.text not in _CASTS:
            return None
        listed = function.child_by_field_name("arguments").named_children
        descriptor = listed[0] if len(listed) == 1 else None
    else:
        descriptor = arg.child_by_field_name("type")
    if descriptor is None or descriptor.type != "type_descriptor":
        return None
    pointer = descriptor.child_by_field_name("declarator")
    kind = descriptor.child_by_field_name("type")
    if pointer is None or pointer.type != "abstract_pointer_declarator" or pointer.named_child_count or kind is None:
        return None   # `__half **` and arrays are other types
    return kind.text.strip() if kind.text.strip() in HALVES else None
