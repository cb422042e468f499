"""Benchmark: the platform model on real dual-vendor trees, and what it costs.

    python benchmarks/platforms_bench.py TREE [TREE ...] [--repeat 3]

For each tree (a local checkout of ggml's src/ggml-cuda, faiss/gpu, llm.c ...; never committed),
`portkit convert` and `portkit audit --format json` run with the platform model and with
`--no-platform-model`, alternately, each in a fresh process (best of --repeat). It prints:

- the code by region: AMD-only, ported (NVIDIA-only beside an AMD branch), NVIDIA-only, shared,
  the shim headers and the AMD selector macros learned;
- what convert leaves: files it changes with and without the model;
- the audit: findings dropped as AMD-only, reported as already ported, and the estimate (P50
  person-weeks) without and with the model;
- cost: CPU seconds of convert and audit with and without the model (whole processes: noisy on a
  shared machine), and the model's own CPU seconds measured in-process, as a share of convert.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(args: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    """CPU seconds (user + system) of one fresh portkit process: steadier than wall time on a
    shared machine, and the same thing for a single-process run."""
    start = _cpu()
    proc = subprocess.run([sys.executable, "-m", "portkit", *args], capture_output=True, text=True)
    return _cpu() - start, proc


def _best(args: list[str], repeat: int) -> tuple[float, subprocess.CompletedProcess]:
    runs = [_run(args) for _ in range(repeat)]
    return min(t for t, _ in runs), runs[-1][1]


def model_cpu(tree: Path, repeat: int) -> float:
    """CPU seconds of the platform model alone, in this process: the tree pass and every file's
    region map as the scan builds it (best of `repeat`), to set against the whole convert's."""
    from portkit.engine.platform import facts as platform_facts
    from portkit.commands.scan import walk as scan
    from portkit.engine.context import Options
    from portkit.core.files import discover
    from portkit.engine.facts import ProjectFacts
    from portkit.core.source import SourceFile
    _, entries, _ = discover([tree])
    sources = [SourceFile.from_bytes(e.rel, e.path.read_bytes()) for e in entries if e.kind == "source"]
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        facts = platform_facts.project_platforms(entries, ProjectFacts())
        for source in sources:
            scan.platform_map(source, Options(), facts)
        best = min(best, time.process_time() - start)
    return best


def measure(tree: Path, repeat: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = {}
        for label, extra in (("model", []), ("no_model", ["--no-platform-model"])):
            convert_s, proc = _best(["convert", str(tree), "--check", "-q", *extra], repeat)
            diff = _run(["convert", str(tree), "--diff", "-q", *extra])[1].stdout
            report = Path(tmp) / f"{label}.json"
            audit_s, _ = _best(["audit", str(tree), "--format", "json", "-o", str(report), "-q", *extra], repeat)
            doc = json.loads(report.read_text())
            out[label] = {"convert_s": convert_s, "audit_s": audit_s, "files_changed": diff.count("\n+++ ") +
                          diff.startswith("+++ "), "doc": doc}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("| tree | lines | AMD | ported | NVIDIA-only | shared | shims | learned AMD macros | files changed (no model -> model) "
          "| findings dropped AMD / already ported | P50 weeks (no model -> model) | convert CPU s | audit CPU s "
          "| the model alone: CPU s (share of convert without it) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for tree in args.trees:
        m = measure(tree, args.repeat)
        m["model_cpu"] = model_cpu(tree, args.repeat)
        doc, base = m["model"]["doc"], m["no_model"]["doc"]
        p = doc["summary"]["platforms"]
        total = sum(p[k] for k in ("amd_bytes", "ported_bytes", "nvidia_bytes", "shared_bytes")) or 1
        share = {k: f"{100 * p[k + '_bytes'] / total:.1f}%" for k in ("amd", "ported", "nvidia", "shared")}
        weeks = (base["estimate"]["person_weeks"]["p50"], doc["estimate"]["person_weeks"]["p50"])
        cost = (m["model"]["convert_s"] / m["no_model"]["convert_s"] - 1, m["model"]["audit_s"] / m["no_model"]["audit_s"] - 1)
        print(f"| {tree.name} | {doc['summary']['lines']:,} | {share['amd']} | {share['ported']} | {share['nvidia']} | "
              f"{share['shared']} | {len(p['shim_files'])} | {', '.join(p['amd_macros']) or '-'} | "
              f"{m['no_model']['files_changed']} -> {m['model']['files_changed']} | "
              f"{p['findings_left_amd']} / {p['findings_already_ported']} | {weeks[0]:.1f} -> {weeks[1]:.1f} | "
              f"{m['no_model']['convert_s']:.2f} -> {m['model']['convert_s']:.2f} ({cost[0]:+.1%}) | "
              f"{m['no_model']['audit_s']:.2f} -> {m['model']['audit_s']:.2f} ({cost[1]:+.1%}) | "
              f"{m['model_cpu']:.3f} ({m['model_cpu'] / m['no_model']['convert_s']:.1%}) |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
