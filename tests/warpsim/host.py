"""Host code that launches kernels: the launch configuration computed as the host pass computes it.

A fix such as `rows_per_block = block_size / 32` -> `block_size / PORTKIT_WAVEFRONT_SIZE` lives in
host code, and what it writes means something else on the host pass than on the device pass (no
`__CUDA_ARCH__`, no `__HIP_DEVICE_COMPILE__`, no `__AMDGCN_WAVEFRONT_SIZE`: PORTKIT_WAVEFRONT_SIZE
is 64 there). So the source is preprocessed twice, as a real compile does: the host function runs
on the host pass's program (one "lane", locals, integer arithmetic, `dim3`), and each kernel it
launches (`k<<<grid, block[, shmem[, stream]]>>>(args)` or `hipLaunchKernelGGL(k, grid, block,
shmem, stream, args...)`) runs on the device pass's program at the target's lane count.
"""

from __future__ import annotations

from tree_sitter import Node

from .cvalues import INT, UINT, PtrType, SimError, convert
from .launch import Device, Target, _globals, _StaticBlock, load
from .memory import Pointer, Var, Vec
from .program import declared, text
from .stmt import WarpMachine

# Runtime calls that real launch code makes around a launch; they change nothing the oracle checks.
NO_OPS = ("cudaGetLastError", "hipGetLastError", "cudaDeviceSynchronize", "hipDeviceSynchronize")
# What the host asks of the device (`--fix warp`'s run-time dispatch): its id, and its warp width
QUERIES = ("hipGetDevice", "cudaGetDevice", "hipDeviceGetAttribute", "cudaDeviceGetAttribute")
WARP_ATTRIBUTES = ("hipDeviceAttributeWarpSize", "cudaDevAttrWarpSize")
AXES = ("x", "y", "z")


class Dim3:
    """A host `dim3` variable: three unsigned components, a missing one is 1."""

    def __init__(self, name: str, values: tuple[int, int, int]):
        self.fields = {axis: Var(f"{name}.{axis}", UINT, 1) for axis in AXES}
        for axis, value in zip(AXES, values):
            self.fields[axis].vals = [convert(value, UINT)]

    def value(self) -> tuple[int, int, int]:
        return tuple(self.fields[axis].vals[0] for axis in AXES)


