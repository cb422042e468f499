"""Issue 48, item 5: a project's own `namespace cuda` is the project's, not libcu++'s.

CTranslate2 declares `namespace ctranslate2 { namespace cuda { ... } }` and calls `cuda::...`
from inside `namespace ctranslate2` in files that declare no `cuda` themselves: its 216 high
PK001 findings about `cuda` were all its own. Only `::cuda::`, `cuda::std::` and a `cuda::` no
project namespace of that name is visible from are libcu++'s (project/own_namespaces.py,
rewrite/qualified_names.owned). The convert golden is fixtures/convert/own_cuda_namespace
(tests/test_convert_fixtures.py); the audit's case is fixtures/audit/own_namespaces.
"""

from __future__ import annotations

import json
from pathlib import Path

from portkit.cli.app import main
from portkit.commands.convert import convert_bytes
from portkit.engine.context import Options
from portkit.engine.facts import ProjectFacts

ROOT = Path(__file__).resolve().parent.parent
AUDIT_CASE = ROOT / "fixtures" / "audit" / "own_namespaces"
CONVERT_CASE = ROOT / "fixtures" / "convert" / "own_cuda_namespace"


def _audit(path: Path, tmp_path: Path) -> list[tuple[str, str, int]]:
    out = tmp_path / "audit.json"
    assert main(["audit", str(path), "--format", "json", "-o", str(out), "--no-cache", "-q"]) == 0
    return sorted((f["code"], f["path"], f["line"]) for f in json.loads(out.read_text())["findings"])


def _pk001(source: bytes, facts: ProjectFacts = ProjectFacts(), name: str = "k.cu") -> list[int]:
    scan, _ = convert_bytes(name, source, Options(audit=True), facts=facts)
    return sorted(f.line for f in scan.findings if f.code == "PK001")


def test_the_projects_cuda_is_its_own_and_libcuxx_stays_libcuxx(tmp_path: Path):
    """The project's header, its kernels' cuda:: uses and its nested definition: no finding.
    libcu++ from the global namespace (::cuda::std), outside the project's namespace (cuda::std::,
    cuda::atomic_ref, cuda::memory_order_relaxed) and cuCollections' reopened `namespace cuda::std {`:
    PK001 each, beside the PK401 of their headers."""
    assert _audit(AUDIT_CASE, tmp_path) == [
        ("PK001", "libcu_gpu.cu", 14),   # namespace cuda::std {
        ("PK001", "libcu_gpu.cu", 20),   # cuda::std::plus<int>()
        ("PK001", "libcu_gpu.cu", 22),   # cuda::atomic_ref<int, cuda::thread_scope_device>
        ("PK001", "libcu_gpu.cu", 23),   # cuda::memory_order_relaxed
        ("PK001", "ops_gpu.cu", 19),     # ::cuda::std::numeric_limits inside namespace ctranslate2
        ("PK401", "libcu_gpu.cu", 3), ("PK401", "libcu_gpu.cu", 4), ("PK401", "libcu_gpu.cu", 5),
        ("PK401", "ops_gpu.cu", 3),
    ]


