"""The per-file types every pass shares: what the user asked for (Options, from options.py), what
a scan produces (FileScan, Metrics), and the context rewriters and rules write into (ScanContext, View).

This module sits below scan.py, rewrite/, rules/ and buildfiles/ so that all of them import it
and none of them imports scan.py: the imports run one way (scan -> rewrite -> context,
rules -> context). The re-parse of macro bodies goes back through `ScanContext.dispatch`, the
callable scan.py installs, rather than through an import of scan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, TypeVar

from tree_sitter import Node

from ..core.edits import Edit, EditKind
from ..core.findingstore import FindingStore, Pending
from ..core.findings import Finding, fingerprint
from ..core.tables.mappings import MappingDB, Version
from ..core.tables import ecosystem
from .facts import ProjectFacts
from .options import Options
from .rule import Rule
from .platform.regions import FALLBACK, PORTED, RegionMap
from ..core.source import SourceFile

T = TypeVar("T")
SNIPPET_MAX = 240   # characters of the source line kept with a finding


def line_snippet(source: SourceFile, line: int) -> str:
    """The source line a finding shows (and fingerprints), stripped and cut at SNIPPET_MAX."""
    snippet = source.line_text(line).strip()
    return snippet[:SNIPPET_MAX] + "…" if len(snippet) > SNIPPET_MAX else snippet


def _snippet(ctx: "ScanContext", line: int) -> str:
    return line_snippet(ctx.source, line)


@dataclass
class Metrics:
    lines: int = 0
    refs_found: int = 0        # CUDA references that need a change to become HIP
    refs_converted: int = 0    # ... of which the converter changed
    refs_left: int = 0         # ... of which it left as they are (each one has a finding)
    kernels: int = 0           # __global__ definitions
    warp_fixes: int = 0        # --fix warp fixes applied (rules/warpfix.py, the family's apply)
    launches: int = 0          # <<<>>> launches
    partially_parsed: bool = False
    has_device_code: bool = False
    kind: str = "source"       # source, cmake, make, python, requirements, pyproject, conda, shell
    libraries: set[str] = field(default_factory=set)   # ecosystem library ids used (includes, links)
    imports: set[str] = field(default_factory=set)     # top-level Python modules imported
    triton_kernels: int = 0    # @triton.jit functions
    cuda_extension: bool = False   # a torch.utils.cpp_extension CUDAExtension build
    # The platform model (regions.py): bytes by region kind, and what it kept the passes from.
    region_bytes: dict[str, int] = field(default_factory=dict)   # amd, ported, nvidia, shared
    nvidia_lines: tuple[tuple[int, int], ...] = ()   # (first, last) lines of NVIDIA-only code (no AMD branch)
    optional_imports: tuple[tuple[int, int], ...] = ()   # (first, last) lines of `try:` bodies catching ImportError
    shim: bool = False             # a vendor shim header: left byte-identical
    refs_already_ported: int = 0   # CUDA names in AMD-only or ported code: left as they are
    findings_left_amd: int = 0     # findings dropped because their code is AMD-only
    findings_inactive: int = 0     # findings dropped: not compiled under the user's -D/-U
    polyfills: set[str] = field(default_factory=set)   # polyfills the file uses (polyfills.py)
    refs_inactive: int = 0         # --active-only: CUDA names left in branches not compiled under -D/-U
    branches_inactive: int = 0     # --active-only: #if branches left as they are
    branches_undecided: int = 0    # --active-only: conditions ppexpr cannot evaluate (converted as active)
    # findings past Options.finding_cap, counted, not kept: (code, pattern, severity, platform) -> count
    findings_not_stored: dict[tuple[str, str, str, str], int] = field(default_factory=dict)
    # lines of the #if tests of __NVCC__/__CUDA__/__CUDA_ARCH__ convert makes take the HIP side
    # (rewrite/cudacc.py): each picks a qualifier macro; the estimate prices them as one decision
    compiler_tests: tuple[int, ...] = ()
    # a PyTorch extension's source (commands/scan/torch_gaps.py): (changes convert writes, references
    # torch's build-time hipify renames, references on the lines left for a person); () for any other
    torch_split: tuple[int, ...] = ()


@dataclass
class FileScan:
    rel: str
    edits: list[Edit]
    findings: list[Finding]
    metrics: Metrics

    @property
    def changed(self) -> bool:
        return bool(self.edits)


@dataclass(frozen=True)
class View:
    """A tree over some bytes that start at `base` in the original file (macro bodies are re-parsed)."""

    data: bytes
    base: int = 0
    # the file's own view only: which file, and what the tree says of it (a fixer, which gets no
    # context, reads a constant its header defines: project/warp_constants.py)
    rel: str = field(default="", compare=False)
    facts: ProjectFacts | None = field(default=None, compare=False)

    def start(self, node: Node) -> int:
        return self.base + node.start_byte

    def end(self, node: Node) -> int:
        return self.base + node.end_byte

    def text(self, node: Node) -> bytes:
        return self.data[node.start_byte:node.end_byte]


@dataclass
class IncludeSeen:
    """An #include after conversion: where it is, what it names, and whether the converter made it."""

    node_start: int
    node_end: int
    parent_id: int
    header: str
    converted: bool


