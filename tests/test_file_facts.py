"""The project facts learned per file and kept between runs (project/file_facts.py) are the facts
the whole-tree passes learn: cold, warm, with the cache off, after one file changed, and a file
both of convert's views read is learned once per run."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from portkit.core import pool
from portkit.core.datacache import cache_dir
from portkit.core.files import discover, read_sources
from portkit.core.tables.project_tables import db_for
from portkit.engine.context import Options
from portkit.engine.platform import facts as platform_facts
from portkit.project import (asm_macros, carried, file_facts, gpu_reach, includes, own_headers, own_namespaces, pipeline,
                             torch_extension, warp_constants)
from portkit.project.config import Config
from portkit.rewrite import polyfills

FIXTURES = Path(__file__).parent.parent / "fixtures"
OPTIONS = Options(audit=True, polyfills=True)
# trees with AMD selectors, shims, an AMD-only header, polyfill definitions, assembly macros
TREES = [FIXTURES, FIXTURES / "convert" / "dual_vendor_project" / "input",
         FIXTURES / "sample_project"]


def _today(entries, options: Options, config: Config, sources) -> pipeline.ProjectFacts:
    """The facts as the whole-tree passes learn them (pipeline.learn before file_facts.py)."""
    required, extras = pipeline.requirements(entries)
    facts = pipeline.ProjectFacts(amd_macros=tuple(config.amd_macros), own_packages=pipeline.own_packages(entries),
                                  requirements=required, extras=extras, carried=carried.learn(entries),
                                  generated_headers=pipeline.generated_headers(entries),
                                  own_headers=own_headers.learn(entries),
                                  torch_sources=frozenset(torch_extension.learn(entries)))
    facts = platform_facts.project_platforms(entries, facts, sources)
    facts = replace(facts, project_defined=polyfills.project_defined(entries, sources))
    facts = replace(facts, asm_macros=asm_macros.learn(sources))
    facts = replace(facts, warp_constants=warp_constants.learn(sources))
    facts = replace(facts, host_only=gpu_reach.host_only(
        (entry.rel, gpu_reach.uses_gpu(data), file_facts.included_names(data)) for entry, data in sources))
    return replace(facts, own_namespaces=own_namespaces.learn(sources, db_for(options).names_by_bytes),
                   bf16_tree=pipeline.names_bf16(sources))


def _tree(root: Path):
    _, entries, skipped = discover([root], None)
    entries, _ = includes.follow(entries, skipped)
    return entries, read_sources(entries)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PORTKIT_NO_CACHE", raising=False)
    return tmp_path / "cache"


def _learn(root: Path, entries, sources, cache_on: bool = True):
    store = pipeline.facts_store(root, cache_on)
    facts = pipeline.learn(entries, OPTIONS, Config(), sources, store)
    store.save()
    return facts, store.learned


@pytest.mark.parametrize("root", TREES, ids=lambda p: p.name)
def test_facts_cold_warm_and_off_are_todays(root, cache):
    entries, sources = _tree(root)
    expected = _today(entries, OPTIONS, Config(), sources)
    cold, learned_cold = _learn(root, entries, sources)
    warm, learned_warm = _learn(root, entries, sources)
    off, _ = _learn(root, entries, sources, cache_on=False)
    assert cold == warm == off == expected
    assert (learned_cold, learned_warm) == (len(sources), 0)


def test_facts_learned_in_worker_processes_are_the_ones_learned_here(cache, monkeypatch):
    """-j 2 learns the files no slot holds in two forked workers (FactsStore.learn_new) when they
    are worth a pool; every file's facts, and the project's, are what one process learns. The
    second run holds all but one changed file: one file is not worth a pool, it is learned here."""
    entries, sources = _tree(FIXTURES)
    expected = _today(entries, OPTIONS, Config(), sources)
    here = [ff for _, ff in file_facts.FactsStore(None, None).facts(sources)]
    monkeypatch.setattr(file_facts, "MIN_BYTES_APART", 0)
    real, pools = pool.forked_map, []
    monkeypatch.setattr(pool, "forked_map", lambda fn, items, extra, jobs: pools.append(jobs) or real(fn, items, extra, jobs))
    store = pipeline.facts_store(FIXTURES, True, jobs=2)
    assert [ff for _, ff in store.facts(sources)] == here
    assert pools == [2] and store.learned == len(sources)
    assert pipeline.learn(entries, OPTIONS, Config(), sources, store) == expected
    store.save()
    (first, data), rest = sources[0], sources[1:]
    again = pipeline.facts_store(FIXTURES, True, jobs=2)
    assert [ff for _, ff in again.facts([(first, data + b"\n// changed\n"), *rest])] == here
    assert pools == [2] and again.learned == 1


def test_fixture_tree_has_what_the_merge_decides():
    """The tree the comparison runs on exercises every pass (a comparison of empty facts proves nothing)."""
    entries, sources = _tree(FIXTURES)
    facts = _today(entries, OPTIONS, Config(), sources)
    assert facts.amd_macros and facts.shim_names and facts.amd_files and facts.project_defined and facts.asm_macros


def test_one_file_changed_is_learned_alone_and_counts(tmp_path, cache):
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "convert" / "dual_vendor_project" / "input", root)
    entries, sources = _tree(root)
    _learn(root, entries, sources)
    changed = next(e for e in entries if e.rel.endswith(".cu"))
    changed.path.write_bytes(changed.path.read_bytes() + b"\n#ifdef MY_AMD_BUILD\n#include <hip/hip_runtime.h>\n#endif\n")
    entries, sources = _tree(root)
    facts, learned = _learn(root, entries, sources)
    assert learned == 1
    assert "MY_AMD_BUILD" in facts.amd_macros
    assert facts == _today(entries, OPTIONS, Config(), sources)


def test_corrupt_or_foreign_slot_is_learned_again(tmp_path, cache):
    root = FIXTURES / "convert" / "dual_vendor_project" / "input"
    entries, sources = _tree(root)
    expected = _today(entries, OPTIONS, Config(), sources)
    _learn(root, entries, sources)
    (slot,) = cache_dir().glob("filefacts-*.json")
    slot.write_bytes(b"not json")
    assert _learn(root, entries, sources) == (expected, len(sources))
    store = file_facts.FactsStore(str(root.absolute()), "another portkit")   # a foreign key: nothing reused
    assert pipeline.learn(entries, OPTIONS, Config(), sources, store) == expected and store.learned == len(sources)


def test_prepare_learns_a_file_of_both_views_once(monkeypatch, cache):
    """convert's prepare with the audit's view: every source is learned once, not once per view."""
    calls: list[bytes] = []
    real = file_facts.of
    monkeypatch.setattr(file_facts, "of", lambda data: calls.append(data) or real(data))
    root = FIXTURES / "convert" / "dual_vendor_project" / "input"
    project = pipeline.prepare([root], OPTIONS, Config(), audit=OPTIONS, cache=False)
    assert project.audit is not None
    assert len(calls) == len(read_sources(project.audit.scanned)) == len(set(calls))


def test_audit_no_cache_keeps_no_facts_either(tmp_path, monkeypatch, capsys):
    """`audit --no-cache` promised "neither reusing nor keeping results by file content", yet its
    prepare kept each file's facts (filefacts-...) all the same."""
    from portkit.cli.app import main
    monkeypatch.delenv("PORTKIT_NO_CACHE", raising=False)
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    tree = Path(shutil.copytree(Path(__file__).resolve().parent.parent / "fixtures" / "sample_project", tmp_path / "src"))
    assert main(["audit", str(tree), "--format", "json", "-j", "1", "--no-cache"]) == 0
    assert not list((tmp_path / "cache").glob("**/filefacts-*"))
    assert main(["audit", str(tree), "--format", "json", "-j", "1"]) == 0
    assert list((tmp_path / "cache").glob("**/filefacts-*"))
    capsys.readouterr()


@pytest.mark.parametrize("root", TREES + [FIXTURES / "torch_setup" / "scatter_loop"], ids=lambda p: p.name)
def test_the_commit_gates_kept_facts_are_the_facts_learned(root, cache):
    """tree_facts keeps the whole tree's facts between commits as JSON: every field comes back (the
    gate's second commit of a PyTorch extension lost its torch_sources before, and scanned its
    sources as if no torch hipify ran)."""
    cold = pipeline.tree_facts(root, OPTIONS, Config())
    warm = pipeline.tree_facts(root, OPTIONS, Config())
    assert warm == cold
    assert root.name != "scatter_loop" or "csrc/cuda/scatter_cuda.cu" in warm.torch_sources
