"""A PyTorch extension's source, scanned: which edits are convert's, which torch's build-time hipify
makes, and which lines are left for a person, decided once for every command.

PyTorch for ROCm hipifies a CUDAExtension's sources when it builds (project/torch_extension.py says
which files: ProjectFacts.torch_sources): torch/utils/hipify replaces every word of its PyTorch map
wherever it stands, header names included, converts `<<<...>>>` launches and adds `#include
"hip/hip_runtime.h"` to a file with device code. Those files stay CUDA for the NVIDIA build, so an
edit there is written only when torch does not make it and nvcc compiles it too; every other edit is
either torch's (left to it) or would break the NVIDIA build: its line is a PK506 finding saying what
to write under `#ifdef USE_ROCM` (torch_person.py), and the caveat a rule gave for that edit goes.
The walk (walk.scan_source) calls `settle` on such a file in convert's scan and in the audit's alike,
so convert's needs_person and the audit's findings are one list (before, only convert decided, and
`portkit audit` still showed the PK004 caveat and none of the lines). `--extension-sources hip`
names no file in the facts (commands/torch_sources.mode). The map's keys come from
mappings/torch_hipify.toml (core/tables/torch_hipify.py; tools/torch_hipify_table.py writes it).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace

from ... import rules
from ...core.edits import BLOCKS, Edit, EditKind
from ...core.source import SourceFile
from ...core.tables import torch_hipify
from ...engine.context import FileScan
from . import torch_person

# renames torch makes when a word of its map stands where the edit is
_RENAMES = frozenset({EditKind.NAME, EditKind.INCLUDE, EditKind.DUPLICATE_INCLUDE, EditKind.REMOVED_INCLUDE})
# what torch's hipify does whatever the words: hip_header_magic adds the runtime header,
# processKernelLaunches (or hip-clang itself) takes `<<<>>>`, HIP accepts threadIdx as it is
_TORCH_ALWAYS = frozenset({EditKind.HIP_RUNTIME_HEADER, EditKind.LAUNCH, EditKind.BUILTIN})
# edits nvcc compiles as well as hipcc: a `const void*` cast of a kernel (CUDA's C API takes it),
# a deleted `register`, --fix warp's wavefront-generic code, and a guard: every guard convert writes
# tests an AMD selector nvcc leaves undefined (`#if !defined(__HIP_PLATFORM_AMD__)` around a function
# HIP's headers define, PK012; `|| defined(__HIP_DEVICE_COMPILE__)`), so the NVIDIA build is unchanged;
# and a compiler test that keeps CUDA's macro beside HIP's (_tests_both_macros)
_BOTH = frozenset({EditKind.CAST, EditKind.REGISTER, EditKind.WARP, EditKind.GUARD})


def table() -> tuple[str, re.Pattern[bytes]]:
    """(torch's version, the regex of its map's words as hipify_python matches them: a whole word
    between non-word characters, the longest first, as its trie does): core/tables/torch_hipify.py."""
    found = torch_hipify.load()
    return found.version, found.words


def torch_spans(data: bytes) -> list[tuple[int, int]]:
    """The byte ranges torch's hipify rewrites in `data` (comments and strings too, as it does)."""
    return [m.span() for m in table()[1].finditer(data)]


def settle(source: SourceFile, scan: FileScan) -> FileScan:
    """The scan of a source torch hipifies at build time: only the edits to write, the lines left for
    a person as PK506 findings (a caveat on an edit not written goes), and in the metrics
    `torch_split` = (changes written, references torch renames, references left for a person)."""
    spans = torch_spans(source.data)
    starts = [s for s, _ in spans]
    kept: list[Edit] = []
    torch: list[Edit] = []
    person: list[Edit] = []
    for edit in scan.edits:
        if edit.kind in _TORCH_ALWAYS or edit.kind in _RENAMES and _overlaps(spans, starts, edit):
            torch.append(edit)
        elif edit.kind in _BOTH or _tests_both_macros(edit):
            kept.append(edit)
        else:
            person.append(edit)
    caveats = [f for f in scan.findings if rules.of(f.code).outcome == "caveat"]
    left, dropped, aliases, served = torch_person.findings(source, person, [e for e in torch + kept if e.kind not in BLOCKS],
                                                           caveats)
    kept += aliases   # `namespace cub = hipcub;` under #ifdef USE_ROCM: nvcc compiles it too
    person = [e for e in person if e not in served]
    # references: the metrics count one per reference edit (a launch's, a polyfill's own spelling none)
    converted = scan.metrics.refs_converted
    renamed = min(converted, _references(torch))
    metrics = replace(scan.metrics, torch_split=(_changes(source, kept), renamed,
                                                  min(converted - renamed, _references(person))))
    findings = sorted([*(f for f in scan.findings if f not in dropped), *left], key=lambda f: f.sort_key())
    return replace(scan, edits=kept, findings=findings, metrics=metrics)


def _tests_both_macros(edit: Edit) -> bool:
    """A test of a CUDA compiler's macro that rewrite/cudacc.py wrote in a source torch hipifies:
    `#ifdef __CUDA_ARCH__` -> `#if defined(__HIP_DEVICE_COMPILE__) || defined(__CUDA_ARCH__)` still
    tests the CUDA macro, so nvcc takes the branches it took; hip-clang takes them through HIP's."""
    return edit.kind is EditKind.NAME and bool(edit.what) and b"defined(%s)" % edit.what.encode() in edit.text


def _references(edits: list[Edit]) -> int:
    return sum(1 for e in edits if e.kind in torch_person.REFERENCES)


def _changes(source: SourceFile, edits: list[Edit]) -> int:
    """Changes, not edits: a cast's two insertions, a call's pieces are one change on their line."""
    return len({(source.position(e.start)[0], e.what or e.kind) for e in edits})


def _overlaps(spans: list[tuple[int, int]], starts: list[int], edit: Edit) -> bool:
    i = bisect.bisect_right(starts, max(edit.end, edit.start + 1)) - 1
    while i >= 0 and spans[i][1] > edit.start:
        if spans[i][0] < max(edit.end, edit.start + 1):
            return True
        i -= 1
    return False
