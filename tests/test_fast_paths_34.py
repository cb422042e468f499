"""The shortcuts issue 34 took give exactly what the long ways gave (benchmarks/README.md,
"Issue 34"); no test asserts a time."""

from __future__ import annotations

import subprocess
import sys

from portkit.core.files import Entry, read_sources
from portkit.scan.walk import _names_a_selector
from portkit.tables import mappings
from portkit.tables.records import per_object


def test_the_cached_tables_are_the_tables():
    """_from_plain makes each record without the dataclass's __init__: equal, and hashing alike."""
    cached = mappings.load_tables_cached(mappings.tables_dir())
    loaded = mappings.load_tables(mappings.tables_dir())
    assert cached.names == loaded.names and cached.headers == loaded.headers
    assert {hash(m) for m in cached.names.values()} == {hash(m) for m in loaded.names.values()}
    assert type(next(iter(cached.names.values()))) is mappings.Mapping


def test_a_selector_counts_only_in_a_directive():
    names = (("GGML_USE_HIP",), ())
    assert _names_a_selector(b"#if defined(GGML_USE_HIP)\nint a;\n#endif\n", *names)
    assert _names_a_selector(b"#  ifdef __HIP_PLATFORM_AMD__\n#endif\n", (), ())
    assert _names_a_selector(b"#if defined(A) || \\\n    defined(GGML_USE_HIP)\n#endif\n", *names)   # continued
    assert _names_a_selector(b"#define IS_AMD GGML_USE_HIP\n", *names)
    assert not _names_a_selector(b"const char* s = \"GGML_USE_HIP\"; // GGML_USE_HIP\n", *names)
    assert not _names_a_selector(b"#include \"GGML_USE_HIP.h\"\n", *names)
    assert not _names_a_selector(b"int x;\n", *names)


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
