"""Two CUDA names written as one HIP name on one line: a distinction the conversion loses (issue 31).

At `--rocm 5.2`, hipBLAS has no TF32 compute type, so both `CUBLAS_COMPUTE_32F_FAST_TF32` and
`CUBLAS_COMPUTE_32F` become `HIPBLAS_R_32F`: `enable_tf32 ? ... : ...` then picks the same value
either way and the program's log still says "TF32". Each name's own mapping is right; what goes
is the difference between them where the code compares or chooses between them. Two different
CUDA names on one line that become the same HIP text, with a choice or a comparison between them
(`c ? A : B`, `==`, `!=`), are reported as PK004 with both names, never silently. Two arguments of one
call (cublasGemmEx's CUDA_R_32F and CUBLAS_COMPUTE_32F, both HIPBLAS_R_32F at 5.2) are different
parameters, not a distinction lost: not reported.
"""

from __future__ import annotations

from ..core.edits import EditKind
from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from . import codes


def check(ctx: ScanContext) -> None:
    """After the walk: every line where two CUDA names were written as one HIP name."""
    name = EditKind.NAME
    written: dict[bytes, set[str]] = {}   # HIP text -> the CUDA names that became it
    for text, what in {(e.text, e.what) for e in ctx.edits if e.kind == name}:   # the distinct renames
        if what and text and what.encode() != text:
            written.setdefault(text, set()).add(what)
    # a HIP text no two CUDA names become anywhere in the file is on no line twice: its edits
    # need no line (a generated file has 300,000 renames of a few names)
    shared = {text for text, whats in written.items() if len(whats) > 1}
    if not shared:
        return
    by_line: dict[int, dict[bytes, list]] = {}
    for edit in ctx.edits:
        if edit.kind == EditKind.NAME and edit.text in shared and edit.what and edit.what.encode() != edit.text:
            line = ctx.source.position(edit.start)[0]
            by_line.setdefault(line, {}).setdefault(edit.text, []).append(edit)
    for targets in by_line.values():
        for hip, edits in targets.items():
            names = sorted({e.what for e in edits})
            first = min(edits, key=lambda e: e.start)
            data = ctx.source.data
            between = data[first.end:max(e.start for e in edits)]
            before = data[data.rfind(b"\n", 0, first.start) + 1:first.start]
            chosen = b":" in between and b"?" in before + between   # `c ? A : B`
            if len(names) < 2 or not (chosen or b"==" in between or b"!=" in between):
                continue
            ctx.flag(codes.PARTIAL_CONVERSION, first.start, max(e.end for e in edits),
                     f"{' and '.join(names)} both become {hip.decode('ascii', 'replace')} here: the code tells "
                     f"them apart and the conversion does not; choose what the AMD build does by hand",
                     subject=f"lossy:{hip.decode('ascii', 'replace')}")


def _after_walk(ctx: ScanContext, view: View, root) -> None:
    check(ctx)


# after every rename, the fixes' and the macro bodies' too (it reads the NAME edits); after the
# preprocessor's names as it always ran
PASSES = (Pass("lossy", "post-walk", _after_walk, after=("pasted_arguments",), keywords=()),)   # reads the name edits
