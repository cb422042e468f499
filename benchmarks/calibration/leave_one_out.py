"""Leave-one-out calibration of the estimate's scale on whole-tree human ports (issue 50, item 4).

    python benchmarks/calibration/leave_one_out.py --audit [--mirrors /work/.mirror] [--only NAME]
    python benchmarks/calibration/leave_one_out.py

--audit runs `portkit audit TREE --format json --jobs 2 --rocm X.Y` on each upstream tree of
histories.toml at its recorded base (the upstream before the port; `git archive` of the mirror, no
submodules, as run.py --whole-trees exports a tree), X.Y being the ROCm the port started on: the
newest release whose rocm-X.Y.0 tag in the ROCm/HIP mirror is dated on or before the base's date,
or the oldest release the tables know (5.0) for an older port. A human who ported in 2022 had
ROCm 5.3, not the drop-ins of today's tables (TransformerEngine's cuBLASLt calls: no hipBLASLt
before 5.7). The estimate is asked the port's own style (`--port-style`, histories.toml's
`port_style`: whether the port's tree still builds for NVIDIA), the question its maintainers
answered, not the tree's default; it keeps each headline under "histories" in
benchmarks/results/calibration_whole_trees.json. Without --audit, nothing is audited: the
measured effort is computed from histories.toml, the leave-one-out table from the kept headlines,
benchmarks/results/calibration_whole_trees.md is written again with its new section, and so is the
result paragraph of docs/estimate.md (between its leave_one_out.py markers).
How the measured effort is defined, and why: docs/estimate.md, "Leave-one-out on port histories".
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import run  # noqa: E402  (benchmarks/calibration/run.py: the tree export and the results file)
from portkit.estimate import calibration  # noqa: E402


def projects() -> list[dict]:
    return tomllib.loads((HERE / "histories.toml").read_text())["project"]


def rocm_at(day: str, mirrors: Path) -> str:
    """The ROCm release a port started on (the module docstring), as X.Y."""
    from portkit.project.config import known_releases
    hip = mirrors / "ROCm+HIP" / "repo"
    if not hip.is_dir():
        raise SystemExit(f"{hip}: no mirror (fetch github:ROCm/HIP): the ROCm release of each port needs its tags")
    tags = subprocess.run(["git", "-C", str(hip), "for-each-ref", "--format=%(refname:short) %(creatordate:short)",
                           "refs/tags/rocm-*.*.0"], capture_output=True, check=True, text=True).stdout.split("\n")
    dated = sorted((tuple(int(x) for x in name[5:-2].split(".")), when) for name, when in
                   (t.split() for t in tags if t) if name.count(".") == 2)
    known = known_releases()
    out = known[0]
    for version, when in dated:
        if when <= day and version in known:
            out = max(out, version)
    return f"{out[0]}.{out[1]}"


def audit_command(project: dict, root: Path, rocm: str) -> list[str]:
    """The audit of one history's base: at the ROCm the port started on, in the port's own style
    (a history without `port_style` gets the tree's default)."""
    style = ["--port-style", project["port_style"]] if project.get("port_style") else []
    return [sys.executable, "-m", "portkit", "audit", str(root), "--format", "json", "--jobs", "2", "--rocm", rocm,
            *style]


def audit_base(project: dict, mirrors: Path) -> dict | None:
    """portkit's headline on the upstream tree at the port's base commit."""
    mirror = mirrors / project["upstream"].replace("/", "+") / "repo"
    if not mirror.is_dir():
        print(f"skip {project['name']}: no mirror {mirror}", file=sys.stderr)
        return None
    base = project["measured"]["base"]
    rocm = rocm_at(project["measured"]["base_date"], mirrors)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / project["name"]
        run.export_tree(mirror, base, root)
        done = subprocess.run(audit_command(project, root, rocm), capture_output=True, cwd=HERE.parents[1])
    if done.returncode not in (0, 1):
        raise SystemExit(f"portkit audit {project['name']} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    e = json.loads(done.stdout)["estimate"]
    top = sorted((i for i in e["items"] if not i.get("optional")), key=lambda i: -i["p50"])[:4]
    return {"upstream": project["upstream"], "base": base, "rocm": rocm,
            "person_weeks": {k: e["person_weeks"][k] for k in ("p10", "p50", "p90")},
            "hours": {k: e["hours"][k] for k in ("p10", "p50", "p90")},
            "port_style": e.get("port_style", {}).get("assumed", ""),
            "top": [f"{i['label']} {i['p50']:g} h" for i in top]}


def table(kept: dict) -> tuple[dict, list[dict]]:
    """The rate squashed histories are measured with, and per project (histories.toml's order,
    those with a kept headline): measured person-weeks against the leave-one-out scaled estimate."""
    histories = [p for p in projects() if p["name"] in kept["trees"]]
    rate, q1, q3 = calibration.lines_per_day(projects())
    measured = [calibration.measured_weeks(p, rate) for p in histories]
    estimates = [kept["trees"][p["name"]]["person_weeks"] for p in histories]
    rows = []
    for p, m, e, loo in zip(histories, measured, estimates, calibration.scale_leave_one_out(estimates, measured)):
        span = (f"{calibration.measured_weeks(p, q3):g}-{calibration.measured_weeks(p, q1):g}"
                if p.get("squashed") else "")
        rows.append({"name": p["name"], "squashed": bool(p.get("squashed")), "measured": m, "span": span,
                     "estimate": e, "top": kept["trees"][p["name"]]["top"],
                     "rocm": kept["trees"][p["name"]].get("rocm", "newest"),
                     "style": kept["trees"][p["name"]].get("port_style") or "default", **loo})
    return {"rate": rate, "q1": q1, "q3": q3}, rows


def section(kept: dict) -> list[str]:
    """The markdown section on the port histories, from the kept headlines."""
    rate, rows = table(kept)
    within = sum(r["error_factor"] <= 1.5 for r in rows)
    inside = sum(r["inside"] for r in rows)
    out = ["## Leave-one-out on the port histories (issue 50, item 4)", "",
           "Written by `python benchmarks/calibration/leave_one_out.py [--audit]` (histories.toml; method: "
           "docs/estimate.md, \"Leave-one-out on port histories\"). Estimate: `portkit audit TREE --format json "
           f"--jobs 2 --rocm X.Y` on the upstream tree at the port's base, X.Y the ROCm release the port started on "
           "(the newest rocm-X.Y.0 tag of ROCm/HIP by the base's date, 5.0 at the oldest), `--port-style` the "
           "port's own (histories.toml's port_style: whether its tree still builds for NVIDIA), "
           f"portkit {kept['portkit']}. Measured: commit days / 5; "
           f"a squashed history's days from its manual lines at {rate['rate']:g} lines a commit day (the median of "
           f"the unsquashed ports; quartiles {rate['q1']:g}-{rate['q3']:g}, the range shown). Each project's estimate "
           "is scaled by the median measured/P50 of the other projects (the scale column) and compared with its "
           "measure.", "",
           "| project | measured person-weeks | ROCm | port style | estimate P50 (P10-P90) | leave-one-out scale "
           "| scaled P50 (P10-P90) | error factor | within x1.5 | measured in P10-P90 | largest headline items |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        e = r["estimate"]
        measured = f"{r['measured']:g}" + (f" (squashed: {r['span']})" if r["squashed"] else "")
        out.append(f"| {r['name']} | {measured} | {r['rocm']} | {r['style']} | "
                   f"{e['p50']:g} ({e['p10']:g}-{e['p90']:g}) | x{r['scale']:g} | "
                   f"{r['p50']:g} ({r['p10']:g}-{r['p90']:g}) | x{r['error_factor']:g} | "
                   f"{'yes' if r['error_factor'] <= 1.5 else 'no'} | {'yes' if r['inside'] else 'no'} | "
                   f"{'; '.join(r['top'][:2])} |")
    out += ["", f"Within x1.5: **{within} of {len(rows)}**; measured inside the scaled P10-P90: "
            f"**{inside} of {len(rows)}**."]
    return out


DOCS = HERE.parents[1] / "docs" / "estimate.md"
BEGIN, END = "<!-- leave_one_out.py writes this paragraph -->", "<!-- end of leave_one_out.py's paragraph -->"


def result(kept: dict) -> str:
    """docs/estimate.md's result paragraph: the score and each project's error, from the kept headlines."""
    _, rows = table(kept)
    within = [r for r in rows if r["error_factor"] <= 1.5]
    inside = [r for r in rows if r["inside"]]

    def named(r: dict) -> str:
        side = "" if r in within else (" over" if r["p50"] > r["measured"] else " under")
        return f"{r['name']} x{r['error_factor']:g}{side}" + ("" if r["inside"] else " (outside P10-P90)")
    return (f"Result (portkit {kept['portkit']}): within x1.5 on **{len(within)} of {len(rows)}** "
            f"({', '.join(named(r) for r in within)}), measured inside the scaled P10-P90 on "
            f"**{len(inside)} of {len(rows)}**. Out of x1.5: {', '.join(named(r) for r in rows if r not in within)}.")


def write_docs(kept: dict) -> None:
    """Replace the paragraph between the markers in docs/estimate.md (nothing else of the file)."""
    text = DOCS.read_text()
    head, start, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise SystemExit(f"{DOCS}: no {BEGIN} ... {END} markers")
    DOCS.write_text(f"{head}{BEGIN}\n{result(kept)}\n{END}{tail}")


def run_audits(args: argparse.Namespace) -> None:
    path = run.RESULTS / "calibration_whole_trees.json"
    data = json.loads(path.read_text()) if path.exists() else {"runs": {}}
    kept = data.setdefault("histories", {"portkit": "", "trees": {}})
    for project in projects():
        if args.only and project["name"] not in args.only:
            continue
        row = audit_base(project, args.mirrors)
        if row is None:
            continue
        kept["trees"][project["name"]] = row
        kept["portkit"] = run.describe()
        pw = row["person_weeks"]
        print(f"{project['name']}: {pw['p50']:g} ({pw['p10']:g}-{pw['p90']:g}) {'; '.join(row['top'])}", flush=True)
        path.write_text(json.dumps(data, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--audit", action="store_true", help="audit each upstream tree at its base first")
    args = ap.parse_args(argv)
    if args.audit:
        run_audits(args)
    if not args.audit:
        run.render_results()
        write_docs(json.loads((run.RESULTS / "calibration_whole_trees.json").read_text())["histories"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
