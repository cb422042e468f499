"""The estimate as work items: findings, metrics and the optional-code map -> priced pieces of work.

Every hour of the estimate belongs to one item here, and each item names its findings (as
path:line) or the project facts it scales with, and why it costs what it does:

- pattern: the findings of one rule about one CUDA name (or construct), anywhere in the project:
  the first site costs the rule's range, every further site `per_site` of it (the fix is learned
  once: 85 uses of one cublasLt call are not 85 separate pieces of work);
- unit: review of the mechanical conversion, a correctness check per kernel;
- fixed: a project cost (toolchain, CI, the project's tests, build files convert leaves), scaled
  by the project's lines, files, kernels or unmigrated build files and capped;
- dependency: adopting a library's ROCm counterpart, once.

Items in code the default build leaves out (optional.py) carry their feature and are summed
apart. The costs come from mappings/effort.toml (effort.CostModel).
"""

from __future__ import annotations

from typing import Iterable

from ..project.packages import package_dir, requires
from .. import rules
from ..engine.context import Metrics
from ..core.tables.ecosystem import Ecosystem, normalize
from .effort import (PROJECT, CostModel, Estimate, Item, Range, added, archetype, optional_totals, scaled,
                     total, weeks_of)
from ..core.errors import PortkitError
from ..core.findings import Finding, pattern
from . import build_decisions, decisions
from .scope import Scope, has_cuda

def signals(files: Iterable[tuple[str, Metrics]], findings: list[Finding],
            own_packages: frozenset[str] | None = None, requirements: frozenset[str] | None = None,
            headline: Scope | None = None) -> set[str]:
    """What kind of project this is: the facts the fixed costs and archetypes are chosen by.

    A PyTorch or JAX project is one whose product imports the framework: a Python project (no
    CUDA C/C++ sources: its scripts are the product), a file of the project's own Python package, or
    a CUDA extension build. A reference, conversion or benchmark script that imports torch beside a
    C++/CUDA project (llm.c's train_gpt2.py, ggml's scripts) does not make it one. `own_packages`
    None (not known): every import counts, as before. An import in the project's own package of a
    framework the project does not require (`requirements`, packages.requirements; None: it
    declares none, and every such import counts) is optional interop: faiss's contrib/torch_utils.py.
    TensorRT makes a "TensorRT-based inference pipeline, not feasible" only where the headline prices
    it (`headline`: the scope): NVIDIA/TransformerEngine's one ONNX-export test importing tensorrt
    made the whole library infeasible."""
    def priced(path: str, line: int) -> bool:
        return headline is None or (headline.feature(path, line) == "" and headline.priced(path))
    files = list(files)
    found: set[str] = {"cuda-sources"} if any(has_cuda(m) for _, m in files) else set()
    for path, m in files:
        product = own_packages is None or "cuda-sources" not in found or m.cuda_extension
        packaged = not product and _in_package(path, own_packages)
        for module, signal in (("torch", "pytorch"), ("jax", "jax"), ("jaxlib", "jax")):
            if module in m.imports and (product or packaged and requires(requirements, module)):
                found.add(signal)
        if m.triton_kernels or "triton" in m.imports:
            found.add("triton")
        if m.cuda_extension:
            found.add("cuda-extension")
        if ("tensorrt" in m.libraries or "tensorrt" in m.imports) and priced(path, 0):
            found.add("tensorrt")
    for f in findings:
        rule = rules.of(f.code)
        if rule.build_file:
            found.add("build-files")
        if rule.package and f.subject.startswith("tensorrt") and priced(f.path, f.line):
            found.add("tensorrt")
    return found


def _in_package(path: str, own_packages: frozenset[str]) -> bool:
    """The file lies in one of the project's own top-level packages (or one under src/)."""
    top = package_dir(path)
    return top is not None and normalize(top) in own_packages


def _directory(paths: Iterable[str]) -> str:
    dirs = {p.rsplit("/", 1)[0] if "/" in p else "." for p in paths}
    return dirs.pop() if len(dirs) == 1 else PROJECT


def _where(f: Finding) -> str:
    return f"{f.path}:{f.line}"


def _pattern(f: Finding) -> str:
    return pattern(f.subject)


