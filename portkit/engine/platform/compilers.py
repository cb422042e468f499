"""The CUDA compiler's own macros after convert: which `#if` groups take the HIP side (issue 48).

hip-clang defines none of `__CUDACC__`, `__NVCC__` (nvcc's) and `__CUDA__` (clang's CUDA mode),
so read as hipcc reads the unconverted source, the `#else` of `#ifdef __CUDACC__` was AMD-only,
the `#if` branch NVIDIA-only beside it (PORTED: left as it is), and `#ifndef __NVCC__` host code
was AMD's. But convert writes those tests as HIP's (`__HIPCC__`, `__HIP__`: rewrite/cudacc.py),
so after convert the AMD build compiles the `#if` branch, and the `#else` is the host compilers'
(g++, MSVC) code, compiled by neither GPU build. Left PORTED, the names in the `#if` branch
stayed CUDA's (`#include <cuda_fp16.h>`, `__half`) in a branch hipcc now compiles. In such a
group the AMD world takes the three macros as defined.

Not in a group that names an AMD selector itself (`#if defined(__HIPCC__) ... #elif
defined(__CUDACC__)`, `#ifdef __CUDACC__ ... #elif defined(GGML_USE_HIP)`, `defined(__CUDACC__) &&
!defined(__HIP__)`, HIP's NVIDIA platform): the author chose the AMD branch there. The macros keep
hip-clang's reading (undefined), the model's classification is what it was, and convert leaves
those directives as written (`kept`), so the AMD build still takes the author's branch.

A directive-only walk like the others of the model (directives.py), and only over files that
name one of the macros.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Mapping

from . import ppexpr
from .directives import COMMENT, directive_text, directives

_IDENT = re.compile(r"[A-Za-z_]\w*")
# HIP's NVIDIA platform: never defined for AMD, so not among the AMD selectors below, yet a group
# testing it is HIP code written for both vendors
_HIP_NVIDIA = frozenset({"__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__"})


@dataclass(frozen=True)
class CompilerTests:
    """What one file's compiler tests mean after convert."""

    hip_side: frozenset[int] = frozenset()    # the '#' of each #if whose group takes the HIP side
    kept: tuple[tuple[int, int], ...] = ()    # [start, end) of each test left as written (a chosen AMD branch)

    def keeps(self, offset: int) -> bool:
        """The byte lies in a directive whose compiler test stays as the author wrote it."""
        i = bisect.bisect_right(self.kept, (offset, float("inf"))) - 1
        return i >= 0 and self.kept[i][0] <= offset < self.kept[i][1]


NONE = CompilerTests()


@dataclass
class _Open:
    at: int                     # the '#' of its #if
    tests: list                 # [start, end) of its directives that name a compiler macro
    aware: bool = False         # a condition names an AMD selector


def read(data: bytes, names: tuple[str, ...], nvidia: Mapping[str, object]) -> CompilerTests:
    """The groups of `data` that test a compiler macro in `names`, split into those that take the
    HIP side and those whose tests stay. `nvidia` is the NVIDIA world: the macros it holds
    undefined (the built-in AMD selectors, the project's, the tree's learned ones) are AMD's."""
    if not any(name.encode() in data for name in names):
        return NONE
    wanted, amd = frozenset(names), None
    stack: list[_Open] = []
    hip_side: set[int] = set()
    kept: list[tuple[int, int]] = []
    for m in directives(data):
        kind = m.group(1)
        if kind in (b"if", b"ifdef", b"ifndef"):
            stack.append(_Open(m.start(), []))
        elif not stack or kind in (b"define", b"undef", b"else"):
            continue
        group = stack[-1]
        if kind == b"endif":
            stack.pop()
            if group.tests and group.aware:
                kept.extend(group.tests)
            elif group.tests:
                hip_side.add(group.at)
            continue
        raw, after = directive_text(data, m)
        found = set(_IDENT.findall(COMMENT.sub(" ", raw.decode("utf-8", "replace"))))
        if found & wanted:
            group.tests.append((m.start(), after))
        if amd is None:
            amd = {name for name, value in nvidia.items() if value == ppexpr.UNDEFINED} | _HIP_NVIDIA
        group.aware = group.aware or not found.isdisjoint(amd)
    return CompilerTests(frozenset(hip_side), tuple(sorted(kept)))


def taken(world: dict, names: tuple[str, ...]) -> dict:
    """The AMD world as a converted tree's hipcc reads a HIP-side group: the compiler macros defined."""
    return {**world, **{name: ppexpr.DEFINED for name in names}}
