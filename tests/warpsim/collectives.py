"""cub/hipcub `WarpReduce` and `WarpScan`: the warp collectives a one-warp-block kernel reduces with.

A kernel whose block is one 32-thread warp (PK208) typically reduces with `cub::WarpReduce<T>`,
which takes no logical width: its width is the hardware warp, 32 lanes under CUB and the
wavefront under hipCUB (HIPCUB_DEVICE_WARP_THREADS: 64 on CDNA, 32 on RDNA and through HIP's
NVIDIA backend), which is each target's `wave` here. An explicit width
(`cub::WarpReduce<float, 16>`) is a constant expression of the kernel's scope.

Values are computed as CUB's shuffle specialisations (WarpReduceShfl, WarpScanShfl) and rocPRIM's
(warp_reduce_shuffle, warp_scan_shuffle) compute them: a reduction tree of `shfl_down` steps with
offsets 1, 2, 4, ... (lane 0 of each logical warp ends with the total, the other lanes with
partials), a Kogge-Stone scan of `shfl_up` steps, the exclusive scan the inclusive one shifted up
by a lane, and the scan's aggregate read from the logical warp's last lane.

Both libraries require every lane of the logical warp to enter the collective (CUB: "the number
of entrant threads must be a multiple of LOGICAL_WARP_THREADS"). A strict run refuses a call whose
logical warp names a lane that is not executing it: what a width-less primitive does in a
32-thread block on a 64-lane wavefront. A lenient run (`Target.lenient()`) computes what the
shuffle algorithm gives there, a lane that is not executing reading 0 as any shuffle from it does
in this simulator: the reduction survives, the scan's aggregate (lane 63's) is 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from .cvalues import CType, SimError, arith, convert
from .memory import Vec
from .program import declared, text

KINDS = ("WarpReduce", "WarpScan")
NAMESPACES = ("cub", "hipcub")
OPERATORS = {"Sum": lambda a, b, t: arith("+", a, b, t, t)[1], "Max": lambda a, b, t: max(a, b),
             "Min": lambda a, b, t: min(a, b)}


@dataclass(frozen=True)
class Collective:
    """`cub::WarpReduce<float>` (or hipcub::): the primitive, its element type, its width argument."""

    kind: str
    elem: CType
    width: Node | None  # LOGICAL_WARP_THREADS; None: the hardware warp

    def spelled(self) -> str:
        return f"{self.kind}<{self.elem}>"


class TempStorage:
    """A `typename WarpReduceT::TempStorage`: opaque, the shuffle algorithms do not use it."""


def collective_type(machine, node: Node) -> Collective | None:
    """The collective a type (`cub::WarpReduce<float, 16>`, a type_descriptor of it, or the
    constructor's `cub::WarpReduce<float>` template function) names; None for any other type."""
    if node.type == "type_descriptor":
        node = node.child_by_field_name("type")
    if node.type in ("type_identifier", "identifier"):
        found = machine.types.get(text(node), machine.program.types.get(text(node)))
        return found if isinstance(found, Collective) else None
    if node.type != "qualified_identifier":
        return None
    scope, name = node.child_by_field_name("scope"), node.child_by_field_name("name")
    if scope is None or text(scope) not in NAMESPACES or name.type not in ("template_type", "template_function"):
        return None
    kind = text(name.child_by_field_name("name"))
    if kind not in KINDS:
        return None
    args = [a for a in name.child_by_field_name("arguments").named_children if a.type != "comment"]
    return Collective(kind, machine.type_of(args[0]), args[1] if len(args) > 1 else None)


class CollectiveStatements:
    """WarpMachine's statements for the collectives: the type aliases that name them, their
    TempStorage, and the `static_assert` that pins a kernel's block to one warp."""

    def s_alias_declaration(self, node: Node, mask: int) -> None:
        self._alias(text(node.child_by_field_name("name")), node.child_by_field_name("type"))

    def s_type_definition(self, node: Node, mask: int) -> None:
        for declarator in node.children_by_field_name("declarator"):
            self._alias(text(declarator), node.child_by_field_name("type"))

    def _alias(self, name: str, described: Node) -> None:
        found = collective_type(self, described)
        self.types[name] = found if found is not None else self.type_of(described)

    def s_static_assert_declaration(self, node: Node, mask: int) -> None:
        """A failed assertion is a compile error of that instantiation: refused, as nvcc and hipcc do."""
        condition = node.child_by_field_name("condition") or node.named_children[0]
        if not self.constant(condition):
            raise SimError(f"static_assert failed at {self.where(node)}")

    def bind_storage(self, node: Node) -> bool:
        """`__shared__ typename WarpReduceT::TempStorage temp[, temps[4]];`: True when bound."""
        described = node.child_by_field_name("type")
        if described.type != "dependent_type" or not text(described).endswith("::TempStorage"):
            return False
        for declarator in node.children_by_field_name("declarator"):
            self.scope.names[declared(declarator, None).name] = TempStorage()
        return True

    def collective_call(self, node: Node, mask: int) -> Vec | None:
        """`WarpReduceT(temp).Sum(x)`, `WarpScanT(temp).InclusiveSum(x, out, total)`; None if `node`
        is not a call of a collective's member."""
        function = node.child_by_field_name("function")
        made = function.child_by_field_name("argument")
        if made.type != "call_expression":
            return None
        collective = collective_type(self, made.child_by_field_name("function"))
        if collective is None:
            return None
        method = text(function.child_by_field_name("field"))
        run = METHODS[collective.kind].get(method)
        if run is None:
            raise SimError(f"{collective.spelled()}::{method} is not simulated at {self.where(node)}")
        width = self._width(collective, node)
        self._entrants(collective, method, width, mask, node)
        return run(self, collective, width, node.child_by_field_name("arguments").named_children, mask, node)

    def _width(self, collective: Collective, node: Node) -> int:
        width = self.wave if collective.width is None else self.constant(collective.width)
        if width < 1 or width > self.wave or width & (width - 1):
            raise SimError(f"{collective.spelled()}: logical width {width} is not a power of two up to "
                           f"{self.wave} at {self.where(node)}")
        return width

    def _entrants(self, collective: Collective, method: str, width: int, mask: int, node: Node) -> None:
        if not self.strict:
            return
        for lane in self.lanes(mask):
            base = lane - lane % width
            missing = ((1 << width) - 1 << base) & ~mask
            if missing:
                first = (missing & -missing).bit_length() - 1
                hardware = "the hardware warp" if collective.width is None else "its LOGICAL_WARP_THREADS"
                raise SimError(f"{collective.spelled()}::{method}: lane {first} of the {width}-lane logical warp "
                               f"(lanes {base}-{base + width - 1}, {hardware}) does not execute it, and CUB and hipCUB "
                               f"require every lane of the logical warp at {self.where(node)}")


# -- the algorithms, per lane --------------------------------------------------------------------


def _operator(machine, node: Node):
    """`cub::Sum()`, `hipcub::Max()`, `cub::Min()`: the binary operator, by name."""
    function = node.child_by_field_name("function") if node.type == "call_expression" else None
    name = text(function).split("::") if function is not None else []
    if len(name) != 2 or name[0] not in NAMESPACES or name[1] not in OPERATORS:
        raise SimError(f"reduction operator {text(node)} is not simulated at {machine.where(node)}")
    return OPERATORS[name[1]]


def _inputs(machine, collective: Collective, node: Node, mask: int) -> list:
    """The input per lane, converted to the element type; a lane not executing holds 0."""
    value = machine.eval(node, mask)
    vals = [convert(0, collective.elem)] * machine.wave
    for lane in machine.lanes(mask):
        vals[lane] = convert(value.vals[lane], collective.elem)
    return vals


def _tree(machine, collective, width: int, vals: list, op, mask: int, valid: int) -> list:
    """The `shfl_down` reduction tree: offsets 1, 2, 4, ... inside each logical warp; a source at
    or past `valid` in its logical warp does not take part (the partial `Sum(x, valid_items)`)."""
    offset = 1
    while offset < width:
        step = list(vals)
        for lane in machine.lanes(mask):
            source = lane + offset
            if lane % width + offset < width and source % width < valid:
                step[lane] = op(vals[lane], vals[source], collective.elem)
        vals, offset = step, offset * 2
    return vals


def _reduce(machine, collective, width, args, mask, node) -> Vec:
    """`Sum(x[, valid_items])`, `Reduce(x, op[, valid_items])`: the total in lane 0 of each logical warp."""
    method = text(node.child_by_field_name("function").child_by_field_name("field"))
    op = OPERATORS["Sum"] if method == "Sum" else _operator(machine, args[1])
    counted = args[1:] if method == "Sum" else args[2:]
    if len(counted) > 1:
        raise SimError(f"{collective.spelled()}::{method} with {len(args)} arguments at {machine.where(node)}")
    valid = width
    if counted:
        valid = machine.eval(counted[0], mask).vals[machine.lanes(mask)[0]]
    vals = _tree(machine, collective, width, _inputs(machine, collective, args[0], mask), op, mask, valid)
    return Vec(collective.elem, vals)


def _scan(machine, collective, width, args, mask, node) -> Vec:
    """InclusiveSum/ExclusiveSum(x, out[, aggregate]), InclusiveScan(x, out, op[, aggregate]),
    ExclusiveScan(x, out, initial, op[, aggregate])."""
    method = text(node.child_by_field_name("function").child_by_field_name("field"))
    rest = list(args[2:])
    initial = convert(0, collective.elem)
    op = OPERATORS["Sum"]
    if method == "ExclusiveScan":
        if len(rest) < 2:
            raise SimError(f"ExclusiveScan without an initial value (lane 0 undefined) at {machine.where(node)}")
        initial = convert(machine.eval(rest.pop(0), mask).vals[machine.lanes(mask)[0]], collective.elem)
    if method.endswith("Scan"):
        op = _operator(machine, rest.pop(0))
    if len(rest) > 1:
        raise SimError(f"{collective.spelled()}::{method} with {len(args)} arguments at {machine.where(node)}")
    vals, offset = _inputs(machine, collective, args[0], mask), 1
    while offset < width:  # Kogge-Stone: lane l takes lane l - offset's partial, within its logical warp
        step = list(vals)
        for lane in machine.lanes(mask):
            if lane % width >= offset:
                step[lane] = op(vals[lane - offset], vals[lane], collective.elem)
        vals, offset = step, offset * 2
    out = vals
    if method.startswith("Exclusive"):
        out = [initial if lane % width == 0 else op(initial, vals[lane - 1], collective.elem)
               for lane in range(machine.wave)]
    lanes = machine.lanes(mask)
    machine.ref(args[1], mask).store(lanes, Vec(collective.elem, out))
    if rest:  # the aggregate: the inclusive result of the logical warp's last lane (0 if it is not executing)
        last = [vals[lane - lane % width + width - 1] for lane in range(machine.wave)]
        machine.ref(rest[0], mask).store(lanes, Vec(collective.elem, last))
    return Vec(collective.elem, [0] * machine.wave)


def _broadcast(machine, collective, width, args, mask, node) -> Vec:
    """`Broadcast(x, src_lane)`: every lane gets lane src_lane of its logical warp."""
    vals = _inputs(machine, collective, args[0], mask)
    source = machine.eval(args[1], mask)
    return Vec(collective.elem, [vals[lane - lane % width + source.vals[lane] % width] for lane in range(machine.wave)])


METHODS = {
    "WarpReduce": {"Sum": _reduce, "Reduce": _reduce},
    "WarpScan": {name: _scan for name in ("InclusiveSum", "ExclusiveSum", "InclusiveScan", "ExclusiveScan")}
    | {"Broadcast": _broadcast},
}