def patterns(findings: list[Finding], model: CostModel, feature,
             counted: Iterable[tuple[str, dict]] = (), family=lambda f: "") -> list[Item]:
    """One item per (rule, CUDA name, severity, optional feature): first site full, the rest `per_site`.

    `counted`: per file, the findings past the audit's per-file cap (findingstore.py), by (code,
    pattern, severity, platform): each is a further site of the item that holds the last kept
    finding like it in that file (none kept: it costs nothing, as such findings would)."""
    groups: dict[tuple, list[Finding]] = {}
    like: dict[tuple, tuple] = {}
    seen: set[tuple] = set()
    for f in findings:
        hours = model.finding_hours(f)
        if hours[2] > 0:
            key = (f.code, _pattern(f), hours, feature(f.path, f.line), family(f))
            if (key, f.path, f.line) in seen:   # one line, one site (two findings of a rule there)
                continue
            seen.add((key, f.path, f.line))
            groups.setdefault(key, []).append(f)
            like[(f.path, f.code, _pattern(f), f.severity, f.platform)] = key
    extra: dict[tuple, int] = {}
    for path, counts in counted:
        for (code, subject, severity, platform), n in counts.items():
            key = like.get((path, code, subject, severity, platform))
            if key is not None:
                extra[key] = extra.get(key, 0) + n
    out = []
    for key, group in sorted(groups.items()):
        code, subject, hours, opt, fam = key
        factor = model.site_factor(code)
        n = len(group) + extra.get(key, 0)
        files = len({f.path for f in group})
        first = group[0]
        label = f"{first.name}: {subject}" if subject else first.name
        why = (f"{code}: {first.fix or first.message}" if n == 1 else
               f"{code}: {first.fix or first.message} Priced once ({hours[1]:g} h likely), then "
               + (f"{model.per_file_by_code[code]:.0%} of that for each of the {files - 1} further files "
                  f"and {model.per_site:.0%} for each further site in a file ({n} sites)."
                  if code in model.per_file_by_code else f"{factor:.0%} of that for each of the {n - 1} further sites."))
        if extra.get(key):
            why += f" {extra[key]:,} of the sites are past the per-file cap: counted, not listed."
        out.append(Item("pattern", f"{code}:{subject}" if subject else code, label, first.category,
                        _directory(f.path for f in group), n, scaled(hours, model.sites_factor(code, n, files)), why,
                        tuple(_where(f) for f in group), (("sites", n),), opt, fam))
    return out


def units(files: list[tuple[str, Metrics]], model: CostModel, scope: Scope) -> list[Item]:
    """Review of converted references and a check per kernel, one item each (per part of the
    project). A tree that already builds for AMD has none in its headline: its code compiles for
    AMD as it is."""
    out = []
    for name, unit in sorted(model.units.items()):
        fact = unit.fact or name
        repeat = float(unit.repeat_in_file)
        by_feature: dict[str, list] = {}
        for path, m in files:
            n = int(getattr(m, fact, 0) or 0)
            part = scope.whole(path)
            if n > 0 and scope.priced(path) and (part or not scope.builds_for_amd):
                by_feature.setdefault(part, []).append((path, n))
        for opt, counted in sorted(by_feature.items()):
            hours: Range = (0.0, 0.0, 0.0)
            for _, n in counted:   # per file: the first full, the rest at the file's repeat rate
                hours = added(hours, scaled(unit.hours, 1 + (n - 1) * repeat))
            count = sum(n for _, n in counted)
            out.append(Item("unit", name, unit.label, unit.category, _directory(p for p, _ in counted),
                            count, hours, unit.basis, (),
                            ((fact, count), ("files", len(counted))), opt))
    return out


def facts(files: list[tuple[str, Metrics]], findings: list[Finding], scope: Scope) -> dict[str, float]:
    """The project facts the fixed costs scale with, over the code the default build compiles."""
    cuda = [(p, m) for p, m in files if has_cuda(m) and scope.priced(p) and not scope.whole(p)]
    return {
        "cuda_kloc": round(sum(m.lines for _, m in cuda) / 1000, 1),
        "cuda_files": len(cuda),
        "kernels": sum(m.kernels for _, m in cuda),
        "build_files_left": len({f.path for f in findings if rules.of(f.code).build_left
                                 and scope.priced(f.path) and not scope.whole(f.path)}),
    }


def fixed(present: set[str], project: dict[str, float], model: CostModel) -> list[Item]:
    out = []
    for name, cost in sorted(model.fixed.items()):
        when = list(cost.when)
        if not all((w[1:] not in present) if w.startswith("!") else (w in present) for w in when):
            continue
        hours = cost.base
        scale: tuple = ()
        if cost.fact:
            n = project[cost.fact]
            hours = tuple(round(min(b + n * p, cap), 3) for b, p, cap in zip(cost.base, cost.per, cost.max))
            scale = ((cost.fact, n),)
        if hours[2] > 0:
            why = cost.basis + (f" Scales with {cost.fact} = {scale[0][1]:g}, capped at "
                                f"{cost.max[1]:g} h likely." if scale else
                                f" A fixed cost: the project shows {', '.join(w for w in when if not w.startswith('!'))}.")
            out.append(Item("fixed", name, cost.label, cost.category, PROJECT, 1, hours, why, (), scale))
    return out


