"""Hopper and Blackwell features: clusters, TMA, distributed shared memory, async barriers.

What it finds:
    Thread block clusters (`__cluster_dims__`, `this_cluster()`, `cluster_group`, cluster launch
    attributes), the Tensor Memory Accelerator (`CUtensorMap`, `cuTensorMapEncode*`), distributed
    shared memory (`map_shared_rank`), and libcu++'s `cuda::barrier` / `cuda::pipeline`
    asynchronous-copy machinery. Reported once per function and construct.

Why it matters on AMD GPUs:
    AMD GPUs have no clusters, no TMA unit and no distributed shared memory: kernels built on
    them need a different decomposition (a blocker, it needs a design decision). `cuda::barrier`
    and `cuda::pipeline` have no HIP counterpart; block-scope uses become `__syncthreads()` and
    ordinary loads.

Example:
    __global__ void __cluster_dims__(2, 1, 1) k(float* out) { ... }

Instead:
    Re-tile the kernel for one workgroup (64 KiB of LDS, 64-lane wavefronts), exchange data
    through global memory or split the kernel; use composable_kernel for tuned AMD GEMM and
    attention kernels.

Effort:
    One to several weeks per kernel family: a redesign, not a translation.
"""

from dataclasses import dataclass

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..core.errors import MappingError
from ..core.findings import SEVERITIES
from ..core.tables.mappings import tables_dir
from ..core.tables.records import shown, table
from ..engine import syntax
from ..engine.rule import define

RULE = define(__doc__, code="PK306", name="hopper-features", severity="blocker", category="kernel",
              breaks_build=True, gpu_only=True)
TABLE = "hopper_features.toml"


@dataclass(frozen=True)
class Feature:
    """mappings/hopper_features.toml: a name code uses a feature AMD GPUs lack with."""

    name: str
    what: str
    severity: str = ""   # overrides the rule's severity


def load(path) -> dict[bytes, tuple[str, str | None]]:
    """name -> (what it is, severity override or None)."""
    out = {}
    for n, f in enumerate(table(path, "feature", Feature, ("name",)), start=1):
        if f.severity and f.severity not in SEVERITIES:
            raise MappingError(f"{shown(path)}: feature {n} ({f.name}): bad severity {f.severity!r} "
                               f"(one of {', '.join(SEVERITIES)})")
        out[f.name.encode()] = (f.what, f.severity or None)
    return out


FEATURES = load(tables_dir() / TABLE)
NAMES = tuple(FEATURES)
MASKED = (b"__cluster_dims__",)
REFINES = ("PK001", "PK002")
LIBCU = (b"barrier", b"pipeline")


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    what, severity = FEATURES[node.text]
    at = node
    if node.text in LIBCU:
        at = _cuda_qualified(node)
        if at is None:
            return
    scope = syntax.enclosing(node, "function_definition")
    if not ctx.first(("PK306", what, view.base + (scope.start_byte if scope is not None else node.start_byte))):
        return
    ctx.flag(RULE, view.start(at), view.end(at),
             f"{node.text.decode()}: {what} - AMD GPUs have no counterpart", subject=what,
             severity=severity)


def check_masked(ctx: ScanContext, start: int, end: int, name: bytes) -> None:
    """`__cluster_dims__(x, y, z)` on a kernel (hidden from the parser, see source.py)."""
    ctx.flag(RULE, start, end, f"{name.decode()}: thread block clusters - AMD GPUs have no counterpart",
             subject="thread block clusters")


def _cuda_qualified(node: Node) -> Node | None:
    """The `cuda::...` qualified name around `barrier`/`pipeline`, or None (a user's own type).

    The finding spans `cuda::barrier<cuda::thread_scope_block>`, where the converter notes the
    libcu++ namespace (PK001), so it replaces those notes instead of doubling them."""
    current = node.parent
    found = None
    while current is not None and current.type in ("template_type", "qualified_identifier"):
        if current.type == "qualified_identifier" and current.text.startswith(b"cuda::"):
            found = current
        current = current.parent
    return found
