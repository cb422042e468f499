"""One construct, one item; blockers as decisions (issue 30, causes 1 and 6).

Pattern and dependency items can describe one piece of work from two sides: "adopt rocWMMA" (a
dependency) and "these WMMA fragments move to rocWMMA" (a pattern) are the same work; "rewrite
135 kernels on composable_kernel" (PK402) includes "adopt the ROCm counterpart of CUTLASS" and
"of CuTe". merge() folds the items of one *family* into one item listing every site. A family is
a rewrite decision of mappings/rewrites.toml (its `decision`, else its id), or a library that is
not drop-in on ROCm (cuDNN, WMMA, libcu++ ...): a drop-in library's missing names
(cudaLaunchAttribute) are work of their own beside a three-hour "adopt hipBLAS".

- The family costs the larger of the adoption (dependency items) and the per-site work (pattern
  items): the same work measured twice counts once, by the larger measure. For a rewrite family
  the per-site work is the rewrite (per kernel, rewrites.toml), and the adoption of the library
  it replaces is part of it; where the code uses the library only from host code (tiny-cuda-nn's
  CUTLASS GEMMs) the adoption is the larger.

The names the target ROCm release lacks and a newer one has (PK002) are one family too,
NEWER_ROCM: the release the port targets is one decision, priced as the work-arounds of its sites.

decisions() then lists every item holding a blocker finding as one decision (the JSON's
`estimate.decisions`): what is decided, the alternative and the first ROCm release with it, the
kernels, files and sites, and the hours if the rewrite is chosen. "844 blockers" becomes "the
CUTLASS/CuTe kernels are rewritten on composable_kernel: N kernels, M files".
"""

from __future__ import annotations

import re

from .. import rules
from . import build_decisions
from ..core.findings import Finding, pattern
from ..core.tables import blockers as rewrites
from ..core.tables.ecosystem import Ecosystem
from ..core.tables.mappings import default_db
from ..engine.codes import Code
from .effort import PROJECT, CostModel, Item, Range, triangular_percentile

# The family of every name the target release lacks and a newer one has (PK002, from convert's tables,
# the cooperative-groups members, or verify's reading of an error): one decision, the ROCm release the
# port targets. Raising it makes each such site compile as written; keeping it is the sites' work.
NEWER_ROCM = "newer_rocm"
# the release a PK002 message names as the one that has the name: "needs ROCm 6.3" (the tables, the
# cooperative-groups members), verify's "declared by default from ROCm 7.0" (opt_in.py) and "build
# with ROCm 7.0 or newer" (a newer signature, hipBLAS 3.0's hipblasGemmEx). A PK002 that names
# none is no release decision: the project's own shim's name, which has a fix at the target
# (project_shim.py).
_RELEASE = re.compile(r"(?:needs|declared by default from|build with) ROCm (\d+\.\d+(?:\.\d+)?)")


def family_of(f: Finding, eco: Ecosystem) -> str:
    """The family a finding's work belongs to, or "" (see the module docstring)."""
    cat = rewrites.default()
    head = f.subject.split("/")[0]
    if rules.of(f.code).rewrite:
        entry = cat.by_id(head)
        return entry.decides if entry is not None else head
    library = eco.by_id.get(head)
    if library is None:
        mapping = default_db().names.get(f.subject)
        if mapping is not None:   # a namespace record is its owner's (`cuda`: libcu++, table family "libcu")
            library = eco.by_id.get(mapping.family) or (eco.namespace(mapping.cuda) if mapping.kind == "namespace"
                                                          else None)
    family = library_family(library.id, eco) if library is not None else ""
    return family or (NEWER_ROCM if release_needed(f) else "")


def release_needed(f: Finding) -> str:
    """The ROCm release a PK002 finding names ("" for another finding, or for a name no release has
    yet: a cooperative-groups member PK002 says is in none, a plain missing name)."""
    return release_named(f.message) if f.code == Code.NEEDS_NEWER_ROCM else ""


def release_named(message: str) -> str:
    """The release a PK002 message names as the one with the name ("" for none): _RELEASE."""
    found = _RELEASE.search(message)
    return found.group(1) if found else ""


