"""What the human AMD ports changed in their Triton kernels (issue 50: price what the data says).

    python benchmarks/calibration/triton_edits.py [--mirrors /work/.mirror]

For each port of histories.toml whose upstream has Triton kernels at the port's net base (a .py
file with `@triton.jit`, outside vendored copies): how many of those files the port's commits
changed, and by how many lines (added + deleted, the net diff base..release, as histories.py
counts manual lines). The Triton kernel item of mappings/effort.toml is priced from this count
(docs/estimate.md, "Triton kernels"). Reads the git mirrors only: nothing is fetched or run.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import histories  # noqa: E402  (the same pairing of port and upstream mirrors, the same commits)

JIT = re.compile(r"^\s*@triton\.(?:jit|autotune|heuristics)\b", re.M)


def triton_files(pair: histories.Pair, commit: str) -> list[str]:
    """The .py files with a Triton kernel at COMMIT."""
    names = [n for n in pair.git("ls-tree", "-r", "--name-only", commit).splitlines()
             if n.endswith(".py") and not histories.VENDORED.search(n)]
    return [n for n in names if JIT.search(pair.git("show", f"{commit}:{n}"))]


def edits(mirrors: Path, project: dict) -> tuple[list[str], dict[str, int]] | None:
    """(Triton files at the net base, {file: lines the port changed}) for one port."""
    with tempfile.TemporaryDirectory() as tmp:
        pair = histories.Pair(mirrors, project["port"], project["upstream"], Path(tmp))
        if project["kind"] == "range":
            release, upstream_at = pair.rev(project["release"]), pair.rev(project["base"])
            commits = list(dict.fromkeys(c for spec in project["commits"] for c in
                                         pair.git("rev-list", "--no-merges", spec).split()))
        else:
            ref = project["release"]
            release = pair.rev(ref if re.fullmatch(r"[0-9a-f]{7,40}", ref) else f"refs/port/{ref}")
            when = pair.git("log", "-1", "--format=%cI", release).strip()
            upstream_at = histories.branch_at(pair, project["upstream_branch"], when)
            commits = histories.fork_commits(pair, release, upstream_at)
        base = pair.git("merge-base", release, upstream_at).strip()
        files = triton_files(pair, base)
        if not files:
            return None
        touched = set(pair.git("show", "--no-renames", "--format=", "--name-only", *commits).split("\n"))
        changed = {}
        for row in pair.git("diff", "--no-renames", "--numstat", base, release, "--", *files).splitlines():
            added, deleted, path = row.split("\t", 2)
            if path in touched and added != "-":
                changed[path] = int(added) + int(deleted)
        return files, changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = ap.parse_args(argv)
    total = edited = 0
    print("| port | Triton files at the base | changed by the port | lines changed |\n|---|---|---|---|")
    for project in histories.tomllib.loads((HERE / "histories.toml").read_text())["project"]:
        found = edits(args.mirrors, project)
        if found is None:
            continue
        files, changed = found
        total, edited = total + len(files), edited + len(changed)
        detail = ", ".join(f"{p} {n}" for p, n in sorted(changed.items()))
        print(f"| {project['name']} | {len(files)} | {len(changed)} | {detail or '-'} |")
    print(f"\n{edited} of {total} Triton files changed by the ports.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
