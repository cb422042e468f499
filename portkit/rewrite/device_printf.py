"""`std::printf(...)` in device code: the `std::` goes, leaving HIP's device `printf`.

CUDA compiles `std::printf` in a `__global__` or `__device__` function (nccl-tests'
verifiable.cu and inexact_regress.cu print from kernels so). hip-clang does not: HIP declares its
device `printf` in the global namespace only, and `std::printf` (<cstdio>'s `using ::printf`)
names the host function, so every such call is `reference to __host__ function 'printf' in
__global__ function` (hipcc 5.2 and clang 19 with the ROCm 6.2 headers alike). Unqualified
`printf` is the same call on both: HIP's device printf in device code, and, in the host pass of a
`__host__ __device__` function, ::printf, which <cstdio> declares on every C++ library HIP builds
with. Host-only functions keep `std::printf`: nothing is wrong there.
"""

from __future__ import annotations

from tree_sitter import Node

from ..core.edits import EditKind
from ..engine import syntax
from ..engine.context import ScanContext, View
from ..engine.keywords import DEVICE_CODE
from ..engine.passes import Pass

NAMES = frozenset({b"printf"})


def check(ctx: ScanContext, view: View, name: Node) -> None:
    """`name` is `printf`: in `std::printf(...)` called from device code, delete the `std::`."""
    qualified = name.parent
    if qualified is None or qualified.type != "qualified_identifier" or qualified.child_by_field_name("name") != name:
        return
    scope = qualified.child_by_field_name("scope")
    call = qualified.parent
    if scope is None or view.text(scope) != b"std" or call is None or call.type != "call_expression" \
            or call.child_by_field_name("function") != qualified or not _device(call):
        return
    ctx.edit(view.start(qualified), view.start(name), b"", what="std:: of a device printf", kind=EditKind.NAME)


def _device(node: Node) -> bool:
    """Whether `node` is in a function compiled for the device (`__global__`, `__device__`, also with
    `__host__`); a lambda inside one counts as its enclosing function."""
    function = syntax.enclosing(node, "function_definition")
    quals = syntax.function_qualifiers(function) if function is not None else set()
    return bool(quals & {b"__global__", b"__device__"})


# after minmax, so that the order of the name passes never rests on the list (tests/test_passes.py)
PASSES = (Pass("device_printf", "walk", check, capture="name", names=lambda ctx: (NAMES,), after=("minmax",),
               keywords=DEVICE_CODE),)   # device functions only
