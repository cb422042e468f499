"""One walk per file: parse, dispatch the captured nodes to the rewriters, collect edits and findings.

Data flows one way: SourceFile -> tree -> (edits, findings, metrics) = FileScan. Rewriters
return data through the ScanContext and never print or write.
"""

from __future__ import annotations

import re
from functools import lru_cache
from operator import attrgetter
from types import MappingProxyType

from tree_sitter import Node

from ..core import findingstore, parse
from ..core.needles import Needles
from ..rewrite import nvidia_thrust, nvidia_votes, polyfills, transitive
from ..platform import regions
from .. import rules
from ..engine.context import FileScan, Metrics, Options, ScanContext, View, line_snippet
from ..core.edits import normalize, resolve
from ..core.findings import Finding
from ..core.findingstore import FindingStore
from ..tables.mappings import MappingDB, target_release
from ..tables.project_tables import db_for
from ..engine.facts import ProjectFacts
from ..rewrite import (builtins, codes, guards, identifiers, includes, launches, lossy, macros, minmax, preproc_names,
    strictness, strings)
from ..engine import fix, syntax
from . import literals
from ..core.source import SourceFile, begins_line

# The per-file types live in context.py; they are re-exported here for the callers that take
# the scan's options and results from the scan.
__all__ = ["FileScan", "Metrics", "Options", "ScanContext", "View", "dispatch", "finish_findings",
           "line_snippet", "scan_source"]


HANDLERS = {
    "preproc_include": includes.handle,
    "kernel_call_syntax": launches.handle,
    "preproc_arg": macros.handle,
    "string_literal": strings.handle,
}


def dispatch(ctx: ScanContext, view: View, root: Node) -> None:
    """Send every captured node under `root` to its rewriter, and in audit mode to the rules.
    Order does not matter: edits and findings are sorted afterwards."""
    handlers = HANDLERS
    caps, rule_nodes, rule_names = _captures(ctx, view, root)
    if caps.get("device"):
        _device_code(ctx, view, caps["device"])
    # AMD-only code and NVIDIA code with an AMD branch are not rewritten (regions.py); the rules
    # still see them (their findings are dropped or become "already ported" in ScanContext.report)
    region_map = ctx.regions
    protected = region_map.protected if (region_map.ranges or region_map.shim) else None
    # --active-only: branches the user's -D/-U (or clang) leave out are not rewritten at all
    inactive = region_map.is_inactive if (ctx.options.active_only and region_map.inactive) else None
    _names(ctx, view, caps.get("name", ()), rule_names, protected, inactive)
    for node in caps.get("node", ()):
        if (protected is None or not protected(view.start(node))) and \
                (inactive is None or not inactive(view.start(node))):
            handlers[node.type](ctx, view, node)
        for check in rule_nodes.get(node.type, ()):
            check(ctx, view, node)
    for node in caps.get("strict", ()):   # register, brace initialisers (rewrite/strictness.py)
        if (protected is None or not protected(view.start(node))) and \
                (inactive is None or not inactive(view.start(node))):
            strictness.handle(ctx, view, node)
    for node in caps.get("field", ()):   # member names (cluster.map_shared_rank), audit only
        for check in rule_names.get(node.text, ()):
            check(ctx, view, node)
    by_value = rules.literal_hooks() if rule_nodes else None
    for node in caps.get("rule", ()):
        if by_value is not None and node.type == "number_literal":
            checks = by_value.get(syntax.int_value(node), ())
        else:
            checks = rule_nodes.get(node.type, ())
        for check in checks:
            check(ctx, view, node)


