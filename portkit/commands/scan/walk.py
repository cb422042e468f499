"""One walk per file: parse, dispatch the captured nodes to the rewriters, collect edits and findings.

Data flows one way: SourceFile -> tree -> (edits, findings, metrics) = FileScan. Rewriters
return data through the ScanContext and never print or write. Which rewriter handles what, and
in which order the passes after the walk run, is the registry's (rewrite.registry(), built from
the passes the rewrite modules declare: engine/passes.py): the walk names no rewriter.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from operator import attrgetter
from types import MappingProxyType

from tree_sitter import Node

from ...core import findingstore, parse
from ...core.needles import Needles
from ...engine.platform import regions
from ... import rewrite
from ... import rules
from ...engine.context import FileScan, Metrics, Options, ScanContext, View, line_snippet
from ...core.edits import normalize, resolve
from ...core.findings import Finding
from ...core.findingstore import FindingStore
from ...core.tables.mappings import MappingDB
from ...core.tables.project_tables import db_for
from ...engine.facts import ProjectFacts
from ...engine import fix, syntax
from ...engine.codes import Code
from ...engine.passes import Registry
from . import literals, prefilter, torch_gaps
from ...core.source import SourceFile, begins_line

# The per-file types live in context.py; they are re-exported here for the callers that take
# the scan's options and results from the scan.
__all__ = ["FileScan", "Metrics", "Options", "ScanContext", "View", "dispatch", "finish_findings",
           "line_snippet", "scan_source"]


def dispatch(ctx: ScanContext, view: View, root: Node) -> None:
    """Send every captured node under `root` to its rewriter, and in audit mode to the rules.
    Order does not matter: edits and findings are sorted afterwards."""
    registry = rewrite.registry()
    handlers = registry.by_kind
    caps, rule_nodes, rule_names = _captures(ctx, view, root)
    if caps.get("device"):
        _device_code(ctx, view, caps["device"], registry)
    # AMD-only code and NVIDIA code with an AMD branch are not rewritten (regions.py); the rules
    # still see them (their findings are dropped or become "already ported" in ScanContext.report)
    region_map = ctx.regions
    protected = region_map.protected if (region_map.ranges or region_map.shim) else None
    # --active-only: branches the user's -D/-U (or clang) leave out are not rewritten at all
    inactive = region_map.is_inactive if (ctx.options.active_only and region_map.inactive) else None
    _names(ctx, view, caps.get("name", ()), rule_names, protected, inactive, registry)
    for node in caps.get("node", ()):
        if (protected is None or not protected(view.start(node))) and \
                (inactive is None or not inactive(view.start(node))):
            handlers[node.type](ctx, view, node)
        for check in rule_nodes.get(node.type, ()):
            check(ctx, view, node)
    strict = registry.runs("strict")
    for node in caps.get("strict", ()):   # register, brace initialisers (rewrite/strictness.py)
        if (protected is None or not protected(view.start(node))) and \
                (inactive is None or not inactive(view.start(node))):
            for run in strict:
                run(ctx, view, node)
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


def _names(ctx: ScanContext, view: View, nodes: list[Node], rule_names: dict, protected, inactive,
           registry: Registry) -> None:
    """Names are most of the captures and almost none of them are CUDA names, so the lookups in
    the name passes' sets happen here, before any call. A name the tables know (or, while a pass
    guards every name, any name read) is left alone in protected and inactive code, and counted."""
    table = ctx.db.names_by_bytes
    shimmed = ctx.facts.shim_names   # the project's own shim maps these: already ported
    active, wide = _name_passes(ctx, registry)
    interesting = _interesting(tuple(s for sets, _ in active for s in sets) + (rule_names,))
    read = [node for node in nodes if node.text in interesting]   # most names: a variable, a type of the project's own
    if ctx.options.audit:   # in source order (_captures): sorting the few read, not every name captured
        read.sort(key=_START)
    for node in read:
        text = node.text
        if inactive is not None and (text in table or wide) and inactive(view.start(node)):
            ctx.metrics.refs_inactive += text in table
        elif (text in shimmed or (protected is not None and (text in table or wide)
                                and protected(view.start(node)))):
            ctx.metrics.refs_already_ported += text in table
        else:
            for sets, run in active:
                for names in sets:
                    if text in names:
                        run(ctx, view, node)
                        break
        if text in rule_names:
            for check in rule_names[text]:
                check(ctx, view, node)


def _name_passes(ctx: ScanContext, registry: Registry) -> tuple[list[tuple[tuple, object]], bool]:
    """The name passes on in this run, each with the name sets it reads, and whether one of them
    guards every name (engine/passes.Pass.guards_every_name)."""
    active, wide = [], False
    for p in registry.walk("name"):
        sets = p.names(ctx)
        if sets is not None:
            active.append((sets, p.scoped_run))
            wide = wide or p.guards_every_name
    return active, wide


_INTERESTING: dict[tuple[int, ...], tuple[tuple, frozenset[bytes]]] = {}


def _interesting(sets: tuple) -> frozenset[bytes]:
    """Every name dispatch does something with: a name pass's (a table's, a qualified namespace's
    innermost, a legacy built-in, min/max), a rule's. Built once per tuple of sets (kept with
    them, so that their ids name them while cached): a captured name outside it costs one lookup."""
    key = tuple(map(id, sets))
    hit = _INTERESTING.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], sets)):
        return hit[1]
    names = frozenset().union(*sets)
    if len(_INTERESTING) >= 8:
        _INTERESTING.clear()
    _INTERESTING[key] = (sets, names)
    return names


def _captures(ctx: ScanContext, view: View, root: Node) -> tuple[dict[str, list[Node]], dict, dict]:
    """The query's captures under `root`, with the audit's rule hooks. Under --fix FAMILY each node's
    fix in that family is recorded first (the rules' findings about it carry it); an audit finds the
    fix of a finding it keeps when it keeps it (engine/fix.attached)."""
    audit = ctx.options.audit
    families = _fixing(audit, ctx.options.fixes)
    rule_nodes, rule_names = rules.tree_hooks() if audit else _NO_HOOKS
    if audit:
        rule_names = _with_fact_names(rule_names, ctx.facts)
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
    for name in sorted(ctx.options.fixes & families.keys() - rules.gpu_families(ctx.gpu)):   # applied (and shown)
        fix.record(ctx, view, caps.get("rule", ()), families[name])
    if audit and not view.base and families.keys() - ctx.options.fixes:   # a fix only for a finding kept
        ctx.fix_of = fix.on_demand(view, families)
    return caps, rule_nodes, rule_names


def _with_fact_names(static: dict, facts: ProjectFacts) -> dict:
    """The identifier hooks plus the names this tree defines that a rule reads (FACT_NAMES)."""
    extra = tuple((names, check) for attr, check in rules.fact_name_hooks() if (names := getattr(facts, attr)))
    return _merged_names(extra) if extra else static


@lru_cache(maxsize=4)
def _merged_names(extra: tuple[tuple[frozenset[bytes], object], ...]) -> MappingProxyType:
    """One object per tree's names (the walk's name filter is cached by the hooks' identity)."""
    merged = {name: list(checks) for name, checks in rules.tree_hooks()[1].items()}
    for names, check in extra:
        for name in names:
            merged.setdefault(name, []).append(check)
    return MappingProxyType({name: tuple(checks) for name, checks in merged.items()})


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
    """The number_literal values the run's rules and fixes read (commands/scan/literals.py finds them);
    None: a rule reads every literal, and the query captures them all."""
    by_value = rules.literal_hooks() if audit else {}
    if by_value is None:
        return None
    return frozenset(by_value).union(*(entry.by_value for entry in _fixing(audit, chosen).values()))


def _device_code(ctx: ScanContext, view: View, nodes: list[Node], registry: Registry) -> None:
    """__global__ and __device__ specifiers: the kernels counted, and the device passes run (device
    functions that redefine one HIP's headers define: rewrite/strictness.py). A macro body's
    markers (`#define HD __host__ __device__`, re-parsed at view.base) are not device code of the
    file: a shared header defining such a macro is compiled by host compilers too, and gets no HIP
    runtime header for it."""
    if view.base and all(n.type == "__device__" for n in nodes):
        return
    ctx.metrics.has_device_code = True
    ctx.metrics.kernels += sum(1 for n in nodes   # definitions, not prototypes
                               if n.type == "__global__" and n.parent is not None
                               and n.parent.type == "function_definition")
    for run in registry.runs("device"):
        run(ctx, view, nodes)


def scan_source(source: SourceFile, options: Options = Options(), db: MappingDB | None = None,
                facts: ProjectFacts = ProjectFacts()) -> FileScan:
    """Scan one file, with what the project pipeline learned of its tree: the edits that convert
    it, the findings, and its metrics."""
    db = db or db_for(options)
    found = platform_map(source, options, facts)   # a build-time hipify's stand-in converts AMD branches too
    ctx = ScanContext(source=source, db=db, options=options, target=options.target, facts=facts,
                      dispatch=dispatch, regions=found.amd_converted() if options.hipify_amd_branches else found,
                      store=FindingStore(options.finding_cap, rules.refines()), rules=rules.by_code())
    ctx.metrics.lines = source.line_count
    ctx.metrics.shim = ctx.regions.shim
    ctx.metrics.region_bytes = ctx.regions.totals(len(source.data))
    ctx.metrics.nvidia_lines = tuple((source.position(start)[0], source.position(max(start, end - 1))[0])
                                     for start, end, kind in ctx.regions.ranges if kind == regions.NVIDIA)
    if options.active_only:
        ctx.metrics.branches_inactive = len(ctx.regions.inactive)
        ctx.metrics.branches_undecided = ctx.regions.undecided
    if prefilter.skips(ctx):   # none of the run's keywords: what an empty walk gives, without the parse
        return FileScan(source.rel, [], [], ctx.metrics)
    data = source.parse_bytes
    tree = parse.kept(data) or parse.keep(data, parse.parse(data))   # the audit's scan after convert's: one parse
    root = tree.root_node
    ctx.root = root
    view = View(data, rel=source.rel, facts=ctx.facts)
    registry = rewrite.registry()
    dispatch(ctx, view, root)   # the one walk: edits, findings, and the rules' fixes (ctx.fixes)
    fixes, finished = fix.finish(ctx, data, rules.fix_families())
    for name in sorted(options.fixes & fixes.keys()):   # --fix: the selected families' fixes
        fix.apply(ctx, fixes[name], rules.fix_families()[name].family)
    _run(registry.phase("post-walk"), ctx, view, root)   # checks over what the walk wrote
    if options.audit:
        for start, end, name in source.masked():
            for check in rules.masked_hooks().get(name, ()):
                check(ctx, start, end, name)
    _partially_parsed(ctx, root)
    _run(registry.phase("finish"), ctx, view, root)   # guards, then what the file needs added
    # audit and check read findings and metrics, never the edits (the result cache keeps none
    # either): sorting a generated file's 300,000 of them took a second of its audit; a PyTorch
    # extension's source needs them in every command, to decide which lines are left for a person
    torch = source.rel in facts.torch_sources
    edits = [] if options.audit and not torch else normalize(resolve(data, ctx.edits))   # moved arguments first
    findings = ctx.finished_findings()
    if options.audit and finished:
        findings = fix.suggest(findings, finished, source)
    scan = FileScan(source.rel, edits, findings, ctx.metrics)
    if torch:   # convert's and the audit's alike: only torch's gaps written, the rest a person's (PK506)
        scan = torch_gaps.settle(source, scan)
    return replace(scan, edits=[]) if options.audit else scan


def _run(passes, ctx: ScanContext, view: View, root: Node) -> None:
    """A phase's passes, in the registry's order, each where it says it is wanted."""
    for p in passes:
        if p.when is None or p.when(ctx, view):
            p.scoped_run(ctx, view, root)


def _partially_parsed(ctx: ScanContext, root: Node) -> None:
    """PK005 at the first region tree-sitter could not parse."""
    error = parse.first_error(root)
    if error is not None:
        ctx.metrics.partially_parsed = True
        ctx.flag(Code.PARTIALLY_PARSED, error.start_byte, error.end_byte,
                 "tree-sitter could not parse this region; names in it were converted, but "
                 "constructs spanning it (kernel launches, symbol arguments) may be missed",
                 subject="parse-error")


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
