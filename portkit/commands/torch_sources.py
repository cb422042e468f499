"""convert's edits in a PyTorch extension's sources: only those torch's build-time hipify cannot make.

PyTorch for ROCm hipifies a CUDAExtension's sources when it builds (project/torch_extension.py says
which files): torch/utils/hipify replaces every word of its PyTorch map wherever it stands, header
names included, converts `<<<...>>>` launches and adds `#include "hip/hip_runtime.h"` to a file with
device code. Those files stay CUDA for the NVIDIA build, so convert writes there only an edit that
torch does not make and that nvcc compiles too; every other edit is either torch's (left to it) or
would break the NVIDIA build (not written, counted as left for a person). `--extension-sources hip`
writes every edit, as for any other source. The map's keys come from mappings/torch_hipify.toml
(core/tables/torch_hipify.py; tools/torch_hipify_table.py writes it from a torch wheel, keys and values).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace

from .. import rules
from ..core.edits import BLOCKS, Edit, EditKind, apply_edits
from ..core.findings import Finding
from ..core.source import SourceFile
from ..core.tables import torch_hipify
from ..engine.context import FileScan
from ..engine.facts import ProjectFacts
from ..core.files import Entry
from . import torch_person
from .inplace import digest
from .results import ConvertResult, FileOutcome
from .torch_split import TorchAccount, TorchSplit

# renames torch makes when a word of its map stands where the edit is
_RENAMES = frozenset({EditKind.NAME, EditKind.INCLUDE, EditKind.DUPLICATE_INCLUDE, EditKind.REMOVED_INCLUDE})
# what torch's hipify does whatever the words: hip_header_magic adds the runtime header,
# processKernelLaunches (or hip-clang itself) takes `<<<>>>`, HIP accepts threadIdx as it is
_TORCH_ALWAYS = frozenset({EditKind.HIP_RUNTIME_HEADER, EditKind.LAUNCH, EditKind.BUILTIN})
# edits nvcc compiles as well as hipcc: a `const void*` cast of a kernel (CUDA's C API takes it),
# a deleted `register`, --fix warp's wavefront-generic code
_BOTH = frozenset({EditKind.CAST, EditKind.REGISTER, EditKind.WARP})


def table() -> tuple[str, re.Pattern[bytes]]:
    """(torch's version, the regex of its map's words as hipify_python matches them: a whole
    word between non-word characters, the longest first, as its trie does): core/tables/torch_hipify.py."""
    found = torch_hipify.load()
    return found.version, found.words


def torch_spans(data: bytes) -> list[tuple[int, int]]:
    """The byte ranges torch's hipify rewrites in `data` (comments and strings too, as it does)."""
    return [m.span() for m in table()[1].finditer(data)]


def split(source: SourceFile, scan: FileScan) -> tuple[list[Edit], TorchSplit, list[Finding]]:
    """(the edits to write, the account, the findings left) for a source torch hipifies at build time:
    the lines left for a person become findings, and a caveat on an edit not written goes."""
    spans = torch_spans(source.data)
    starts = [s for s, _ in spans]
    kept: list[Edit] = []
    torch: list[Edit] = []
    person: list[Edit] = []
    for edit in scan.edits:
        if edit.kind in _TORCH_ALWAYS or edit.kind in _RENAMES and _overlaps(spans, starts, edit):
            torch.append(edit)
        elif edit.kind in _BOTH:
            kept.append(edit)
        else:
            person.append(edit)
    caveats = [f for f in scan.findings if rules.of(f.code).outcome == "caveat"]
    left, dropped = torch_person.findings(source, person, [e for e in torch + kept if e.kind not in BLOCKS], caveats)
    # references: the metrics count one per reference edit (a launch's, a polyfill's own spelling none)
    converted = scan.metrics.refs_converted
    renamed = min(converted, _references(torch))
    account = TorchSplit(_changes(source, kept), renamed, min(converted - renamed, _references(person)), left)
    return kept, account, [f for f in scan.findings if f not in dropped]


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


def mode(facts: ProjectFacts, extension_sources: str) -> ProjectFacts:
    """The facts the scan runs with: `--extension-sources hip` converts the sources as any other."""
    return facts if extension_sources == "cuda" else replace(facts, torch_sources=frozenset())


def outcome(entry: Entry, data: bytes, scan: FileScan, output: bytes | None, facts: ProjectFacts) -> FileOutcome:
    """A converted file's outcome: in a PyTorch extension's source only the edits torch's build-time
    hipify cannot make are kept (the facts name no file with --extension-sources hip)."""
    account = None
    if entry.rel in facts.torch_sources and output is not None:
        kept, account, findings = split(SourceFile.from_bytes(entry.rel, data), scan)
        written = apply_edits(data, kept) if kept else data
        scan, output = replace(scan, edits=kept, findings=findings), (written if written != data else None)
    return FileOutcome(entry, scan=scan, output=output, plan=facts.rename, input_digest=digest(data), torch=account)


def settle(result: ConvertResult, files: frozenset[str], extension_sources: str) -> TorchAccount | None:
    """The run's account (None: not a PyTorch extension); its lines left for a person join the
    summary's "needs a person", as the audit's findings of high severity do."""
    if not files:
        return None
    if extension_sources == "hip":   # converted as any other source: the references line counts them
        return TorchAccount("hip", len(files), table()[0], None, None, None, ())
    splits = [o.torch for o in result.outcomes if o.torch is not None]
    left = tuple(sorted((f for s in splits for f in s.left), key=lambda f: f.sort_key()))
    account = TorchAccount("cuda", len(files), table()[0], sum(s.written for s in splits),
                           sum(s.torch for s in splits), sum(s.person for s in splits), left)
    result.needs_person = sorted([*result.needs_person, *left], key=lambda f: f.sort_key())
    return account
