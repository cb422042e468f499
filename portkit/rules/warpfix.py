"""`convert --fix warp`: the warp family's fixes (PK201, PK202, PK204, PK205), found in the scan's
one walk and applied by the fix option.

Off by default: these edits change what the code computes on purpose (on a 64-lane wavefront
the original computes the wrong thing; their applicability is "unsafe"). Each rule owns its fix,
beside its check in its module, and its finding carries it (rules/_warpfix_model.py), so audit
offers the very same edits as suggestions. Where the meaning is not certain there is no edit;
the finding stays.

Run-time contexts use HIP's `warpSize`; contexts that need a compile-time constant (a #define,
a constexpr, an array size) use PORTKIT_WAVEFRONT_SIZE, defined once per file from the GPU
family: ROCm 7 made `warpSize` a run-time value (docs/warp-fix.md).
"""

from __future__ import annotations

from dataclasses import replace

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..core.edits import Edit, EditKind
from ..core.findings import Finding
from ..platform.regions import PROTECTED
from ..core.source import SourceFile
from . import PK201_hardcoded_warp_size as pk201
from . import PK202_shuffle_offset_from_16 as pk202
from . import PK204_ballot_in_32_bits as pk204
from . import PK205_warp_sized_array as pk205
from ..engine import syntax
from . import _warplanes
from .PK008_warp_fix_choice import RULE as WARP_FIX_CHOICE
from ._warpfix_model import CONSTANT, WarpFix, newline_of, node_key

# HIP's NVIDIA backend (nvcc) has 32-lane warps on every pass; an AMD device pass knows its GPU
# family: RDNA (gfx10-gfx12) runs wave32 in HIP's default mode, GCN/CDNA (gfx9) wave64; the AMD
# host pass does not know (it assumes CDNA's 64). Without the NVIDIA branch a fixed kernel built
# through HIP's NVIDIA backend treated a 32-lane warp as 64 lanes (issue 31: wrong results on an
# H100 in 3 of 20 warp fixtures). The family macros, not __AMDGCN_WAVEFRONT_SIZE: ROCm 7's clang
# marks that macro deprecated (a warning at every use, an error under -Werror), as AMD's own ports
# did (ROCm/apex: `__GFX9__` 64, else 32). A wave64 RDNA build (-mwavefrontsize64) defines
# PORTKIT_WAVEFRONT_SIZE=64 on its command line: the helper only fills it in.
HELPER = (b"#ifndef PORTKIT_WAVEFRONT_SIZE",
          b"#if defined(__HIP_PLATFORM_NVIDIA__) || defined(__HIP_PLATFORM_NVCC__) || "
          b"(defined(__NVCC__) && !defined(__HIP__))",
          b"#define PORTKIT_WAVEFRONT_SIZE 32",
          b"#elif defined(__GFX10__) || defined(__GFX11__) || defined(__GFX12__)",
          b"#define PORTKIT_WAVEFRONT_SIZE 32",
          b"#else",
          b"#define PORTKIT_WAVEFRONT_SIZE 64",
          b"#endif",
          b"#endif")
CONSTANT_NOTE = ("a compile-time warp size: PORTKIT_WAVEFRONT_SIZE, by GPU family on each device pass (64 on gfx9, "
                 "32 on RDNA; -DPORTKIT_WAVEFRONT_SIZE=64 for a wave64 RDNA build), 32 through HIP's NVIDIA backend and 64 "
                 "on the AMD host pass; not warpSize, which ROCm 7 made a run-time value")
PORTED_NOTE = ("--fix warp left this: the tree has its own CUDA-to-HIP shim header, so it already builds for AMD, "
               "where its 32-lane idioms may be deliberate (logical 32-lane warps: width-32 shuffles); check it "
               "against the AMD build before changing it")
# The node kinds a warp fix starts from: scan.dispatch captures them (with --fix warp, and in an audit).
# `dim3 b(4, 8, n / WARP_SIZE)`: block_shape reads an argument list only as an init_declarator's
# child, so the query captures only those (a tree has a call's every few tokens)
NODES = ("number_literal", "preproc_def", "array_declarator", "init_declarator", "initializer_list",
         "(init_declarator (argument_list) @rule)")
GATES = {"init_declarator": (b"__ballot", b"__activemask")}   # fix_ballot_store reads no other
LITERALS = (5, 16, 31, 32)   # the literals _number fixes: the scan drops the others first
_WORDS = (b"32", b"16", b"31", b">> 5", b">>5", b"__ballot")


def fix_nodes(ctx: ScanContext, view: View, nodes: list[Node]) -> None:
    """Record the certain fix of each node of the file's own tree (not of a macro body re-parsed)
    in ctx.fixes, before the rules' checks, whose findings carry them (`attached`)."""
    if view.base or not any(word in view.data for word in _WORDS):
        return
    for node in nodes:
        fixer = _FIXERS.get(node.type)
        if fixer is not None:
            fix = fixer(view, node)
            if fix is not None:
                ctx.fixes[node_key(node)] = fix


def on_demand(view: View):
    """ScanContext.fix_of for an audit: one node's fix, asked for by a finding the audit keeps;
    none in a file with no word a fixer reads (as fix_nodes)."""
    return fix_of if any(word in view.data for word in _WORDS) else _no_fix


def fix_of(view: View, node: Node) -> WarpFix | None:
    fixer = _FIXERS.get(node.type)
    return fixer(view, node) if fixer is not None else None