def _names(ctx: ScanContext, view: View, nodes: list[Node], rule_names: dict, protected, inactive) -> None:
    """Names are most of the captures and almost none of them are CUDA names, so the table
    lookups happen here, before any call."""
    table = ctx.db.names_by_bytes
    qualified = ctx.db.qualified   # thrust::cuda: its innermost name need not be a table name
    legacy = builtins if ctx.options.builtins == "hip" else None
    shimmed = ctx.facts.shim_names   # the project's own shim maps these: already ported
    interesting = _interesting(table, qualified, legacy.table() if legacy is not None else None, rule_names)
    names_handler = identifiers.handle
    read = [node for node in nodes if node.text in interesting]   # most names: a variable, a type of the project's own
    if ctx.options.audit:   # in source order (_captures): sorting the few read, not every name captured
        read.sort(key=_START)
    for node in read:
        text = node.text
        if inactive is not None and (text in table or legacy is not None) and inactive(view.start(node)):
            ctx.metrics.refs_inactive += text in table
        elif (text in shimmed or (protected is not None and (text in table or legacy is not None)
                                and protected(view.start(node)))):
            ctx.metrics.refs_already_ported += text in table
        else:
            if text in table or text in qualified:
                names_handler(ctx, view, node, text)
            if legacy is not None and text in legacy.table():
                legacy.handle(ctx, view, node)
            if text in minmax.NAMES:   # mixed-type min/max in device code (rewrite/minmax.py)
                minmax.check(ctx, view, node)
        if text in rule_names:
            for check in rule_names[text]:
                check(ctx, view, node)


_INTERESTING: dict[tuple[int, ...], tuple[tuple, frozenset[bytes]]] = {}


def _interesting(table: dict, qualified: dict, legacy: dict | None, rule_names: dict) -> frozenset[bytes]:
    """Every name dispatch does something with: a table's, a qualified namespace's innermost, a
    legacy built-in, min/max, a rule's. Built once per set of tables (kept with them, so that
    their ids name them while cached): a captured name outside it costs one set lookup."""
    key = (id(table), id(qualified), id(legacy), id(rule_names))
    hit = _INTERESTING.get(key)
    if hit is not None and hit[0][0] is table and hit[0][1] is qualified and hit[0][2] is legacy \
            and hit[0][3] is rule_names:
        return hit[1]
    names = frozenset(table).union(qualified, legacy or (), minmax.NAMES, rule_names)
    if len(_INTERESTING) >= 8:
        _INTERESTING.clear()
    _INTERESTING[key] = ((table, qualified, legacy, rule_names), names)
    return names


def _captures(ctx: ScanContext, view: View, root: Node) -> tuple[dict[str, list[Node]], dict, dict]:
    """The query's captures under `root`, with the audit's rule hooks. Under --fix FAMILY each node's
    fix in that family is recorded first (the rules' findings about it carry it); an audit finds the
    fix of a finding it keeps when it keeps it (engine/fix.attached)."""
    audit = ctx.options.audit
    families = _fixing(audit, ctx.options.fixes)
    rule_nodes, rule_names = rules.tree_hooks() if audit else _NO_HOOKS
    kinds = set(rule_nodes).union(*(entry.kinds for entry in families.values()))
    for kind, texts in _gates(audit, ctx.options.fixes).items():   # no text a check needs: no node captured
        if not texts.any_in(view.data):
            kinds.discard(kind)
    wanted = _literals(audit, ctx.options.fixes) if "number_literal" in kinds else None
    if wanted is not None:   # most literals are 0, 1, 2 ...: only the values read, by their spellings
        kinds.discard("number_literal")
    caps = parse.captures(root, with_rules=tuple(sorted(kinds)))
    if wanted is not None:
        found = literals.find(root, view.data, wanted)
        if found:
            caps.setdefault("rule", []).extend(found)
    if audit:  # rules that report once per function need the first use in source order
        for capture, nodes in caps.items():
            if capture != "name":   # names: only those a pass reads, sorted in _names
                nodes.sort(key=_START)
    for name in sorted(ctx.options.fixes & families.keys()):   # every fix, applied (and shown, if auditing too)
        fix.record(ctx, view, caps.get("rule", ()), families[name])
    if audit and not view.base and families.keys() - ctx.options.fixes:   # a fix only for a finding kept
        ctx.fix_of = fix.on_demand(view, families)
    return caps, rule_nodes, rule_names


