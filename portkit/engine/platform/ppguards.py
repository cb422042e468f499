"""CUDA version and architecture guards: which `#if` branches an AMD build takes instead of nvcc's.

`#if CUDA_VERSION >= 11000`, `#if __CUDA_ARCH__ >= 800`, `#ifdef __CUDA_ARCH__`: hip-clang
defines none of these macros, so an AMD build reads them as 0 and takes the oldest or the host
path, or stops at `#error "CUDA >= 8.0 is required"`. Each conditional group is evaluated in
three worlds: AMD (the platform model's, regions.py), NVIDIA, and the newest NVIDIA device pass
(every version and architecture macro very large). A group is a divergence when the AMD build
takes another branch than the newest nvcc build does; when that cannot be told, when an
NVIDIA-only branch has no AMD counterpart. Groups that already name an AMD selector
(`defined(__HIP_PLATFORM_AMD__) || CUDA_VERSION >= 11000`, `!defined(USE_ROCM)`) made their AMD
choice and are left alone. Rule PK103 reports the divergences; rewrite/guards.py fixes the
common forms. A directive-only walk like regions.classify, and only over files naming a guard.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import compilers, ppexpr
from .directives import COMMENT, condition, directive_text, directives
# The platform model's own reading of a directive, so that both passes agree on every branch.
from .regions import Selectors, and_, builtin_selectors, not_, or_, selectors, track_define

# The macros an AMD build evaluates differently: nvcc's and the CUDA headers' version and
# architecture macros (hip-clang defines none of them).
GUARD = re.compile(rb"\b(?:CUDA_VERSION|CUDART_VERSION|__CUDA_API_VERSION|__CUDA_ARCH__|__CUDA_ARCH_LIST__"
                   rb"|__CUDA_ARCH_FEAT_\w+|__CUDA_ARCH_(?:FAMILY_)?SPECIFIC__|__CUDACC_VER_\w+__)\b")
_GUARD_TEXT = re.compile(GUARD.pattern.decode())
# The newest NVIDIA device pass: every version and architecture test for "at least" holds.
NEWEST = {"CUDA_VERSION": 10**6, "CUDART_VERSION": 10**6, "__CUDA_API_VERSION": 10**6, "__CUDA_ARCH__": 10**4,
          "__CUDACC_VER_MAJOR__": 99, "__CUDACC_VER_MINOR__": 99, "__CUDACC_VER_BUILD__": 999}
_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass
class Branch:
    keyword: str                 # if, ifdef, ifndef, elif, elifdef, elifndef, else
    at: int                      # the '#' of its directive
    keyword_at: int              # its keyword (`ifdef`), which a fix may rewrite to `if`
    start: int                   # first byte of its body
    text: str                    # its condition as an #if expression ("" for #else)
    written: str                 # the directive as written, comments dropped (`#ifdef __CUDA_ARCH__`)
    cond: tuple[int, int] | None   # the condition's bytes on a one-line directive without comments inside
    amd: bool | None             # the condition in each world (True for #else)
    nvidia: bool | None
    newest: bool | None
    macros: tuple[str, ...]      # the guard macros its condition names
    end: int = 0                 # where its body ends (its next directive's line)
    reached_amd: bool | None = None   # compiled in the AMD world (the group's and earlier branches' too)
    reached_nvidia: bool | None = None
    errors: list[int] = field(default_factory=list)   # #error directives directly in it


@dataclass
class Group:
    parent_amd: bool | None
    parent_nvidia: bool | None
    branches: list[Branch] = field(default_factory=list)
    aware: bool = False          # a condition names an AMD selector: the AMD build was thought of
    hip: bool = False            # tests a CUDA compiler macro convert makes HIP's (compilers.py)

    @property
    def macros(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m for b in self.branches for m in b.macros))

    def taken(self, world: str) -> int | None:
        """The index of the branch the world takes (len(branches): none), None when unknown."""
        for i, b in enumerate(self.branches):
            value = getattr(b, world)
            if value is None:
                return None
            if value:
                return i
        return len(self.branches)


@dataclass(frozen=True)
class ErrorReached:
    at: int                      # the '#' of the #error
    end: int                     # end of its line
    guard: Branch                # the branch whose condition leads the AMD build there


@dataclass
class Guards:
    groups: list[Group] = field(default_factory=list)   # groups naming a guard macro, in order
    errors: list[ErrorReached] = field(default_factory=list)


def may_mention_guard(text) -> bool:
    """mentions_guard for the pre-filter (engine/keywords.FileText): every guard macro is a whole
    token, so GUARD reads the file's tokens, a tenth of its bytes."""
    return b"CUDA" in text.data and GUARD.search(text.words) is not None


def mentions_guard(data: bytes) -> bool:
    # every guard name holds "CUDA": one substring search rules out most files (a host-only C
    # file, a tree's CPU backend) before the expression, which starts with \b and so is tried
    # at every byte (0.15 s over ggml's sources, 0.04 s with this test first)
    return b"CUDA" in data and GUARD.search(data) is not None


def of_file(ctx) -> Guards:
    """The scanned file's guards in the platform model's worlds, for ScanContext.derived: rule PK103,
    rewrite/guard_fallbacks.py and rewrite/guards.py read the same groups, analysed once per file."""
    return analyse(ctx.source.data, selectors(ctx.facts.amd_macros))


