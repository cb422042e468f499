"""benchmarks/torch_extensions.py's own arithmetic (issue 53's measurement): which upstream lines a
human port changed, which of them an audit or convert met, which findings above low met none;
on a made-up upstream/port pair, no network, no mirror."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "torch_extensions.py"
spec = importlib.util.spec_from_file_location("torch_extensions", BENCH)
tx = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = tx   # dataclasses look their module up by name
spec.loader.exec_module(tx)

UPSTREAM = {
    "csrc/k.cu": "".join(f"line {i}\n" for i in range(1, 31)),
    "csrc/same.cuh": "a\nb\n",
    "setup.py": "x = 1\n",          # not a kernel source: never a site
    "other/k.cu": "q\n",            # not under csrc/: never a site
}


def _port(up: str) -> str:
    lines = up.splitlines(keepends=True)
    lines[4] = "changed 5\n"                         # a replaced line: site 5-5
    lines[20:22] = ["changed 21\n", "changed 22\n"]  # two adjacent lines: one site 21-22
    lines.insert(28, "inserted after 28\n")          # an insertion: site 28-28
    return "".join(lines)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _trees(tmp_path: Path) -> tuple[Path, Path]:
    up, port = tmp_path / "up", tmp_path / "port"
    _write(up, UPSTREAM)
    _write(port, {**UPSTREAM, "csrc/k.cu": _port(UPSTREAM["csrc/k.cu"]), "setup.py": "x = 2\n", "other/k.cu": "r\n"})
    return up, port


def _finding(path: str, line: int, severity: str = "medium", code: str = "PK201") -> dict:
    return {"path": path, "line": line, "severity": severity, "code": code}


def test_sites_are_the_changed_runs_of_kernel_sources_only(tmp_path):
    up, port = _trees(tmp_path)
    runs = tx.human_runs(up, port, None)
    assert {rel: [(lo, hi) for lo, hi, _ in spans] for rel, spans in runs.items()} == \
        {"csrc/k.cu": [(5, 5), (21, 22), (28, 28)]}


def test_recall_and_false_positive_candidates(tmp_path):
    up, port = _trees(tmp_path)
    findings = [
        _finding("csrc/k.cu", 8),                    # 3 lines from site 5: a hit
        _finding("csrc/k.cu", 26, "info"),           # info hits site 28 too, never a candidate
        _finding("csrc/k.cu", 15, "high"),           # above low, 6 lines from any site: a candidate
        _finding("csrc/same.cuh", 1, "low"),         # low in an untouched file: not counted
        _finding("csrc/same.cuh", 2, "blocker", "PK301"),   # untouched file: a candidate
        _finding("setup.py", 1, "high"),             # not a kernel source: outside the measure
    ]
    s = tx.score("demo", tx.human_runs(up, port, None), findings)
    assert (s.total, s.hit, s.converted, s.above_low) == (3, 2, 0, 3)
    assert [(rel, lo, hi) for rel, lo, hi, _ in s.missed] == [("csrc/k.cu", 21, 22)]
    assert [(f["path"], f["line"], f["checked"]) for f in s.candidates] == \
        [("csrc/k.cu", 15, None), ("csrc/same.cuh", 2, None)]


def test_a_site_convert_rewrites_counts_as_converted_not_hit(tmp_path):
    up, port = _trees(tmp_path)
    rewritten = {"csrc/k.cu": [(24, 24, "")]}       # 2 lines past site 21-22, 4 before site 28
    s = tx.score("demo", tx.human_runs(up, port, None), [], rewritten)
    assert (s.hit, s.converted, [lo for _, lo, _, _ in s.missed]) == (0, 1, [5, 28])


def test_a_port_that_edits_a_hipified_copy_is_measured_against_converts_output(tmp_path):
    up, port, out = tmp_path / "up", tmp_path / "port", tmp_path / "out"
    upstream = "#include <cub/cub.cuh>\nint a;\nint b = 32;\nint c;\n"
    _write(up, {"csrc/k.cu": upstream})
    # convert adds a line and renames the include; the human's copy makes the same renames and
    # changes line 3 (upstream numbering) by hand: only that is the human's site.
    _write(out, {"csrc/k.cu": "#include <hip/hip_runtime.h>\n#include <hipcub/hipcub.hpp>\nint a;\nint b = 32;\nint c;\n"})
    _write(port, {"csrc/k.hip": "#include <hip/hip_runtime.h>\n#include <hipcub/hipcub.hpp>\nint a;\nint b = 64;\nint c;\n"})
    runs = tx.human_runs(up, port, out)
    assert [(lo, hi) for lo, hi, _ in runs["csrc/k.cu"]] == [(3, 3)]
    assert tx.cause(runs["csrc/k.cu"][0][2]) == "warp size 32 / lane masks"


def test_a_hand_verdict_rides_on_its_candidate(tmp_path, monkeypatch):
    up, port = _trees(tmp_path)
    monkeypatch.setitem(tx.CHECKED, ("demo", "csrc/same.cuh", "PK301"), (False, "reason"))
    s = tx.score("demo", tx.human_runs(up, port, None), [_finding("csrc/same.cuh", 2, "high", "PK301")])
    assert [f["checked"] for f in s.candidates] == [(False, "reason")]


def test_a_run_that_changes_only_whitespace_or_comments_is_no_site(tmp_path):
    """apex's port stripped trailing blanks from a licence comment: no compiler sees it."""
    up, port = tmp_path / "up", tmp_path / "port"
    code = "/* licence \n * text \n */\nint a; // old note\nint c;\nint b = 32;\n"
    _write(up, {"csrc/k.cu": code})
    _write(port, {"csrc/k.cu": "/* licence\n * text\n */\nint a;   // new note\nint c;\nint b = 64;\n"})
    assert {rel: [(lo, hi) for lo, hi, _ in spans] for rel, spans in tx.human_runs(up, port, None).items()} == \
        {"csrc/k.cu": [(6, 6)]}


