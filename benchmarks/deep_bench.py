"""Audit a CUDA tree with both engines and count what deep mode (libclang) adds.

    python benchmarks/deep_bench.py CUDA_TREE [--rocm 5.2] [--jobs 2] [--cuda-path /usr/local/cuda]

Prints, for tree-sitter and for `--engine clang`: the time, the findings by code, kernel launches
and CUDA API uses found; for deep mode also the units parsed, the units that fell back to
tree-sitter (crash, time limit), the launches and API uses that only macro expansions reveal,
launches from device code, and the findings left out because their `#if` branch is not compiled
in this configuration. The tree is read, never modified.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from portkit.commands.audit import AuditOptions, audit_paths
from portkit.commands.deep import toolchain
from portkit.commands.deep.engine import DeepOptions
from portkit.core.tables.mappings import default_db, parse_version
from portkit.commands.scan.walk import Options


def run(tree: Path, rocm: str, jobs: int, deep: DeepOptions | None):
    opts = AuditOptions(scan=Options(audit=True, rocm=parse_version(rocm)), jobs=jobs, deep=deep)
    start = time.perf_counter()
    result = audit_paths([tree], opts)
    return result, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--rocm", default="5.2")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cuda-path", type=Path)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    tc = toolchain.find(args.cuda_path)
    print(f"toolchain: {tc.describe()}")
    shallow, shallow_s = run(args.tree, args.rocm, args.jobs, None)
    deep, deep_s = run(args.tree, args.rocm, args.jobs, DeepOptions(toolchain=tc, jobs=args.jobs,
                                                                     timeout=args.timeout))
    d = deep.deep
    lines = sum(s.metrics.lines for s in shallow.scans)
    names = default_db().names
    facts = [f for fs in d.facts.values() for f in fs]
    launches = [f for f in facts if f["kind"] == "launch"]
    macro_refs = [f for f in facts if f["kind"] == "macro" and f["name"] in names]
    print(f"tree-sitter: {len(shallow.scans)} files, {lines:,} lines in {shallow_s:.1f} s "
          f"({lines / shallow_s:,.0f} lines/s); {len(shallow.findings)} findings; "
          f"launches {sum(s.metrics.launches for s in shallow.scans)}, "
          f"CUDA references {sum(s.metrics.refs_found for s in shallow.scans)}")
    print(f"clang: {d.units} units in {deep_s:.1f} s (clang part {d.seconds:.1f} s, "
          f"{lines / deep_s:,.0f} lines/s over the same files); {len(d.parsed)} files seen through clang; "
          f"{len(d.failed)} units fell back to tree-sitter; {len(d.clang_errors)} clang errors in project files")
    print(f"clang: {len(deep.findings)} findings ({d.added} added, {d.dropped_inactive} left out in inactive "
          f"#if branches, {d.settled_partial} partial-parse notes settled)")
    print(f"clang: launches {len(launches)} (through macros {sum(1 for f in launches if f['macro'])}, "
          f"from device code {sum(1 for f in launches if f['device'])}); CUDA API uses inside macro "
          f"expansions {len(macro_refs)} ({len({(f['defined_in'], f['macro']) for f in macro_refs})} macros)")
    print(f"clang: kernels and device functions declared through macros "
          f"{sum(1 for f in facts if f['kind'] == 'device')}")
    ts_launches = {s.rel: s.metrics.launches for s in shallow.scans if s.metrics.launches}
    deep_launches = Counter(f["path"] for f in launches)
    unseen = sum(n for rel, n in ts_launches.items() if rel not in d.parsed)
    print(f"launches tree-sitter counts in files no unit reached: {unseen}; in files clang saw: "
          f"tree-sitter {sum(n for rel, n in ts_launches.items() if rel in d.parsed)}, clang {len(launches)}")
    fewer = sorted(((n - deep_launches.get(rel, 0), rel) for rel, n in ts_launches.items()
                    if rel in d.parsed and n > deep_launches.get(rel, 0)), reverse=True)
    for missing, rel in fewer[:8]:
        print(f"  clang sees {missing} launch(es) fewer in {rel}")
    before, after = Counter(f.code for f in shallow.findings), Counter(f.code for f in deep.findings)
    changed = sorted(c for c in set(before) | set(after) if before[c] != after[c])
    print("findings by code, tree-sitter -> clang: " +
          ", ".join(f"{c} {before[c]}->{after[c]}" for c in changed))
    shallow_keys = {(f.path, f.line, f.code, f.subject) for f in shallow.findings}
    deep_keys = {(f.path, f.line, f.code, f.subject) for f in deep.findings}
    added = [f for f in deep.findings if (f.path, f.line, f.code, f.subject) not in shallow_keys]
    left_out = [f for f in shallow.findings if (f.path, f.line, f.code, f.subject) not in deep_keys]
    print("added by code: " + ", ".join(f"{c} {n}" for c, n in sorted(Counter(f.code for f in added).items())))
    print("left out by code: " + ", ".join(f"{c} {n}" for c, n in sorted(Counter(f.code for f in left_out).items())))
    for f in added[:12]:
        print(f"  added: {f.path}:{f.line}: {f.code} {f.message[:150]}")
    for rel, why in d.failed[:20]:
        print(f"  fell back: {rel}: {why}")
    for error in d.clang_errors[:10]:
        print(f"  clang error: {error}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
