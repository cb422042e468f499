"""Never parse what cannot matter: a source none of the run's passes and rules has a keyword in.

Most of a real tree's C and C++ files hold no CUDA, and the parse is most of what scanning them
costs. Each consumer of the walk declares what a file must hold for it to find anything
(engine/keywords.py: a pass's `keywords`, a rule's KEYWORDS); here those declarations are gathered
once per run (per chunk of files, in a worker), and a file holding none of them gets the scan an
empty walk would give it, without a parse. What this drops is PK005, the note that tree-sitter
could not read part of a file: in a file with nothing to convert or report it has nothing to warn
about (ggml and faiss had 198 of them).

In a file no GPU compiler reads (project/gpu_reach.py) the gpu_only rules and passes find nothing,
so their keywords do not keep it: a CPU backend's `register`, x86 asm, `0xffffffff` and brace
initialisers are no reason to parse it.

A .cu is filtered like any other source: one with no marker, launch or CUDA name needs no runtime
header either (ggml's 160 template instances, each a macro call). Left to the full scan, whatever
their bytes: a PyTorch extension's sources (torch_gaps.settle decides their lines), a file the
platform model finds AMD, ported or inactive branches in (its every table name is counted there,
even one HIP spells the same), a file with an attribute the parser is not shown (core/source.py's
masked(): the keywords read the bytes the parser reads, where it is blanked), and every file of a
run where some consumer declares no keywords.
"""

from __future__ import annotations

from ...engine.context import ScanContext
from ...engine.keywords import Keywords, gather
from ... import rewrite, rules
from ...core.parse import DEVICE_MARKERS

# the walk's own captures, outside any pass: device markers set has_device_code and count kernels
_WALK = tuple(marker.encode() for marker in DEVICE_MARKERS)

_CACHE: dict[tuple[int, ...], tuple[tuple, Keywords | None]] = {}


def skips(ctx: ScanContext) -> bool:
    """Whether the file of `ctx` holds none of its run's keywords, so that nothing in it can be found."""
    source = ctx.source
    if not ctx.options.prefilter or source.rel in ctx.facts.torch_sources:
        return False
    regions = ctx.regions   # in AMD, ported or inactive branches every table name counts (refs_already_ported)
    if regions.ranges or regions.inactive or regions.shim or source.masked():
        return False   # masked: an attribute the parser is not shown (__cluster_dims__), read by a rule's hook
    keywords = run_keywords(ctx)
    return keywords is not None and not keywords.found_in(source.parse_bytes)


def run_keywords(ctx: ScanContext) -> Keywords | None:
    """The union of the keywords of every pass and rule this run uses (None: one declares none).
    Built once per run: the key is the identity of what the declarations read (options, facts,
    tables), held with the result so that ids stay theirs while cached."""
    held = (ctx.options, ctx.facts, ctx.db)
    gpu = ctx.gpu   # a file no GPU compiler reads: the keywords of what is not gpu_only
    key = (*map(id, held), gpu)
    hit = _CACHE.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], held)):
        return hit[1]
    keywords = _gather(ctx, gpu)
    if len(_CACHE) >= 4:
        _CACHE.clear()
    _CACHE[key] = (held, keywords)
    return keywords


def _gather(ctx: ScanContext, gpu: bool) -> Keywords | None:
    # the walk's own: device markers, and the names the project's shim maps (counted as already
    # ported wherever they are, even one HIP spells the same, which acting_names leaves out)
    declared: list[tuple] = [_WALK, (frozenset(ctx.facts.shim_names),)]
    for p in rewrite.registry().passes:
        if p.gpu_only and not gpu:
            continue
        found = p.keywords_in(ctx)
        if found is None:
            return None
        declared.append(found)
    if ctx.options.audit or ctx.options.fixes:   # the rules' checks run in an audit, their fixes under --fix
        by_rules = rules.keyword_declarations(gpu)
        if by_rules is None:
            return None
        declared.extend(by_rules)
        declared.append(rules.fact_keywords(ctx.facts, gpu))
    return gather(declared)
