"""Calibration of the estimate against real ports: the facts the model reads, kept small, and the scores.

A calibration project (benchmarks/calibration/) is reduced to a snapshot of what workitems.estimate
reads - per file the metrics it uses, per finding the fields it groups and prices by, the
optional-code map - so that the estimate can be recomputed without the project's code
(tests/test_calibration.py). The scores compare the estimates with the manual work the human ports
measured: Spearman's rank correlation, and the spread around the best hours-per-line fit.
"""

from __future__ import annotations

import math
from statistics import median

from ..engine.context import Metrics
from ..core.findings import Finding
from ..project.amd_paths import AmdImplementation, AmdPaths
from ..project.optional import OptionalCode
from ..project.product import OwnBuild
from .scope import Scope

METRICS = ("kind", "lines", "kernels", "refs_converted", "refs_found", "launches", "has_device_code",
           "triton_kernels", "cuda_extension")
TUPLES = ("nvidia_lines", "optional_imports", "compiler_tests")
SETS = ("libraries", "imports")
FINDING = ("code", "name", "severity", "category", "path", "line", "subject", "platform")


def _relevant(m: Metrics) -> bool:
    return bool(m.kernels or m.refs_converted or m.refs_found or m.launches or m.has_device_code
                or m.libraries or m.imports or m.triton_kernels or m.cuda_extension)


def snapshot(files: list[tuple[str, Metrics]], findings: list[Finding], scope: Scope | None) -> dict:
    """The facts of one audit the estimate reads, as plain JSON data (`scope`: where each site
    belongs, estimate/scope.py; what is empty is left out)."""
    kept = [(p, m) for p, m in files if _relevant(m)]
    paths = {p for p, _ in kept} | {f.path for f in findings}
    out: dict = {
        "files": [[p, {**{k: getattr(m, k) for k in METRICS}, **{k: sorted(getattr(m, k)) for k in SETS},
                       **{k: _plain(getattr(m, k)) for k in TUPLES if getattr(m, k)}}]
                  for p, m in kept],
        "findings": [[getattr(f, k) for k in FINDING] + [bool(f.autofix)] for f in findings],
    }
    found = scope.optional if scope is not None else None
    if scope is not None and scope.amd.implementations:
        out["amd"] = {"implementations": [i.record() for i in scope.amd.implementations],
                      "amd_dirs": list(scope.amd.amd_dirs)}
    if scope is not None and scope.components:
        out["components"] = list(scope.components)
    if scope is not None and (scope.build.root or scope.build.tests):
        out["build"] = {"root": scope.build.root, "tests": list(scope.build.tests)}
    if scope is not None and scope.carried:
        out["carried"] = [list(pair) for pair in scope.carried]
    if found is not None:
        out["optional"] = {
            "ranges": {p: [list(r) for r in v] for p, v in sorted(found.ranges.items()) if p in paths},
            "files": {p: v for p, v in sorted(found.files.items()) if p in paths},
            "includes": {p: [list(i) for i in v] for p, v in sorted(found.includes.items()) if p in paths},
            **({"links": {p: [list(i) for i in v] for p, v in sorted(found.links.items()) if p in paths}}
               if any(p in paths for p in found.links) else {}),
        }
    return out


def restore(data: dict) -> tuple[list[tuple[str, Metrics]], list[Finding], Scope]:
    """The inverse of snapshot(): the arguments workitems.estimate takes."""
    files = [(p, Metrics(**{k: v for k, v in m.items() if k in METRICS},
                         **{k: set(m.get(k, ())) for k in SETS},
                         **{k: tuple(tuple(r) if isinstance(r, list) else r for r in m.get(k, ())) for k in TUPLES}))
             for p, m in data["files"]]
    findings = []
    for row in data["findings"]:
        fields = dict(zip(FINDING, row[:-1]))
        findings.append(Finding(column=1, end_line=fields["line"], end_column=1, message="",
                                autofix=((1, 1, 1, 1, ""),) if row[-1] else (), **fields))
    opt = data.get("optional")
    found = None
    if opt is not None:
        found = OptionalCode(ranges={p: [tuple(r) for r in v] for p, v in opt["ranges"].items()},
                             files=dict(opt["files"]),
                             includes={p: [tuple(i) for i in v] for p, v in opt["includes"].items()},
                             links={p: [tuple(i) for i in v] for p, v in opt.get("links", {}).items()})
    amd = data.get("amd", {})
    paths = AmdPaths(tuple(AmdImplementation(**i) for i in amd.get("implementations", ())),
                     tuple(amd.get("amd_dirs", ())))
    build = data.get("build", {})
    return files, findings, Scope.of(files, found, paths, tuple(data.get("components", ())),
                                     carried=tuple((lib, where) for lib, where in data.get("carried", ())),
                                     build=OwnBuild(build.get("root", ""), tuple(build.get("tests", ()))))


def _plain(value: tuple) -> list:
    return [list(r) if isinstance(r, tuple) else r for r in value]


