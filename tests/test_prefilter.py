"""The pre-filter never drops an edit or a finding (issue 52, item 2).

A source none of the run's keywords occurs in is not parsed (commands/scan/prefilter.py): its scan
is what an empty walk gives. The proof here is the contract itself, checked where it could break:
every fixture source, under its own name and as a C++ file; a corpus made from them by random
changes (names swapped for others, literals changed, lines dropped); and windows of a few of their
lines, each on its own; under the settings that turn passes and rules on or off. Wherever the pre-filter would skip a file, the
full scan of it must find nothing: no edit, no finding but PK005, the same metrics.
"""

from __future__ import annotations

import random
import re
from dataclasses import replace
from pathlib import Path

import pytest

from portkit.commands.scan import prefilter
from portkit.commands.scan.walk import platform_map, scan_source
from portkit.core.source import SourceFile
from portkit.core.tables.project_tables import db_for
from portkit.engine.context import Metrics, ScanContext
from portkit.engine.facts import ProjectFacts
from portkit.engine.keywords import Keywords, gather
from portkit.engine.options import Options

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SOURCES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".cu", ".cuh", ".cpp", ".h", ".hpp", ".c", ".cc", ".hip")
                 and p.is_file())
SETTINGS = {
    "convert": Options(),
    "audit": Options(audit=True),
    "audit --fix warp --polyfills": Options(audit=True, fixes=frozenset({"warp"}), polyfills=True),
    "convert --rewrite-guards --rocm 5.2": Options(rewrite_guards=True, rocm=(5, 2, 0)),
}
# a tree's facts: the names a rule reads because the tree defines them (PK208's warp constants,
# PK301's assembly macros) are keywords of that run only
FACTS = ProjectFacts(warp_constants=(("kWarpSize", "include/consts.h", 1, True, ()), ("BLOCK", "include/block.h", 1, True, ())),
                     asm_macros=(("LANE_ID", "include/lane.h", 3),))


def _settle(metrics: Metrics) -> Metrics:
    return replace(metrics, partially_parsed=False)


def check_contract(rel: str, data: bytes, options: Options, facts: ProjectFacts = ProjectFacts()) -> bool:
    """Whether the pre-filter skips `data` (named `rel`); where it does, the full scan must find nothing."""
    source = SourceFile.from_bytes(rel, data)
    skipped = _would_skip(source, options, facts)
    if not skipped:   # parsed both ways: the same scan, or the same error (a fragment may trip the scan)
        assert _outcome(source, options, facts) == _outcome(source, replace(options, prefilter=False), facts), rel
        return False
    quick = scan_source(source, options, facts=facts)
    full = scan_source(source, replace(options, prefilter=False), facts=facts)
    assert full.edits == [], (rel, full.edits[:3])
    assert [f for f in full.findings if f.code != "PK005"] == [], (rel, full.findings[:3])
    assert _settle(full.metrics) == _settle(quick.metrics), rel
    assert quick.findings == [] and quick.edits == []
    return True


def _outcome(source: SourceFile, options: Options, facts: ProjectFacts):
    try:
        scan = scan_source(source, options, facts=facts)
    except Exception as error:   # noqa: BLE001 - compared, not hidden: both runs must raise it
        return type(error).__name__
    return scan.edits, scan.findings


def _would_skip(source: SourceFile, options: Options, facts: ProjectFacts) -> bool:
    """prefilter.skips as scan_source asks it: with the file's platform model."""
    db = db_for(options)
    ctx = ScanContext(source=source, db=db, options=options, target=options.target, facts=facts,
                      regions=platform_map(source, options, facts))
    return prefilter.skips(ctx)


@pytest.mark.slow
@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_no_fixture_source_loses_an_edit_or_a_finding(setting):
    """Every fixture under its own name, and named .cpp (the passes that read a file's suffix, a .c's
    `register` or a header's guard, then read it otherwise): 400-odd real CUDA and C++ files."""
    options = SETTINGS[setting]
    skipped = 0
    for p in SOURCES:
        rel = p.relative_to(FIXTURES)
        for name in {rel.as_posix(), rel.with_suffix(".cpp").as_posix()}:
            skipped += check_contract(name, p.read_bytes(), options, FACTS)
    assert len(SOURCES) > 300
    assert 0 < skipped < len(SOURCES)   # the filter does skip some, and never most: they are CUDA fixtures


@pytest.mark.slow
@pytest.mark.parametrize("setting", ["audit", "convert"])
def test_no_fixture_source_loses_an_edit_or_a_finding_as_host_only_code(setting):
    """Every fixture as a file no GPU compiler reads (project/gpu_reach.py): the gpu_only rules and
    passes find nothing there, so only the others' keywords keep it; what they would find is never
    lost. Most fixtures are CUDA, so most are still parsed (names, includes, launches)."""
    options = SETTINGS[setting]
    skipped = 0
    for p in SOURCES:
        rel = p.relative_to(FIXTURES).as_posix()
        skipped += check_contract(rel, p.read_bytes(), options, replace(FACTS, host_only=frozenset({rel})))
    assert 0 < skipped < len(SOURCES)


_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(rb"\b\d+[uUlL]*\b")
_SPELLINGS = (b"1", b"5", b"16", b"31", b"32", b"0x1f", b"0x20", b"0xffffffff", b"4294967295", b"64", b"2")


def mutate(data: bytes, rng: random.Random, words: list[bytes]) -> bytes:
    """A file like `data`, changed as a user's edit could: some names replaced by others of the corpus
    or by neutral ones, some literals respelled, some lines dropped."""
    lines = data.split(b"\n")
    lines = [line for line in lines if rng.random() > 0.15]
    text = b"\n".join(lines)
    text = _WORD.sub(lambda m: rng.choice(words) if rng.random() < 0.3 else m.group(), text)
    return _NUMBER.sub(lambda m: rng.choice(_SPELLINGS) if rng.random() < 0.3 else m.group(), text)


