"""Files reached by `#include` are converted, audited and gated whatever their names (issue 28, item 10).

An X-macro `.def`, a `.cuinc`, a `.cuh.in` template, an extension-less header: each is code once a
source includes it. The golden case is fixtures/convert/included_any_suffix (compiled by
test_compile_fixtures like every case); the situations around it (outside the root, links,
cycles, binary files, the gate) are small trees built here, each with an included file that must
be converted, so that every test also fails where includes are not followed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, isolated_git
from portkit.api import audit_paths, convert_paths
from portkit.commands.audit import audit_paths as audit_tree
from portkit.cli.app import main
from portkit.project.config import Config
from portkit.commands.results import AuditOptions

CASE = REPO / "fixtures" / "convert" / "included_any_suffix"
# file -> its warp-size hazard (line, column) in the fixture
INCLUDED = {
    "ops.def": (5, 27),
    "kernels.cuinc": (7, 16),
    "launch_config.cuh.in": (9, 12),
    "device_helpers": (6, 24),
}
KERNEL = "#include <cuda_runtime.h>\n#include \"{name}\"\n__global__ void k(float *o) {{ o[0] = 1.0f; }}\n"
CODE = "__device__ inline int lane() { return threadIdx.x % 32; }\ninline void grab(void **p) { cudaMalloc(p, 64); }\n"
CONVERTED = ("\n#include <hip/hip_runtime.h>\n__device__ inline int lane() { return threadIdx.x % 32; }\n"
             "inline void grab(void **p) { hipMalloc(p, 64); }\n")


def findings(paths: list[Path]) -> list[tuple[str, str, int, int]]:
    document = audit_paths(paths, rocm="5.2")
    return [(f["code"], f["path"], f["line"], f["column"]) for f in document["findings"] if f["code"] != "PK005"]


def tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode() if isinstance(text, str) else text)
    return root


@pytest.mark.parametrize("name", sorted(INCLUDED))
def test_included_file_is_converted_as_source_and_keeps_its_name(name: str, tmp_path: Path):
    out = tmp_path / "out"
    assert main(["convert", str(CASE / "input"), "-o", str(out), "-q", "--rocm", "5.2"]) == 0
    produced = (out / name).read_bytes()
    assert produced == (CASE / "expected" / name).read_bytes()
    assert produced != (CASE / "input" / name).read_bytes()


@pytest.mark.parametrize("name", sorted(INCLUDED))
def test_audit_names_the_finding_in_the_included_file(name: str):
    line, column = INCLUDED[name]
    assert ("PK201", name, line, column) in findings([CASE / "input"])


def test_summary_counts_included_files(tmp_path: Path, capsys):
    assert main(["convert", str(CASE / "input"), "-o", str(tmp_path / "out"), "--rocm", "5.2"]) == 0
    out = capsys.readouterr().out
    assert "portkit convert: 5 files scanned (100 lines), 5 changed" in out
    assert "CUDA references: 12 found, 12 converted, 0 left (100.0% converted)" in out


def test_a_file_no_source_includes_keeps_being_ignored(tmp_path: Path):
    """unused.cuinc holds cudaMalloc but nothing includes it: copied byte for byte, never audited."""
    out = tmp_path / "out"
    assert main(["convert", str(CASE / "input"), "-o", str(out), "-q", "--rocm", "5.2"]) == 0
    assert (out / "unused.cuinc").read_bytes() == (CASE / "input" / "unused.cuinc").read_bytes()
    assert (out / "ops.def").read_bytes() == (CASE / "expected" / "ops.def").read_bytes()
    assert [f[1] for f in findings([CASE / "input"]) if f[1] == "unused.cuinc"] == []


def test_an_include_outside_the_root_is_not_read_or_written(tmp_path: Path, monkeypatch):
    outside = tree(tmp_path / "outside", {"secret.def": CODE})
    secret = outside / "secret.def"
    src = tree(tmp_path / "src", {
        "k.cu": KERNEL.format(name="../outside/secret.def") + f'#include "{secret}"\n#include "in.def"\n',
        "in.def": CODE})
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *a, **k: (opened.append(str(path)), real_open(path, *a, **k))[1])
    document = audit_paths([src], rocm="5.2")
    result = convert_paths([src], in_place=True, rocm="5.2")
    assert (src / "in.def").read_bytes() == CONVERTED.encode()
    assert secret.read_bytes() == CODE.encode()
    assert [p for p in opened if os.path.realpath(p).startswith(str(outside.resolve()))] == []
    assert {o.entry.rel for o in result.outcomes} == {"in.def", "k.cu"}
    assert [(f["path"], f["line"]) for f in document["findings"]] == [("in.def", 1)]


def test_an_include_cycle_ends_and_both_files_are_converted(tmp_path: Path):
    src = tree(tmp_path / "src", {
        "k.cu": KERNEL.format(name="a.cuinc"),
        "a.cuinc": '#pragma once\n#include "b.cuinc"\n' + CODE,
        "b.cuinc": '#pragma once\n#include "a.cuinc"\ninline void put(void *p) { cudaFree(p); }\n'})
    assert findings([src]) == [("PK201", "a.cuinc", 3, 39)]
    convert_paths([src], in_place=True, rocm="5.2")
    assert b"hipMalloc(p, 64)" in (src / "a.cuinc").read_bytes()
    assert b"hipFree(p)" in (src / "b.cuinc").read_bytes()


def test_an_include_reached_through_a_link_is_reported_not_followed(tmp_path: Path, capsys):
    src = tree(tmp_path / "src", {
        "k.cu": KERNEL.format(name="linked.def") + '#include "shared/x.def"\n#include "in.def"\n',
        "notes.txt": CODE, "in.def": CODE, "real/x.def": CODE})
    (src / "linked.def").symlink_to("notes.txt")
    (src / "shared").symlink_to("real", target_is_directory=True)
    assert main(["convert", str(src), "--in-place", "--rocm", "5.2"]) == 0
    out = capsys.readouterr().out
    assert ("linked.def: symbolic link, not followed, though k.cu includes a file through it: that code is not "
            "converted or audited (put the file itself there to have it read)") in out
    assert ("shared: symbolic link to a directory, not followed, though k.cu includes a file through it") in out
    assert (src / "notes.txt").read_bytes() == CODE.encode()
    assert (src / "real" / "x.def").read_bytes() == CODE.encode()
    assert (src / "in.def").read_bytes() == CONVERTED.encode()


def test_a_binary_include_is_not_scanned(tmp_path: Path):
    table = b"\x00\x01cudaMalloc threadIdx.x % 32\n"
    src = tree(tmp_path / "src", {"k.cu": KERNEL.format(name="table.bin") + '#include "in.def"\n',
                                  "table.bin": table, "in.def": CODE})
    assert findings([src]) == [("PK201", "in.def", 1, 39)]
    result = convert_paths([src], in_place=True, rocm="5.2")
    assert (src / "table.bin").read_bytes() == table
    assert (src / "in.def").read_bytes() == CONVERTED.encode()
    assert [o.entry.rel for o in result.outcomes if o.scan is not None] == ["in.def", "k.cu"]


def test_angle_includes_reach_tree_files_but_not_standard_headers(tmp_path: Path):
    """`<lib/config.def>` is the tree's (found by path suffix, as units.py infers -I); a bare
    `<vector>` is the standard library's even when the tree has a file of that name."""
    src = tree(tmp_path / "src", {
        "app/k.cu": KERNEL.format(name="in.def") + "#include <lib/config.def>\n#include <vector>\n",
        "app/in.def": CODE, "include/lib/config.def": CODE, "app/vector": CODE})
    convert_paths([src], in_place=True, rocm="5.2")
    assert (src / "include" / "lib" / "config.def").read_bytes() == CONVERTED.encode()
    assert (src / "app" / "vector").read_bytes() == CODE.encode()


