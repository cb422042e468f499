"""One walk per file: parse, dispatch the captured nodes to the rewriters, collect edits and findings.

Data flows one way: SourceFile -> tree -> (edits, findings, metrics) = FileScan. Rewriters
return data through the ScanContext and never print or write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from tree_sitter import Node

from . import parse
from .edits import Edit, normalize
from .findings import Finding, fingerprint
from .mappings import MappingDB, Version, default_db
from .source import SourceFile

if TYPE_CHECKING:
    from .rename import RenamePlan
    from .rules._rule import Rule


SNIPPET_MAX = 240   # characters of the source line kept with a finding


def line_snippet(source: SourceFile, line: int) -> str:
    """The source line a finding shows (and fingerprints), stripped and cut at SNIPPET_MAX."""
    snippet = source.line_text(line).strip()
    return snippet[:SNIPPET_MAX] + "…" if len(snippet) > SNIPPET_MAX else snippet


@dataclass(frozen=True)
class Options:
    """What the user asked for; the same options drive convert and audit."""

    launch_syntax: str = "cuda"          # "cuda" keeps <<<>>>, "hip" writes hipLaunchKernelGGL
    rocm: Version | None = None          # target ROCm release; None = newest in the tables
    prefer_roc: bool = False             # prefer rocBLAS-style names where the tables have them
    audit: bool = False                  # also run the audit rules (portkit/rules/), not only the converter
    offload_arch: tuple[str, ...] = ("gfx90a",)   # AMD GPU targets for build files (never from sm_XX)
    build_files: bool = True             # migrate CMake/Make/setup.py files (portkit/build/)
    builtins: str = "cuda"               # "cuda" keeps threadIdx.x, "hip" writes hipThreadIdx_x
    rename: "RenamePlan | None" = None   # --rename: the files getting new names (their #includes follow)
    file_timeout: float = 60.0           # seconds one file may take (--file-timeout; 0: no limit)


@dataclass
class Metrics:
    lines: int = 0
    refs_found: int = 0        # CUDA references that need a change to become HIP
    refs_converted: int = 0    # ... of which the converter changed
    refs_left: int = 0         # ... of which it left as they are (each one has a finding)
    kernels: int = 0           # __global__ definitions
    launches: int = 0          # <<<>>> launches
    partially_parsed: bool = False
    has_device_code: bool = False
    kind: str = "source"       # source, cmake, make, python, requirements, pyproject, conda, shell
    libraries: set[str] = field(default_factory=set)   # ecosystem library ids used (includes, links)
    imports: set[str] = field(default_factory=set)     # top-level Python modules imported
    triton_kernels: int = 0    # @triton.jit functions
    cuda_extension: bool = False   # a torch.utils.cpp_extension CUDAExtension build


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


@dataclass
class ScanContext:
    source: SourceFile
    db: MappingDB
    options: Options
    target: Version
    edits: list[Edit] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    metrics: Metrics = field(default_factory=Metrics)
    includes: list[IncludeSeen] = field(default_factory=list)
    uses_runtime_api: bool = False
    memo: dict = field(default_factory=dict)   # per-file scratch for rules (first use per function...)

    def first(self, key: object) -> bool:
        """True the first time `key` is seen in this file (rules that report once per function)."""
        if key in self.memo:
            return False
        self.memo[key] = True
        return True

    def edit(self, start: int, end: int, text: bytes, what: str = "", covers: bool = False) -> None:
        self.edits.append(Edit(start, end, text, what, covers))

    def flag(self, rule: "Rule", start: int, end: int, message: str, subject: str,
             severity: str | None = None) -> None:
        """Record a finding of `rule` at byte range [start, end) (severity: the rule's unless given)."""
        self.report(rule.code, rule.name, severity or rule.severity, rule.category, start, end,
                    message, subject=subject, fix=rule.fix)

    def report(self, code: str, name: str, severity: str, category: str, start: int, end: int,
               message: str, subject: str, fix: str = "") -> None:
        """Record a finding at byte range [start, end) of the original file."""
        line, col = self.source.position(start)
        end_line, end_col = self.source.position(max(start, end))
        snippet = self.memo.get(("snippet", line))
        if snippet is None:   # once per line: a generated file may put thousands of findings on one
            snippet = self.memo[("snippet", line)] = line_snippet(self.source, line)
        self.findings.append(Finding(
            code=code, name=name, severity=severity, category=category, path=self.source.rel,
            line=line, column=col, end_line=end_line, end_column=end_col, message=message,
            snippet=snippet, fix=fix, subject=subject,
            fingerprint=fingerprint(code, self.source.rel, subject, snippet),
        ))


@lru_cache(maxsize=1)
def _handlers():
    # Imported here so that rewrite/* can import ScanContext from this module.
    from .rewrite import identifiers, includes, launches, macros
    return identifiers.handle, {
        "preproc_include": includes.handle,
        "kernel_call_syntax": launches.handle,
        "preproc_arg": macros.handle,
    }


def _builtins():
    from .rewrite import builtins
    return builtins


@lru_cache(maxsize=1)
def _rule_hooks():
    from . import rules
    return rules.tree_hooks()


def dispatch(ctx: ScanContext, view: View, root: Node) -> None:
    """Send every captured node under `root` to its rewriter, and in audit mode to the rules.

    Names are most of the captures and almost none of them are CUDA names, so the table
    lookups happen here, before any call. Order does not matter: edits and findings are
    sorted afterwards.
    """
    names_handler, handlers = _handlers()
    audit = ctx.options.audit
    rule_nodes, rule_names = _rule_hooks() if audit else ({}, {})
    caps = parse.captures(root, with_rules=tuple(sorted(rule_nodes)) if audit else ())
    if audit:  # rules that report once per function need the first use in source order
        for nodes in caps.values():
            nodes.sort(key=lambda n: n.start_byte)
    if caps.get("device"):
        ctx.metrics.has_device_code = True
        ctx.metrics.kernels += sum(1 for n in caps["device"]   # definitions, not prototypes
                                   if n.type == "__global__" and n.parent is not None
                                   and n.parent.type == "function_definition")
    table = ctx.db.names_by_bytes
    legacy = _builtins() if ctx.options.builtins == "hip" else None
    for node in caps.get("name", ()):
        text = node.text
        if text in table:
            names_handler(ctx, view, node)
        if legacy is not None and text in legacy.table():
            legacy.handle(ctx, view, node)
        if text in rule_names:
            for check in rule_names[text]:
                check(ctx, view, node)
    for node in caps.get("node", ()):
        handlers[node.type](ctx, view, node)
        for check in rule_nodes.get(node.type, ()):
            check(ctx, view, node)
    for node in caps.get("field", ()):   # member names (cluster.map_shared_rank), audit only
        for check in rule_names.get(node.text, ()):
            check(ctx, view, node)
    for node in caps.get("rule", ()):
        for check in rule_nodes[node.type]:
            check(ctx, view, node)


def scan_source(source: SourceFile, options: Options = Options(), db: MappingDB | None = None) -> FileScan:
    """Scan one file: the edits that convert it, the findings, and its metrics."""
    from .rewrite import codes, includes

    db = db or default_db()
    ctx = ScanContext(source=source, db=db, options=options, target=options.rocm or db.newest)
    ctx.metrics.lines = source.line_count
    data = source.parse_bytes
    tree = parse.parse(data)
    root = tree.root_node
    dispatch(ctx, View(data), root)
    if options.audit:
        from . import rules
        for start, end, name in source.masked():
            for check in rules.masked_hooks().get(name, ()):
                check(ctx, start, end, name)
    error = parse.first_error(root)
    if error is not None:
        ctx.metrics.partially_parsed = True
        ctx.flag(codes.PARTIALLY_PARSED, error.start_byte, error.end_byte,
                 "tree-sitter could not parse this region; names in it were converted, but "
                 "constructs spanning it (kernel launches, symbol arguments) may be missed",
                 subject="parse-error")
    includes.finish(ctx, root)
    edits = normalize(ctx.edits)
    return FileScan(source.rel, edits, finish_findings(ctx.findings), ctx.metrics)


def finish_findings(findings: list[Finding]) -> list[Finding]:
    """Sorted, with converter findings dropped inside the span of a rule's finding that says more
    about the same construct, and one finding per rule, subject and line.

    A rule module may list the codes it REFINES: `__syncwarp` is PK001 for the converter
    (no HIP name in ROCm 5.2) and PK206 for the audit, which explains the real hazard; the
    user sees the specific finding once, not both.
    """
    from . import rules

    spans: dict[str, list[tuple[tuple[int, int], tuple[int, int]]]] = {}
    for f in findings:
        for code in rules.refines().get(f.code, ()):
            spans.setdefault(code, []).append(((f.line, f.column), (f.end_line, max(f.end_column, f.column + 1))))

    def refined(f: Finding) -> bool:
        at = (f.line, f.column)
        return any(start <= at < end for start, end in spans.get(f.code, ()))

    kept, seen = [], set()
    for f in sorted(findings, key=Finding.sort_key):
        key = (f.line, f.code, f.subject)   # the same construct twice on a line is one finding
        if key in seen or refined(f):
            continue
        seen.add(key)
        kept.append(f)
    return kept
