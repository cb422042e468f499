"""convert --rewrite-guards: CUDA version and device-pass guards rewritten so that an AMD build
takes the branch a current nvcc build takes.

Off by default: it changes what the AMD build compiles. Each condition of a guard group whose
AMD value differs from the newest nvcc build's (ppguards.py) gets the AMD selector:
`#if CUDA_VERSION >= 11000` -> `#if CUDA_VERSION >= 11000 || defined(__HIP_PLATFORM_AMD__)`,
`#ifdef __CUDA_ARCH__` -> `#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)`,
`#if CUDA_VERSION < 8000` -> `#if CUDA_VERSION < 8000 && !defined(__HIP_PLATFORM_AMD__)`.
nvcc builds are unchanged (the selectors are undefined there). Conservative: only conditions
made of CUDA_VERSION/CUDART_VERSION tests, or of `defined(__CUDA_ARCH__)` tests (architecture
comparisons pick GPU-specific code), and only when every CUDA name in the branch the AMD build
now compiles converts at the target ROCm release and it holds no inline assembly. What it leaves
it reports as PK103 with the reason; what it rewrites, as PK103 info.
"""

from __future__ import annotations

import re

from ..engine.platform import ppexpr, ppguards, regions
from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from ..core.edits import EditKind
from ..engine.codes import Code

VERSION_MACROS = frozenset({"CUDA_VERSION", "CUDART_VERSION", "defined"})
DEVICE_MACROS = frozenset({"__CUDA_ARCH__", "defined"})
# `defined(__CUDA_ARCH__)` tests only: no comparison of the architecture
DEVICE_TEST = re.compile(r"(?:\s|!|\(|\)|&&|\|\||defined|__CUDA_ARCH__)*")
# Converter findings that mean "a CUDA name here does not become HIP at the target".
LEFT_CODES = frozenset({Code.NO_HIP_EQUIVALENT, Code.NEEDS_NEWER_ROCM, Code.REMOVED_IN_ROCM, Code.PARTIALLY_PARSED, Code.NAME_BUILT_BY_PREPROCESSOR})
_ASM = re.compile(rb"\b(?:asm|__asm__|__asm)\b")
# Names that look like CUDA's (runtime, driver, libraries, nv intrinsics and headers): each must
# be one the tables convert, or the branch is left.
_CUDA_LIKE = re.compile(rb"\b(?:cuda|cu[A-Z]|CU_|CUDA_|CUBLAS|CUFFT|CURAND|CUSPARSE|CUSOLVER|__nv_|nv_|nvcuda|nvtx|"
                        rb"cublas|cufft|curand|cusparse|cusolver|cudnn|nccl)\w*(?:\.h)?")
_IDENT = re.compile(r"[A-Za-z_]\w*")


def rewrite(ctx: ScanContext) -> None:
    """Edits for the guard groups of the file that an AMD build evaluates differently. The same
    condition is rewritten everywhere in the file or nowhere: ggml defines a helper under
    `#if CUDART_VERSION >= 12080` and calls it under the same guard further down."""
    data = ctx.source.data
    if not ppguards.mentions_guard(data):
        return
    worlds = regions.selectors(ctx.facts.amd_macros)
    plans = []
    for group in ctx.derived(ppguards.of_file).groups:
        if ctx.regions.protected(group.branches[0].at) or not _differs(group):
            continue
        selector, reason = _plan(ctx, group)
        changed = [] if reason else [_edit(ctx, b, selector, worlds) for b in group.branches if b.keyword != "else"]
        if not reason and any(c is None for c in changed):
            reason = "a condition the rewrite cannot read whole"
        plans.append((group, reason, changed))
    left = {}
    for group, reason, _ in plans:
        for key in _keys(group) if reason else ():
            left.setdefault(key, group.branches[0].at)
    for group, reason, changed in plans:
        same = next((left[k] for k in _keys(group) if k in left), None)
        if not reason and same is not None:
            reason = f"the same guard is left at line {ctx.source.position(same)[0]}"
        if reason:
            severity = ctx.rule(Code.CUDA_VERSION_GUARD).severity
            _report(ctx, group, severity, f"left as it is ({reason}): an AMD build takes another branch "
                                          f"than a current nvcc build")
            continue
        for _, _, start, end, text in filter(bool, changed):
            ctx.edit(start, end, text.encode(), what="guard", kind=EditKind.GUARD)
        written = "; ".join(f"`{old}` -> `{new}`" for old, new, *_ in filter(bool, changed))
        _report(ctx, group, "info", f"rewritten for AMD: {written}: the AMD build now takes the branch a "
                                    f"current nvcc build takes")


