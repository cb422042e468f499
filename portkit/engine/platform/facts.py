"""The tree-wide platform facts, found before the scan: AMD selector macros and shim names.

`convert` and `audit` read every source once more, directives only, before scanning it: a
macro is an AMD selector when a branch it guards uses HIP (ggml's `GGML_USE_HIP` around
`#include "vendors/hip.h"`), and the CUDA names the project's own shim headers map are already
ported. The results travel in the ProjectFacts (project/facts.py) to every file (regions.py classifies each one);
`-D`/`-U` are parsed here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import amd_headers, ppexpr
from .regions import (AMD, CUDA_NAME, DEFINE_LINE, HIP_INCLUDE, NVIDIA, VENDOR_BODY, builtin_selectors, classify, condition,
                      directive_text, directives, is_shim, selectors)

# Each pattern starts with a literal, which the regex engine seeks fast (one alternation of them
# all scans byte by byte: 0.2 s on tiny-cuda-nn's large guarded headers).
_HIP_EVIDENCE = (HIP_INCLUDE,) + tuple(re.compile(p) for p in (
    rb"hip[A-Z]\w+", rb"__builtin_amdgcn_\w+", rb"HIP_DYNAMIC_SHARED\b", rb"__hip_\w+",
    rb"asm\b[^;\"]{0,40}\"\s*(?:v|s|ds|buffer|global|flat)_[a-z0-9_]+\s",
))

def _uses_hip(data: bytes, start: int, end: int) -> bool:
    """The branch [start, end) includes a HIP/ROCm header, names HIP or AMD builtins, or holds AMD assembly."""
    return any(p.search(data, start, end) for p in _HIP_EVIDENCE)


@dataclass
class FileMacros:
    """What the directive walk of one file found."""

    learned: set[str] = field(default_factory=set)   # guards of branches that use HIP
    tested: set[str] = field(default_factory=set)    # names its #if conditions test
    defined: set[str] = field(default_factory=set)   # names it #defines


_NAME = re.compile(r"[A-Za-z_]\w*")


@dataclass
class _Group:
    """An open #if group of the directive walk: where it opened, and its current branch."""

    opened: int                 # the offset of its #if
    name: str | None            # the positive macro of the current branch (`#ifdef X`, `#elif defined(X)`)
    start: int                  # where the current branch's text starts
    nested: list[tuple[int, int]] = field(default_factory=list)   # selecting groups inside the branch
    selects: bool = False       # a branch of it taught a selector


def learn(data: bytes) -> FileMacros:
    """A directive walk without evaluation: the AMD selectors a file reveals (X of `#ifdef X` /
    `#if defined(X)` when the branch it guards uses HIP), and the macros it tests and defines.

    HIP in a nested group that chooses the platform itself is that group's evidence, not the
    enclosing branch's: anthonix/llm.c's zero.cuh has `#ifdef MULTI_GPU` / `#ifdef BUILD_AMD` /
    `#include <rccl/rccl.h>` / `#else` / `#include <nccl.h>`, which makes BUILD_AMD a selector and
    not MULTI_GPU, a feature both builds have (read as a selector, the shared multi-GPU code under
    it was AMD's, and not priced)."""
    found = FileMacros()
    if b"#" not in data:
        return found   # (a shim's branches all use HIP: project_platforms does not ask it)
    stack: list[_Group] = []
    for m in directives(data):
        kind = m.group(1)
        if kind in (b"define", b"undef"):
            if kind == b"define" and (name := _NAME.match(m.group(2).decode("latin-1").strip())):
                found.defined.add(name.group())
            continue
        group = None
        if kind not in (b"if", b"ifdef", b"ifndef"):
            if not stack:
                continue
            group = stack[-1]
            if group.name and _uses_hip_outside(data, group.start, m.start(), group.nested):
                found.learned.add(group.name)
                group.selects = True
            if kind == b"endif":
                stack.pop()
                if group.selects and stack:   # its HIP is its own: not the enclosing branch's
                    stack[-1].nested.append((group.opened, m.end()))
                continue
        raw, after = directive_text(data, m)
        text = raw.decode("utf-8", "replace")
        found.tested.update(_NAME.findall(text))
        positive = condition(kind.decode(), text)[1] if kind in (b"if", b"ifdef", b"elif", b"elifdef") else None
        if group is None:
            stack.append(_Group(m.start(), positive, after))
        else:   # #elif / #else: the group's next branch
            group.name, group.start, group.nested = positive, after, []
    return found


def _uses_hip_outside(data: bytes, start: int, end: int, nested: list[tuple[int, int]]) -> bool:
    """_uses_hip of [start, end) less the `nested` spans (in order, inside it)."""
    for a, b in nested:
        if _uses_hip(data, start, a):
            return True
        start = max(start, b)
    return _uses_hip(data, start, end)


def _selectors(contents: list, taught: list[tuple[str, set[str]]],
               configured: tuple[str, ...]) -> tuple[tuple[str, ...], frozenset[str]]:
    """The AMD selectors (the configured ones first) and the headers only AMD branches include.
    Such a header is AMD's code whole: its #ifs choose nothing between the platforms, and what
    they guard teaches no selector (anthonix/llm.c's amd_common.cuh has `#ifdef MULTI_GPU` around
    rccl's include). `taught`: (file, the selectors its branches reveal)."""
    known = set(builtin_selectors().amd_defined) | set(configured)

    def selecting(left_out: frozenset[str]) -> tuple[str, ...]:
        learned = set().union(*(names for rel, names in taught if rel not in left_out))
        return configured + tuple(sorted(learned - known))
    amd_macros = selecting(frozenset())
    amd_files = amd_headers.amd_only(contents, selectors(amd_macros))
    if amd_files and selecting(amd_files) != amd_macros:
        amd_macros = selecting(amd_files)
        amd_files = amd_headers.amd_only(contents, selectors(amd_macros))
    return amd_macros, amd_files


