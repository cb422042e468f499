"""hipSPARSE's triangular solves that take one argument more than cuSPARSE's (issue 31).

cuSPARSE (11.3+) keeps the work buffer given to `cusparseSpSV_analysis` / `cusparseSpSM_analysis`
in the descriptor, so its `_solve` calls take none. hipSPARSE's do, as a last argument:
- `hipsparseSpSV_solve` until ROCm 6.0 (hipSPARSE 3.0 "changed hipsparseSpSV_solve() to match
  cusparse"), where it reads the buffer: the call needs the analysis buffer, by hand;
- `hipsparseSpSM_solve` on every release so far (7.2 included); from 6.2 hipSPARSE's changelog
  says the argument is unused and `nullptr` may be passed, which convert does. Below 6.2 it is
  read, so the call is reported with the hand edit.
A call that already shows the extra argument (code written against hipSPARSE) is left alone.
"""

from __future__ import annotations

from tree_sitter import Node

from ..core.edits import EditKind
from ..engine.context import ScanContext, View
from . import codes
from .arguments import call_arguments

# CUDA name: (cuSPARSE's argument count, the analysis call, first release where nullptr is safe,
#             first release whose hipSPARSE takes cuSPARSE's arguments)
EXTRA_BUFFER = {
    "cusparseSpSV_solve": (9, "hipsparseSpSV_analysis", None, (6, 0, 0)),
    "cusparseSpSM_solve": (10, "hipsparseSpSM_analysis", (6, 2, 0), None),
}


def fix(ctx: ScanContext, view: View, cuda: str, node: Node, hip: str) -> None:
    """After `node` (the callee) was renamed to `hip`: add the buffer argument, or report it."""
    count, analysis, null_since, matches_since = EXTRA_BUFFER[cuda]
    if matches_since is not None and ctx.target >= matches_since:
        return
    args = call_arguments(node)
    if not args or len(args) != count:
        return
    if null_since is not None and ctx.target >= null_since:
        end = view.end(args[-1])
        ctx.edit(end, end, b", nullptr", what=f"{cuda} arguments", kind=EditKind.ARGUMENTS)
        return
    ctx.flag(codes.PARTIAL_CONVERSION, view.start(node), view.end(node),
             f"{cuda} -> {hip}: hipSPARSE at this release takes the work buffer as argument {count + 1}, and reads "
             f"it; pass the buffer given to {analysis} (cuSPARSE keeps it in the descriptor)", cuda)