_START = attrgetter("start_byte")
_NO_HOOKS = (MappingProxyType({}), MappingProxyType({}))   # convert: no rule; the same objects each file (_interesting)


@lru_cache(maxsize=8)
def _fixing(audit: bool, chosen: frozenset[str]) -> dict[str, fix.FamilyFixes]:
    """The fix families whose fixers read this walk's nodes: those --fix applies; in an audit, all
    (their fixes are shown on the findings). A family with no tree fixer reads none."""
    return {name: entry for name, entry in rules.fix_families().items()
            if entry.consumers and (audit or name in chosen)}


@lru_cache(maxsize=8)
def _gates(audit: bool, chosen: frozenset[str]) -> dict[str, Needles]:
    """The node kinds every consumer of which declares GATES: the texts one of which a file must
    hold for its check or fix to find anything in such a node. A kind that a consumer reads
    without a gate is never left out."""
    consumers = [(m.NODES, getattr(m, "GATES", {})) for m in rules.modules() if getattr(m, "NODES", ())] \
        if audit else []
    for entry in _fixing(audit, chosen).values():
        consumers += entry.consumers
    gates: dict[str, tuple[bytes, ...]] = {}
    ungated: set[str] = set()
    for nodes, own in consumers:
        for kind in nodes:
            if kind in own:
                gates[kind] = gates.get(kind, ()) + tuple(own[kind])
            else:
                ungated.add(kind)
    return {kind: Needles(texts) for kind, texts in gates.items() if kind not in ungated}


@lru_cache(maxsize=8)
def _literals(audit: bool, chosen: frozenset[str]) -> frozenset[int | None] | None:
    """The number_literal values the run's rules and fixes read (scan/literals.py finds them);
    None: a rule reads every literal, and the query captures them all."""
    by_value = rules.literal_hooks() if audit else {}
    if by_value is None:
        return None
    return frozenset(by_value).union(*(entry.by_value for entry in _fixing(audit, chosen).values()))


def _device_code(ctx: ScanContext, view: View, nodes: list[Node]) -> None:
    """__global__ and __device__ specifiers: the kernels counted, and device functions that redefine
    one HIP's headers define (rewrite/strictness.py). A macro body's markers (`#define HD __host__
    __device__`, re-parsed at view.base) are not device code of the file: a shared header defining
    such a macro is compiled by host compilers too, and gets no HIP runtime header for it."""
    if view.base and all(n.type == "__device__" for n in nodes):
        return
    ctx.metrics.has_device_code = True
    ctx.metrics.kernels += sum(1 for n in nodes   # definitions, not prototypes
                               if n.type == "__global__" and n.parent is not None
                               and n.parent.type == "function_definition")
    provided = strictness.signatures.names()   # __device__ functions HIP's headers define
    for node in nodes:
        if node.type == "__device__" and node.parent is not None and node.parent.type != "ERROR" and \
                _declared_name(node.parent) in provided and not _not_amd(ctx, view, node):
            strictness.device_function(ctx, view, node)


def _declared_name(function: Node) -> bytes | None:
    """The name a function definition or declaration declares, cheaply (no pointer return types)."""
    declarator = function.child_by_field_name("declarator")
    if declarator is None or declarator.type != "function_declarator":
        return None
    name = declarator.child_by_field_name("declarator")
    return name.text if name is not None else None


def _not_amd(ctx: ScanContext, view: View, node: Node) -> bool:
    """Code an AMD build does not compile as CUDA (AMD-only, NVIDIA-only, ported): a definition
    there cannot clash with HIP's, and one guarded by the converter stays guarded once."""
    regions_ = ctx.regions
    return bool(regions_.ranges or regions_.shim) and regions_.kind_at(view.start(node)) is not None