@pytest.mark.slow
def test_a_generated_corpus_loses_no_edit_or_finding():
    rng = random.Random(52)
    corpus = [p.read_bytes() for p in SOURCES]
    words = sorted({w for data in corpus for w in _WORD.findall(data)}) + [b"value", b"index", b"helper", b"count"]
    skipped = 0
    for i in range(600):
        data = mutate(rng.choice(corpus), rng, words)
        for setting in ("convert", "audit"):
            skipped += check_contract(f"generated/{i}.h", data, SETTINGS[setting], FACTS)
    assert skipped > 50   # the corpus exercises the skip, not only the full scan


@pytest.mark.slow
def test_every_few_lines_of_a_fixture_on_their_own_lose_nothing():
    """Windows of one to four lines, each scanned as a file: a launch, an include or a literal with
    nothing else around it, where one consumer's keyword alone decides."""
    rng = random.Random(2)
    lines = [line for p in SOURCES for line in p.read_bytes().split(b"\n")]
    skipped = 0
    for i in range(2500):
        start = rng.randrange(len(lines))
        data = b"\n".join(lines[start:start + rng.randint(1, 4)]) + b"\n"
        skipped += check_contract(f"window/{i}.h", data, SETTINGS["audit --fix warp --polyfills"], FACTS)
        skipped += check_contract(f"window/{i}.cpp", data, SETTINGS["convert --rewrite-guards --rocm 5.2"], FACTS)
    assert skipped > 1000


def test_a_file_with_no_keyword_is_not_parsed_and_its_scan_is_empty(monkeypatch):
    from portkit.core import parse
    source = SourceFile.from_bytes("src/cpu/table.cpp", b"#include <vector>\nstatic int add(int a, int b) { return a + b; }\n")
    full = scan_source(source, Options(audit=True, prefilter=False))
    calls = []
    monkeypatch.setattr(parse, "parse", lambda data: calls.append(data))
    monkeypatch.setattr(parse, "_KEPT", [None, None])   # the full scan's tree, kept: not read either
    scan = scan_source(source, Options(audit=True))
    assert (scan.edits, scan.findings, calls) == ([], [], [])
    assert scan.metrics == full.metrics and scan.metrics.lines == 2


@pytest.mark.parametrize("rel, data", [
    ("src/uses.cpp", b"#include <cuda_runtime.h>\nint x;\n"),             # a header the tables map
    ("src/host.cpp", b"void f(float *p) { cudaFree(p); }\n"),             # a name that changes
    ("src/split.h", b"#define F cuda\\\nFree\n"),                         # a name split by a backslash-newline
    ("src/launch.cpp", b"void f() { k<<<1, 1>>>(); }\n"),
    ("src/consts.h", b"constexpr int kWarpSize = 32;\n"),                 # PK201's warp-size name
    ("src/guard.h", b"#if CUDA_VERSION >= 11000\nint x;\n#endif\n"),       # PK103
    ("src/amd.h", b"#ifdef __HIP_PLATFORM_AMD__\nfloat f(float x) { return sqrtf(x); }\n#endif\n"),   # an AMD branch
    ("src/cluster.h", b"#define CLUSTER_2 __cluster_dims__(2, 1, 1)\n"),   # an attribute the parser is not shown
])
def test_a_file_with_a_keyword_is_parsed(rel, data):
    source = SourceFile.from_bytes(rel, data)
    assert not _would_skip(source, Options(audit=True), ProjectFacts())


def test_a_name_the_tree_defines_is_a_keyword_of_that_tree_only():
    source = SourceFile.from_bytes("src/use.h", b"int used = LANE_ID + 1;\n")   # PK301's assembly macro
    assert _would_skip(source, Options(audit=True), ProjectFacts())
    assert not _would_skip(source, Options(audit=True), FACTS)


def test_names_written_the_same_in_hip_are_no_keyword():
    """`sqrt` and `ncclAllReduce` are in the tables, but a use of them changes nothing."""
    source = SourceFile.from_bytes("src/math.cpp", b"double f(double x) { return sqrt(x) + floor(x); }\n")
    assert _would_skip(source, Options(audit=True), ProjectFacts())


def test_every_pass_and_rule_declares_its_keywords():
    """One undeclared consumer turns the pre-filter off for every file: a new pass or rule that reads
    the tree must say what it needs to see (engine/keywords.py)."""
    source = SourceFile.from_bytes("x.cpp", b"")
    for options in SETTINGS.values():
        ctx = ScanContext(source=source, db=db_for(options), options=options, target=options.target, facts=FACTS)
        assert isinstance(prefilter.run_keywords(ctx), Keywords)


def test_keywords_match_substrings_patterns_whole_names_and_tests():
    found = gather([(b"<<<",), (re.compile(rb"\bwarp\w*"),), (frozenset({b"cudaFree"}),),
                    (lambda text: text.data.startswith(b"#!"),)])
    assert found.found_in(b"k<<<1, 1>>>()")
    assert found.found_in(b"int warp_id;")
    assert found.found_in(b"cudaFree(p);") and not found.found_in(b"my_cudaFree_wrapper(p);")
    assert found.found_in(b"cuda\\\nFree(p);")   # joined as the preprocessor joins it
    assert found.found_in(b"#!/bin/sh")
    assert not found.found_in(b"int main() { return 0; }")


@pytest.mark.parametrize("entry", ["cuda", b"", 3])
def test_a_keyword_of_no_known_kind_is_refused(entry):
    with pytest.raises(TypeError):
        gather([(entry,)])
