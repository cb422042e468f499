"""What breaks the AMD build, priced as decisions: one item per construct (issue 50, item 2).

Convert and verify meet these constructs as facts; the estimate prices each as the one decision it
is, from the same facts, so the three agree (mappings/effort.toml [decision.NAME]):

- library internals: findings about CUB's Dispatch layer or Thrust's CUDA backend (the record's
  `subjects`), which hipCUB and rocThrust do not have: not a drop-in rename but a move to the
  public API, one item for all their sites;
- qualifier macros: the `#if` tests of `__NVCC__`, `__CUDA__` and `__CUDA_ARCH__` convert makes take
  the HIP side (rewrite/cudacc.py counts them in Metrics.compiler_tests);
- CUDA-only libraries built in the tree (PK510) that no library family already prices (CUTLASS's
  add_subdirectory is the CUTLASS rewrite's, decisions.py);
- a communication library swap (NCCL -> RCCL: the record's `libraries`): the library's adoption
  item becomes the swap, priced for the build options and multi-GPU tests it needs;
- the dual-vendor build: in a both-vendors port, a build option, a shim header and guards in each
  file with CUDA code; apart ("Not included") in a one-way port, so both prices are shown.
"""

from __future__ import annotations

from ..core.findings import Finding
from ..engine.codes import Code
from ..engine.context import Metrics
from .effort import PROJECT, CostModel, Decision, Item
from .scope import Scope

ONE_WAY, BOTH_VENDORS = "one-way", "both-vendors"
BOTH_VENDORS_PART = "both-vendors build (a build option, a shim header and guards: --port-style both-vendors)"
_CATEGORY = "build decisions"


def takes(f: Finding, model: CostModel, family: str) -> str:
    """The decision a finding is a site of ("" for none): taken out of the per-pattern items."""
    for name, decision in model.decisions.items():
        if decision.subjects and f.subject.startswith(decision.subjects):
            return name
    if f.code == Code.CUDA_ONLY_SUBDIRECTORY and not family and "cuda_only_subdirectory" in model.decisions:
        return "cuda_only_subdirectory"
    return ""


def port_style(requested: str, scope: Scope) -> tuple[str, str]:
    """The style the headline assumes, and why: the one asked for, else both vendors for a tree
    with its own build system (what maintainers choose), one-way otherwise."""
    if requested:
        return requested, "as asked (--port-style or [tool.portkit] port-style)"
    if scope.build.root:
        return BOTH_VENDORS, f"the tree has its own build ({scope.build.root}): maintainers keep both vendors"
    return ONE_WAY, "the tree has no build system of its own at its root"


def items(work: list[Item], taken: dict[str, list[Finding]], files: list[tuple[str, Metrics]], scope: Scope,
          model: CostModel, style: str, cuda_files: int, extension: bool = False) -> list[Item]:
    """`work` with the decisions' items added: `taken`, the findings each decision took; the
    communication library's adoption item becomes its swap; `extension`: the root's setup.py builds a
    PyTorch CUDA extension, which PyTorch hipifies at build time for either vendor, so it needs no
    dual-vendor build of its own (tiny-cuda-nn's bindings/torch, beside its root CMake, does not decide)."""
    out = [i for i in work if not _swapped(i, model)]
    for name, decision in sorted(model.decisions.items()):
        sites = [(f.path, f.line) for f in taken.get(name, ())]
        if name == "qualifier_macros":
            sites = [(path, line) for path, m in files if scope.priced(path) for line in m.compiler_tests]
        elif decision.libraries:
            sites = [_site(s) for i in work if _swapped(i, model) and i.key in decision.libraries for s in i.findings]
        by_part: dict[str, list[str]] = {}
        for path, line in sites:
            part = scope.feature(path, line) if line else scope.whole(path)
            if scope.builds_for_amd and not part and (name == "qualifier_macros" or not line):
                continue   # the tree's AMD build compiles these as they are, and finds its own packages
            by_part.setdefault(part, []).append(f"{path}:{line}" if line else path)
        for part, where in sorted(by_part.items()):
            out.append(_item(name, decision, tuple(sorted(set(where))), part,
                             1 if decision.libraries else len(set(where))))
    dual = model.decisions.get("dual_vendor_build")
    if dual is not None and cuda_files and not scope.builds_for_amd and not extension:
        part = "" if style == BOTH_VENDORS else BOTH_VENDORS_PART
        out.append(_item("dual_vendor_build", dual, (scope.build.root,) if scope.build.root else (), part,
                         cuda_files, (("cuda_files", cuda_files),)))
    return out


def _item(name: str, decision: Decision, sites: tuple[str, ...], part: str, count: int,
          facts: tuple = ()) -> Item:
    hours = decision.hours(count)
    files = len({s.split(":")[0] for s in sites})
    what = "file" if facts else "site"
    why = (f"{decision.basis} One decision for {count} {what}{'s' if count != 1 else ''}"
           + (f" in {files} file{'s' if files != 1 else ''}" if files and not facts else "")
           + f": {decision.first[1]:g} h likely for the first, {decision.per[1]:g} h for each further one, "
             f"at most {decision.max[1]:g} h. Instead: {decision.alternative}.")
    return Item("decision", name, decision.label, _CATEGORY, _directory(sites), count, hours, why, sites,
                facts or (("sites", count), ("files", files)), part)


def _swapped(item: Item, model: CostModel) -> bool:
    """A library's adoption item that a decision (the communication library swap) replaces."""
    return item.kind == "dependency" and any(item.key in d.libraries for d in model.decisions.values())


def _site(site: str) -> tuple[str, int]:
    path, _, line = site.partition(":")
    return path, int(line) if line.isdigit() else 0


def _directory(sites: tuple[str, ...]) -> str:
    dirs = {s.split(":")[0].rsplit("/", 1)[0] if "/" in s.split(":")[0] else "." for s in sites}
    return dirs.pop() if len(dirs) == 1 else PROJECT


def entries(work: list[Item], model: CostModel) -> list[dict]:
    """The decisions' items as the estimate's `decisions` entries (decisions.py's form), the
    alternative from their record; the dual-vendor build is the port style, stated on its own line."""
    out = []
    for item in work:
        decision = model.decisions.get(item.key) if item.kind == "decision" else None
        if decision is None or item.key == "dual_vendor_build":   # the port style's line states it
            continue
        out.append({"id": item.key, "label": item.label, "alternative": decision.alternative, "rocm_since": "",
                    "kernels": 0, "files": int(dict(item.facts).get("files", 0)), "sites": item.count,
                    "blocker_sites": 0, "hours": {f"p{p}": item.percentiles[f"p{p}"] for p in (10, 50, 90)},
                    "optional": item.optional})
    return out