def test_what_the_upstream_changed_before_the_port_merged_it_is_no_site(tmp_path):
    """A port compared with a later upstream commit (histories.toml's upstream_at): the upstream's
    own change it merged (line 2) and what the upstream added after its merge (line 9, which the
    port lacks) are not the human's; the port's own change (line 5) is, at the base's line."""
    up, port, at = tmp_path / "up", tmp_path / "port", tmp_path / "at"
    base = [f"line {i}" for i in range(1, 9)]
    later = [*base[:1], "upstream 2", *base[2:], "upstream added 9"]
    mine = [*later[:4], "ported 5", *later[5:8]]
    _write(up, {"csrc/k.cu": "\n".join(base) + "\n"})
    _write(at, {"csrc/k.cu": "\n".join(later) + "\n"})
    _write(port, {"csrc/k.cu": "\n".join(mine) + "\n"})
    assert [(lo, hi) for lo, hi, _ in tx.human_runs(up, port, None)["csrc/k.cu"]] == [(2, 2), (5, 5)]
    assert [(lo, hi) for lo, hi, _ in tx.human_runs(up, port, None, at)["csrc/k.cu"]] == [(5, 5)]


def test_a_launch_hipify_perl_spelled_is_no_site_but_a_changed_launch_is(tmp_path):
    """bitsandbytes' .hip copies are hipify-perl's: its hipLaunchKernelGGL of the launch convert keeps
    as <<<...>>> is the same launch; the block size the human changed (64 -> 128) is a site."""
    upstream = "#include <cub/cub.cuh>\nvoid f() {\n  k<T, 4><<<n, 1024>>>(a, b);\n  a++;\n  q<<<(n+7)/8, 64>>>(a);\n}\n"
    converted = ("#include <hipcub/hipcub.hpp>\nvoid f() {\n  k<T, 4><<<n, 1024>>>(a, b);\n  a++;\n"
                 "  q<<<(n+7)/8, 64>>>(a);\n}\n")
    port_copy = ("#include <hipcub/hipcub.hpp>\nvoid f() {\n"
                 " hipLaunchKernelGGL(( k<T, 4>), dim3(n), dim3(1024), 0, 0, a, b);\n  a++;\n"
                 " hipLaunchKernelGGL(( q), dim3((n+7)/8), dim3(128), 0, 0, a);\n}\n")
    up, port, out = tmp_path / "up", tmp_path / "port", tmp_path / "out"
    _write(up, {"csrc/k.cu": upstream})
    _write(out, {"csrc/k.cu": converted})
    _write(port, {"csrc/k.hip": port_copy})
    assert [(lo, hi) for lo, hi, _ in tx.human_runs(up, port, out)["csrc/k.cu"]] == [(5, 5)]
