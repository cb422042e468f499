"""The platform model of one file: which bytes an AMD build compiles, which only an NVIDIA build.

Real code is often half-ported: `#ifdef USE_ROCM ... #else ... #endif`, vendor shim headers of
`#define cudaX hipX`, AMD assembly next to PTX. Every branch of every `#if` is evaluated twice,
in an AMD world and an NVIDIA world (ppexpr.py, selector macros from mappings/platforms.toml
plus the project's own), and each byte range gets one of:

- AMD: compiled only for AMD (already HIP): convert leaves it byte-identical, audit reports
  nothing there;
- PORTED: compiled only for NVIDIA, and the same `#if` has an AMD branch: the port exists;
  convert leaves it (nvcc compiles it), audit reports it as info, costed at nothing;
- FALLBACK: compiled only for NVIDIA, and the AMD build takes another, portable branch of the same
  `#if` (`#if CUDART_VERSION >= 11080 <PTX> #else <generic> #endif`): converted, audit reports it
  as info at no cost (PK103 names the guard);
- NVIDIA: compiled only for NVIDIA with no AMD counterpart (`#if __CUDA_ARCH__ >= 800` with no
  `#else`): code an AMD build silently leaves out; converted and costed like shared code;
- shared: everything else (the gaps between the ranges).

A vendor shim file (a header whose job is mapping CUDA names to HIP names or back) is AMD as a
whole. The CUDA compiler's own macros (`#ifdef __CUDACC__`) are read as convert leaves them: the
AMD build takes their side unless their group names an AMD selector (compilers.py). The model is directive-only (no parse), so it costs little next to the scan.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from . import compilers, ppexpr
# the directive reader, also read from here by the model's other walks (ppguards.py, facts.py)
from .directives import COMMENT, condition, directive_text, directives  # noqa: F401

AMD, PORTED, NVIDIA, FALLBACK = "amd", "ported", "nvidia", "fallback"
PROTECTED = (AMD, PORTED)

# A branch that uses HIP: its guard is an AMD selector (GGML_USE_HIP guarding "vendors/hip.h").
# `#define cudaX hipX` (and back): a line of a vendor shim header, read name then body.
DEFINE_LINE = re.compile(rb"#[ \t]*define[ \t]+(\w+)([^\n]*)")   # from the '#': see directives.py
CUDA_NAME = re.compile(rb"(?:cu|CU|nccl|NCCL|__nv|nv|__shfl|__ballot|__all_sync|__any_sync|__syncwarp)")
VENDOR_BODY = re.compile(rb"\b(?:hip|HIP|roc|ROC|rccl|musa|MUSA|mublas|MUBLAS|__hip|__shfl|__ballot|__all|__any)")
_HIP_NAME = re.compile(rb"(?:hip|HIP)")
# an #include of a HIP or ROCm header (<hip/hip_runtime.h>, <hipblaslt/hipblaslt.h>, <rccl/rccl.h>,
# ggml's "vendors/hip.h"): a branch with one uses HIP (facts.py), a header with one is AMD's (amd_headers.py)
HIP_INCLUDE = re.compile(rb"#[ \t]*include[ \t]*[<\"](?:[^>\"\n]*/)?(?:hip|rocm|rocblas|hipblas|rocprim|hipcub|rccl)"
                         rb"[/._\w]*[>\"]")
_CUDA_BODY = re.compile(rb"\b(?:cu|CU)[a-zA-Z]")
SHIM_MIN_DEFINES = 8
# `#ifdef __CUDA_ARCH__`, `#if !defined(__NVCC__)`: the #else is host code, not an AMD path; so
# are the two-vendor forms convert writes in headers (rewrite/cudacc.py), for each CUDA macro and
# its HIP counterpart: `(defined(__HIPCC__) || defined(__NVCC__))`, `!defined(__HIP__) && !defined(__CUDA__)`.
_ONE = r"\s*\(?\s*defined\s*\(?\s*(?:__CUDA_ARCH__|__CUDACC__|__NVCC__|__CUDA__)\s*\)?\s*\)?\s*"
_PAIRS = (("__HIPCC__", "__CUDACC__"), ("__HIPCC__", "__NVCC__"), ("__HIP__", "__CUDA__"),
          ("__HIP_DEVICE_COMPILE__", "__CUDA_ARCH__"))
_BOTH = "|".join(rf"\s*\(?\s*defined\s*\(\s*{h}\s*\)\s*\|\|\s*defined\s*\(\s*{c}\s*\)\s*\)?\s*"
                 rf"|\s*!\s*defined\s*\(\s*{h}\s*\)\s*&&\s*!\s*defined\s*\(\s*{c}\s*\)\s*" for h, c in _PAIRS)
DEVICE_SPLIT = re.compile(rf"\s*!?{_ONE}|\s*!?{_BOTH}")
# HIP's NVIDIA platform: code under it is already HIP, written for HIP's NVIDIA backend (portkit's
# own NVIDIA helpers among it): PORTED, left as it is, whatever else the #if group holds.
HIP_NVIDIA = re.compile(r"\b__HIP_PLATFORM_(?:NVIDIA|NVCC)__\b")
_NOT_HIP_NVIDIA = re.compile(r"!\s*(?:defined\s*\(?\s*)?__HIP_PLATFORM_(?:NVIDIA|NVCC)__\b")


@dataclass(frozen=True)
class Selectors:
    """What each world knows: {macro: int | ppexpr.DEFINED | ppexpr.UNDEFINED}."""

    amd: dict = field(default_factory=dict)
    nvidia: dict = field(default_factory=dict)
    config: dict | None = None   # the user's -D/-U alone (None: none given)


@dataclass
class RegionMap:
    """Sorted, non-overlapping (start, end, kind) ranges of a file; the gaps are shared code."""

    ranges: list[tuple[int, int, str]] = field(default_factory=list)
    shim: bool = False
    inactive: list[tuple[int, int]] = field(default_factory=list)   # false under the user's -D/-U
    undecided: int = 0   # #if/#elif conditions the user's -D/-U leave unknown (read as compiled)
    compiler_tests: compilers.CompilerTests = compilers.NONE   # what convert does with `#ifdef __CUDACC__`
    _starts: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._starts = [r[0] for r in self.ranges]

    def kind_at(self, offset: int) -> str | None:
        if self.shim:
            return AMD
        i = bisect.bisect_right(self._starts, offset) - 1
        if i >= 0 and self.ranges[i][0] <= offset < self.ranges[i][1]:
            return self.ranges[i][2]
        return None

    def is_inactive(self, offset: int) -> bool:
        """Not compiled in the configuration the user gave with -D/-U."""
        i = bisect.bisect_right(self.inactive, (offset, float("inf"))) - 1
        return i >= 0 and self.inactive[i][0] <= offset < self.inactive[i][1]

    def protected(self, offset: int) -> bool:
        return self.kind_at(offset) in PROTECTED

    def amd_converted(self) -> "RegionMap":
        """The map a build-time hipify sees (Options.hipify_amd_branches): the AMD-only ranges are
        shared code, converted like it, since hipify-perl rewrites `<device_functions.h>` under
        `#ifdef USE_AMD_ROCM` too (faiss's PtxUtils.cuh: 43 units stopped there). The NVIDIA side
        of a port stays as it is (the AMD build does not compile it), and so does a vendor shim
        (its `#define cudaX hipX` serve the AMD build as written)."""
        if self.shim or not any(kind == AMD for _, _, kind in self.ranges):
            return self
        return replace(self, ranges=[r for r in self.ranges if r[2] != AMD])

    def totals(self, size: int) -> dict[str, int]:
        """Bytes by kind, shared included."""
        if self.shim:
            return {AMD: size, PORTED: 0, NVIDIA: 0, "shared": 0}
        out = {AMD: 0, PORTED: 0, NVIDIA: 0}
        for start, end, kind in self.ranges:
            out[PORTED if kind == FALLBACK else kind] += end - start   # both have an AMD path
        out["shared"] = size - sum(out.values())
        return out


@dataclass(frozen=True)
class Builtins:
    """mappings/platforms.toml: the selector macros each build defines."""

    amd_defined: tuple[str, ...]       # 1 in an AMD build, undefined in an NVIDIA one
    amd_valued: tuple[str, ...]        # defined (value unknown) in an AMD build
    amd_device: tuple[str, ...]        # maybe defined in an AMD build (device pass), never in an NVIDIA one
    nvidia_valued: tuple[str, ...]     # defined (value unknown) in an NVIDIA build, never in an AMD one
    nvidia_device: tuple[str, ...]     # maybe defined in an NVIDIA build (device pass, HIP's platform), never in an AMD one
    compilers: tuple[str, ...] = ()    # the CUDA compiler's: never in an AMD build, taken as defined once converted (compilers.py)

    def names(self) -> set[str]:
        return {*self.amd_defined, *self.amd_valued, *self.amd_device, *self.nvidia_valued, *self.nvidia_device,
                *self.compilers}


@lru_cache(maxsize=1)
def builtin_selectors() -> Builtins:
    """The selector macros of mappings/platforms.toml."""
    from ...core.tables import toml_cache
    from ...core.tables.mappings import tables_dir
    doc = toml_cache.load(tables_dir() / "platforms.toml")
    amd, nvidia = doc["amd"], doc["nvidia"]
    return Builtins(tuple(amd["defined"]), tuple(amd["valued"]), tuple(amd.get("device_pass", ())),
                    tuple(nvidia["valued"]), tuple(nvidia.get("device_pass", ())) + tuple(nvidia.get("hip_platform", ())),
                    tuple(nvidia.get("compilers", ())))


@lru_cache(maxsize=8)
def selector_names(amd_macros: tuple[str, ...] = (), one_world: tuple[tuple[str, str], ...] = ()) -> tuple[bytes, ...]:
    """Every macro either build's world knows, as bytes: a file naming none of them is shared code."""
    names = builtin_selectors().names() | set(amd_macros) | {name for name, _ in one_world}
    return tuple(sorted(n.encode() for n in names))


@lru_cache(maxsize=8)
def selectors(amd_macros: tuple[str, ...] = (), defines: tuple[tuple[str, int | None], ...] = (),
              undefines: tuple[str, ...] = (), one_world: tuple[tuple[str, str], ...] = ()) -> Selectors:
    """The worlds: AMD and NVIDIA (built-in selectors, the project's AMD macros, and the macros
    the tree defines only in one world's code: `one_world`), and, when
    -D/-U were given, the configured one: those macros alone, everything else unknown. -D/-U pick
    branches; they do not change what an AMD or an NVIDIA build is."""
    b = builtin_selectors()
    amd: dict = {m: 1 for m in (*b.amd_defined, *amd_macros)}
    amd.update({m: ppexpr.DEFINED for m in b.amd_valued})
    amd.update({m: ppexpr.UNDEFINED for m in (*b.nvidia_valued, *b.nvidia_device, *b.compilers)})
    nvidia: dict = {m: ppexpr.DEFINED for m in b.nvidia_valued}
    nvidia.update({m: ppexpr.UNDEFINED for m in (*b.amd_defined, *b.amd_valued, *b.amd_device, *amd_macros)})
    for name, world in one_world:   # defined only in that world's code anywhere in the tree
        (nvidia if world == AMD else amd).setdefault(name, ppexpr.UNDEFINED)
    if not (defines or undefines):
        return Selectors(amd, nvidia, None)
    config: dict = {name: ppexpr.DEFINED if value is None else value for name, value in defines}
    config.update({name: ppexpr.UNDEFINED for name in undefines})
    return Selectors(amd, nvidia, config)


@dataclass
class _Branch:
    start: int                  # first byte after the directive line
    active: list                # per world (amd, nvidia[, config]): compiled there? None: cannot tell
    device_split: bool = False  # `#ifdef __CUDA_ARCH__`-style: device code vs host code, not vendors
    hip_nvidia: bool = False    # `#if defined(__HIP_PLATFORM_NVIDIA__)`: HIP code's own NVIDIA branch
    amd_chosen: bool = False    # `#if CUDA_VERSION < 9000 || defined(USE_AMD_ROCM)`: AMD certainly takes it, by name


@dataclass
class _Group:
    parent: list                # per world: is the enclosing branch compiled
    taken: list                 # per world: an earlier branch of the group is taken
    hip: bool = False           # tests a CUDA compiler macro convert makes HIP's (compilers.py)
    branches: list = field(default_factory=list)   # (branch, end)
    open: _Branch | None = None


def and_(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def not_(a: bool | None) -> bool | None:
    return None if a is None else not a


def classify(data: bytes, worlds: Selectors, record: dict | None = None) -> RegionMap:
    """The region map of one file's bytes under the worlds (AMD, NVIDIA, and the user's -D/-U)."""
    if b"#" not in data:
        return RegionMap()
    shim = is_shim(data)
    # each world is copied: #define/#undef update it in file order
    envs = [dict(worlds.amd), dict(worlds.nvidia)] + ([dict(worlds.config)] if worlds.config is not None else [])
    stack: list[_Group] = []
    spans: list[tuple[int, int, str, int]] = []           # (start, end, kind, depth)
    inactive: list[tuple[int, int]] = []
    undecided = 0
    active: list = [True] * len(envs)
    names = builtin_selectors().compilers
    tests = compilers.read(data, names, worlds.nvidia)
    for m in directives(data):
        kind = m.group(1).decode()
        raw, after = directive_text(data, m)
        text = raw.decode("utf-8", "replace")
        if kind in ("define", "undef"):
            track_define(kind, text, active, envs, record)
            continue
        if kind in ("if", "ifdef", "ifndef"):
            group = _Group(list(active), [False] * len(envs), m.start() in tests.hip_side)
            stack.append(group)
        elif not stack:
            continue   # an #else/#endif without #if: the file is broken; ignore it
        else:
            group = stack[-1]
            _close_branch(group, m.start(), data)
        if kind == "endif":
            stack.pop()
            spans.extend(_group_spans(group, len(stack)))
            inactive.extend((b.start, end) for b, end in group.branches if len(b.active) > 2 and b.active[2] is False)
            active = group.parent
            continue
        if kind == "else":
            conds: list = [True] * len(envs)
        else:
            expr = condition(kind, text)[0]
            read = [compilers.taken(envs[0], names), *envs[1:]] if group.hip else envs
            conds = [ppexpr.truth(ppexpr.evaluate(expr, env)) for env in read]
            if len(envs) > 2 and conds[2] is None and and_(group.parent[2], not_(group.taken[2])) is not False:
                undecided += 1
        active = [and_(and_(p, not_(t)), c) for p, t, c in zip(group.parent, group.taken, conds)]
        group.taken = [or_(t, c) for t, c in zip(group.taken, conds)]
        group.open = _Branch(after, active, kind != "else" and DEVICE_SPLIT.fullmatch(expr) is not None,
                             kind != "else" and HIP_NVIDIA.search(expr) is not None and not _NOT_HIP_NVIDIA.search(expr),
                             kind != "else" and conds[0] is True and _names_amd(expr, worlds.amd))
    return RegionMap(_flatten(spans), shim, _union(inactive), undecided, tests)


def _union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(r for r in ranges if r[1] > r[0]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def or_(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


def track_define(kind: str, text: str, active: list, envs: list[dict], record: dict | None = None) -> None:
    """Follow #define/#undef in each world. A macro defined only where one world compiles is
    undefined in the other, so it becomes that world's selector (ggml's
    `#if defined(GGML_USE_HIP) && ... #define V_DOT2_F32_F16_AVAILABLE`). `record` collects, per
    macro, in which worlds' code each #define stands (for the tree: platform_facts.py)."""
    name = re.match(r"\s*(\w+)", text)
    if name is None:
        return
    macro = name.group(1)
    if record is not None and kind == "define":
        amd, nvidia = active[0], active[1]
        where = NVIDIA if amd is False and nvidia is not False else AMD if nvidia is False and amd is not False \
            else "both"
        record.setdefault(macro, set()).add(where)
    for compiled, env in zip(active, envs):
        if compiled is None:
            env.pop(macro, None)          # maybe defined, maybe not: unknown
        elif compiled and kind == "define":
            env[macro] = ppexpr.DEFINED
        elif compiled:
            env[macro] = ppexpr.UNDEFINED
        elif kind == "define":
            env.setdefault(macro, ppexpr.UNDEFINED)   # this world skips the definition


_POSITIVE_DEFINED = re.compile(r"(!\s*)?\bdefined\s*\(?\s*(\w+)")


def _names_amd(expr: str, amd: dict) -> bool:
    """The condition tests an AMD selector positively (`defined(USE_AMD_ROCM)`, not `!defined(...)`):
    the author wrote this branch for the AMD build (faiss's Select.cuh), so the NVIDIA-only branch
    beside it is already ported, not a fallback to convert (issue 31)."""
    return any(not m.group(1) and amd.get(m.group(2)) == 1 for m in _POSITIVE_DEFINED.finditer(expr))


def _close_branch(group: _Group, end: int, data: bytes) -> None:
    branch = group.open
    if branch is None:
        return
    end = data.rfind(b"\n", 0, end) + 1 if end > 0 else 0
    group.branches.append((branch, max(end, branch.start)))
    group.open = None


def _group_spans(group: _Group, depth: int) -> list[tuple[int, int, str, int]]:
    """AMD-only and NVIDIA-only branches of a finished group; NVIDIA-only ones are PORTED when
    the group has an AMD-only branch, FALLBACK when it has another the AMD build compiles."""
    def kind(b: _Branch) -> str | None:
        amd, nvidia = b.active[0], b.active[1]
        if nvidia is False and amd is not False:
            return AMD
        if amd is False and nvidia is not False:
            return NVIDIA
        return None
    kinds = [(b, end, kind(b)) for b, end in group.branches]
    # A counterpart: an AMD-only branch (PORTED: left as it is), or, unless the #if splits device
    # from host code, a branch both builds may compile, which an AMD build takes instead
    # (`#if CUDART_VERSION >= 11080 <PTX> #else <portable code> #endif`: FALLBACK, converted).
    has_amd = any(k == AMD or b.amd_chosen for b, _, k in kinds)
    has_fallback = not any(b.device_split for b, _, _ in kinds) and \
        any(k is None and b.active[0] is not False for b, _, k in kinds)
    out = []
    for b, end, k in kinds:
        if k == NVIDIA and (has_amd or has_fallback or b.hip_nvidia):
            k = PORTED if has_amd or b.hip_nvidia else FALLBACK
        if k is not None and end > b.start:
            out.append((b.start, end, k, depth))
    return out


def _flatten(spans: list[tuple[int, int, str, int]]) -> list[tuple[int, int, str]]:
    """Nested spans to non-overlapping ranges, in one sweep: inside an AMD or PORTED span
    everything keeps the outer kind (protected as a whole); elsewhere the innermost span decides."""
    events = sorted([(s, 1, d, k) for s, _, k, d in spans] + [(e, 0, -d, k) for _, e, k, d in spans])
    out: list[tuple[int, int, str]] = []
    stack: list[str] = []   # effective kinds of the open spans
    prev = 0
    for pos, opening, _, kind in events:
        if stack and pos > prev:
            if out and out[-1][1] == prev and out[-1][2] == stack[-1]:
                out[-1] = (out[-1][0], pos, stack[-1])
            else:
                out.append((prev, pos, stack[-1]))
        if opening:
            stack.append(stack[-1] if stack and stack[-1] in PROTECTED else kind)
        else:
            stack.pop()
        prev = pos
    return out


def is_shim(data: bytes) -> bool:
    """Most of the file's #defines map CUDA names to HIP (or another vendor's) names, or back."""
    if data.count(b"define") < SHIM_MIN_DEFINES:
        return False
    shim = total = 0
    for m in DEFINE_LINE.finditer(data):
        total += 1
        name, body = m.group(1), m.group(2)
        if (CUDA_NAME.match(name) and VENDOR_BODY.search(body)) or (_HIP_NAME.match(name) and _CUDA_BODY.search(body)):
            shim += 1
    return shim >= SHIM_MIN_DEFINES and shim * 2 >= total
