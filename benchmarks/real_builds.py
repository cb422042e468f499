"""Whole real projects after convert: does each GPU unit compile for AMD, and does the CMake configure?

    python benchmarks/real_builds.py [--trees /tmp/trees] [--rocm 6.2] [--jobs 2] [--md FILE] [NAME ...]

Issue 48's measurement. For each project folder under --trees (fetched public CUDA projects,
never committed: llm.c, ggml, faiss, tiny-cuda-nn, cuCollections, nccl-tests, LightGBM,
CTranslate2, gunrock), as a user would:
1. `portkit convert TREE -o OUT` (the whole tree);
2. `portkit verify OUT --source TREE --rocm X -j N --rocm-headers fixtures/rocm-headers --offline`
   (each translation unit against the pinned header pack of ROCm 6.2, HIP and 14 libraries, and
   `--torch-headers` the pinned torch pack for a unit that includes torch; every failure explained
   by a finding or counted unexplained);
3. when OUT has a top-level CMakeLists.txt: `portkit verify OUT --source TREE --configure --offline`
   (the newest CMake on PATH, Debian's ROCm through portkit's toolchain file; its one line kept).
   A tree that configures without reaching HIP (its AMD build is an option off by default) is
   configured again with the first HIP option the line names turned on (`-DGGML_HIP=ON`), as a
   user reading that line would.
Writes one Markdown table (units, compiled, failed and explained, unexplained, not reached,
the units that compile or fail only on a decision as a share of those reached: issue 48's 90%
target, verify's own `failed_on_decision`; seconds, the configure result), the unexplained errors
grouped by message, the list of portkit's gaps, and the failed units not on a decision by their
first such error (the sites left to fix). The trees are read, never written; outputs go to a temporary folder.

A snapshot has no git submodules (tiny-cuda-nn's dependencies/fmt, cmrc, cutlass; LightGBM's
external_libs/...): their units are "not reached" (PK702). --trees may name copies where they were
put by hand at the commits the trees pin (no `.git` in the folder); each row says which submodules
were supplied so and which are still empty, as the numbers are not the snapshot's. A file convert
gives up on (--file-timeout: cutlass's 50,000-line mma_sm90_gmma.hpp) is left as it is and named;
the rest of the tree is converted and verified, as the command does.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from portkit.estimate.decisions import NEWER_ROCM, release_named  # noqa: E402  (verify's own reading of a PK002)
PACK = REPO / "fixtures" / "rocm-headers" / "rocm-6.2.0-headers.tar.xz"   # pinned: HIP and 14 libraries, no download
TORCH_PACKS = tuple(sorted(PACK.parent.glob("torch-*-headers.tar.xz")))      # pinned: torch's headers, its ATen/hip
PROJECTS = ("llm.c", "ggml", "faiss", "tiny-cuda-nn", "cuCollections", "nccl-tests", "LightGBM",
            "CTranslate2", "gunrock")
NAMES = re.compile(r"'[^']*'|\"[^\"]*\"")


@dataclass
class Outcome:
    """One project's numbers: the verify summary, the configure result, the gaps."""

    name: str
    files: int = 0
    convert_s: float = 0.0
    summary: dict = field(default_factory=dict)
    configure: str = "no CMakeLists.txt"
    gaps: Counter = field(default_factory=Counter)
    sites: Counter = field(default_factory=Counter)   # failed units not on a decision, by their first such error
    decided: Counter = field(default_factory=Counter)  # failed units on decisions, by their decisions
    notes: list[str] = field(default_factory=list)    # what the numbers rest on: submodules supplied, files left