def test_audit_exclude_applies_before_includes_are_followed(tmp_path: Path):
    """An excluded file includes nothing: what only it includes stays out of the audit."""
    src = tree(tmp_path / "src", {"k.cu": KERNEL.format(name="in.def"), "in.def": CODE,
                                  "vendor/v.cu": KERNEL.format(name="../only_vendor.def"), "only_vendor.def": CODE})
    result = audit_tree([src], AuditOptions(select=("PK201",), config=Config(exclude=("vendor/**",))))
    assert [(f.code, f.path, f.line) for f in result.findings] == [("PK201", "in.def", 1)]


# ---- the gate

def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    isolated_git(tmp_path, monkeypatch)
    root = tree(tmp_path / "repo", {"k.cu": KERNEL.format(name="ops.def"), "ops.def": "// ops\n",
                                    "notes.txt": "notes\n"})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    monkeypatch.chdir(root)
    for rel in ("ops.def", "notes.txt"):
        with open(root / rel, "a") as handle:
            handle.write(CODE)
    return root


HAZARD_LINE = "ops.def:2:39: PK201 `threadIdx.x % 32` assumes 32-lane warps; an AMD wavefront has 64 lanes"


@pytest.mark.parametrize("mode", ["files", "staged"])
def test_check_gates_an_included_file_and_ignores_one_nothing_includes(repo: Path, mode: str, capsys):
    if mode == "staged":
        git(repo, "add", "ops.def", "notes.txt")
        code = main(["check"])
    else:
        code = main(["check", "ops.def", "notes.txt"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[0] == HAZARD_LINE
    assert "notes.txt" not in out
