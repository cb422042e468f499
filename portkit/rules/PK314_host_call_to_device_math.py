"""Host code that calls a CUDA math function which HIP declares for device code only.

What it finds:
    A call of `rsqrtf`, `rsqrt`, `rcbrtf`, `rcbrt`, `normcdff`, `normcdf`, `normcdfinvf`,
    `normcdfinv`, `erfinvf`, `erfinv`, `erfcinvf`, `erfcinv`, `erfcxf`, `erfcx`, `sinpif`,
    `sinpi`, `cospif`, `cospi`, `sincospif` or `sincospi` in a host function: one with neither
    `__device__` nor `__global__`, not `constexpr` (clang compiles those for both sides), and not
    inside device code (a lambda in a kernel), in a file that defines no function of that name
    itself (its own overload may take the call). These are the functions CUDA's math_functions.h
    declares `__host__ __device__` with a host implementation, that no C library declares, and
    that HIP's headers (clang's __clang_hip_math.h) declare `__device__` only.

Why it matters on AMD GPUs:
    nvcc compiles the host call against CUDA's host implementation; hip-clang finds no host
    declaration and stops: "no matching function for call to 'rsqrtf'" (checked with ROCm 6.2's
    headers). apex's layer_norm_cuda_kernel.cu specialises its own host `rsqrt<float>` as
    `return rsqrtf(v);`; its AMD port adds a `__device__ float rsqrt(float)` for HIP instead.

Example:
    template<typename U> U rsqrt(U v) { return U(1) / sqrt(v); }
    template<> float rsqrt(float v) { return rsqrtf(v); }

Instead:
    Compute it on the host with the C library (`1.0f / sqrtf(v)`, `erff`-based formulas), or
    make the function `__host__ __device__` and keep the call on the device side
    (`#ifdef __HIP_DEVICE_COMPILE__`).

Effort:
    Minutes per call.
"""

from tree_sitter import Node

from ..engine import syntax
from ..engine.context import ScanContext, View
from ..engine.rule import define

RULE = define(__doc__, code="PK314", name="host-call-to-device-math", severity="high", category="api",
              breaks_build=True, gpu_only=True)
# CUDA: __DEVICE_FUNCTIONS_DECL__ (__host__ __device__) with a __func__ host body in
# crt/math_functions.h (CUDA 13), declared by no math.h (glibc, _GNU_SOURCE), and __DEVICE__ in
# clang's __clang_hip_math.h; ROCm 6.2's hip/ headers declare no host version.
NAMES = (b"rsqrtf", b"rsqrt", b"rcbrtf", b"rcbrt", b"normcdff", b"normcdf", b"normcdfinvf", b"normcdfinv",
         b"erfinvf", b"erfinv", b"erfcinvf", b"erfcinv", b"erfcxf", b"erfcx", b"sinpif", b"sinpi", b"cospif",
         b"cospi", b"sincospif", b"sincospi")


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    call = node.parent
    if view.base or call is None or call.type != "call_expression" or call.child_by_field_name("function") != node:
        return
    function = syntax.enclosing(node, "function_definition")
    if function is None or syntax.in_device_code(node) or _constexpr(function) or _declared_here(node):
        return
    name = node.text.decode()
    ctx.flag(RULE, view.start(node), view.end(node),
             f"{name} in host code: CUDA declares it __host__ __device__, HIP for device code only (no matching "
             f"function for call to '{name}' on the host side)", subject=f"{name} on host")


def _declared_here(node: Node) -> bool:
    """The file defines a function of that name itself (apex's `template<> double rsqrt(double v)
    { return rsqrt(v); }`): its own host overload may take the call."""
    root = node
    while root.parent is not None:
        root = root.parent
    stack = [root]
    while stack:
        current = stack.pop()
        if current.type == "function_declarator":
            name = current.child_by_field_name("declarator")
            if name is not None and name.text == node.text:
                return True
        elif current.type not in ("compound_statement", "string_literal", "comment"):
            stack.extend(current.children)
    return False


def _constexpr(function: Node) -> bool:
    """constexpr functions are host and device functions to clang (-fcuda-host-device-constexpr)."""
    for child in function.children:
        if child.type in ("compound_statement", "function_declarator"):
            return False
        if child.text == b"constexpr":
            return True
    return False