def scan_source(source: SourceFile, options: Options = Options(), db: MappingDB | None = None,
                facts: ProjectFacts = ProjectFacts()) -> FileScan:
    """Scan one file, with what the project pipeline learned of its tree: the edits that convert
    it, the findings, and its metrics."""
    db = db or db_for(options)
    ctx = ScanContext(source=source, db=db, options=options, target=options.target, facts=facts,
                      dispatch=dispatch, regions=platform_map(source, options, facts),
                      store=FindingStore(options.finding_cap, rules.refines()), rules=rules.by_code())
    ctx.metrics.lines = source.line_count
    ctx.metrics.shim = ctx.regions.shim
    ctx.metrics.region_bytes = ctx.regions.totals(len(source.data))
    ctx.metrics.nvidia_lines = tuple((source.position(start)[0], source.position(max(start, end - 1))[0])
                                     for start, end, kind in ctx.regions.ranges if kind == regions.NVIDIA)
    if options.active_only:
        ctx.metrics.branches_inactive = len(ctx.regions.inactive)
        ctx.metrics.branches_undecided = ctx.regions.undecided
    data = source.parse_bytes
    tree = parse.parse(data)
    root = tree.root_node
    ctx.root = root
    dispatch(ctx, View(data), root)   # the one walk: edits, findings, and the rules' fixes (ctx.fixes)
    fixes, finished = fix.finish(ctx, data, rules.fix_families())
    for name in sorted(options.fixes & fixes.keys()):   # --fix: the selected families' fixes
        fix.apply(ctx, fixes[name], rules.fix_families()[name].family)
    preproc_names.check_splices(ctx, root)
    preproc_names.check_pasted_arguments(ctx, root)   # CAT(cuda, Malloc)
    lossy.check(ctx)   # two CUDA names written as one HIP name on a line
    if options.audit:
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
    if options.rewrite_guards:   # after the names: it leaves a guard whose branch keeps a CUDA name
        guards.rewrite(ctx)
    # a file with an AMD path chose its own headers there: no runtime header is added
    includes.finish(ctx, root, add_runtime=not ctx.regions.shim and
                    not any(kind == regions.AMD for _, _, kind in ctx.regions.ranges))
    if options.polyfills and (ctx.metrics.polyfills or polyfills.HEADER.encode() in data):
        polyfills.include(ctx, includes.insertion_point(ctx, root)[0])
    transitive.add(ctx)             # what CUDA's headers included and HIP's do not
    nvidia_votes.keep(ctx)          # a re-run leaves the helper an earlier run wrote
    votes = nvidia_votes.written(ctx)
    if votes:   # mask-less votes build through HIP's NVIDIA backend too
        nvidia_votes.add(ctx, votes, includes.insertion_point(ctx, root)[0])
    if not options.audit and b"thrust" in data:   # rocThrust's names build with CUDA's Thrust there too
        nvidia_thrust.keep(ctx)
        nvidia_thrust.add(ctx, lambda: includes.insertion_point(ctx, root)[0])
    # audit and check read findings and metrics, never the edits (the result cache keeps none
    # either): sorting a generated file's 300,000 of them took a second of its audit
    edits = [] if options.audit else normalize(resolve(data, ctx.edits))   # moved arguments take their converted text first
    findings = ctx.finished_findings()
    if options.audit and finished:
        findings = fix.suggest(findings, finished, source)
    return FileScan(source.rel, edits, findings, ctx.metrics)


_WARM_UP = (b"#include <cuda_runtime.h>\n__global__ void k(int *o) { o[threadIdx.x % 32] = __shfl_sync(~0u, 1, 0); }\n"
            b"void h(int *d) { cudaMalloc(&d, 4); k<<<1, 32>>>(d); cudaDeviceSynchronize(); }\n")