def _no_fix(view: View, node: Node) -> None:
    return None


def _number(view: View, node: Node) -> WarpFix | None:
    """A literal's fix: the first of its rules' fixes that applies, in this order."""
    value = syntax.int_value(node)
    if value == 16:
        return pk202.fix_offset_16(view, node)
    if value == 32:
        return pk202.fix_width_32(view, node) or pk202.fix_scan_bound(view, node) or pk201.fix_arithmetic(view, node) \
            or pk201.fix_host_warps(view, node) or pk201.fix_constant(view, node)
    if value == 31:
        return pk201.fix_arithmetic(view, node) or pk201.fix_last_lane(view, node)
    if value == 5:
        return pk201.fix_arithmetic(view, node)
    return None


_FIXERS = {
    "number_literal": _number,
    "preproc_def": pk201.fix_define,
    "array_declarator": pk205.fix_shared_array,
    "init_declarator": pk204.fix_ballot_store,
    "initializer_list": _warplanes.block_shape,
    "argument_list": _warplanes.block_shape,
}


def finish(ctx: ScanContext, data: bytes) -> tuple[list[WarpFix], dict[int, WarpFix]]:
    """The walk's fixes in source order, PORTKIT_WAVEFRONT_SIZE defined at the first that needs it;
    and, by the identity of each fix recorded, the fix as finished (what its finding shows)."""
    recorded = [fix for _key, fix in sorted(ctx.fixes.items(), key=lambda item: (item[0][0], -item[0][1]))]
    finished = _with_helper(data, recorded)
    return finished, {id(old): new for old, new in zip(recorded, finished)}


def _with_helper(data: bytes, fixes: list[WarpFix]) -> list[WarpFix]:
    """PORTKIT_WAVEFRONT_SIZE is defined at the start of the line of its first use."""
    first = next((f for f in sorted(fixes, key=lambda f: f.anchor) if f.constant), None)
    if first is None or b"#ifndef " + CONSTANT in data:   # an earlier run's helper (either form)
        return fixes
    at = data.rfind(b"\n", 0, first.anchor) + 1
    newline = newline_of(data)
    helper = Edit(at, at, newline.join(HELPER) + newline, "warp")
    noted = [replace(f, note=f.note or CONSTANT_NOTE) if f.constant else f for f in fixes]
    return [replace(f, edits=f.edits + (helper,)) if f.anchor == first.anchor and f.constant else f for f in noted]


def apply(ctx: ScanContext, fixes: list[WarpFix]) -> None:
    """Add the fixes' edits to the conversion, each fix whole or not at all (never over the
    converter's, unless the fix renames a call whole), with a PK008 note for a deliberate choice.
    PORTKIT_WAVEFRONT_SIZE is defined with the first fix applied that uses it: the first fix that
    uses it (which carries the definition, as audit shows it) may be one left alone."""
    helper = next((e for f in fixes if f.constant for e in f.edits if e.text.startswith(HELPER[0])), None)
    for fix in fixes:
        if helper is not None and fix.constant:
            edits = tuple(e for e in fix.edits if e is not helper)
            if edits:   # the definition goes with this fix's edits, if they are applied
                at = ctx.source.parse_bytes.rfind(b"\n", 0, fix.anchor) + 1
                edits += (Edit(at, at, helper.text, helper.what),)
            fix = replace(fix, edits=edits)
        if fix.suggest_only or ctx.regions.ranges and ctx.regions.kind_at(fix.anchor) in PROTECTED:
            continue   # AMD-only code, or NVIDIA code with an AMD branch: not this build's code
        if ctx.facts.amd_shim and fix.edits:   # ggml: its AMD build runs this code as it is
            fix = replace(fix, edits=(), note=PORTED_NOTE)
        taken = sorted((e.start, e.end) for e in ctx.edits)
        if fix.supersedes:
            ctx.edits[:] = [e for e in ctx.edits if e.kind == EditKind.WARP or not _overlaps(e, [(f.start, f.end) for f in fix.edits])]
        elif any(_overlaps(e, taken) for e in fix.edits):
            continue
        for e in fix.edits:
            ctx.edit(e.start, e.end, e.text, what="warp", kind=EditKind.WARP)
            if e.text.startswith(HELPER[0]):
                helper = None   # defined: later fixes use it
        if fix.edits:
            ctx.metrics.warp_fixes += 1   # a note alone (a shape left by design) fixes nothing
        if fix.note:
            end = ctx.source.data.find(b"\n", fix.anchor)
            ctx.flag(WARP_FIX_CHOICE, fix.anchor, fix.anchor if end < 0 else min(end, fix.anchor + 1),
                     fix.note, subject=fix.note[:40])


def _overlaps(edit: Edit, taken: list[tuple[int, int]]) -> bool:
    return any(s < edit.end and edit.start < e or (s == e == edit.start == edit.end) for s, e in taken)


def suggest(findings: list[Finding], finished: dict[int, WarpFix], source: SourceFile) -> list[Finding]:
    """The audit's findings, each carrying its rule's fix as finished, its edits shown (JSON
    `autofix`, SARIF `fixes`)."""
    out = []
    for finding in findings:
        fix = finished.get(id(finding.fixed_by)) if finding.fixed_by is not None else None
        if fix is not None:
            finding = replace(finding, fixed_by=fix, autofix=tuple(
                (*source.position(e.start), *source.position(e.end), e.text.decode("utf-8", "replace"))
                for e in sorted(fix.edits)))
        out.append(finding)
    return out
