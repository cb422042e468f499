"""A CUDA version or architecture guard that an AMD build evaluates differently.

What it finds:
    `#if`/`#elif`/`#ifdef`/`#ifndef` on `CUDA_VERSION`, `CUDART_VERSION`, `__CUDA_ARCH__`,
    `__CUDA_ARCH_LIST__`, `__CUDACC_VER_MAJOR__` and the other nvcc version and architecture
    macros, where the AMD build takes another branch than a current nvcc build (the newer API
    path, the fast path for sm_80, the device-code branch), and `#error` directives an AMD build
    reaches through such a guard. Not reported: guards in AMD-only or already ported code, groups
    that name an AMD selector themselves (`defined(__HIP_PLATFORM_AMD__) || CUDA_VERSION >= 11000`),
    and version windows a current nvcc build skips too (`CUDA_VERSION >= 12000 && CUDA_VERSION < 12030`).
    Also, where both builds take a branch holding a name the target lacks (PK001-PK003) and another
    branch is the file's own code without it: that branch (rewrite/guard_fallbacks.py).
    `#ifdef __CUDACC__` is not one: convert writes it `__HIPCC__`, which the AMD build defines.

Why it matters on AMD GPUs:
    hip-clang defines none of these macros, and an undefined macro is 0 in `#if`. The AMD build
    silently compiles the oldest API path, the slow fallback or the host branch of a
    `__host__ __device__` function, or leaves the code out; a `#if CUDA_VERSION < 8000` /
    `#error "CUDA >= 8.0 is required"` check stops it.

Example:
    #if CUDA_VERSION >= 11000
        cudaStreamGetCaptureInfo(stream, &status, &id);
    #endif
    #ifdef __CUDA_ARCH__
        return __ldg(p);
    #else
        return *p;
    #endif

Instead:
    Say what the AMD build does: `#if CUDA_VERSION >= 11000 || defined(__HIP_PLATFORM_AMD__)`
    when HIP has the API at your ROCm release (`portkit convert --rewrite-guards` writes this
    form), `HIP_VERSION` (e.g. `HIP_VERSION >= 50200000`) for HIP's own release,
    `__HIP_DEVICE_COMPILE__` for the device pass (`__CUDA_ARCH__`), the gfx target macros
    (`__gfx90a__`) for an architecture, or define the value for the AMD build.

Effort:
    Under an hour per guard: decide which path AMD should take, and test it.
"""

from tree_sitter import Node

from ..engine.platform import ppguards
from ..engine.context import ScanContext, View
from ..engine.rule import define

RULE = define(__doc__, code="PK103", name="cuda-version-guard", severity="medium", category="api")
# The rule reads the file's directives once: the parse tree's root is its one node. tree-sitter
# makes the root an ERROR node where a line it cannot parse sits at file level (bitsandbytes'
# kernels.cu: `MAKE_Optimizer32bit1State(MOMENTUM, float)` lines with no semicolon); the
# directives are the file's all the same.
NODES = ("translation_unit", "ERROR")
KEYWORDS = (ppguards.may_mention_guard,)

FIX = {
    "CUDA_VERSION": "`{m} >= X || defined(__HIP_PLATFORM_AMD__)` when HIP has the API at your ROCm release "
                    "(convert --rewrite-guards), or test `HIP_VERSION` for the AMD build",
    "__CUDA_ARCH__": "`__HIP_DEVICE_COMPILE__` for the device pass, the gfx target macros (`__gfx90a__`) for an "
                     "architecture, or `defined(__HIP_PLATFORM_AMD__)` to choose the AMD path",
    "__CUDACC_VER": "`__HIP_PLATFORM_AMD__`, or `HIP_VERSION_MAJOR`/`HIP_VERSION_MINOR` for HIP's release",
    "__CUDA_ARCH_LIST__": "`__HIP_PLATFORM_AMD__`, or the gfx target macros (`__gfx90a__`) of the --offload-arch build",
    "feature": "an sm_90a-style feature macro: AMD GPUs have none; give the AMD build its own path "
               "(`defined(__HIP_PLATFORM_AMD__)`)",
}


def fix_for(macro: str) -> str:
    if macro in ("CUDA_VERSION", "CUDART_VERSION", "__CUDA_API_VERSION"):
        return FIX["CUDA_VERSION"].format(m=macro)
    if macro.startswith("__CUDACC_VER"):
        return FIX["__CUDACC_VER"]
    return FIX.get(macro, FIX["feature"])


def check(ctx: ScanContext, view: View, node: Node) -> None:
    if view.base or node.parent is not None:
        return   # a macro body parsed on its own: the file's directives were read already
    data = ctx.source.data
    if not ppguards.mentions_guard(data):
        return
    found = ctx.derived(ppguards.of_file)
    for group in found.groups:
        if ctx.regions.protected(group.branches[0].at):
            continue
        for branch, instead in ppguards.divergent(group):
            _flag_branch(ctx, group, branch, instead)
    for hit in found.errors:
        if not ctx.regions.protected(hit.at):
            macro = hit.guard.macros[0]
            ctx.report(RULE.code, RULE.name, "high", RULE.category, hit.at, hit.end,
                       f"an AMD build stops here: hip-clang never defines `{macro}` (0 in #if), so "
                       f"`{hit.guard.written}` (line {_line(ctx, hit.guard.at)}) holds",
                       subject=f"#error {macro}",
                       fix=f"guard the check with `!defined(__HIP_PLATFORM_AMD__)`, or test {fix_for(macro)}")


def _flag_branch(ctx: ScanContext, group: ppguards.Group, branch: ppguards.Branch,
                 instead: ppguards.Branch | None) -> None:
    macro = group.macros[0]
    if branch.amd is not False:    # the AMD build compiles a branch a current nvcc build skips
        does = "an AMD build compiles this branch, which a current nvcc build skips"
    elif instead is None:
        does = "an AMD build leaves this branch out"
    else:
        does = f"an AMD build takes the `{instead.written}` branch (line {_line(ctx, instead.at)}) instead"
    line_end = ctx.source.data.find(b"\n", branch.at)
    ctx.report(RULE.code, RULE.name, RULE.severity, RULE.category, branch.at,
               len(ctx.source.data) if line_end < 0 else line_end,
               f"`{branch.written}`: hip-clang never defines `{macro}`, so {does}",
               subject=f"{macro} #{branch.keyword}", fix=fix_for(macro))


def _line(ctx: ScanContext, offset: int) -> int:
    return ctx.source.position(offset)[0]
