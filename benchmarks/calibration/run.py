"""Recompute the calibration table: each project's manual port work against portkit's estimate.

    python benchmarks/calibration/run.py [--mirrors /work/.mirror] [--only NAME] [--snapshot]
    python benchmarks/calibration/run.py --scores
    python benchmarks/calibration/run.py --whole-trees [--label before] [--only NAME]

Reads projects.toml; for each project exports the CUDA side and the port from the git mirrors
(<mirrors>/<owner>+<name>/repo, made by `fetch github:owner/name`; a missing mirror is skipped
with a message), measures the manual lines of the port and audits the CUDA side. Kinds:

- pair: both sides are converted with `portkit convert`; a manual line is a line of the converted
  port (stripped, not blank, not a comment) that the converted CUDA side does not have (as a
  multiset: moved lines are not manual work);
- single-source: the port lives in the CUDA tree under AMD selectors: its manual lines are the
  lines of AMD-only branches and vendor shim headers (portkit/engine/platform/regions.py); the estimate is the
  audit of that tree with the platform model off (as if nothing were ported);
- rewrite: the AMD version is a new implementation: every line of it is manual.

--snapshot writes facts/<project>.json (portkit/estimate/calibration.py) that tests/test_calibration.py
recomputes the estimate from. Every run ends with the scores of projects.toml's [calibration],
recomputed from facts/ with the current model (--scores: only those): in-sample, leave-one-out
and the held-out projects around the fit of the tuned ones.

--whole-trees audits the trees of trees.toml whole, as `portkit audit TREE --format json --jobs 2`
(see trees.toml), and records the headline under --label in benchmarks/results/
calibration_whole_trees.{json,md}. Nothing here runs through a shell.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections import Counter
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"
sys.path.insert(0, str(HERE.parents[1]))

from portkit.estimate import calibration
from portkit.engine.platform import regions  # noqa: E402
from portkit.commands.audit import AuditOptions, audit_paths  # noqa: E402
from portkit.engine.context import Options  # noqa: E402

CODE = re.compile(r"\.(cu|cuh|c|cc|cpp|cxx|h|hh|hpp|hip|inl)$|(^|/)(CMakeLists\.txt|Makefile)$|\.cmake$")
COMMENT = re.compile(r"^(//|/\*|\*|#\s*$)")


def git(mirror: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(mirror), *args], capture_output=True, check=True).stdout


def export(mirror: Path, commit: str, paths: list[str], dest: Path) -> None:
    """The code files under `paths` at `commit`, into dest (blob by blob: mirrors may lack some)."""
    listing = git(mirror, "ls-tree", "-r", "-z", commit, "--", *paths)
    for rec in listing.split(b"\0"):
        if not rec:
            continue
        meta, name = rec.split(b"\t", 1)
        mode, kind, sha = meta.split()
        path = name.decode("utf-8", "surrogateescape")
        if kind != b"blob" or mode == b"120000" or not CODE.search(path):
            continue
        blob = subprocess.run(["git", "-C", str(mirror), "cat-file", "blob", sha.decode()], capture_output=True)
        if blob.returncode == 0:
            out = dest / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(blob.stdout)


def convert(src: Path, out: Path) -> None:
    subprocess.run([sys.executable, "-m", "portkit", "convert", str(src), "-o", str(out), "--quiet"],
                   capture_output=True, check=False)
    for f in src.rglob("*"):   # files convert skips (no CUDA, not a source) come along unchanged
        target = out / f.relative_to(src)
        if f.is_file() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f.read_bytes())


def code_lines(root: Path) -> dict[str, list[str]]:
    """Per file, its lines as compared: whitespace collapsed, blank and comment lines dropped."""
    out = {}
    for f in sorted(root.rglob("*")):
        if f.is_file() and CODE.search(f.as_posix()):
            text = f.read_bytes().decode("utf-8", "replace")
            lines = [" ".join(s.split()) for s in text.splitlines()]
            out[f.relative_to(root).as_posix()] = [s for s in lines if s and not COMMENT.match(s)]
    return out


def manual_pair(cuda: Path, port: Path) -> tuple[int, int]:
    """Lines of the converted port the converted CUDA side lacks, and the files they are in."""
    pool = Counter(s for lines in code_lines(cuda).values() for s in lines)
    total, touched = 0, 0
    for lines in code_lines(port).values():
        new = 0
        for s in lines:
            if pool[s] > 0:
                pool[s] -= 1
            else:
                new += 1
        total += new
        touched += new > 0
    return total, touched


def manual_single(root: Path, amd_macros: list[str]) -> tuple[int, int]:
    """Lines in AMD-only branches and shim headers."""
    worlds = regions.selectors(tuple(amd_macros))
    total, touched = 0, 0
    for f in sorted(root.rglob("*")):
        if not (f.is_file() and CODE.search(f.as_posix())):
            continue
        data = f.read_bytes()
        found = regions.classify(data, worlds)
        n = data.count(b"\n") if found.shim else sum(data.count(b"\n", s, e) for s, e, k in found.ranges
                                                     if k == regions.AMD)
        total += n
        touched += n > 0
    return total, touched


def manual_rewrite(port: Path) -> tuple[int, int]:
    lines = code_lines(port)
    return sum(len(v) for v in lines.values()), sum(1 for v in lines.values() if v)


def duration(mirror: Path, side: dict) -> int | None:
    """Days from the first to the last commit touching the port's paths (in `range` if given)."""
    args = ["log", "--format=%ad", "--date=short", side.get("range", side["commit"]), "--", *side["paths"]]
    if "author" in side:
        args.insert(1, f"--author={side['author']}")
    dates = git(mirror, *args).decode().split()
    if not dates:
        return None
    return (date.fromisoformat(dates[0]) - date.fromisoformat(dates[-1])).days


