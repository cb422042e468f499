"""A guard whose AMD branch cannot compile while its other branch is the file's own fallback (PK103).

pytorch_scatter's atomics.cuh (csrc/cuda, 18d37590) holds

    #if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 700 || CUDA_VERSION < 10000)
      ... AtomicAddDecimalImpl<at::Half, ...>  (a compare-and-swap loop of its own)
    #else
      ... atomicAdd(reinterpret_cast<__half *>(address), val);   (PK001 at ROCm 6.2)
    #endif

hip-clang defines no `__CUDA_ARCH__`, so the AMD build takes the `#else` branch, as the newest nvcc
build does: no divergence, so PK103's own check is silent, and the PK001 six lines down names the
call, not the fix. The human port changed the `#if` line: `defined(USE_ROCM) || ...` sends ROCm to
the project's own loop. This pass reports that line. After the walk, for each guard group on
nvcc's version or architecture macros that the AMD build reads the same way as the newest nvcc
build (a divergent one is PK103's already), when the branch the AMD build takes holds a name the
target release cannot take (PK001-PK003, the converter's findings) and another branch of the group
holds none and has code, that branch is reported at its directive with the AMD selector to add.
With `convert --rewrite-guards` (off by default: it changes what the AMD build compiles) the
condition is rewritten where it is one line that the platform model reads whole, so that the NVIDIA
build takes the same branch as before and the AMD build the fallback, and the finding is info.
Data flows one way: the pass reads the findings the walk made and adds one, and at most one edit.
"""

from __future__ import annotations

from ..core.edits import EditKind
from ..engine.codes import Code
from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from ..engine.platform import ppexpr, ppguards, regions

SELECTOR = "__HIP_PLATFORM_AMD__"

LEFT = frozenset({Code.NO_HIP_EQUIVALENT, Code.NEEDS_NEWER_ROCM, Code.REMOVED_IN_ROCM})


def check(ctx: ScanContext) -> None:
    data = ctx.source.data
    # every severity: a finding in a branch the AMD build skips is info (regions.py), and still
    # tells that branch has the same gap
    left = sorted({(f.line, f.code, f.subject) for f in ctx.store.findings if f.code in LEFT})
    if not left or not ppguards.mentions_guard(data):
        return
    found = ctx.derived(ppguards.of_file)
    for group in found.groups:
        if group.aware or group.parent_amd is False or ctx.regions.protected(group.branches[0].at) or \
                ppguards.divergent(group):
            continue
        taken = group.taken("amd")
        if taken is None or taken >= len(group.branches):
            continue
        branches = group.branches
        blocked = _left_in(ctx, left, branches[taken])
        if not blocked:
            continue
        for fallback in branches:
            if fallback is branches[taken] or fallback.reached_nvidia is False or _left_in(ctx, left, fallback) or \
                    not data[fallback.start:fallback.end].strip():
                continue
            _report(ctx, group, branches[taken], fallback, blocked[0])
            break


def _left_in(ctx: ScanContext, left: list[tuple[int, str, str]], branch: ppguards.Branch) -> list[tuple[int, str, str]]:
    """The findings of names left unconverted on the lines of the branch's body."""
    first = ctx.source.position(branch.start)[0]
    last = ctx.source.position(max(branch.start, branch.end - 1))[0] if branch.end > branch.start else first - 1
    return [item for item in left if first <= item[0] <= last]


def _report(ctx: ScanContext, group: ppguards.Group, taken: ppguards.Branch, fallback: ppguards.Branch,
            blocked: tuple[int, str, str]) -> None:
    line, code, subject = blocked
    macro = group.macros[0]
    where = ctx.source.position(taken.at)[0]
    if fallback.keyword == "else":
        instead = (f"make the AMD build skip `{taken.written}` (line {where}): "
                   f"`!defined(__HIP_PLATFORM_AMD__) && ({taken.text.strip()})`")
    else:
        instead = f"`defined(__HIP_PLATFORM_AMD__) || ({fallback.text.strip()})` sends the AMD build here"
    line_end = ctx.source.data.find(b"\n", fallback.at)
    why = (f"`{fallback.written}`: hip-clang never defines `{macro}`, so an AMD build takes the "
           f"`{taken.written}` branch (line {where}), where `{subject}` (line {line}, {code}) does not "
           f"compile at ROCm {_release(ctx)}; this branch is the file's own code without it")
    rewritten = _rewrite(ctx, fallback if fallback.keyword != "else" else taken, fallback.keyword != "else") \
        if ctx.options.rewrite_guards else None
    if rewritten is not None:
        old, new = rewritten
        severity, message = "info", f"{why}: rewritten for AMD, `{old}` -> `{new}`"
    else:
        severity, message = "medium", f"{why}: {instead}"
    rule = ctx.rule(Code.CUDA_VERSION_GUARD)
    ctx.report(rule.code, rule.name, severity, rule.category, fallback.at,
               len(ctx.source.data) if line_end < 0 else line_end, message, subject=f"{macro} fallback", fix=instead)


def _rewrite(ctx: ScanContext, branch: ppguards.Branch, take: bool) -> tuple[str, str] | None:
    """Edit `branch`'s condition so that the AMD build takes it (`take`) or skips it, the NVIDIA
    build as before: (old, new) directives, or None where the condition is not one `#if`/`#elif`
    line read whole (the finding then stays medium and says what to write)."""
    if branch.keyword not in ("if", "elif") or branch.cond is None or "?" in branch.text:
        return None
    start, end = branch.cond
    cond = ctx.source.data[start:end].decode("utf-8", "replace")
    new = f"defined({SELECTOR}) || ({cond})" if take else f"!defined({SELECTOR}) && ({cond})"
    worlds = regions.selectors(ctx.facts.amd_macros)
    amd = {**worlds.amd, SELECTOR: 1}
    # the NVIDIA world as ppguards.analyse reads it: nvcc's macros defined, their values unknown
    nvidia = {**{m: ppexpr.DEFINED for m in branch.macros}, **worlds.nvidia}
    if ppexpr.truth(ppexpr.evaluate(new, amd)) is not take or \
            ppexpr.truth(ppexpr.evaluate(new, nvidia)) != branch.nvidia:
        return None
    ctx.edit(start, end, new.encode(), what="guard", kind=EditKind.GUARD)
    return branch.written, f"#{branch.keyword} {new}"


def _release(ctx: ScanContext) -> str:
    major, minor, _ = ctx.target
    return f"{major}.{minor}"


def _after_walk(ctx: ScanContext, view: View, root) -> None:
    check(ctx)


# after every pass that may report a name left unconverted (lossy is the last of them)
PASSES = (Pass("guard_fallbacks", "post-walk", _after_walk, after=("lossy",), keywords=()),)   # reads PK001-PK003