def dependencies(files: list[tuple[str, Metrics]], findings: list[Finding], eco: Ecosystem,
                 model: CostModel, found: Scope) -> list[Item]:
    """One item per CUDA library or CUDA-only Python package, priced once."""
    uses: dict[str, dict] = {}   # id -> {"status", "name", "sites": [...], "features": set}
    python_of = {p: lib.id for lib in eco.libraries for p in lib.python}
    kinds = {path: m.kind for path, m in files}
    for path, m in files:
        if not found.priced(path):
            continue
        for lib_id in sorted(m.libraries):
            lib = eco.by_id.get(lib_id)
            if lib is None:
                continue
            entry = uses.setdefault(lib.id, {"status": lib.cost_status, "name": lib.name, "sites": [], "features": set(),
                                             "build": set()})
            sites, feature = _library_sites(path, lib, eco, found)
            entry["sites"].extend(sites)
            # a build file linking it says less than the sources using it (llm.c: -lcudnn under USE_CUDNN)
            entry["features" if m.kind == "source" else "build"].add(feature)
    for f in findings:
        if not rules.of(f.code).package or ":" in f.subject or not found.priced(f.path):
            continue
        package = eco.package(f.subject)
        if package is None:
            continue
        key = python_of.get(package.name) or package.name
        if key in uses and python_of.get(package.name):
            uses[key]["sites"].append(_where(f))
            continue
        entry = uses.setdefault(key, {"status": package.cost_status, "name": package.name, "sites": [],
                                      "features": set()})
        entry["sites"].append(_where(f))
        # a requirements line declares what the imports use, as an #include does: xformers'
        # requirements-lra.txt names tensorflow for its LRA benchmark, the only code importing it
        declared = kinds.get(f.path) in _DECLARATIONS
        entry.setdefault("declared" if declared else "features", set()).add(found.feature(f.path, f.line))
    out = []
    for dep_id, entry in sorted(uses.items()):
        hours = model.dependency.get(dep_id) or model.dependency_status.get(entry["status"])
        if not hours:
            continue
        features = entry["features"] or entry.get("build", set()) or entry.get("declared", set())
        opt = "" if "" in features or not features else sorted(features)[0]
        opt = opt or _uses_apart(dep_id, entry["sites"], findings, eco, found)
        why = (f"{entry['name']} is {entry['status']} on ROCm: priced once for the project, whatever the "
               f"number of uses ({len(entry['sites'])} listed).")
        out.append(Item("dependency", dep_id, f"adopt the ROCm counterpart of {entry['name']} ({entry['status']})",
                        "dependencies", PROJECT, 1, hours, why, tuple(sorted(set(entry["sites"]))),
                        (("files", len({s.split(':')[0] for s in entry["sites"]})),), opt))
    return out


# Files that declare a Python package rather than use it (PK601's requirements, pyproject, conda).
_DECLARATIONS = ("requirements", "pyproject", "conda")


def _uses_apart(dep_id: str, sites: list[str], findings: list[Finding], eco: Ecosystem, found) -> str:
    """The part of the tree holding every use of a library beyond its #include and link lines, when
    none is in the headline: the AMD build drops the include and uses none of it. bitsandbytes
    includes <mma.h> at the top of kernels.cu, and its 18 WMMA sites are all under
    `#if __CUDA_ARCH__ >= 750`, which the AMD build never takes; its port commented the include out."""
    family = decisions.library_family(dep_id, eco)
    own = set(sites)
    parts = {found.feature(f.path, f.line) for f in findings if found.priced(f.path)
             and _where(f) not in own and decisions.family_of(f, eco) == family} if family else set()
    return sorted(parts)[0] if parts and "" not in parts else ""


def _library_sites(path: str, lib, eco: Ecosystem, found) -> tuple[list[str], str]:
    """Where a file uses a library (its #include lines, a Makefile's -l lines, or the file), and the
    optional feature of that use: "" when any include or link of it is built by default."""
    lines = [(line, found.feature(path, line)) for line, header in found.includes.get(path, ())
             if eco.header(header) is lib]
    # a Makefile's `-l` lines: linked under a switch a plain make leaves off (llm.c's -lcudnn)
    lines += [(line, found.feature(path, line)) for line, name in found.links.get(path, ()) if eco.link(name) is lib]
    if not lines:   # used by link name or namespace: the file as a whole
        return [path], found.whole(path)
    features = {feature for _, feature in lines}
    feature = "" if "" in features else sorted(features)[0]
    return [f"{path}:{line}" for line, _ in lines], feature