def audit(root: Path, platform_model: bool) -> dict:
    """portkit's estimate of the CUDA side, and the snapshot of facts it was computed from."""
    opts = AuditOptions(scan=Options(audit=True, platform_model=platform_model))
    result = audit_paths([root], opts)
    facts = calibration.snapshot([(s.rel, s.metrics) for s in result.scans], result.findings, result.scope)
    again = calibration.estimate(facts)
    if again.hours != result.estimate.hours:   # the snapshot must hold everything the model reads
        raise SystemExit(f"snapshot differs from the audit: {again.hours} != {result.estimate.hours}")
    return facts


def measure(name: str, project: dict, mirrors: Path, work: Path) -> dict | None:
    kind = project["kind"]
    sides = {k: project[k] for k in ("cuda", "port") if k in project}
    for side in sides.values():
        side["mirror"] = mirrors / side["repo"].replace("/", "+") / "repo"
        if not side["mirror"].is_dir():
            print(f"skip {name}: no mirror {side['mirror']} (fetch github:{side['repo']})", file=sys.stderr)
            return None
    for key, side in sides.items():
        export(side["mirror"], side["commit"], side["paths"], work / key)
    if kind == "pair":
        convert(work / "cuda", work / "cuda.hip")
        convert(work / "port", work / "port.hip")
        lines, files = manual_pair(work / "cuda.hip", work / "port.hip")
    elif kind == "single-source":
        lines, files = manual_single(work / "port", project.get("amd_macros", []))
    else:
        lines, files = manual_rewrite(work / "port")
    audited = work / ("port" if kind == "single-source" else "cuda")
    facts = audit(audited, platform_model=kind != "single-source")
    e = calibration.estimate(facts)
    top = sorted(e.headline_items, key=lambda i: -i.percentiles["p50"])[:3]
    return {"manual_lines": lines, "files": files, "duration_days": duration(sides["port"]["mirror"], sides["port"]),
            "p10": e.hours["p10"], "p50": e.hours["p50"], "p90": e.hours["p90"],
            "top": [f"{i.label} {i.percentiles['p50']:g} h" for i in top], "facts": facts}


def scores() -> dict:
    """projects.toml's [calibration] scores, each P50 recomputed from facts/ with the current model,
    and each project's held-out (leave-one-out) error factor."""
    projects = tomllib.loads((HERE / "projects.toml").read_text())["project"]
    hours = [calibration.estimate(json.loads((HERE / "facts" / f"{p['name']}.json").read_text())).hours["p50"]
             for p in projects]
    lines = [p["measured"]["manual_lines"] for p in projects]
    held_out = [bool(p.get("held_out")) for p in projects]
    factors = calibration.leave_one_out(hours, lines)[0]
    tuned = ([h for h, o in zip(hours, held_out) if not o], [n for n, o in zip(lines, held_out) if not o])
    rows = [{"name": p["name"], "held_out": o, "p50": h, "manual_lines": n, "loo_error_factor": f,
             "tuned_fit_error_factor": calibration.transfer(tuned, ([h], [n]))[1] if o else None}
            for p, h, n, o, f in zip(projects, hours, lines, held_out, factors)]
    return {"scores": calibration.scores(hours, lines, held_out), "projects": rows}