def analyse(data: bytes, worlds: Selectors) -> Guards:
    """The guard groups and the #errors an AMD build reaches through them, for one file."""
    out = Guards()
    if not mentions_guard(data):
        return out
    amd, nvidia = dict(worlds.amd), dict(worlds.nvidia)
    for name in {m.group().decode() for m in GUARD.finditer(data)}:
        amd.setdefault(name, ppexpr.UNDEFINED)
        nvidia.setdefault(name, ppexpr.DEFINED)
    amd_names = frozenset(k for k, v in worlds.amd.items() if v != ppexpr.UNDEFINED)
    names = builtin_selectors().compilers   # `#if defined(__CUDACC__) && __CUDA_ARCH__ < 600`: read converted
    hip_side = compilers.read(data, names, worlds.nvidia).hip_side
    stack: list[Group] = []
    active_amd: bool | None = True
    active_nvidia: bool | None = True
    for m in directives(data, errors=True):
        kind = m.group(1).decode()
        raw, after = directive_text(data, m)
        text = raw.decode("utf-8", "replace")
        if kind in ("define", "undef"):
            track_define(kind, text, [active_amd, active_nvidia], [amd, nvidia])
            continue
        if kind == "error":
            _error(out, stack, m, active_amd, active_nvidia)
            continue
        if kind in ("if", "ifdef", "ifndef"):
            stack.append(Group(active_amd, active_nvidia, hip=m.start() in hip_side))
        elif not stack:
            continue   # an #else/#endif without #if: a broken file
        group = stack[-1]
        if group.branches and not group.branches[-1].end:
            group.branches[-1].end = data.rfind(b"\n", 0, m.start()) + 1
        if kind == "endif":
            stack.pop()
            if group.macros:
                out.groups.append(group)
            active_amd, active_nvidia = group.parent_amd, group.parent_nvidia
            continue
        branch = _branch(kind, text, m, after, compilers.taken(amd, names) if group.hip else amd, nvidia)
        group.aware = group.aware or any(n in amd_names for n in _IDENT.findall(branch.text))
        earlier_amd = _or_all(b.amd for b in group.branches)
        earlier_nvidia = _or_all(b.nvidia for b in group.branches)
        branch.reached_amd = and_(and_(group.parent_amd, not_(earlier_amd)), branch.amd)
        branch.reached_nvidia = and_(and_(group.parent_nvidia, not_(earlier_nvidia)), branch.nvidia)
        group.branches.append(branch)
        active_amd, active_nvidia = branch.reached_amd, branch.reached_nvidia
    out.groups.sort(key=lambda g: g.branches[0].at)
    return out


def _branch(kind: str, text: str, m: re.Match, after: int, amd: dict, nvidia: dict) -> Branch:
    if kind == "else":
        return Branch(kind, m.start(), m.start(1), after, "", "#else", None, True, True, True, ())
    expr = condition(kind, text)[0]
    newest = {**nvidia, **NEWEST}
    written = " ".join(f"#{kind} {COMMENT.sub(' ', text)}".split())
    return Branch(kind, m.start(), m.start(1), after, expr, written, _condition_bytes(m),
                  ppexpr.truth(ppexpr.evaluate(expr, amd)), ppexpr.truth(ppexpr.evaluate(expr, nvidia)),
                  ppexpr.truth(ppexpr.evaluate(expr, newest)),
                  tuple(dict.fromkeys(_GUARD_TEXT.findall(expr))))


def _condition_bytes(m: re.Match) -> tuple[int, int] | None:
    """Where the condition's text lies, when a fix can replace it whole: one line, and no comment
    but a trailing one."""
    raw = m.group(2)
    if raw.rstrip(b" \t\r").endswith(b"\\"):
        return None
    cut = min((i for i in (raw.find(b"//"), raw.find(b"/*")) if i >= 0), default=len(raw))
    if b"/*" in raw[cut + 2:] or (raw[cut:cut + 2] == b"/*" and not raw.rstrip(b" \t\r").endswith(b"*/")):
        return None
    cond = raw[:cut]
    lead = len(cond) - len(cond.lstrip(b" \t"))
    stripped = cond.strip(b" \t\r")
    if not stripped:
        return None
    start = m.start(2) + lead
    return start, start + len(stripped)


def _error(out: Guards, stack: list[Group], m: re.Match, active_amd, active_nvidia) -> None:
    """An #error the AMD build reaches while a current nvcc build may not, through a guard."""
    if stack and stack[-1].branches:
        stack[-1].branches[-1].errors.append(m.start())
    if active_amd is not True or active_nvidia is True:
        return
    for group in reversed(stack):
        guarded = [b for b in group.branches if b.macros]
        if guarded and not group.aware:
            out.errors.append(ErrorReached(m.start(), m.end(), guarded[-1]))
            return


def _or_all(values) -> bool | None:
    out: bool | None = False
    for v in values:
        out = or_(out, v)
    return out


def divergent(group: Group) -> list[tuple[Branch, Branch | None]]:
    """(branch, the branch the AMD build takes instead or None) for each branch of the group that
    a current nvcc build compiles and the AMD build does not; also (branch AMD takes, None) when
    the newest nvcc build compiles none of the group and the AMD build one (`#ifndef __CUDA_ARCH__`)."""
    if group.aware or group.parent_amd is False:
        return []
    amd, new = group.taken("amd"), group.taken("newest")
    branches = group.branches
    if amd is None or new is None:   # cannot tell the paths: every NVIDIA-only branch
        other = branches[amd] if amd is not None and amd < len(branches) else None
        return [(b, other) for b in branches if b.amd is False and b.reached_nvidia is not False
                and _only_nvidia(b, group)]
    if amd == new:
        return []
    if new < len(branches):
        return [(branches[new], branches[amd] if amd < len(branches) else None)]
    taken = branches[amd]
    return [] if taken.errors else [(taken, None)]


def _only_nvidia(branch: Branch, group: Group) -> bool:
    return not any(b.amd is True and b.nvidia is False for b in group.branches)