def items(files: list[tuple[str, Metrics]], findings: list[Finding], present: set[str],
          model: CostModel, eco: Ecosystem, found=None, style: str = build_decisions.ONE_WAY) -> list[Item]:
    """Every priced piece of the port: patterns, units, fixed costs, dependencies, and the decisions
    that break the build (build_decisions.py; `style`: the port style the headline assumes). `found`:
    where each site belongs (scope.Scope; None: everything is the headline)."""
    scope = found if found is not None else Scope.of(files)
    counted = [(path, m.findings_not_stored) for path, m in files if m.findings_not_stored and scope.priced(path)]
    priced = [f for f in findings if scope.priced(f.path)
              and not (scope.builds_for_amd and rules.of(f.code).build_file and not scope.whole(f.path))]
    taken: dict[str, list[Finding]] = {}
    rest = []
    for f in priced:   # a decision's sites are its own, not a pattern's
        name = build_decisions.takes(f, model, decisions.family_of(f, eco))
        (taken.setdefault(name, []) if name else rest).append(f)
    project = facts(files, findings, scope)
    work = (patterns(rest, model, scope.feature, counted, lambda f: decisions.family_of(f, eco))
            + units(files, model, scope) + fixed(present, project, model)
            + dependencies(files, findings, eco, model, scope))
    work = decisions.merge(work, priced, eco)   # one construct, one item
    return build_decisions.items(work, taken, files, scope, model, style, int(project["cuda_files"]),
                                 "cuda-extension" in present and _root_extension(files))


def _root_extension(files: list[tuple[str, Metrics]]) -> bool:
    """The root's setup.py builds a PyTorch CUDA extension, which PyTorch hipifies at build time for
    either vendor, whatever other build the root has: pytorch_scatter's CMakeLists.txt beside it
    builds the C++ API, and its AMD port (#325) changed setup.py and the sources, not the CMake."""
    return any(path == "setup.py" and m.cuda_extension for path, m in files)


def estimate(files: list[tuple[str, Metrics]], findings: list[Finding], eco: Ecosystem,
             model: CostModel, team_size: int = 1, focus_hours: float | None = None,
             found: Scope | None = None, own_packages: frozenset[str] | None = None,
             requirements: frozenset[str] | None = None, port_style: str = "") -> Estimate:
    """The estimate for one audited tree (`files`: (path, metrics) of every scanned file; `found`:
    where each site belongs, scope.Scope, or None when nothing is known; `own_packages`: the Python
    packages the project is, and `requirements` the distributions it requires: project/packages.py;
    `port_style`: one-way or both-vendors, "" for the tree's default, build_decisions.port_style)."""
    if team_size < 1:
        raise PortkitError(f"--team-size must be at least 1, not {team_size}")
    focus = focus_hours or model.focus_hours_per_week
    if focus <= 0 or focus > 80:
        raise PortkitError(f"--focus-hours must be between 1 and 80, not {focus}")
    found = found if found is not None else Scope.of(files)
    present = signals(files, findings, own_packages, requirements, found)
    if found.builds_for_amd:
        present.add("builds-for-amd")
    if "cuda-extension" in present and (_root_extension(files) or not found.build.root):
        present.add("extension-build")   # the extension is the tree's build, its CI in the build's days
    style, reason = build_decisions.port_style(port_style, found)
    work = items(files, findings, present, model, eco, found, style)
    dual = [i for i in work if i.kind == "decision" and i.key == "dual_vendor_build"]
    if dual and dual[0].optional and not found.build.root:   # no build of its own: shown as a price only
        work = [i for i in work if i not in dual]
    hours = total([i for i in work if not i.optional])
    weeks = weeks_of(hours, focus)
    calendar = {k: round(v / team_size, 2) for k, v in weeks.items()}
    listed = decisions.decisions(work, findings, eco)
    listed += [d for d in build_decisions.entries(work, model) if d["id"] not in {e["id"] for e in listed}]
    return Estimate(archetype(present, model), sorted(present), hours, weeks, calendar, team_size, focus,
                    sum(1 for f in findings if f.severity == "blocker"), work, optional_totals(work, focus),
                    listed, found.done(), _styles(work, dual, style, reason, focus))


def _styles(work: list[Item], dual: list[Item], style: str, reason: str, focus: float) -> dict:
    """The two prices (issue 50, item 3): the one-way port without the dual-vendor build's item, the
    both-vendors port with it, and which the headline assumes."""
    one_way = [i for i in work if not i.optional and i not in dual]
    return {"assumed": style, "reason": reason, "one_way": weeks_of(total(one_way), focus),
            "both_vendors": weeks_of(total(one_way + dual), focus)}