def _ranks(values: list[float]) -> list[float]:
    """Ranks from 1, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs: list[float], ys: list[float]) -> float:
    """Spearman's rank correlation (Pearson's on the ranks, so ties are handled)."""
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("spearman needs two lists of the same length, at least 2")
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    var = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return round(cov / var, 3) if var else 0.0


def fit(hours: list[float], lines: list[float]) -> tuple[float, float]:
    """The hours per manual line that best fits (median of the ratios, on a log scale) and the error
    around it: the median factor by which an estimate is off that fit (1.0 = exact)."""
    logs = [math.log(h / max(n, 1)) for h, n in zip(hours, lines)]
    centre = median(logs)
    return round(math.exp(centre), 3), round(math.exp(median(abs(x - centre) for x in logs)), 2)


def _off(train: tuple[list[float], list[float]], test: tuple[list[float], list[float]]) -> list[float]:
    """Each `test` project's log distance from the hours-per-line fit of `train` (hours, lines)."""
    centre = median(math.log(h / max(n, 1)) for h, n in zip(*train))
    return [abs(math.log(h / max(n, 1)) - centre) for h, n in zip(*test)]


def transfer(train: tuple[list[float], list[float]], test: tuple[list[float], list[float]]) -> tuple[list[float], float]:
    """Fit hours per line on `train` (hours, lines) only; each `test` project's error factor around
    that fit (1.0 = on it), and their median. Nothing of a test project enters the fit."""
    off = _off(train, test)
    return [round(math.exp(x), 2) for x in off], round(math.exp(median(off)), 2)


def leave_one_out(hours: list[float], lines: list[float]) -> tuple[list[float], float]:
    """Each project's error factor around the fit of all the others, and their median: the held-out
    counterpart of fit()'s in-sample error factor."""
    if len(hours) != len(lines) or len(hours) < 3:
        raise ValueError("leave_one_out needs two lists of the same length, at least 3")
    off = [_off(([h for j, h in enumerate(hours) if j != i], [n for j, n in enumerate(lines) if j != i]),
                ([hours[i]], [lines[i]]))[0] for i in range(len(hours))]
    return [round(math.exp(x), 2) for x in off], round(math.exp(median(off)), 2)


def scores(hours: list[float], lines: list[float], held_out: list[bool]) -> dict:
    """The [calibration] scores of benchmarks/calibration/projects.toml: in-sample over all the
    projects and over those the model was tuned on (held_out False), leave-one-out over all, and the
    held-out projects around the tuned ones' fit."""
    tuned = ([h for h, o in zip(hours, held_out) if not o], [n for n, o in zip(lines, held_out) if not o])
    new = ([h for h, o in zip(hours, held_out) if o], [n for n, o in zip(lines, held_out) if o])
    per_line, error = fit(hours, lines)
    out = {"spearman": spearman(hours, lines), "hours_per_line": per_line, "error_factor": error,
           "heldout_error_factor": leave_one_out(hours, lines)[1], "tuned_error_factor": fit(*tuned)[1]}
    if new[0]:
        out["new_ports_error_factor"] = transfer(tuned, new)[1]
    return out


def estimate(facts: dict):
    """The estimate workitems computes from a snapshot, with the current cost model."""
    from ..core.tables import ecosystem
    from . import effort, workitems
    files, findings, found = restore(facts)
    return workitems.estimate(files, findings, ecosystem.default(), effort.default_model(), found=found)


def lines_per_day(histories: list[dict]) -> tuple[float, float, float]:
    """Manual lines per commit day of the ports whose history kept their days (squashed = false):
    the median, and the lower and upper quartile (the rate a squashed port's days are derived
    with, and its spread). histories: histories.toml's [[project]] tables."""
    rates = sorted(p["measured"]["manual_lines"] / p["measured"]["commit_days"]
                   for p in histories if not p.get("squashed"))
    if len(rates) < 3:
        raise ValueError("lines_per_day needs at least 3 ports that are not squashed")
    return round(median(rates), 1), round(_quantile(rates, 0.25), 1), round(_quantile(rates, 0.75), 1)


def _quantile(values: list[float], q: float) -> float:
    """Linear interpolation between the order statistics (sorted `values`)."""
    at = q * (len(values) - 1)
    lo = int(at)
    return values[lo] + (values[min(lo + 1, len(values) - 1)] - values[lo]) * (at - lo)


def measured_weeks(project: dict, rate: float) -> float:
    """A port's history-measured effort in person-weeks: its commit days / 5, and for a squashed
    history (its days say nothing) the larger of that and its manual lines at `rate` lines a day."""
    m = project["measured"]
    days = m["commit_days"]
    if project.get("squashed"):
        days = max(days, m["manual_lines"] / rate)
    return round(days / 5, 2)


def scale_leave_one_out(estimates: list[dict], measured: list[float]) -> list[dict]:
    """For each project: the estimate's global scale fitted on the others only (the median of
    their measured / P50 on a log scale), its P10/P50/P90 times that scale, the error factor of the
    scaled P50 (1.0 = exact, always >= 1) and whether the measured effort lies in the scaled P10-P90.
    estimates: {"p10", "p50", "p90"} per project, in person-weeks."""
    if len(estimates) != len(measured) or len(estimates) < 3:
        raise ValueError("scale_leave_one_out needs one estimate per measure, at least 3")
    logs = [math.log(m / e["p50"]) for e, m in zip(estimates, measured)]
    out = []
    for i, (e, m) in enumerate(zip(estimates, measured)):
        scale = math.exp(median(x for j, x in enumerate(logs) if j != i))
        p10, p50, p90 = (round(e[k] * scale, 2) for k in ("p10", "p50", "p90"))
        out.append({"scale": round(scale, 3), "p10": p10, "p50": p50, "p90": p90,
                    "error_factor": round(math.exp(abs(math.log(m / (e["p50"] * scale)))), 2),
                    "inside": e["p10"] * scale <= m <= e["p90"] * scale})
    return out