def print_scores() -> None:
    result = scores()
    print("| project | set | manual lines | P50 h | leave-one-out error | error around the tuned fit |")
    print("|---|---|---|---|---|---|")
    for r in result["projects"]:
        around = "-" if r["tuned_fit_error_factor"] is None else f"x{r['tuned_fit_error_factor']:g}"
        print(f"| {r['name']} | {'held out' if r['held_out'] else 'tuned on'} | {r['manual_lines']} | "
              f"{r['p50']:g} | x{r['loo_error_factor']:g} | {around} |")
    print("[calibration]")
    for k, v in result["scores"].items():
        print(f"{k} = {v}")


def export_tree(mirror: Path, commit: str, dest: Path) -> None:
    """The whole tree at `commit` (git archive; blob by blob where the mirror lacks a large file)."""
    done = subprocess.run(["git", "-C", str(mirror), "archive", "--format=tar", commit], capture_output=True)
    if done.returncode == 0:
        with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
            tar.extractall(dest, filter="data")
        return
    listing = git(mirror, "ls-tree", "-r", "-z", commit)
    for rec in listing.split(b"\0"):
        if not rec:
            continue
        meta, name = rec.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind != b"blob" or mode == b"120000":
            continue
        blob = subprocess.run(["git", "-C", str(mirror), "cat-file", "blob", sha.decode()], capture_output=True)
        if blob.returncode == 0:
            out = dest / name.decode("utf-8", "surrogateescape")
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(blob.stdout)