def decision_of(f: Finding, eco: Ecosystem, model: CostModel) -> str:
    """The decision the estimate makes `f` a site of, or "" when it prices `f` as a site of its own:
    the build decision that takes it (build_decisions.takes: library internals, a CUDA-only
    subdirectory), the family merge() folds it into (a rewrite decision, a library not drop-in on
    ROCm: libcu++, CUTLASS, NVBench), or for a blocker its own item, which decisions() lists. The
    same order as workitems.items(), so that verify's "failed on a decision" (issue 48) and the
    estimate's decisions are one list: a plain missing name (PK001 __double2half) is none, a name a
    newer ROCm has (PK002) is the release's (NEWER_ROCM)."""
    family = family_of(f, eco)
    taken = build_decisions.takes(f, model, family)
    if taken or family:
        return taken or family
    return f"{f.code}:{pattern(f.subject)}" if f.severity == "blocker" else ""


def library_family(library_id: str, eco: Ecosystem) -> str:
    """A library's family: its rewrite decision, itself when it is not drop-in, else ""."""
    entry = rewrites.default().by_library(library_id)
    if entry is not None:
        return entry.decides
    library = eco.by_id.get(library_id)
    return library_id if library is not None and library.cost_status != "drop-in" else ""


def merge(work: list[Item], findings: list[Finding], eco: Ecosystem) -> list[Item]:
    """The items with each family's pattern and dependency items folded into one."""
    groups: dict[tuple[str, str], list[Item]] = {}
    out: list[Item] = []
    for item in work:
        family = _item_family(item, eco)
        if family and item.kind in ("pattern", "dependency"):
            groups.setdefault((family, item.optional), []).append(item)
        else:
            out.append(item)
    for (family, optional), group in sorted(groups.items()):
        rewrite = [i for i in group if i.kind == "pattern" and rules.of(i.key.split(":")[0]).rewrite]
        if len(group) == 1 and not rewrite and family != NEWER_ROCM:
            out.append(group[0])
            continue
        out.append(_merged(family, optional, group, rewrite, findings))
    return out


def _item_family(item: Item, eco: Ecosystem) -> str:
    if item.kind == "dependency":
        return library_family(item.key, eco)
    return item.family


def _sum(items: list[Item]) -> Range:
    return tuple(round(sum(i.hours[k] for i in items), 3) for k in range(3))


def _merged(family: str, optional: str, group: list[Item], rewrite: list[Item], findings: list[Finding]) -> Item:
    patterns = [i for i in group if i.kind == "pattern"]
    deps = [i for i in group if i.kind == "dependency"]
    sites = tuple(sorted({s for i in group for s in i.findings}))
    files = len({s.split(":")[0] for s in sites})
    kernels = _kernels(sites, findings)
    adopt, per_site = _sum(deps), _sum(patterns)
    hours = adopt if adopt[1] >= per_site[1] else per_site
    if rewrite:
        names = [e.name for e in rewrites.default().entries if e.decides == family] or [family]
        label = f"rewrite the code built on {' and '.join(names)}"
        why = (f"One decision: the rewrite ({kernels} kernels, {files} files, {len(sites)} sites) includes adopting "
               f"the library it replaces ({', '.join(i.key for i in deps) or 'none priced apart'}): the rewrite "
               f"({per_site[1]:g} h likely) and the adoption ({adopt[1]:g} h likely) are counted once, by the larger.")
        kind = "decision"
    elif family == NEWER_ROCM:
        label, why = _release_label(patterns, findings, len(sites), files)
        kind = "pattern"
    else:
        label = deps[0].label if deps else patterns[0].label
        why = (f"One library: adopting it ({adopt[1]:g} h likely) and changing its {len(sites)} sites in "
               f"{files} files ({per_site[1]:g} h likely) are the same work, counted once by the larger.")
        kind = "dependency" if deps else "pattern"
    category = (deps or patterns)[0].category
    facts = (("sites", len(sites)), ("files", files)) + ((("kernels", kernels),) if kernels else ())
    return Item(kind, family, label, category, _directory(sites), len(sites), hours, why, sites, facts, optional,
                family=family)


