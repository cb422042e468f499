"""Inline PTX assembly.

What it finds:
    Every `asm`/`asm volatile`/`__asm__` statement in device code (or whose text is PTX), with
    what it does when the instruction is recognisable: lane id, cp.async, wgmma, mma, ldmatrix,
    ld.global.nc, shuffles, votes, fences, clocks. The preprocessor's forms too: a macro whose
    body is PTX (`#define SYNC_WARP() asm volatile("bar.warp.sync -1;")`) at its definition, and
    in device code every use of a macro that writes assembly, an alias (`#define ASM asm`) included
    (the tree's assembly macros: project/asm_macros.py). Not a block convert rewrites: one
    instruction HIP has exactly, with plain operands (`mov.u32 %0, %%laneid;`, `red.global.add.u64
    [%0], %1;`, `membar.gl;`, `%%clock64`: engine/ptx.py), counted as converted instead.

Why it matters on AMD GPUs:
    PTX is NVIDIA's virtual instruction set; no AMD compiler accepts it. Every block must be
    rewritten, with a HIP built-in or AMDGCN intrinsic where one exists, or with a different
    algorithm where the instruction drives NVIDIA-only hardware (Hopper wgmma and TMA,
    Blackwell tcgen05): those are reported as blockers.

Example:
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));

Instead:
    Use the HIP equivalent: `__lane_id()`, `__builtin_nontemporal_load`, `__shfl*`, `__ballot`,
    `__threadfence*`, `clock64()`/`wall_clock64()`; rocWMMA or composable_kernel for matrix
    instructions; keep the PTX behind `#if !defined(__HIP_PLATFORM_AMD__)` when both vendors
    are built from one source.

Effort:
    An hour for a recognisable one-liner; days for matrix-core and asynchronous-copy code.
"""

import re

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine import syntax
from ..engine.ptx import equivalent
from ..engine.keywords import ASM
from ..engine.rule import define

RULE = define(__doc__, code="PK301", name="inline-ptx-asm", severity="high", category="kernel",
              breaks_build=True, gpu_only=True)
NODES = ("gnu_asm_expression",)
KEYWORDS = (ASM,)   # and the tree's assembly macros (FACT_NAMES)
FACT_NAMES = "asm_macro_names"   # the walk hands check_name every use of the tree's assembly macros

# (pattern in the PTX text, what it does, blocker?) - the first match describes the block.
KNOWN = (
    (r"\bwgmma\.", "Hopper warpgroup matrix multiply (wgmma)", True),
    (r"\btcgen05\.", "Blackwell tensor-core instruction (tcgen05)", True),
    (r"\bcp\.async\.bulk", "Hopper bulk/tensor memory copy (TMA, cp.async.bulk)", True),
    (r"\bsetmaxnreg\.", "Hopper register reallocation (setmaxnreg)", True),
    (r"\bmbarrier\.", "asynchronous transaction barrier (mbarrier)", False),
    (r"\bcp\.async\b", "asynchronous global-to-shared copy (cp.async)", False),
    (r"\bldmatrix\.|\bstmatrix\.", "tensor-core fragment load (ldmatrix)", False),
    (r"\bmma\.|\bwmma\.", "tensor-core matrix multiply-accumulate (mma)", False),
    (r"%%laneid", "reads the lane id", False),
    (r"%%warpid|%%smid|%%nsmid", "reads hardware warp/SM ids", False),
    (r"%%clock|%%globaltimer", "reads a clock", False),
    (r"\bld\.global\.nc|\bld\.global\.L", "read-only/cache-hinted global load", False),
    (r"\bshfl\.", "warp shuffle", False),
    (r"\bvote\.", "warp vote", False),
    (r"\bbar\.|\bbarrier\.", "barrier", False),
    (r"\bmembar\.|\bfence\.", "memory fence", False),
    (r"\bred\.|\batom\.", "atomic operation", False),
    (r"\bprmt\.", "byte permute (prmt)", False),
    (r"\blop3\.", "three-input logic op (lop3)", False),
    (r"\bbf[ei]\.", "bit-field extract/insert", False),
    (r"\bcvt\.", "type conversion", False),
    (r"\bst\.|\bld\.", "load/store with cache hints", False),
)
_KNOWN = tuple((re.compile(p), what, blocker) for p, what, blocker in KNOWN)
# Type suffixes and special registers only PTX has (SPARC's `%%fsr` or x86's `%%eax` are not PTX).
# AMD GPU assembly: vector/scalar/LDS/memory instructions (v_dot2_f32_f16, s_waitcnt, ds_swizzle_b32,
# global_load_dword, buffer_load_dword), with no PTX type suffix or special register.
_AMD_MNEMONIC = re.compile(r"^\s*(?:v|s|ds|buffer|global|flat|scratch|image|exp)_[a-z0-9_]+\b")
_PTX_LOOK = re.compile(r"\.(?:[usbf](?:8|16|32|64)|pred|global|shared)\b|%%(?:laneid|lanemask\w*|tid|ntid|ctaid|"
                       r"nctaid|warpid|nwarpid|smid|nsmid|clock\w*|globaltimer\w*|\w*smem_size)\b")