def whole_tree(tree: dict, mirrors: Path, work: Path) -> dict | None:
    """`portkit audit <tree> --format json --jobs 2` on the whole tree, as a manager runs it."""
    mirror = mirrors / tree["repo"].replace("/", "+") / "repo"
    if not mirror.is_dir():
        print(f"skip {tree['name']}: no mirror {mirror} (fetch github:{tree['repo']})", file=sys.stderr)
        return None
    root = work / tree["name"]
    export_tree(mirror, tree["commit"], root)
    done = subprocess.run([sys.executable, "-m", "portkit", "audit", str(root), "--format", "json", "--jobs", "2"],
                          capture_output=True, cwd=HERE.parents[1])
    if done.returncode not in (0, 1):
        raise SystemExit(f"portkit audit {tree['name']} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    e = json.loads(done.stdout)["estimate"]
    return {"repo": tree["repo"], "commit": tree["commit"], "outcome": tree["outcome"], "source": tree["source"],
            "person_weeks": {k: e["person_weeks"][k] for k in ("p10", "p50", "p90")},
            "hours_p50": e["hours"]["p50"], "blockers": e["blockers"],
            "optional": [{"feature": o["feature"], "person_weeks_p50": o["person_weeks"]["p50"]}
                         for o in e.get("optional", [])]}


def write_whole_trees(label: str, rows: dict[str, dict]) -> None:
    """Merge `rows` under `label` into the results file and render its table."""
    path = RESULTS / "calibration_whole_trees.json"
    data = json.loads(path.read_text()) if path.exists() else {"runs": {}}
    commit = describe()
    run = data["runs"].setdefault(label, {"portkit": commit, "date": date.today().isoformat(), "trees": {}})
    run.update({"portkit": commit, "date": date.today().isoformat()})
    run["trees"].update(rows)
    path.write_text(json.dumps(data, indent=1) + "\n")
    render_results()


def describe() -> str:
    """portkit's commit, -dirty when the working tree differs (what a results row was made with)."""
    return subprocess.run(["git", "-C", str(HERE.parents[1]), "describe", "--always", "--abbrev=10", "--dirty"],
                          capture_output=True, text=True).stdout.strip()


def render_results() -> None:
    """calibration_whole_trees.md from its JSON: the whole trees' runs, then the leave-one-out
    section on the port histories (leave_one_out.py) when their headlines are kept."""
    data = json.loads((RESULTS / "calibration_whole_trees.json").read_text())
    labels = list(data["runs"])
    out = ["# Whole trees: portkit's headline against the real AMD port",
           "",
           "Written by `python benchmarks/calibration/run.py --whole-trees --label LABEL` (trees.toml); "
           "person-weeks P50 (P10-P90) of `portkit audit TREE --format json --jobs 2` on the whole tree.",
           "",
           "| run | portkit commit | date |", "|---|---|---|"]
    out += [f"| {k} | {v['portkit']} | {v['date']} |" for k, v in data["runs"].items()]
    out += ["", "| tree | real outcome | source | " + " | ".join(f"{k}: P50 (P10-P90)" for k in labels)
            + " | optional, not included (P50) | blockers |",
            "|---|---|---|" + "---|" * len(labels) + "---|---|"]
    names = list(dict.fromkeys(n for v in data["runs"].values() for n in v["trees"]))
    for name in names:
        runs = [data["runs"][k]["trees"].get(name) for k in labels]
        last = next(r for r in reversed(runs) if r)
        cells = [f"{r['person_weeks']['p50']:g} ({r['person_weeks']['p10']:g}-{r['person_weeks']['p90']:g})"
                 if r else "-" for r in runs]
        optional_code = "; ".join(f"{o['feature']} +{o['person_weeks_p50']:g}" for o in last["optional"]) or "-"
        out.append(f"| {name} ({last['commit'][:8]}) | {last['outcome']} | {last['source']} | " + " | ".join(cells)
                   + f" | {optional_code} | {last['blockers']} |")
    if "histories" in data:
        import leave_one_out  # noqa: PLC0415  (it imports this module)
        out += ["", *leave_one_out.section(data["histories"])]
    (RESULTS / "calibration_whole_trees.md").write_text("\n".join(out) + "\n")


def run_whole_trees(args: argparse.Namespace) -> int:
    trees = tomllib.loads((HERE / "trees.toml").read_text())["tree"]
    rows = {}
    for tree in trees:
        if args.only and tree["name"] not in args.only:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            row = whole_tree(tree, args.mirrors, Path(tmp))
        if row is None:
            continue
        rows[tree["name"]] = row
        pw = row["person_weeks"]
        print(f"| {tree['name']} | {pw['p50']:g} ({pw['p10']:g}-{pw['p90']:g}) | {row['blockers']} | "
              f"{'; '.join(o['feature'] + ' +' + format(o['person_weeks_p50'], 'g') for o in row['optional'])} |",
              flush=True)
    if rows:
        write_whole_trees(args.label, rows)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--snapshot", action="store_true", help="write facts/<project>.json")
    ap.add_argument("--scores", action="store_true", help="only the scores, from facts/ (no mirrors)")
    ap.add_argument("--whole-trees", action="store_true", help="audit trees.toml's trees whole")
    ap.add_argument("--label", default="before", help="the run's name in the whole-tree results")
    args = ap.parse_args(argv)
    if args.whole_trees:
        return run_whole_trees(args)
    if args.scores:
        print_scores()
        return 0
    projects = tomllib.loads((HERE / "projects.toml").read_text())["project"]
    rows = []
    for project in projects:
        name = project["name"]
        if args.only and name not in args.only:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            row = measure(name, project, args.mirrors, Path(tmp))
        if row is None:
            continue
        if args.snapshot:
            (HERE / "facts").mkdir(exist_ok=True)
            (HERE / "facts" / f"{name}.json").write_text(json.dumps(row.pop("facts"), separators=(",", ":")) + "\n")
        row.pop("facts", None)
        rows.append((name, row))
        print(f"| {name} | {row['manual_lines']} | {row['files']} | {row['duration_days']} | "
              f"{row['p50']:g} ({row['p10']:g}-{row['p90']:g}) | {'; '.join(row['top'])} |", flush=True)
    if len(rows) >= 2:
        hours = [r["p50"] for _, r in rows]
        lines = [r["manual_lines"] for _, r in rows]
        per_line, error = calibration.fit(hours, lines)
        print(f"these {len(rows)}: spearman {calibration.spearman(hours, lines)}; fit {per_line} h per manual line, "
              f"median error factor {error}")
    print_scores()
    return 0


if __name__ == "__main__":
    sys.exit(main())