def _release_label(patterns: list[Item], findings: list[Finding], sites: int, files: int) -> tuple[str, str]:
    """The label and reason of the one item holding every name the target release lacks."""
    names = sorted({i.key.partition(":")[2] or i.key for i in patterns})
    where = {s for i in patterns for s in i.findings}
    release = newest_release([f for f in findings if f"{f.path}:{f.line}" in where])
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    label = f"names the target ROCm lacks ({shown}): work around them, or require ROCm {release}"
    why = (f"One decision, the ROCm release the port targets: ROCm {release} has all {len(names)} names, and their "
           f"{sites} sites in {files} files compile as written there; at the target each is worked around "
           f"(priced here, {sum(i.hours[1] for i in patterns):g} h likely).")
    return label, why


def newest_release(findings: list[Finding]) -> str:
    """The newest release the PK002 findings name ("" for none)."""
    releases = {release_needed(f) for f in findings} - {""}
    return max(releases, key=lambda r: tuple(int(x) for x in r.split("."))) if releases else ""


def _directory(sites: tuple[str, ...]) -> str:
    dirs = {s.split(":")[0].rsplit("/", 1)[0] if "/" in s.split(":")[0] else "." for s in sites}
    return dirs.pop() if len(dirs) == 1 else PROJECT


def _kernels(sites: tuple[str, ...], findings: list[Finding]) -> int:
    """Functions built on a rewritten library (PK402's per-kernel findings) among the sites."""
    wanted = set(sites)
    return sum(1 for f in findings if f"{f.path}:{f.line}" in wanted and rules.of(f.code).rewrite
               and "/kernel" in f.subject)


def decisions(work: list[Item], findings: list[Finding], eco: Ecosystem) -> list[dict]:
    """One entry per item that holds a blocker finding of its own: the decisions a manager reads
    first. A blocker of another rule on one of its lines is not its own (a libcu++ name on the line
    of a thread-block cluster made the libcu++ item a decision with the cluster's alternative)."""
    blockers: dict[str, list[Finding]] = {}
    for f in findings:
        if f.severity == "blocker":
            blockers.setdefault(f"{f.path}:{f.line}", []).append(f)
    cat = rewrites.default()
    out = []
    for item in work:
        held = []   # per site (a line) of the item, its first blocker there
        for site in item.findings:
            own = next((f for f in blockers.get(site, ()) if _covers(item, f, eco)), None)
            if own is not None:
                held.append(own)
        if held:
            entry = cat.by_id(item.family) if item.family else None
            alternative = entry.alternative if entry is not None else (held[0].fix or held[0].message)
            out.append(_entry(item, alternative, entry.rocm_since if entry is not None else "", len(held)))
        elif item.family == NEWER_ROCM:
            # no site of it blocks (the names exist, in a newer release), yet it is what a manager
            # decides (issue 48: a unit failing only on it fails on a decision)
            sites = set(item.findings)
            release = newest_release([f for f in findings if f"{f.path}:{f.line}" in sites])
            out.append(_entry(item, f"require ROCm {release} or newer: every site compiles as written there",
                              release, 0))
    return sorted(out, key=lambda d: (d["optional"], -d["hours"]["p50"], d["id"]))


def _entry(item: Item, alternative: str, rocm_since: str, blocker_sites: int) -> dict:
    """One `estimate.decisions` entry for an item."""
    facts = dict(item.facts)
    return {"id": item.family or item.key, "label": item.label, "alternative": alternative, "rocm_since": rocm_since,
            "kernels": int(facts.get("kernels", 0)),
            "files": int(facts.get("files", len({s.split(':')[0] for s in item.findings}))),
            "sites": item.count, "blocker_sites": blocker_sites,
            "hours": {f"p{p}": round(triangular_percentile(item.hours, p), 1) for p in (10, 50, 90)},
            "optional": item.optional}


def _covers(item: Item, f: Finding, eco: Ecosystem) -> bool:
    """Whether finding `f`, at one of the item's sites, is the item's own work: of its family
    (a rewrite decision or a library), else of its rule and CUDA name (workitems.patterns' key)."""
    family = item.family or (library_family(item.key, eco) if item.kind == "dependency" else "")
    if family:
        return family_of(f, eco) == family
    code, _, subject = item.key.partition(":")
    return f.code == code and pattern(f.subject) == subject