def _keys(group: ppguards.Group) -> list[str]:
    return [" ".join(b.text.split()) for b in group.branches if b.macros]


def _differs(group: ppguards.Group) -> bool:
    """PK103's divergence, or an AMD build stopping at an #error a current nvcc build skips."""
    if ppguards.divergent(group):
        return True
    amd = group.taken("amd")
    return (not group.aware and group.parent_amd is not False and amd is not None
            and amd != group.taken("newest"))


def _plan(ctx: ScanContext, group: ppguards.Group) -> tuple[str, str]:
    """The AMD selector the group's conditions get, or why the group is left."""
    names = {n for b in group.branches for n in _IDENT.findall(b.text)}
    if names <= VERSION_MACROS:
        selector = "__HIP_PLATFORM_AMD__"
    elif names <= DEVICE_MACROS and all(DEVICE_TEST.fullmatch(b.text) for b in group.branches):
        selector = "__HIP_DEVICE_COMPILE__"
    else:
        return "", "not a CUDA_VERSION/CUDART_VERSION test nor a defined(__CUDA_ARCH__) test"
    new = group.taken("newest")
    if new is None:
        return "", "what a current nvcc build takes is unknown"
    if new < len(group.branches):
        branch = group.branches[new]
        body = ctx.source.data[branch.start:branch.end]
        if _ASM.search(body):
            return "", "the branch holds inline assembly"
        table = ctx.db.names_by_bytes
        unknown = next((m.group() for m in _CUDA_LIKE.finditer(body)
                        if m.group() not in table and m.group().decode() not in ctx.db.headers), None)
        if unknown is not None:
            return "", f"{unknown.decode()} in the branch is not in portkit's tables"
        first, last = ctx.source.position(branch.start)[0], ctx.source.position(max(branch.start, branch.end - 1))[0]
        left = [f for f in ctx.findings if f.code in LEFT_CODES and first <= f.line <= last]
        if left:
            return "", f"{left[0].subject or left[0].code} in the branch does not convert at the target ROCm"
    return selector, ""


def _edit(ctx: ScanContext, branch: ppguards.Branch, selector: str, worlds: regions.Selectors):
    """(old, new, start, end) for a condition whose AMD value must change, () when it needs none,
    None when it cannot be rewritten safely."""
    if branch.amd is None or branch.newest is None:
        return None
    if branch.amd == branch.newest:
        return ()
    if branch.cond is None or "?" in branch.text:
        return None
    start, end = branch.cond
    if branch.keyword in ("ifdef", "ifndef"):
        start, prefix, keyword, cond = branch.keyword_at, "if ", "if", branch.text
    else:
        prefix, keyword, cond = "", branch.keyword, ctx.source.data[start:end].decode("utf-8", "replace")
    if branch.newest:
        new = f"{cond} || defined({selector})"
    else:
        new = f"({cond}) && !defined({selector})" if "||" in cond else f"{cond} && !defined({selector})"
    # checked in the device passes, where the guard matters: hip-clang's defines
    # __HIP_DEVICE_COMPILE__, nvcc's __CUDA_ARCH__ (ppguards evaluates the same way)
    amd = {**worlds.amd, selector: 1} if selector == "__HIP_DEVICE_COMPILE__" else worlds.amd
    nvidia = {**{m: ppexpr.DEFINED for m in DEVICE_MACROS}, **worlds.nvidia}
    if ppexpr.truth(ppexpr.evaluate(new, amd)) != branch.newest \
            or ppexpr.truth(ppexpr.evaluate(new, nvidia)) != branch.nvidia:
        return None
    return branch.written, f"#{keyword} {new}", start, end, prefix + new


def _report(ctx: ScanContext, group: ppguards.Group, severity: str, message: str) -> None:
    first = group.branches[0]
    line_end = ctx.source.data.find(b"\n", first.at)
    rule = ctx.rule(Code.CUDA_VERSION_GUARD)
    ctx.report(rule.code, rule.name, severity, rule.category, first.at,
               len(ctx.source.data) if line_end < 0 else line_end, message,
               subject=f"{group.macros[0]} guard", fix=rule.fix)


def _finish_pass(ctx: ScanContext, view: View, root) -> None:
    rewrite(ctx)


# the first finish pass: it reads the findings of the names left (LEFT_CODES, the partial-parse
# note among them), so it runs after every pass that reports one; the header passes follow it
PASSES = (Pass("guards", "finish", _finish_pass, when=lambda ctx, view: ctx.options.rewrite_guards,
               keywords=(ppguards.may_mention_guard,)),)
