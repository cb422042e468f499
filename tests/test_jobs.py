"""-j: every CPU this process may use by default, a pool only when there is work for it, and the
same bytes out whatever the number of workers (issue 52, item 1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from portkit.cli.app import main
from portkit.commands import workers

REPO = Path(__file__).resolve().parent.parent
TREES = [REPO / "fixtures" / "rules", REPO / "fixtures" / "sample_project"]


def _jobs_default(command: str) -> int:
    from portkit.cli.app import build_parser
    args = build_parser().parse_args([command, "x"] + (["--check"] if command == "convert" else []))
    return args.jobs


@pytest.mark.parametrize("command", ["convert", "audit", "verify"])
def test_jobs_default_to_the_cpus_this_process_may_use(command):
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    from portkit.cli.common import usable_cpus
    assert usable_cpus() == expected
    assert _jobs_default(command) == expected


def test_a_small_run_starts_no_pool():
    # 5 files (a commit's worth) stay in this process however many CPUs; a pool needs 8 files a worker
    assert workers.workers_for(5, 64) == 1
    assert workers.workers_for(15, 2) == 1
    assert workers.workers_for(16, 2) == 2
    assert workers.workers_for(1000, 2) == 2
    assert workers.workers_for(1000, 1) == 1


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("tree", TREES, ids=lambda p: p.name)
def test_convert_and_audit_are_byte_identical_at_j1_and_j2(tree, tmp_path, monkeypatch, capsysbinary):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    monkeypatch.setattr(workers, "MIN_FILES_PER_WORKER", 1, raising=False)   # the pool really runs on a small tree
    runs: dict[str, list[bytes]] = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        code = main(["convert", str(tree), "-o", str(out), "-j", jobs, "--rocm", "6.2"])
        runs.setdefault("convert", []).append(bytes([code]) + capsysbinary.readouterr().out)
        runs.setdefault("tree", []).append(repr(_files(out)).encode())
        for fmt in ("json", "text"):
            code = main(["audit", str(tree), "--format", fmt, "-j", jobs, "--rocm", "6.2", "--no-cache"])
            runs.setdefault(fmt, []).append(bytes([code]) + capsysbinary.readouterr().out)
    for what, (one, two) in runs.items():
        assert one == two, what
    assert b'"findings"' in runs["json"][0] and len(runs["tree"][0]) > 1000
