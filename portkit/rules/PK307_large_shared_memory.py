"""Shared memory above AMD's 64 KiB per workgroup.

What it finds:
    Static `__shared__` arrays whose size (computable from literals, `sizeof` and the file's
    `#define`d constants) exceeds 64 KiB, launches whose dynamic shared memory is a computable
    amount above 64 KiB, and `cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, n)`
    with an `n` computable above 64 KiB (re-tile). The opt-in call with an `n` not computable here
    (a size from the problem or the device) is an info: convert already writes its only needed
    change, the `const void*` cast of the kernel, and a launch asking for more than 64 KiB is
    reported at the launch (issue 53).

Why it matters on AMD GPUs:
    CDNA2/CDNA3 GPUs (MI200, MI300) give a workgroup at most 64 KiB of LDS (MI355X: 160 KiB);
    Hopper gives a block up to 227 KiB. Kernels tiled for more do not launch, and kernels near
    the limit lose occupancy.

Example:
    cudaFuncSetAttribute(gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024);

Instead:
    Re-tile for 64 KiB (smaller tiles, fewer pipeline stages), query the limit at run time with
    `hipDeviceGetAttribute(hipDeviceAttributeMaxSharedMemoryPerBlock)`.

Effort:
    Hours to days per kernel, with performance tuning.
"""

from tree_sitter import Node

from ..core.tables import targets as gpu_targets
from ..engine.context import ScanContext, View
from ..engine import syntax
from ..engine.rule import define

RULE = define(__doc__, code="PK307", name="large-shared-memory", severity="high", category="kernel",
              breaks_build=True, gpu_only=True)
NODES = ("array_declarator", "kernel_call_syntax")
NAMES = (b"cudaFuncAttributeMaxDynamicSharedMemorySize",)
KEYWORDS = (b"__shared__", b"<<<", frozenset(NAMES))
SIZES = {
    b"char": 1, b"signed char": 1, b"unsigned char": 1, b"bool": 1, b"int8_t": 1, b"uint8_t": 1,
    b"short": 2, b"unsigned short": 2, b"half": 2, b"__half": 2, b"__nv_bfloat16": 2,
    b"int16_t": 2, b"uint16_t": 2,
    b"int": 4, b"unsigned": 4, b"unsigned int": 4, b"float": 4, b"int32_t": 4, b"uint32_t": 4,
    b"half2": 4, b"__half2": 4,
    b"double": 8, b"long long": 8, b"unsigned long long": 8, b"int64_t": 8, b"uint64_t": 8,
    b"size_t": 8, b"float2": 8, b"int2": 8, b"float4": 16, b"int4": 16, b"double2": 16,
}


def check(ctx: ScanContext, view: View, node: Node) -> None:
    if node.type == "kernel_call_syntax":
        config = [c for c in node.named_children if c.type != "comment"]
        if len(config) >= 3:
            amount, lds = evaluate(ctx, config[2]), lds_bytes(ctx)
            if amount is not None and amount > lds:
                ctx.flag(RULE, view.start(config[2]), view.end(config[2]),
                         f"launch asks for {amount // 1024} KiB of dynamic shared memory; "
                         f"an AMD workgroup has {lds // 1024} KiB of LDS", subject="launch")
        return
    if node.parent is not None and node.parent.type == "array_declarator":
        return  # the outer dimension reports for the whole array
    declaration = syntax.enclosing(node, "declaration")
    if declaration is None or b"__shared__" not in syntax.declaration_type(declaration):
        return
    elements, current = 1, node
    while current is not None and current.type == "array_declarator":
        size = current.child_by_field_name("size")
        value = evaluate(ctx, size) if size is not None else None
        if value is None:
            return
        elements *= value
        current = current.child_by_field_name("declarator")
    type_node = declaration.child_by_field_name("type")
    unit = SIZES.get(b" ".join(type_node.text.split())) if type_node is not None else None
    lds = lds_bytes(ctx)
    if unit is not None and elements * unit > lds:
        name = syntax.declared_name(node).decode(errors="replace")
        ctx.flag(RULE, view.start(node), view.end(node),
                 f"__shared__ {name} takes {elements * unit // 1024} KiB; an AMD workgroup has {lds // 1024} KiB "
                 "of LDS", subject=name)


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    found = syntax.call_of_argument(node)
    if found is None:
        return
    call, _ = found
    args = call.child_by_field_name("arguments")
    values = [a for a in args.named_children if a.type != "comment"] if args is not None else []
    amount, lds = evaluate(ctx, values[2]) if len(values) >= 3 else None, lds_bytes(ctx)
    if amount is not None and amount <= lds:
        return
    if amount is None:   # the opt-in itself ports with the cast convert writes: no re-tiling is known
        ctx.flag(RULE, view.start(call), view.end(call),
                 f"opts in to a dynamic shared memory size not known here: converted (hipFuncSetAttribute with "
                 f"the kernel cast to const void*); a kernel launched with more than {lds // 1024} KiB does not "
                 "launch on AMD", subject="max-dynamic-shared-memory:opt-in", severity="info")
        return
    ctx.flag(RULE, view.start(call), view.end(call),
             f"raises the dynamic shared memory limit to {amount // 1024} KiB; an AMD workgroup has "
             f"{lds // 1024} KiB of LDS", subject="max-dynamic-shared-memory")


def lds_bytes(ctx: ScanContext) -> int:
    """The LDS of a workgroup on every target in effect (--offload-arch): the smallest (mappings/targets.toml)."""
    return gpu_targets.lds_bytes(tuple(ctx.options.offload_arch))


def evaluate(ctx: ScanContext, node: Node) -> int | None:
    """The value of a constant integer expression, or None when it is not computable here."""
    node = syntax.unparen(node)
    if node.type == "number_literal":
        return syntax.int_value(node)
    if node.type == "identifier":
        return _constants(ctx, node).get(node.text)
    if node.type == "sizeof_expression":
        inner = node.child_by_field_name("type")
        return SIZES.get(b" ".join(inner.text.split())) if inner is not None else None
    if node.type == "binary_expression":
        left = evaluate(ctx, node.child_by_field_name("left"))
        right = evaluate(ctx, node.child_by_field_name("right"))
        if left is None or right is None:
            return None
        op = syntax.operator(node)
        if op == b"*":
            return left * right
        if op == b"+":
            return left + right
        if op == b"-":
            return left - right
        if op == b"/" and right:
            return left // right
        if op == b"<<" and 0 <= right < 40:
            return left << right
    return None


def _constants(ctx: ScanContext, node: Node) -> dict[bytes, int]:
    """`#define NAME 123` and `const int NAME = 123;` at file scope (computed once per tree)."""
    root = node
    while root.parent is not None:
        root = root.parent
    return ctx.derived(_file_constants, root)


def _file_constants(ctx: ScanContext, root: Node) -> dict[bytes, int]:
    table: dict[bytes, int] = {}
    for child in root.children:
        if child.type == "preproc_def":
            name = child.child_by_field_name("name")
            text = syntax.define_value(child)[0].rstrip(b"uUlL")
            if name is not None and text.isdigit() and len(text) <= syntax.LONGEST_LITERAL:
                table[name.text] = int(text)
        elif child.type == "declaration":
            for init in child.named_children:
                value = init.child_by_field_name("value") if init.type == "init_declarator" else None
                if value is not None and value.type == "number_literal":
                    number = syntax.int_value(value)
                    if number is not None:
                        table[syntax.declared_name(init)] = number
    return table