# An Edit made from its seven fields without the NamedTuple's generated __new__ (a Python call
# per edit: 0.1 s of the 300,000 edits of a generated 5 MB file)
_edit = tuple.__new__

Dispatch = Callable[["ScanContext", View, Node], None]
"""The dispatch protocol: send every captured node under a root to its rewriters and rules."""


@dataclass
class ScanContext:
    source: SourceFile
    db: MappingDB
    options: Options
    target: Version
    facts: ProjectFacts = field(default_factory=ProjectFacts)   # what the pipeline learned of the tree
    edits: list[Edit] = field(default_factory=list)
    store: FindingStore = field(default_factory=FindingStore)   # dedupes and caps what report() keeps
    # the store's kept findings, as reported (a code a rule may refine: a Pending, built at the end)
    findings: list["Finding | Pending"] = field(init=False)
    metrics: Metrics = field(default_factory=Metrics)
    includes: list[IncludeSeen] = field(default_factory=list)
    uses_runtime_api: bool = False
    seen: set = field(default_factory=set)       # first(): what a rule already reported once in this file
    derived_facts: dict = field(default_factory=dict)   # derived(): per-file facts, by provider and arguments
    # The walk over a (sub)tree: scan.dispatch, installed by scan.scan_source. Macro bodies are
    # parsed again and walked with it (rewrite/macros.py) without importing scan.
    dispatch: "Dispatch | None" = None
    regions: RegionMap = field(default_factory=RegionMap)   # the platform model of this file
    root: "Node | None" = None   # the file's own tree (commands/scan/walk.py sets it before the walk)
    # The fixes the rules' fixers found in this walk, by family and by the node they fix
    # (engine/fix.py): the findings of the rules that own them carry them; --fix FAMILY applies a family's.
    fixes: dict = field(default_factory=dict)
    # An audit finds a node's fix only when a finding it keeps carries it (engine/fix.py,
    # `on_demand`: (family, view, node) -> Fix): a generated line's 61,000 duplicate shuffles ask for none.
    fix_of: "Callable[[str, View, Node], object] | None" = None
    # The rule registry by code (rules.by_code()), installed by the scan like `dispatch`: a
    # rewriter or a build-file handler names the rule of its finding by its code (engine/codes.py)
    # and never imports rules/.
    rules: Mapping[str, Rule] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.findings = self.store.findings

    @property
    def gpu(self) -> bool:
        """Whether a GPU compiler reads this file (project/gpu_reach.py): the rules and passes that
        declare gpu_only find nothing in one that none reads."""
        return self.source.rel not in self.facts.host_only

    @property
    def edits_read(self) -> bool:
        """Whether anything reads this scan's edits: convert's; of an audit's, only a PyTorch
        extension's source, whose edits decide the lines left for a person (commands/scan/torch_gaps.py),
        so that they are convert's edits exactly. A rewriter may skip work whose only result is an edit."""
        return not self.options.audit or self.source.rel in self.facts.torch_sources

    def uses_library(self, library: str, start: int) -> None:
        """A use of an ecosystem library at byte `start` (Metrics.libraries: the estimate's dependency
        items). Not the NVIDIA branch of an #if with an AMD branch, nor AMD code: the AMD build
        does not compile it (mamba's libcu++ include under `#ifndef USE_ROCM`, already ported,
        was "adopt the ROCm counterpart of libcu++", 30.6 h). Nor a drop-in library a `.hip` file
        includes: HIP code, whose includes are the ROCm libraries' (rocThrust keeps Thrust's
        <thrust/...> names); one without a drop-in counterpart (cuDNN) is still a dependency there."""
        regions = self.regions
        if (regions.ranges or regions.shim) and regions.kind_at(start) in ("amd", PORTED, FALLBACK):
            return
        if self.source.rel.endswith(".hip") and _drop_in(library):   # a HIP source's <thrust/...> is rocThrust's
            return
        self.metrics.libraries.add(library)

    def first(self, key: object) -> bool:
        """True the first time `key` is seen in this file (rules that report once per function)."""
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def derived(self, provider: Callable[..., T], *args: object) -> T:
        """A per-file fact, computed once: `provider(self, *args)`, kept by the provider itself and
        its arguments (LibCST's metadata providers are the model): a pass declares what it reads by
        naming the function that computes it, never by an ad-hoc key."""
        key = (provider, *args)
        try:
            return self.derived_facts[key]
        except KeyError:
            value = self.derived_facts[key] = provider(self, *args)
            return value

    def edit(self, start: int, end: int, text: bytes, what: str = "", covers: bool = False,
             parts: tuple = (), kind: str = EditKind.OTHER) -> None:
        if self.options.active_only and self.regions.inactive and self.regions.is_inactive(start):
            return   # --active-only: a branch the configuration does not compile stays byte for byte
        self.edits.append(_edit(Edit, (start, end, text, what, covers, parts, kind)))

    def rule(self, code: str) -> Rule:
        """The rule of a code, from the registry the scan installed (`rules`)."""
        return self.rules[code]

    def flag(self, rule: "Rule | str", start: int, end: int, message: str, subject: str,
             severity: str | None = None, fixed_by: object = None, fix: str | None = None) -> None:
        """Record a finding of `rule` (a Rule, or its code: `rule()`) at byte range [start, end)
        (severity: the rule's unless given), carrying the rule's fix `fixed_by` where it has one
        (engine/fix.py's Fix, or what finds it when the finding is kept). Its `fix` text is the rule's "Instead" unless the rule words one for this finding's own code."""
        if isinstance(rule, str):
            rule = self.rules[rule]
        if rule.gpu_only and not self.gpu:
            return   # a warp, hip-clang or PTX finding in a file no GPU compiler reads
        self.report(rule.code, rule.name, severity or rule.severity, rule.category, start, end,
                    message, subject=subject, fix=rule.fix if fix is None else fix, fixed_by=fixed_by)

    def report(self, code: str, name: str, severity: str, category: str, start: int, end: int,
               message: str, subject: str, fix: str = "", fixed_by: object = None) -> None:
        """Record a finding at byte range [start, end) of the original file."""
        regions = self.regions
        if regions.inactive and regions.is_inactive(start):
            self.metrics.findings_inactive += 1   # the configuration the user gave does not compile it
            return
        region = regions.kind_at(start) if (regions.ranges or regions.shim) else None
        if region == "amd":
            self.metrics.findings_left_amd += 1   # AMD-only code is already HIP
            return
        if region == PORTED and severity != "info":
            severity = "info"
            message = "already ported (this #if has an AMD branch; nvcc alone compiles this one): " + message
        elif region == FALLBACK and severity != "info":
            severity = "info"
            message = "AMD builds take another branch of this #if (nvcc alone compiles this one): " + message
        position, store = self.source.position, self.store
        line, col = position(start)
        if store.repeats(code, subject, line, col):   # a later one of its line: nothing to keep
            return
        end_line, end_col = position(max(start, end))
        index = store.admit(code, subject, (line, col), (end_line, end_col), severity, region or "")
        if index is None:   # a duplicate on its line, or counted past the cap: nothing to build
            return
        args = (code, name, severity, category, line, col, end_line, end_col, message, fix, subject,
                region or "", fixed_by)
        if code in store.refinable:   # kept whole to the end, where most go: built if kept
            store.put(index, Pending(code, self.source.rel, line, col, subject, severity, region or "",
                                     self._finding, args))
        else:
            store.put(index, self._finding(*args))

    def _finding(self, code: str, name: str, severity: str, category: str, line: int, col: int, end_line: int,
                 end_col: int, message: str, fix: str, subject: str, platform: str, fixed_by: object) -> Finding:
        # once per line: a generated file may put thousands of findings on one
        snippet = self.derived(_snippet, line)
        if callable(fixed_by):   # a fix found on demand, now that the finding is kept (fix_of)
            fixed_by = fixed_by()
        return Finding(
            code=code, name=name, severity=severity, category=category, path=self.source.rel,
            line=line, column=col, end_line=end_line, end_column=end_col, message=message,
            snippet=snippet, fix=fix, subject=subject, platform=platform,
            fingerprint=fingerprint(code, self.source.rel, subject, snippet, platform), fixed_by=fixed_by,
        )

    def finished_findings(self) -> list[Finding]:
        """The file's findings once its scan is done (FindingStore.finish); the count of those past
        the cap goes to the metrics."""
        findings = self.store.finish()
        self.metrics.findings_not_stored = dict(self.store.over)
        return findings


def _drop_in(library: str) -> bool:
    found = ecosystem.default().by_id.get(library)
    return found is not None and found.status == "drop-in"