def test_convert_leaves_the_projects_cuda_and_needs_no_person(tmp_path: Path, capsys):
    """The golden's tree: every CUDA runtime name converts, the project's cuda:: stays as written,
    and convert lists nothing left (it listed 13 libcu++ sites before)."""
    assert main(["convert", str(CONVERT_CASE / "input"), "-o", str(tmp_path / "hip"), "--rocm", "5.2",
                 "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["references"] == {"found": 19, "converted": 19, "left": 0}
    assert (summary["findings"]["total"], summary["needs_person"]) == (0, [])


def test_a_file_learns_its_own_nested_namespace():
    """Converted on its own (no tree facts), a file that declares ctranslate2::cuda: its definition
    and its uses inside the namespace are the project's; a top-level `namespace cuda` is not."""
    own = (b"namespace ctranslate2 {\nnamespace cuda {\nint count();\n}\n"
           b"int twice() { return 2 * cuda::count(); }\n}\n")
    assert _pk001(own) == []
    top = b"namespace cuda {\nint count();\n}\nint twice() { return 2 * cuda::count(); }\n"
    assert _pk001(top) == [1, 4]


def test_the_trees_facts_reach_a_file_that_declares_nothing():
    """src/types.cc declares no cuda; the tree's facts say ctranslate2::cuda exists. Lookup from
    inside ctranslate2 (or ctranslate2::ops, or after `using namespace ctranslate2;`) finds it;
    from elsewhere, ::cuda and cuda::std are libcu++'s."""
    facts = ProjectFacts(own_namespaces=("ctranslate2::cuda",))
    inside = b"namespace ctranslate2 { namespace ops {\nint f() { return cuda::count(); }\n} }\n"
    assert _pk001(inside, facts) == []
    assert _pk001(inside) == [2]   # without the facts: libcu++, as before
    nested = b"namespace ctranslate2::models {\nint f() { return cuda::count(); }\n}\n"
    assert _pk001(nested, facts) == []
    using = b"using namespace ctranslate2;\nint f() { return cuda::count(); }\n"
    assert _pk001(using, facts) == []
    other = (b"namespace other {\nint f() { return cuda::count(); }\n}\n"
             b"namespace ctranslate2 {\nint g() { return ::cuda::std::max(1, 2); }\n"
             b"int h() { return cuda::std::max(1, 2); }\n}\n")
    assert _pk001(other, facts) == [2, 5, 6]


def test_a_macro_body_inside_the_namespace_is_the_projects():
    """A macro defined inside namespace ctranslate2 (its body parsed apart) names the project's cuda."""
    facts = ProjectFacts(own_namespaces=("ctranslate2::cuda",))
    source = (b"namespace ctranslate2 {\n#define STREAM() cuda::get_cuda_stream()\n"
              b"void* s() { return STREAM(); }\n}\n#define GLOBAL() cuda::std::max(1, 2)\n")
    assert _pk001(source, facts) == [5]


def test_the_pipeline_learns_nested_definitions_only(tmp_path: Path):
    """ctranslate2::cuda and a::b::cuda (C++17 spelling) are learned; a top-level `namespace
    cuda::std {` (libcu++'s own, reopened by cuCollections) and Thrust's `thrust::cuda` are not."""
    from portkit.core.files import discover
    from portkit.project import pipeline
    (tmp_path / "a.h").write_text("namespace ctranslate2 {\n  namespace cuda {\n    int f();\n  }\n}\n")
    (tmp_path / "b.cuh").write_text("namespace a::b::cuda { int g(); }\nnamespace cuda::std { int h(); }\n")
    (tmp_path / "c.cuh").write_text("namespace thrust { namespace cuda { int k(); } }\n"
                                    "namespace a { namespace cub { int m(); } }\n")
    _, entries, _ = discover([tmp_path])
    facts = pipeline.learn(entries, Options())
    assert facts.own_namespaces == ("a::b::cuda", "a::cub", "ctranslate2::cuda")
    assert pipeline._facts_from_plain(pipeline._facts_to_plain(facts)).own_namespaces == facts.own_namespaces


def test_the_files_a_facts_record_leaves_out_are_ones_learn_would_not_parse():
    """pipeline.learn parses only the files whose facts name a CUDA library's namespace among the
    ones they define (own_namespaces.defined, kept per file): over every fixture source and the
    spellings below, each file alone learns the same with and without that filter."""
    from portkit.core.tables.project_tables import db_for
    from portkit.core.files import Entry
    from portkit.project import own_namespaces
    from portkit.project.config import Config
    from portkit.project.settings import resolve
    from portkit.rewrite.qualified_names import namespace_names
    names_by_bytes = db_for(resolve(Config(), audit=True)).names_by_bytes
    library = namespace_names(names_by_bytes)
    crafted = [b"namespace ctranslate2 { namespace cuda { int f(); } }\n",
               b"namespace a::b::cuda {\n}\n", b"namespace a :: cub\n{\n}\n", b"namespace mycuda { }\n",
               b"namespace foo::namespace cuda { }\n", b"namespace cuda::std { }\n", b"inline namespace cub { }\n",
               b"// namespace cuda {\n", b"namespace\tcuda{}\n"]
    files = [p.read_bytes() for p in sorted((ROOT / "fixtures").rglob("*"))
             if p.suffix in (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc") and p.is_file()] + crafted
    learned = 0
    for data in files:
        one = [(Entry(Path("f.cu"), "f.cu", "source"), data)]
        kept = one if own_namespaces.defined(data) & library else []
        found = own_namespaces.learn(one, names_by_bytes)
        assert found == own_namespaces.learn(kept, names_by_bytes), data[:200]
        learned += bool(found)
    assert learned >= 4   # the crafted nested ones and the fixtures' own (the test can tell a filter that drops them)