def amd_assembly(text: str) -> bool:
    """Every instruction of the asm template reads as AMD GPU assembly, none as PTX."""
    body = text.replace("\\\r\n", " ").replace("\\\n", " ")   # line continuations inside the literal
    body = body.replace('"', " ").replace("\\n", "\n").replace("\\t", " ")
    lines = [ln.strip() for part in body.split("\n") for ln in part.split(";") if ln.strip()]
    return bool(lines) and not _PTX_LOOK.search(text) and all(_AMD_MNEMONIC.match(ln) for ln in lines)


def check(ctx: ScanContext, view: View, node: Node) -> None:
    text = b"".join(s.text for s in node.children if s.type in ("string_literal", "concatenated_string"))
    ptx = text.decode("utf-8", "replace")
    if not syntax.in_device_code(node) and not (_PTX_LOOK.search(ptx) and ";" in ptx) \
            and not (view.base and _ptx_mnemonic(ptx)):
        return  # host assembly (x86 cpuid, rdtsc ...) is not ours to judge; outside device code
        # PTX is told by its `;`-ended statements too (RISC-V's `fcvt.ps.f16 f3, f2\n` looks typed),
        # and in a macro body (which has no function around it) by a PTX instruction it names
    if amd_assembly(ptx):
        return  # AMD GCN/CDNA/RDNA assembly (ggml's v_dot2_f32_f16) is already ported
    if not ctx.regions.protected(view.start(node)) and equivalent(view, node) is not None:
        return  # convert writes its HIP form (rewrite/inline_ptx.py): a converted site, not a finding
    what, blocker = "PTX", False
    for pattern, description, is_blocker in _KNOWN:
        if pattern.search(ptx):
            what, blocker = description, is_blocker
            break
    first = _unspliced(ptx).strip().strip('"').split(";")[0].strip()[:60]
    ctx.flag(RULE, view.start(node), view.end(node),
             f"inline PTX ({what}): `{first}` - PTX does not compile for AMD GPUs",
             subject=what, severity="blocker" if blocker else None)


def _unspliced(text: str) -> str:
    """The template as the compiler reads it: backslash-newlines joined (phase 2)."""
    return text.replace("\\\r\n", "").replace("\\\n", "")


def _ptx_mnemonic(ptx: str) -> bool:
    """A PTX instruction the table knows (`bar.warp.sync`, `shfl.sync`...) in a template written
    as statements (`;` or `\\n`): how a macro body's PTX is told from a host macro's `cpuid`."""
    body = _unspliced(ptx)
    return any(pattern.search(body) for pattern, _, _ in _KNOWN) and (";" in body or "\\n" in body)


def check_name(ctx: ScanContext, view: View, node: Node) -> None:
    """A use, in device code, of a macro the tree defines as inline assembly: the kernel runs PTX."""
    if view.base or not syntax.in_device_code(node):
        return   # inside another macro's body: the alias is learned, the definition reported
    rel, line = ctx.facts.asm_macro(node.text)
    ctx.flag(RULE, view.start(node), view.end(node),
             f"inline assembly through the macro `{node.text.decode('latin-1')}` ({rel}:{line} defines it with "
             f"`asm`) - PTX does not compile for AMD GPUs", subject="PTX through a macro")
