"""The shortcuts issue 34 took give exactly what the long ways gave (benchmarks/README.md,
"Issue 34"); no test asserts a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import fields, replace

import pytest

try:
    import tomllib
except ModuleNotFoundError:   # Python 3.10
    import tomli as tomllib

from portkit.core.files import Entry, discover, read_sources
from portkit.commands.scan.walk import _names_a_selector
from portkit.core.tables import mappings, toml_cache
from portkit.core.tables.records import per_object


def test_the_cached_tables_are_the_tables():
    """_from_plain makes each record from its own fields alone (the others read the class's
    defaults): equal, hashing, printing and replaced alike, every tuple a tuple."""
    loaded = mappings.load_tables(mappings.tables_dir())
    cached = mappings._from_plain(json.loads(json.dumps(mappings._plain(loaded))))
    assert cached.names == loaded.names and cached.headers == loaded.headers
    assert {hash(m) for m in cached.names.values()} == {hash(m) for m in loaded.names.values()}
    assert [repr(m) for m in cached.names.values()] == [repr(m) for m in loaded.names.values()]
    assert type(next(iter(cached.names.values()))) is mappings.Mapping
    for m in cached.names.values():
        for f in fields(mappings.Mapping):
            value = getattr(m, f.name)
            assert type(value) is not list and not (type(value) is tuple and any(type(v) is list for v in value))
    assert replace(next(iter(cached.names.values())), origin="x.toml").origin == "x.toml"
    assert mappings.load_tables_cached(mappings.tables_dir()).names == loaded.names


def test_a_shipped_table_is_read_back_from_json_as_tomllib_reads_it(tmp_path, monkeypatch):
    """toml_cache.py: the shipped small tables, parsed once, then read as JSON: the same document."""
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    shipped = sorted(mappings.tables_dir().glob("*.toml"))
    for path in shipped:
        assert toml_cache.load(path) == tomllib.loads(path.read_text(encoding="utf-8"))   # parsed, kept
        assert toml_cache.load(path) == tomllib.loads(path.read_text(encoding="utf-8"))   # read back
    kept = sorted(p.name.rsplit("-", 1)[0] for p in (tmp_path / "cache").glob("toml-*.json"))
    assert kept == sorted(f"toml-{p.stem}" for p in shipped)
    own = tmp_path / "own" / "platforms.toml"      # a table elsewhere: read as it is, never kept
    own.parent.mkdir()
    own.write_text('schema = 1\n[amd]\ndefined = ["X"]\n')
    assert toml_cache.load(own) == {"schema": 1, "amd": {"defined": ["X"]}}
    own.write_text("schema = \n")
    with pytest.raises(tomllib.TOMLDecodeError):
        toml_cache.load(own)
    assert len(list((tmp_path / "cache").glob("toml-*.json"))) == len(shipped)


def test_a_cached_value_keeps_its_newest_copies_only(tmp_path, monkeypatch):
    """datacache.cached: a copy per key (tables edited, portkit upgraded), the oldest pruned."""
    from portkit.core import datacache
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path))
    for n in range(datacache.KEYED_KEPT + 2):
        source = tmp_path / f"in{n}.toml"
        source.write_text("x" * (n + 1))            # another size: another key
        os.utime(source, ns=(n, n))
        assert datacache.cached("t", [source], [], lambda: n, lambda v: v, lambda v: v) == n
    assert len(list(tmp_path.glob("t-*.json"))) == datacache.KEYED_KEPT
    assert datacache.cached("tother", [], [], lambda: "kept", lambda v: v, lambda v: v) == "kept"
    assert len(list(tmp_path.glob("t-*.json"))) == datacache.KEYED_KEPT   # another name's glob is its own


def test_a_walked_entry_carries_the_walks_lstat(tmp_path):
    """The commit gate keys its tree facts on every file's size and time, and a re-run knows a file
    it need not read by its size, times and inode (core/filestamps.py): the walk's own lstat."""
    (tmp_path / "a.cu").write_bytes(b"int a;\n")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "b.h").write_bytes(b"int bb;\n")
    _, entries, _ = discover([tmp_path])
    for entry in entries:
        st = os.lstat(entry.path)
        assert entry.seen == (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    named = discover([tmp_path / "a.cu"])[1][0]
    assert named.seen is None and named == Entry(tmp_path / "a.cu", "a.cu", "source", named=True)


def test_a_selector_counts_only_in_a_directive():
    names = (("GGML_USE_HIP",), ())
    assert _names_a_selector(b"#if defined(GGML_USE_HIP)\nint a;\n#endif\n", *names)
    assert _names_a_selector(b"#  ifdef __HIP_PLATFORM_AMD__\n#endif\n", (), ())
    assert _names_a_selector(b"#if defined(A) || \\\n    defined(GGML_USE_HIP)\n#endif\n", *names)   # continued
    assert _names_a_selector(b"#define IS_AMD GGML_USE_HIP\n", *names)
    assert not _names_a_selector(b"const char* s = \"GGML_USE_HIP\"; // GGML_USE_HIP\n", *names)
    assert not _names_a_selector(b"#include \"GGML_USE_HIP.h\"\n", *names)
    assert not _names_a_selector(b"int x;\n", *names)
    # a '#if' inside a line that continues into a directive does not hide the directive
    assert _names_a_selector(b'x = "#if A" \\\n#if GGML_USE_HIP\n#endif\n', *names)
    assert not _names_a_selector(b'int a; #if GGML_USE_HIP\n', *names)


def test_a_table_index_is_built_once_per_object_whatever_its_hash_costs():
    built = []

    @per_object
    def index(table):
        built.append(table)
        return len(built)

    first, second = [1, 2], [1, 2]          # equal, distinct, and not even hashable
    assert [index(first), index(first), index(second), index(first)] == [1, 1, 2, 1]
    assert built == [first, second] and built[0] is first and built[1] is second


def test_project_passes_read_each_source_once(tmp_path):
    (tmp_path / "a.cu").write_bytes(b"#if defined(__HIP_PLATFORM_AMD__)\n#endif\n")
    (tmp_path / "b.bin").write_bytes(b"\0\1")
    (tmp_path / "c.cu").write_bytes(b"\xff\xfe" + "x".encode("utf-16-le"))   # UTF-16: not read as text
    entries = [Entry(tmp_path / "a.cu", "a.cu", "source"), Entry(tmp_path / "b.bin", "b.bin", None),
               Entry(tmp_path / "c.cu", "c.cu", "source")]
    assert [(e.rel, data) for e, data in read_sources(entries)] == [
        ("a.cu", b"#if defined(__HIP_PLATFORM_AMD__)\n#endif\n")]


def test_version_answers_without_importing_the_commands():
    probe = ("import sys; from portkit.cli import main; code = main(['--version']); "
             "print(code, 'portkit.cli.app' in sys.modules, 'tree_sitter' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "0 False False"
    assert out.splitlines()[0].startswith("portkit ")


def test_needles_answer_exactly_what_one_search_each_answers():
    """core/needles.py: searched by shared prefixes, the same answer as `any(s in data ...)`."""
    import random
    from portkit.core.needles import Needles
    strings = [b"GGML_USE_CUDA", b"GGML_USE_HIP", b"GGML_CUDA_F16", b"GGML_CUDA_NO_VMM", b"GGML_", b"__vadd4",
               b"__vsub4", b"umin", b"umax", b"nvshmem_", b"nvshmemx_", b"a", b"ab", b"abc", b"zz"]
    rng = random.Random(7)
    alphabet = b"GML_USECDAHIPF16NOVM_vadubs4minxzh "
    for _ in range(3000):
        chosen = rng.sample(strings, rng.randint(1, len(strings)))
        data = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        if rng.random() < 0.3:
            data += rng.choice(strings)[:-1]         # a prefix of one, not the whole
        assert Needles(chosen).any_in(data) == any(s in data for s in chosen), (chosen, data)
    assert Needles([b"GGML_USE_CUDA", b"GGML_USE_HIP"]).nodes == \
        ((b"GGML_USE_", False, ((b"GGML_USE_CUDA", True, ()), (b"GGML_USE_HIP", True, ()))),)
    assert not Needles([]).any_in(b"anything")


def test_a_pattern_tried_where_its_words_start_finds_what_finditer_finds():
    """core/needles.finditer_from: the same matches, spans and groups as `finditer`, for the
    patterns it serves (identifiers.py's own types and class names), on text built to trip it:
    keywords inside words (`mystruct`), one match inside another's span, `\\b` read before the
    offset, a typedef over 200 bytes."""
    import random
    from portkit.core.needles import finditer_from
    from portkit.rewrite import identifiers
    pieces = [b"struct ", b"class ", b"union ", b"using ", b"typedef ", b"mystruct ", b"xclass", b"X", b"cudaStream_t",
              b" {", b" : ", b";", b" = ", b"final ", b"alignas(16) ", b"\n", b"_", b"typedef struct A B;", b"a" * 210]
    from portkit.rewrite import transitive
    pieces += [b"__nv_bfloat162 ", b"nv_bfloat16", b"__float2bfloat16_rn(", b"isnan (", b"_isinf(", b"isfinite("]
    from portkit.rewrite import polyfills
    names = polyfills._names()
    pieces += [b"#define ", b"# define umin", b"__ldcs", b"umin", b"portkit_umin", b"(int a)", b" const ", b"#"]
    cases = ((identifiers._OWN_TYPE, identifiers._TYPE_WORDS), (identifiers._CLASS_NAME, (b"class", b"struct")),
             *((rule.uses, rule.starts) for rule in transitive.RULES),
             (polyfills._definition(names), polyfills._definition_starts(names)))
    rng = random.Random(11)
    for _ in range(4000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        for pattern, words in cases:
            want = [(m.span(), m.groups()) for m in pattern.finditer(data)]
            assert [(m.span(), m.groups()) for m in finditer_from(pattern, data, words)] == want, data


def test_include_lines_tried_where_a_line_holds_a_hash_are_finditers():
    """core/source.include_matches: INCLUDE_LINE.finditer's matches, spans and groups, whatever the
    '#'s, line endings and indentation around them."""
    import random
    from portkit.core.source import INCLUDE_LINE, include_matches
    pieces = [b"#include <a.h>", b"#  include \"b.h\"", b" \t#include<c>", b"x #include <d.h>", b"#", b"##",
              b"#define X", b"\n", b"\r\n", b"\r", b" ", b"include <e.h>", b"// #include <f.h>"]
    rng = random.Random(5)
    for _ in range(4000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        want = [(m.span(), m.groups()) for m in INCLUDE_LINE.finditer(data)]
        assert [(m.span(), m.groups()) for m in include_matches(data)] == want, data


def test_the_warm_up_compiles_the_query_the_files_are_scanned_with():
    """A query costs 10 to 15 ms to compile: the warm-up scans with the run's own settings, so a
    commit gate of a few files compiles one, not the converter's and then the audit's."""
    from portkit.commands.workers import ordered_map
    from portkit.core import parse
    from portkit.core.source import SourceFile
    from portkit.project.settings import scan_options
    from portkit.commands.scan.walk import scan_source
    options = scan_options(audit=True)
    kernel = b"__global__ void k(float* o) { o[threadIdx.x] = 1.0f; }\n"
    parse.scan_query.cache_clear()
    scans = list(ordered_map(lambda data, opts: scan_source(SourceFile.from_bytes("k.cu", data), opts),
                             [kernel], options, 1, None, options))
    assert len(scans) == 1 and parse.scan_query.cache_info().currsize == 1


def test_a_refinable_finding_is_built_only_if_kept():
    """findingstore.Pending: a PK004 under a PK203 is dropped at the end without being built; one
    that stays is built once, as it would have been at once."""
    from portkit.core.findings import Finding
    from portkit.core.findingstore import FindingStore, Pending
    built = []

    def build(code, line, column, subject):
        built.append((line, column))
        return Finding(code=code, name="partial-conversion", severity="info", category="conversion",
                       path="a.cu", line=line, column=column, end_line=line, end_column=column + 5,
                       message="m", subject=subject)

    store = FindingStore(0, {"PK203": ("PK004",)})
    for line, column in ((1, 5), (2, 5)):
        index = store.admit("PK004", "__shfl_down_sync", (line, column), (line, column + 5), "info", "")
        store.put(index, Pending("PK004", "a.cu", line, column, "__shfl_down_sync", "info", "", build,
                                 ("PK004", line, column, "__shfl_down_sync")))
    assert [f.line for f in store.findings if f.code == "PK004"] == [1, 2] and built == []   # read while scanning
    store.add(Finding(code="PK203", name="full-warp-mask", severity="medium", category="warp", path="a.cu",
                      line=1, column=1, end_line=1, end_column=40, message="m", subject="__shfl_down_sync"))
    kept = store.finish()
    assert [(f.code, f.line) for f in kept] == [("PK203", 1), ("PK004", 2)] and built == [(2, 5)]
    assert type(kept[1]) is Finding


def test_the_program_leaves_at_once_after_exit_handlers_and_flushed_streams():
    """cli.run: main(), the atexit handlers, the streams flushed, then os._exit (no teardown of
    every object: 35 ms of a commit's check); its code is main()'s, 120 when stdout cannot flush."""
    script = ("import atexit, sys; atexit.register(lambda: print('handler ran')); "
              "sys.argv = ['portkit', '--version']; from portkit.cli import run; run(); print('not reached')")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.splitlines() == [done.stdout.splitlines()[0], "handler ran"]
    assert done.stdout.startswith("portkit ")
    broken = ("import io, sys\nclass Gone(io.StringIO):\n    def flush(self):\n        raise BrokenPipeError\n"
              "sys.stdout = Gone(); sys.argv = ['portkit', '--version']\nfrom portkit.cli import run\nrun()\n")
    assert subprocess.run([sys.executable, "-c", broken], capture_output=True).returncode == 120
    failing = subprocess.run([sys.executable, "-m", "portkit", "audit", "/nonexistent/portkit-test"],
                             capture_output=True, text=True)
    assert failing.returncode == 2 and failing.stderr.startswith("portkit: error: /nonexistent/portkit-test")


# Issue 34, fourth session ------------------------------------------------------------------------

def test_a_plain_console_gets_the_bytes_rich_would_write():
    """report/plain.say writes a line itself for a console that is not a terminal: the same text
    rich renders (no wrap at the width, styles dropped, unsafe characters shown), a line at a time."""
    import io
    from rich.console import Console
    from portkit.report import plain
    parts = ("  a/b.cu:12:3: ", ("PK203", "bold red"), " " + "x" * 150 + " [bold]not markup[/] :100: \x1b[2J\ttab")
    fast = Console(file=io.StringIO(), width=40, highlight=False, soft_wrap=True)
    slow = Console(file=io.StringIO(), width=40, highlight=False, soft_wrap=True, record=True)   # rich's own path
    assert plain._plain_stream(fast) is fast.file and plain._plain_stream(slow) is None
    for console in (fast, slow):
        plain.say(console, *parts)
        plain.say(console, "second")
    assert fast.file.getvalue() == slow.file.getvalue()
    assert fast.file.getvalue().endswith("\\x1b[2J\\x09tab\nsecond\n")
    terminal = Console(file=io.StringIO(), force_terminal=True, color_system="standard")
    assert plain._plain_stream(terminal) is None   # colours: rich renders them
    with fast:   # rich buffers inside `with console`: the line must wait in its buffer too
        assert plain._plain_stream(fast) is None


def test_a_finished_store_holds_no_pending_finding():
    """FindingStore.finish leaves only the findings it kept: a Pending's builder is its ScanContext's
    method, so a store that kept one made every such context a reference cycle (its tree and text
    alive until the collector's next full pass)."""
    import gc
    import weakref
    from portkit.core.source import SourceFile
    from portkit.commands.scan.walk import Options, scan_source
    import portkit.commands.scan.walk as walk
    contexts = []
    real = walk.ScanContext

    def kept(*args, **kwargs):
        ctx = real(*args, **kwargs)
        contexts.append(weakref.ref(ctx))
        return ctx
    source = SourceFile.from_bytes("k.cu", b"__global__ void k(float* x) { x[0] = __shfl_down_sync(0xffffffff, x[0], 16); }\n")
    gc.disable()
    try:
        walk.ScanContext = kept
        scan = scan_source(source, Options(audit=True))
    finally:
        walk.ScanContext = real
        gc.enable()
    assert "PK203" in {f.code for f in scan.findings}   # the PK004 under it was a Pending, dropped
    assert contexts and all(ref() is None for ref in contexts)   # freed without the collector


def test_the_program_collects_cycles_less_often():
    script = ("import gc, portkit.cli as cli; cli.main = lambda: (print(gc.get_threshold()), 0)[1]; cli.run()")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "(20000, 10, 10)\n")


def test_an_arguments_index_skips_comments_and_sees_through_parentheses_and_casts():
    from portkit.core import parse
    from portkit.engine import syntax
    data = b"void f() { g(a, /* c */ b, ((int)16), 0xffffffff); }\n"
    root = parse.parse(data).root_node
    index = {}
    for value in (b"16", b"0xffffffff", b"a"):
        at = data.index(value)
        node = root.descendant_for_byte_range(at, at + len(value))
        call, index[value] = syntax.call_of_argument(node)
        assert syntax.callee_name(call) == b"g"
    assert index == {b"a": 0, b"16": 2, b"0xffffffff": 3}
    for token in (b"(a", b"/* c */"):   # the list's `(`, a comment: not arguments
        at = data.index(token)
        node = root.descendant_for_byte_range(at, at + (1 if token == b"(a" else len(token)))
        assert node.type in ("(", "comment") and syntax.call_of_argument(node) is None


def test_a_names_plan_is_per_file_and_record_and_the_roc_datatype_still_per_call(tmp_path):
    """identifiers._plan is worked out once per file and record; under --roc a data type's name
    depends on the call it is passed to, so the same CUDA_R_32F is written two ways in one file."""
    from portkit.commands.convert import convert_paths
    from portkit.commands.results import ConvertOptions
    from portkit.commands.scan.walk import Options
    (tmp_path / "a.cu").write_text(
        "#include <cusparse.h>\n#include <cublas_v2.h>\n"
        "void f(cusparseHandle_t h, cublasHandle_t b, void* p) {\n"
        "  cudaDataType t = CUDA_R_32F;\n"
        "  cusparseCreateDnVec(0, 4, p, CUDA_R_32F);\n"
        "  cudaMalloc(&p, 4); cudaMalloc(&p, 8);\n}\n")
    plain = convert_paths([tmp_path / "a.cu"], ConvertOptions(output=tmp_path / "out"))
    roc = convert_paths([tmp_path / "a.cu"], ConvertOptions(output=tmp_path / "roc", scan=Options(prefer_roc=True)))
    assert (tmp_path / "out" / "a.cu").read_text() == (
        "\n#include <hip/hip_runtime.h>\n#include <hipsparse/hipsparse.h>\n#include <hipblas/hipblas.h>\n"
        "void f(hipsparseHandle_t h, hipblasHandle_t b, void* p) {\n"
        "  hipDataType t = HIP_R_32F;\n"
        "  hipsparseCreateDnVec(0, 4, p, HIP_R_32F);\n"
        "  hipMalloc(&p, 4); hipMalloc(&p, 8);\n}\n")
    assert (tmp_path / "roc" / "a.cu").read_text() == (
        "\n#include <hip/hip_runtime.h>\n#include <rocsparse/rocsparse.h>\n#include <rocblas/rocblas.h>\n"
        "void f(rocsparse_handle h, rocblas_handle b, void* p) {\n"
        "  rocblas_datatype t = rocblas_datatype_f32_r;\n"
        "  rocsparse_create_dnvec_descr(0, 4, p, rocsparse_datatype_f32_r);\n"
        "  hipMalloc(&p, 4); hipMalloc(&p, 8);\n}\n")
    assert (plain.total("refs_converted"), roc.total("refs_converted")) == (10, 10)
    assert plain.findings == [] and roc.findings == []