class HostMachine(WarpMachine):
    """One host thread (a wavefront of one lane) over the host pass; launches go to `device`."""

    def __init__(self, program, device: Device):
        super().__init__(program, 1, {}, device.target.platform, _StaticBlock({}), 0)
        self.device = device

    def s_declaration(self, node: Node, mask: int) -> None:
        if text(node.child_by_field_name("type")) != "dim3":
            return super().s_declaration(node, mask)
        for declarator in node.children_by_field_name("declarator"):
            name, parts = self._dim3_parts(declarator)
            self.scope.names[name] = Dim3(name, self._dims(parts, mask))

    def _dim3_parts(self, declarator: Node) -> tuple[str, list[Node]]:
        """`dim3 b(x, y)` (parsed as a function declarator), `dim3 b = {..}`, `dim3 b{..}`, `dim3 b = e`."""
        name = text(declarator.child_by_field_name("declarator"))
        if declarator.type == "function_declarator":
            params = declarator.child_by_field_name("parameters").named_children
            return name, [p.named_children[0] if p.named_child_count == 1 else p for p in params]
        value = declarator.child_by_field_name("value")
        if declarator.type != "init_declarator" or value is None:
            return text(declarator), []
        if value.type in ("initializer_list", "argument_list"):
            return name, list(value.named_children)
        return name, [value]

    def _dims(self, parts: list[Node], mask: int) -> tuple[int, int, int]:
        if len(parts) == 1:
            return self.dims(parts[0], mask)
        if len(parts) > 3:
            raise SimError(f"dim3 with {len(parts)} components at {self.where(parts[3])}")
        values = [self._scalar(part, mask) for part in parts]
        return tuple(values + [1] * (3 - len(values)))

    def _scalar(self, node: Node, mask: int) -> int:
        if node.type == "type_identifier":  # `dim3 b(n)`: tree-sitter reads `n` as a parameter type
            return self.e_identifier(node, mask).vals[0]
        vec = self.eval(node, mask)
        if isinstance(vec.ctype, PtrType) or vec.ctype.floating:
            raise SimError(f"dim3 component is not an integer at {self.where(node)}")
        return vec.vals[0]

    def dims(self, node: Node, mask: int) -> tuple[int, int, int]:
        """A launch dimension: a `dim3` variable, a `dim3(...)` temporary, or an integer (x; y = z = 1)."""
        if node.type in ("identifier", "type_identifier") and isinstance(self.scope.find(text(node)), Dim3):
            return self.scope.find(text(node)).value()
        if node.type == "call_expression" and text(node.child_by_field_name("function")) == "dim3":
            return self._dims(list(node.child_by_field_name("arguments").named_children), mask)
        return (self._scalar(node, mask), 1, 1)

    def e_field_expression(self, node: Node, mask: int) -> Vec:
        found = self.scope.find(text(node.child_by_field_name("argument")))
        if isinstance(found, Dim3):
            return found.fields[text(node.child_by_field_name("field"))].ref().load([0])
        return super().e_field_expression(node, mask)

    def ref(self, node: Node, mask: int):
        if node.type == "field_expression":
            found = self.scope.find(text(node.child_by_field_name("argument")))
            if isinstance(found, Dim3):
                return found.fields[text(node.child_by_field_name("field"))].ref()
        return super().ref(node, mask)

    def e_call_expression(self, node: Node, mask: int) -> Vec:
        function = node.child_by_field_name("function")
        config = [c for c in node.named_children if c.type == "kernel_call_syntax"]
        if config:
            self.launch(function, list(config[0].named_children), node.child_by_field_name("arguments").named_children, mask)
            return Vec.uniform(INT, 0, 1)
        name = text(function)
        if name == "hipLaunchKernelGGL":
            args = node.child_by_field_name("arguments").named_children
            self.launch(args[0], args[1:5], args[5:], mask)
            return Vec.uniform(INT, 0, 1)
        if name in NO_OPS:
            return Vec.uniform(INT, 0, 1)
        if name in QUERIES:
            return self.query(name, node.child_by_field_name("arguments").named_children, mask)
        return super().e_call_expression(node, mask)

    def query(self, name: str, args: list[Node], mask: int) -> Vec:
        """`hipGetDevice(&d)` (device 0) and `hipDeviceGetAttribute(&w, hipDeviceAttributeWarpSize, d)`:
        the device's warp width, which the host pass cannot know at compile time."""
        if name.endswith("Attribute") and (len(args) != 3 or text(args[1]) not in WARP_ATTRIBUTES):
            raise SimError(f"{name}: only the warp size is modelled, at {self.where(args[0])}")
        if args[0].type != "pointer_expression" or not text(args[0]).startswith("&"):
            raise SimError(f"{name} writes through a pointer the oracle does not follow, at {self.where(args[0])}")
        value = self.device.target.wave if name.endswith("Attribute") else 0
        self.ref(args[0].child_by_field_name("argument"), mask).store([0], Vec.uniform(INT, value, 1))
        return Vec.uniform(INT, 0, 1)

    def launch(self, kernel: Node, config: list[Node], args: list[Node], mask: int) -> None:
        if kernel.type == "call_expression" and text(kernel.child_by_field_name("function")) == "HIP_KERNEL_NAME":
            kernel = kernel.child_by_field_name("arguments").named_children[0]
        template = []
        if kernel.type == "template_function":
            # `k<kBlockThreads>`: tree-sitter reads a lone name as a type; it is the constant's value here
            template = [self.constant(a.child_by_field_name("type") if a.type == "type_descriptor" else a)
                        for a in kernel.child_by_field_name("arguments").named_children]
            kernel = kernel.child_by_field_name("name")
        if not 2 <= len(config) <= 4:
            raise SimError(f"launch with {len(config)} configuration values at {self.where(kernel)}")
        grid, block = self.dims(config[0], mask), self.dims(config[1], mask)
        shared = self._scalar(config[2], mask) if len(config) > 2 else 0
        values = [self.eval(a, mask).vals[0] for a in args]
        if template and tuple(template) not in instantiated(self.device, text(kernel)):
            raise SimError(f"the host launches {text(kernel)}<{', '.join(map(str, template))}>, which the device pass "
                           f"never instantiated (it names {sorted(instantiated(self.device, text(kernel)))}): no such "
                           "kernel in the code object (hipErrorInvalidDeviceFunction)")
        self.device.launch(text(kernel), grid, block, values, template, shared)


def instantiated(device: Device, kernel: str) -> set[tuple]:
    """The template arguments of every launch of `kernel` the device pass's own reading of the
    source names: the instantiations its code object holds (a kernel template the host pass
    instantiates with other arguments, `k<PORTKIT_WAVEFRONT_SIZE>` seen as 64 there and 32 on a
    wave32 device pass, does not exist on the device)."""
    machine = HostMachine(device.program, device)
    found = set()
    for node in _walk(device.program.tree.root_node):   # `k<3><<<...>>>`, `HIP_KERNEL_NAME(k<5>)`: any naming
        if node.type == "template_function" and text(node.child_by_field_name("name")) == kernel:
            found.add(tuple(machine.constant(a.child_by_field_name("type") if a.type == "type_descriptor" else a)
                            for a in node.child_by_field_name("arguments").named_children))
    return found


def _walk(node: Node):
    yield node
    for child in node.children:
        yield from _walk(child)


def run_host(device: Device, source: str, function: str, args: list, defines: dict | None = None) -> None:
    """Run host `function` of `source` (its host pass for the device's target, with `defines`
    predefined there); a string in `args` names one of the device's buffers, a number is a scalar."""
    target: Target = device.target
    program = load(source, target.host_pass(), defines)
    _globals(program, target.host_pass(), {})
    fn = program.function(function, len(args))
    if fn is None or "__global__" in fn.qualifiers:
        raise SimError(f"no host function {function} taking {len(args)} arguments")
    machine = HostMachine(program, device)
    for param, arg in zip(fn.params, args):
        found = declared(param.child_by_field_name("declarator"), machine.type_of(param.child_by_field_name("type")))
        var = Var(found.name, found.ctype, 1)
        if isinstance(arg, str):
            if not isinstance(found.ctype, PtrType):
                raise SimError(f"{function}: buffer {arg} passed to non-pointer parameter {found.name}")
            var.vals = [Pointer(device.buffers[arg], 0)]
        else:
            var.vals = [convert(arg, found.ctype)]
        machine.scope.names[found.name] = var
    machine.invoke(fn, 1)
