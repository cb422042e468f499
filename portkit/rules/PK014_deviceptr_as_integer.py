"""A CUdeviceptr used as an integer, which hipDeviceptr_t (a void*) cannot be.

What it finds:
    Integer arithmetic on a value whose declared type is the driver API's `CUdeviceptr`
    (`CUdeviceptr_v1`, `CUdeviceptr_v2`): `base + offset`, `ptr - base`, `ptr % align`, bit
    operations, `+=`/`-=`, `++`, and comparisons with a non-zero integer. The type is read from the
    source: a variable, parameter or class member declared `CUdeviceptr name` in the file, or a
    `(CUdeviceptr)` cast; the same for `hipDeviceptr_t` (a converted file, as verify scans it, or
    hand-written HIP), whose message says only the HIP half. Passing the value to a driver call, `= 0`/`{}`, `if (ptr)`, comparing two
    of them and casting to a pointer type are the same on both platforms and are not reported.
    Nor is the arithmetic convert rewrites as CUDA's integer (engine/deviceptr_plan.py: a driver call's
    argument, a CUdeviceptr or arithmetic variable, a cast, a condition): what is left is where the
    type the value flows to is not known from the file (the project's own function, `auto`, `++`).

Why it matters on AMD GPUs:
    CUDA declares `typedef unsigned long long CUdeviceptr_v2; typedef CUdeviceptr_v2 CUdeviceptr;`:
    an integer. convert writes `hipDeviceptr_t`, which HIP declares `void*`, so `base + offset`
    becomes arithmetic on a pointer to void and hip-clang rejects it ("arithmetic on a pointer to
    void"); `%` and bit operations on a pointer are errors too.

Example:
    CUdeviceptr m_base_address = {};
    cuMemMap(m_base_address + m_size, n_bytes, 0, handle, 0);

Instead:
    Do the arithmetic in integers and convert back, which means the same on both:
    `(CUdeviceptr)((unsigned long long)m_base_address + m_size)` (HIP: `(hipDeviceptr_t)((unsigned
    long long)m_base_address + m_size)`, what convert writes where it knows the type the value goes
    to), or `(unsigned long long)ptr % align` for alignment.

Effort:
    Minutes per expression.
"""

from tree_sitter import Node

from ..engine import deviceptr, deviceptr_plan
from ..engine.context import ScanContext, View
from ..engine.rule import define

RULE = define(__doc__, code="PK014", name="deviceptr-as-integer", severity="high", category="language",
              breaks_build=True)

# hipDeviceptr_t too: verify explains a compile error by scanning the converted file, where the
# declaration reads hipDeviceptr_t, and arithmetic on it fails in hand-written HIP alike.
NAMES = tuple(sorted(deviceptr.NAMES))

MESSAGE = ("CUdeviceptr is an integer in CUDA, hipDeviceptr_t is void* in HIP: integer arithmetic on it "
           "does not compile: cast through unsigned long long")
HIP_MESSAGE = "hipDeviceptr_t is void* in HIP: integer arithmetic on it does not compile: cast through unsigned long long"


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    """`node` names the type: a declaration's (its plain variables' uses) or a cast's (the cast);
    each integer use convert does not rewrite is reported."""
    uses = deviceptr.uses(node)
    if not uses:
        return
    converted = deviceptr_plan.of_file(ctx, view).converted if node.text != b"hipDeviceptr_t" else frozenset()
    what = b"(" + node.text + b")" if uses[0].type == "cast_expression" else None
    for use in uses:
        found = deviceptr.integer_use(use)
        if found is None or use.start_byte in converted:
            continue
        expression, op = found
        name = what or (use.child_by_field_name("field").text if use.type == "field_expression" else use.text)
        message = HIP_MESSAGE if node.text == b"hipDeviceptr_t" else MESSAGE
        ctx.flag(RULE, view.start(expression), view.end(expression),
                 f"{name.decode(errors='replace')} {op.decode()}: {message}", subject=f"{node.text.decode()} {op.decode()}")