def parse_defines(defines: list[str], undefines: list[str]) -> tuple[tuple, tuple]:
    """-D NAME[=VALUE] and -U NAME as the configured world's macros; a bad name is a user error."""
    from ...core.errors import PortkitError
    parsed = []
    for item in defines:
        name, eq, value = item.partition("=")
        if not (name.isidentifier() and name.isascii()):
            raise PortkitError(f"-D {item}: {name!r} is not a macro name")
        number = ppexpr.evaluate(value, {}) if eq else 1
        parsed.append((name, number))
    for name in undefines:
        if not (name.isidentifier() and name.isascii()):
            raise PortkitError(f"-U {name}: not a macro name")
    return tuple(parsed), tuple(undefines)


def shim_names(data: bytes) -> frozenset[bytes]:
    """The CUDA names a vendor shim header maps (`#define cudaMalloc hipMalloc`: b"cudaMalloc")."""
    return frozenset(m.group(1) for m in DEFINE_LINE.finditer(data)
                     if CUDA_NAME.match(m.group(1)) and VENDOR_BODY.search(m.group(2)))


HIP_SHIM = re.compile(rb"\bhip[A-Z_]\w*|\bHIP[A-Z_]\w*|<hip/")   # a shim to HIP (not MUSA's)
_DEVICE_FUNCTION = re.compile(rb"__device__[^;{}()\n]*?\b(\w+)[ \t]*\(")


def amd_shim_names(data: bytes) -> frozenset[bytes]:
    """What an AMD shim provides for the AMD build beyond renames: every macro it #defines and every
    device function it defines (ggml's vendors/hip.h writes `__vsub4`, `__vcmpne4` and `__trap`
    for AMD). A CUDA name among them is already ported, not "no HIP equivalent"."""
    return frozenset(m.group(1) for m in DEFINE_LINE.finditer(data)) | \
        frozenset(m.group(1) for m in _DEVICE_FUNCTION.finditer(data))


def project_platforms(entries: list, facts, contents=None):
    """The tree's platform facts, from directive-only passes over its sources before the scan:

    - the AMD selectors: configured, plus those any file reveals (`#if defined(GGML_USE_HIP)`
      around `#include "vendors/hip.h"` makes GGML_USE_HIP one in every file), a header only
      AMD branches include (amd_headers.py) aside: all of it is AMD's;
    - the macros the tree defines only in one world's code (ggml's TURING_MMA_AVAILABLE, defined
      in common.cuh under `!defined(GGML_USE_HIP) && __CUDA_ARCH__ >= ...`, tested in mma.cuh);
    - the CUDA names the project's own shim headers map to HIP (and, in an AMD shim, the macros
      and device functions it defines for AMD), and whether one maps them to HIP
      (the tree already builds for AMD: `--fix warp` reports rather than rewrites).

    Returns `facts` (project/facts.py: its amd_macros are the configured ones) with these filled in.
    `contents`: the sources' (entry, bytes) already read (pipeline.learn reads each file once)."""
    from dataclasses import replace

    from ...core.files import read_sources
    taught: list[tuple[str, set[str]]] = []   # (file, the selectors its branches reveal)
    mapped: set[bytes] = set()
    sources: list[bytes] = []
    where: dict[str, set[str]] = {}
    amd_shim = False
    contents = contents if contents is not None else read_sources(entries)
    for entry, data in contents:
        if b"#" not in data or amd_headers.generated(data):   # portkit's own output is not the project's
            continue
        if is_shim(data):
            mapped |= shim_names(data)
            if HIP_SHIM.search(data):   # included by the AMD build only: what it defines is AMD's
                amd_shim = True
                mapped |= amd_shim_names(data)
                for m in DEFINE_LINE.finditer(data):
                    where.setdefault(m.group(1).decode("latin-1"), set()).add(AMD)
        else:
            macros = learn(data)
            taught.append((entry.rel, macros.learned))
            if macros.defined:
                sources.append((data, macros))
    amd_macros, amd_files = _selectors(contents, taught, tuple(facts.amd_macros))
    # only a file that defines a macro another file tests can tell the tree anything (the scan
    # already follows a file's own #defines): evaluate just those
    tested: dict[str, int] = {}
    for _, macros in sources:
        for name in macros.tested:
            tested[name] = tested.get(name, 0) + 1
    worlds = selectors(amd_macros)
    for data, macros in sources:
        if any(tested.get(name, 0) > (name in macros.tested) for name in macros.defined):
            classify(data, worlds, where)
    builtin = builtin_selectors().names()
    one_world = tuple(sorted((name, kinds.pop()) for name, kinds in where.items()
                             if len(kinds) == 1 and next(iter(kinds)) in (AMD, NVIDIA) and name not in builtin
                             and name not in amd_macros and not name.startswith("__")   # reserved: the compiler's
                             and not CUDA_NAME.match(name.encode())))
    provided, maps_cuda = amd_headers.provided(contents, amd_files, amd_shim_names)   # with CUDA names: a shim
    mapped, amd_shim = mapped | provided, amd_shim or maps_cuda
    return replace(facts, amd_macros=amd_macros, shim_names=frozenset(mapped), one_world=one_world,
                   amd_shim=amd_shim, amd_files=amd_files)
