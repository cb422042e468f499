"""The one project pipeline: every command sees the same project (project/pipeline.py).

The gate (`check`) scans only the files of a change, yet it must classify every region as the
baseline's audit of the whole tree did: the AMD selectors and shim names are learned from the
tree (here DEMO_USE_HIP, which no configuration names), so a finding the baseline accepted in a
ported region is the same finding, with the same fingerprint, when the gate sees it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, isolated_git
from portkit.cli import main
from portkit.project import pipeline
from portkit.engine.facts import ProjectFacts
from portkit.project.settings import scan_options

PROJECT = REPO / "fixtures" / "convert" / "dual_vendor_project" / "input"
# PTX with an AMD counterpart under the tree's own selector: "already ported" for whoever learned
# DEMO_USE_HIP from common.cuh (which includes vendors/hip.h under it), new code for whoever did not
LANE = """#include "common.cuh"

__device__ unsigned lane()
{
    unsigned r;
#if defined(DEMO_USE_HIP)
    r = __lane_id();
#else
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
#endif
    return r;
}
"""


def _repo_with_baseline(tmp_path: Path, monkeypatch) -> Path:
    """A repository whose last commit holds only the baseline of the (untracked, so new) project."""
    isolated_git(tmp_path, monkeypatch)
    root = tmp_path / "repo"
    shutil.copytree(PROJECT, root)
    (root / "lane.cu").write_text(LANE)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.chdir(root)
    assert main(["baseline"]) == 0
    subprocess.run(["git", "add", ".portkit-baseline.json"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "baseline"], cwd=root, check=True)
    return root


def test_check_and_its_baseline_classify_the_same_regions(tmp_path: Path, monkeypatch, capsys):
    root = _repo_with_baseline(tmp_path, monkeypatch)
    accepted = json.loads((root / ".portkit-baseline.json").read_text())["findings"]
    assert [(f["path"], f["code"]) for f in accepted if f["path"] == "lane.cu"] == [("lane.cu", "PK301")]
    capsys.readouterr()
    assert main(["check", "--diff-base", "HEAD", "--fail-on", "info"]) == 0   # every line is new
    assert capsys.readouterr().out.splitlines() == [
        f"portkit check: 4 files checked (changes against HEAD), no new findings at or above info; "
        f"{len(accepted)} known"]


def test_without_the_trees_facts_the_gate_would_disagree(tmp_path: Path, monkeypatch, capsys):
    """The control: a gate that learned nothing of the tree (the old check) blocks findings the
    baseline accepted, because DEMO_USE_HIP's branches are AMD code only for the one that learned it."""
    root = _repo_with_baseline(tmp_path, monkeypatch)
    monkeypatch.setattr(pipeline, "tree_facts", lambda *args: ProjectFacts())
    capsys.readouterr()
    assert main(["check", "--diff-base", "HEAD", "--fail-on", "info"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("lane.cu:9:5: PK301 inline PTX (reads hardware warp/SM ids)")


def test_every_command_learns_the_same_facts_of_a_tree():
    options = scan_options(audit=True)
    project = pipeline.prepare([PROJECT], options)
    assert project.facts.amd_macros == ("DEMO_USE_HIP",)
    assert project.facts == pipeline.tree_facts(PROJECT, options, pipeline.Config())
    assert pipeline.prepare([PROJECT], scan_options()).facts == project.facts   # convert's view


def test_the_configuration_exclude_applies_to_every_command(tmp_path: Path):
    from portkit.project.config import Config
    shutil.copytree(PROJECT, tmp_path / "p")
    project = pipeline.prepare([tmp_path / "p"], scan_options(), Config(exclude=("vendors/**",)))
    assert [(e.rel, e.kind) for e in project.entries] == [
        ("common.cuh", "source"), ("kernels.cu", "source"), ("vendors/hip.h", None)]   # left as it is
    assert project.excluded == 1
    # the selector is still learned (common.cuh includes the shim under it); the shim's names are not
    assert (project.facts.amd_macros, project.facts.shim_names) == (("DEMO_USE_HIP",), frozenset())


def test_the_gate_reads_the_trees_facts_from_the_cache_until_a_file_changes(tmp_path: Path, monkeypatch):
    """check runs at every commit: an unchanged tree is not read again; any change of a file's
    size or time (or a new file) learns the facts again."""
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    tree = tmp_path / "p"
    shutil.copytree(PROJECT, tree)
    options, config = scan_options(audit=True), pipeline.Config()
    first = pipeline.tree_facts(tree, options, config)
    assert first.amd_macros == ("DEMO_USE_HIP",) and first.shim_names

    def unread(*args):
        raise AssertionError("the tree was read again")
    monkeypatch.setattr(pipeline.includes, "follow", unread)
    assert pipeline.tree_facts(tree, options, config) == first            # from the cache
    (tree / "common.cuh").write_text((tree / "common.cuh").read_text().replace("DEMO_USE_HIP", "OTHER_HIP"))
    with pytest.raises(AssertionError, match="read again"):
        pipeline.tree_facts(tree, options, config)
    monkeypatch.undo()
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    assert pipeline.tree_facts(tree, options, config).amd_macros == ("OTHER_HIP",)
    assert len(list((tmp_path / "cache").glob("facts-*.json"))) == 1      # one slot per tree, overwritten


def test_the_gate_knows_which_unknown_names_sources_include_from_the_cache_until_a_file_changes(
        tmp_path: Path, monkeypatch):
    """A commit of a README asks whether a source includes it (project/includes.py): the answer
    for an unchanged tree comes from the cache, the same as reading it; an edit reads it again."""
    from portkit.project import includes
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    tree = tmp_path / "p"
    tree.mkdir()
    (tree / "k.cu").write_text('#include "ops.def"\n__global__ void k() {}\n')
    (tree / "ops.def").write_text("OP(add)\n")
    (tree / "README.md").write_text("read me\n")
    asked = ("k.cu", "ops.def", "README.md", "gone.def")
    first = [includes.TreeSources(tree).scans(tree / name) for name in asked]
    assert first == [True, True, False, False]

    def unread(*args):
        raise AssertionError("the tree was read again")
    monkeypatch.setattr(includes, "follow", unread)
    assert [includes.TreeSources(tree).scans(tree / name) for name in asked] == first   # from the cache
    (tree / "k.cu").write_text("__global__ void k() {}\n")     # includes it no more
    with pytest.raises(AssertionError, match="read again"):
        includes.TreeSources(tree).scans(tree / "ops.def")
    monkeypatch.undo()
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    assert includes.TreeSources(tree).scans(tree / "ops.def") is False
    slot, = (tmp_path / "cache").glob("included-*.json")    # one slot per tree, overwritten
    slot.write_text('{"key": "x", "value": ["ops.def"]}')    # a cache file not written by portkit
    assert includes.TreeSources(tree).scans(tree / "ops.def") is False


def test_the_cache_keeps_a_bounded_number_of_project_slots(tmp_path: Path, monkeypatch):
    from portkit.core import datacache
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(datacache, "SLOTS_KEPT", 3)
    for n in range(5):
        assert datacache.cached_slot(f"facts-{n}", "k", lambda: n, lambda v: v, lambda v: v) == n
    assert sorted(p.name for p in tmp_path.glob("facts-*.json")) == ["facts-2.json", "facts-3.json", "facts-4.json"]