def portkit(*args: str, timeout: int) -> subprocess.CompletedProcess:
    """The CLI as a user runs it (this checkout's portkit), never through a shell."""
    return subprocess.run([sys.executable, "-m", "portkit", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def configure(out: Path, tree: Path, work: Path) -> str:
    """`portkit verify --configure`'s line without the tree's path and the CMake it names (the
    table's heading says which); once more with the tree's first HIP option when the default
    configure reaches no HIP."""
    if not (out / "CMakeLists.txt").is_file():
        return "no CMakeLists.txt"
    doc = _configure(out, tree, work, ())
    hip = [n for n in doc.get("hip_options", []) if re.search(r"HIP|ROCM|AMD", n, re.I)]
    if doc.get("status") != "configured_without_hip" or not hip:
        return _reason(doc)
    again = _configure(out, tree, work, (f"{hip[0]}=ON",))
    return f"{_reason(doc)}; with -D{hip[0]}=ON: {_reason(again)}"


def _configure(out: Path, tree: Path, work: Path, defines: tuple[str, ...]) -> dict:
    report = work / f"{tree.name}-configure.json"
    report.unlink(missing_ok=True)
    args = [a for d in defines for a in ("--cmake-define", d)]
    done = portkit("verify", str(out), "--source", str(tree), "--configure", "--offline", "--timeout", "900",
                   "--format", "json", "-o", str(report), *args, timeout=1200)
    if not report.is_file():
        return {"line": "verify --configure failed: " + done.stderr.strip()[-160:]}
    return json.loads(report.read_text(encoding="utf-8"))


def _reason(doc: dict) -> str:
    """The line without its tree and, at its end, the CMake and ROCm it names."""
    line = doc["line"].split(": ", 1)[-1]
    return line[:line.rfind(" (CMake ")] if " (CMake " in line else line


def unpack(work: Path) -> Path:
    """The pinned packs, unpacked where verify reads them (--rocm-headers takes a folder): the ROCm
    pack, and beside it the torch pack pinned in fixtures/rocm-headers (torch_args)."""
    for archive in (PACK, *TORCH_PACKS):
        with tarfile.open(archive) as tar:
            tar.extractall(work / "packs", filter="data")
    return work / "packs" / "rocm-6.2.0-headers"


def torch_args(pack: Path) -> list[str]:
    """--torch-headers with the pinned torch pack unpacked beside the ROCm one: without it verify
    takes the newest pack of its own cache, which may be older and unpinned (tiny-cuda-nn's
    bindings.cpp stopped at TORCH_HIP_CPP_API, a name only packs built before 46075f3 have)."""
    found = sorted(p for p in pack.parent.glob("torch-*-headers") if p.is_dir())
    return ["--torch-headers", str(found[-1])] if found else []


def measure(tree: Path, rocm: str, jobs: int, work: Path, pack: Path, verify: bool = True,
            cmake: bool = True) -> Outcome:
    outcome = Outcome(tree.name)
    out = work / f"{tree.name}-hip"
    start = time.perf_counter()
    converted = portkit("convert", str(tree), "-o", str(out), "--rocm", rocm, "-j", str(jobs), "--format", "json",
                        timeout=3600)
    outcome.convert_s = time.perf_counter() - start
    outcome.notes = submodules(tree)
    left = _timed_out(converted)
    if converted.returncode not in (0, 1) and not (left and out.is_dir()):
        outcome.configure = "convert failed: " + converted.stderr.strip()[-160:]
        return outcome
    if left:
        outcome.notes.append(f"convert left {len(left)} file(s) as they are (--file-timeout): {', '.join(left)}")
    if not verify:
        outcome.configure = configure(out, tree, work)
        return outcome
    report = work / f"{tree.name}-verify.json"
    verified = portkit("verify", str(out), "--source", str(tree), "--rocm", rocm, "-j", str(jobs), "--format", "json",
                       "--rocm-headers", str(pack), *torch_args(pack), "--offline", "-o", str(report), timeout=7200)
    if report.is_file():
        doc = json.loads(report.read_text(encoding="utf-8"))
        outcome.summary = doc["summary"]
        outcome.gaps = Counter(_first_unexplained(u) for u in doc["units"] if u["unexplained"])
        outcome.sites = Counter(_first_not_decided(u) for u in doc["units"]
                                if u["status"] == "failed" and not u["unexplained"] and not u["failed_on_decision"])
        outcome.decided = Counter(_decisions(u) for u in doc["units"] if u["failed_on_decision"])
    else:
        outcome.summary = {"error": verified.stderr.strip()[-160:]}
    outcome.configure = configure(out, tree, work) if cmake else "not run (--no-configure)"
    return outcome


_GITMODULE_PATH = re.compile(r"^\s*path\s*=\s*(\S+)", re.M)
_TIMED_OUT = re.compile(r"^portkit: (\S+): took longer than \d+ s to scan: left as it is", re.M)


def submodules(tree: Path) -> list[str]:
    """Which of the tree's git submodules were supplied by hand (files there, no `.git`: a
    snapshot has none), and which are still empty: the row's numbers rest on them."""
    gitmodules = tree / ".gitmodules"
    paths = _GITMODULE_PATH.findall(gitmodules.read_text(encoding="utf-8", errors="replace")) \
        if gitmodules.is_file() else []
    filled = [p for p in paths if (tree / p).is_dir() and any((tree / p).iterdir())]
    by_hand = [p for p in filled if not (tree / p / ".git").exists()]
    empty = [p for p in paths if p not in filled]
    notes = [f"submodules supplied by hand (not in the snapshot): {', '.join(by_hand)}"] if by_hand else []
    return notes + ([f"submodules empty: {', '.join(empty)}"] if empty and by_hand else [])


def _timed_out(converted: subprocess.CompletedProcess) -> list[str]:
    """The files convert left as they are at its --file-timeout (it goes on, and exits 2)."""
    if converted.returncode != 2:
        return []
    left = _TIMED_OUT.findall(converted.stderr)
    other = [l for l in converted.stderr.splitlines() if l.strip() and not _TIMED_OUT.match(l)]
    return [] if other else left


def _first_unexplained(unit: dict) -> str:
    for error in unit["errors"]:
        if error["unexplained"]:
            return NAMES.sub("'...'", error["message"])[:120]
    return "(no error line: " + (unit.get("compiler_output") or "").strip()[:80] + ")"


def _first_not_decided(unit: dict) -> str:
    """The first error, not a consequence, that no decision explains: its findings' codes and message."""
    for error in unit["errors"]:
        if not error["decision"] and error["consequence_of"] is None:
            codes = ",".join(f["code"] for f in error["findings"]) or "-"
            return f"{codes}: " + NAMES.sub("'...'", error["message"])[:100]
    return "(no error line)"


def _decisions(unit: dict) -> str:
    """The decisions a unit fails on, and for the ROCm release the first name it stops at there: a
    reader sees that ggml's 186 units wait on one release, not on 186 pieces of work."""
    out = []
    for error in unit["errors"]:
        if error["decision"] and error["consequence_of"] is None and error["decision"] not in out:
            out.append(error["decision"])
    first = next((e for e in unit["errors"] if e["decision"] == NEWER_ROCM and e["consequence_of"] is None), None)
    finding = first["findings"][0] if first and first["findings"] else None
    release = release_named(finding["message"]) if finding else ""
    return " + ".join(f"{d} ({release}: {finding['subject']})" if d == NEWER_ROCM and release else d for d in out)


def decided(s: dict) -> str:
    """Issue 48's measure: units that compile or fail only on a decision, % of the units reached."""
    reached = s["units"] - s["not_reached"]
    return f"{100 * (s['compiled'] + s['failed_on_decision']) / reached:.0f}%" if reached else "-"


def table(outcomes: list[Outcome], rocm: str, jobs: int) -> str:
    lines = [f"# Real projects after `portkit convert`, verified at ROCm {rocm} (-j {jobs})", "",
             "| project | units | compiled | failed, explained | unexplained | not reached | compiled or failed on a "
             "decision, % of reached units | verify s | CMake for HIP |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    lines += [_row(o) for o in outcomes]
    if any(o.notes for o in outcomes):
        lines.append("")
    for o in outcomes:
        lines += [f"- {o.name}: {note}" for note in o.notes]
    for o in outcomes:
        if o.gaps:
            lines += ["", f"## {o.name}: unexplained units by their first unexplained error", ""]
            lines += [f"- {n} × `{message}`" for message, n in o.gaps.most_common(15)]
        if o.decided:
            lines += ["", f"## {o.name}: failed units on decisions, by their decisions", ""]
            lines += [f"- {n} × {what}" for what, n in o.decided.most_common(15)]
        if o.sites:
            lines += ["", f"## {o.name}: failed units not on a decision, by their first such error", ""]
            lines += [f"- {n} × `{message}`" for message, n in o.sites.most_common(15)]
    return "\n".join(lines) + "\n"


def _row(o: Outcome) -> str:
    s = o.summary
    if "units" not in s:
        return f"| {o.name} | - | - | - | - | - | - | - | {s.get('error', o.configure) if s else o.configure} |"
    return (f"| {o.name} | {s['units']} | {s['compiled']} | {s['explained']} | {s['unexplained']} | "
            f"{s['not_reached']} | {decided(s)} | {s['seconds']:.0f} | {o.configure} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"projects under --trees (default: {', '.join(PROJECTS)})")
    parser.add_argument("--trees", type=Path, default=Path("/tmp/trees"))
    parser.add_argument("--rocm", default="6.2")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--md", type=Path, help="also write the table here")
    parser.add_argument("--no-verify", action="store_true", help="convert and configure only (the CMake column)")
    parser.add_argument("--no-configure", action="store_true", help="verify only (the verify columns)")
    parser.add_argument("--work", type=Path, help="keep the converted trees and reports here (default: a temporary "
                        "folder): verify's unit cache is per tree path, so a rerun with the same --work compiles "
                        "only the units whose files changed")
    args = parser.parse_args()
    outcomes = []
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work.absolute() if args.work else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        pack = unpack(work)
        for name in args.names or PROJECTS:
            tree = args.trees / name
            if not tree.is_dir():
                print(f"{name}: not under {args.trees}, skipped", file=sys.stderr)
                continue
            outcomes.append(measure(tree, args.rocm, args.jobs, work, pack, not args.no_verify,
                                    not args.no_configure))
            print(_row(outcomes[-1]), flush=True)
    text = table(outcomes, args.rocm, args.jobs)
    print(text)
    if args.md:
        args.md.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
