"""threadIdx.x -> hipThreadIdx_x, for `portkit convert --builtins hip` (mappings/builtins.toml).

Only `NAME.x/.y/.z` where NAME is the bare built-in is rewritten: a member called threadIdx
(`cfg.threadIdx.x`) is a field, not an identifier, and a whole `threadIdx` (`dim3 t = threadIdx`)
has no legacy spelling and stays.
"""

from __future__ import annotations

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from ..core.edits import EditKind
from ..core.tables.builtins import Builtin, help_text, table   # noqa: F401 (Builtin, help_text: this module's API)

COMPONENTS = (b"x", b"y", b"z")


def handle(ctx: ScanContext, view: View, node: Node) -> None:
    """`threadIdx.x` (the identifier node `threadIdx` of a field expression) -> `hipThreadIdx_x`."""
    builtin = table().get(node.text)
    parent = node.parent
    if builtin is None or parent is None or parent.type != "field_expression":
        return
    argument = parent.child_by_field_name("argument")
    field = parent.child_by_field_name("field")
    operator = parent.child_by_field_name("operator")
    if argument is None or argument.id != node.id or field is None or field.text not in COMPONENTS:
        return
    if operator is not None and operator.text != b".":
        return
    ctx.edit(view.start(parent), view.end(parent), f"{builtin.hip}{field.text.decode()}".encode(),
             kind=EditKind.BUILTIN)


def _names(ctx: ScanContext) -> tuple | None:
    """The legacy built-ins, under --builtins hip only."""
    return (table(),) if ctx.options.builtins == "hip" else None


# after identifiers, as the walk always called them on a name; while it is on, no name in
# protected or inactive code is rewritten (guards_every_name)
PASSES = (Pass("builtins", "walk", handle, capture="name", names=_names, after=("identifiers",),
               guards_every_name=True),)