def warm_up(options: Options = Options()) -> None:
    """Scan a small kernel once, so that what every process loads on its first scan (the mapping
    tables, the grammar, the compiled queries, the rules' tables: about 0.1 s) is loaded before a
    per-file time limit starts counting: --file-timeout times one file, never the process's start."""
    scan_source(SourceFile.from_bytes("warm-up.cu", _WARM_UP), options)


def platform_map(source: SourceFile, options: Options, facts: ProjectFacts) -> regions.RegionMap:
    """The file's platform model under the built-in selectors and the project's AMD macros."""
    if options.platform_model and source.rel in facts.amd_files:   # only AMD branches include it
        return regions.RegionMap(ranges=[(0, len(source.data), regions.AMD)])
    if options.active_only:
        return configured_map(source, options, facts)
    if not options.platform_model:
        return regions.RegionMap()
    data = source.data
    if not (options.defines or options.undefines) and not regions.is_shim(data) and \
            not _names_a_selector(data, facts.amd_macros, facts.one_world):
        return regions.RegionMap()   # no selector named: every #if reads the same in both builds
    return regions.classify(data, regions.selectors(facts.amd_macros, options.defines, options.undefines,
                                                    facts.one_world))


def _names_a_selector(data: bytes, amd_macros: tuple[str, ...], one_world: tuple[tuple[str, str], ...]) -> bool:
    """Whether a directive of `data` names a selector macro (only directives make the two builds
    read a file differently): searching them, not the whole file, took 0.26 s, not 1.1 s, over
    ggml's 810 sources, whose tree teaches ~100 selector macros."""
    if b"#" not in data:
        return False
    text = b"\n".join(_selecting(data))
    return any(name in text for name in regions.selector_names(amd_macros, one_world))


def _selecting(data: bytes):
    """The directives _SELECTING matches that begin their line, as the same pattern anchored at
    `^[ \t]*` found them (a '#' inside a line is passed over, not the lines it continues into)."""
    pos = 0
    while True:
        m = _SELECTING.search(data, pos)
        if m is None:
            return
        if begins_line(data, m.start()):
            yield m.group()
            pos = m.end()
        else:
            pos = m.start() + 1


# from the '#' (a pattern that starts with `^[ \t]*` is tried at every byte; one that starts
# with a character lets re skip to the next '#'), the line's start checked apart
_SELECTING = re.compile(rb"#[ \t]*(?:if|elif|ifdef|ifndef|elifdef|elifndef|define|undef)\b"
                        rb"(?:[^\n]*\\\r?\n)*[^\n]*")   # with continuation lines


def configured_map(source: SourceFile, options: Options, facts: ProjectFacts) -> regions.RegionMap:
    """--active-only: the platform model (unless --no-platform-model) and the branches the
    configuration leaves out: clang's skipped lines for a file it preprocessed, otherwise
    ppexpr's reading of the directives under -D/-U (a condition it cannot evaluate is compiled)."""
    worlds = regions.selectors(facts.amd_macros, options.defines, options.undefines, facts.one_world)
    found = regions.classify(source.data, worlds)
    if not options.platform_model:
        found = regions.RegionMap(inactive=found.inactive, undecided=found.undecided)
    clang = dict(facts.clang_inactive).get(source.rel)
    if clang is not None:   # the preprocessor decided: nothing is undecided
        starts = source.line_starts()
        found.inactive = [(starts[a - 1], starts[b] if b < len(starts) else len(source.data))
                          for a, b in clang if 0 < a <= len(starts)]
        found.undecided = 0
    return found


def finish_findings(findings: list[Finding]) -> list[Finding]:
    """Sorted, with converter findings dropped inside the span of a rule's finding that says more
    about the same construct, and one finding per rule, subject and line (findingstore.py).

    A rule module may list the codes it REFINES: `__syncwarp` is PK001 for the converter
    (no HIP name in ROCm 5.2) and PK206 for the audit, which explains the real hazard; the
    user sees the specific finding once, not both.
    """
    return findingstore.finish_findings(findings, rules.refines())
