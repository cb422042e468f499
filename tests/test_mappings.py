"""The tables load, are valid, and a malformed table is an error naming the file and the entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from portkit.core.errors import MappingError
from portkit.core.tables.mappings import default_db, load_tables, parse_version, tables_dir

HEADER = 'schema = 1\nfamily = "{family}"\ntitle = "t"\nsource = "s"\n'


def write(folder: Path, family: str, entries: str) -> None:
    (folder / f"{family}.toml").write_text(HEADER.format(family=family) + f"entries = [\n{entries}\n]\n")


GOOD = '{ cuda = "cudaMalloc", hip = "hipMalloc", kind = "function", status = "supported", hip_since = "1.6" },'


@pytest.mark.parametrize("entry, message", [
    ('{ cuda = "cudaMalloc", hipp = "x", kind = "function", status = "supported" }',
     "mappings/runtime.toml: entry 2 (cudaMalloc): unknown field 'hipp'"),
    ('{ cuda = "cudaFree", hip = "hipFree", kind = "function", status = "fine" }',
     "mappings/runtime.toml: entry 2 (cudaFree): bad status 'fine' (one of supported, partial, "
     "experimental, unsupported, removed)"),
    ('{ cuda = "cudaFree", hip = "hipFree", kind = "func", status = "supported" }',
     "mappings/runtime.toml: entry 2 (cudaFree): bad kind 'func' (one of function, type, enum, macro, "
     "header, namespace)"),
    ('{ cuda = "cudaFree", hip = "hipFree", kind = "function", status = "supported", hip_since = "five" }',
     "mappings/runtime.toml: entry 2 (cudaFree): field 'hip_since': not a version: 'five' (expected X.Y or X.Y.Z)"),
    ('{ cuda = "cudaFree", kind = "function", status = "supported" }',
     "mappings/runtime.toml: entry 2 (cudaFree): status 'supported' needs a hip name"),
    ('{ cuda = "cudaFree", hip = "hipFree", kind = "function", status = "partial" }',
     "mappings/runtime.toml: entry 2 (cudaFree): status 'partial' needs a note saying what differs"),
    ('{ cuda = "__shfl_sync", hip = "__shfl", kind = "function", status = "supported", drop_args = [1] }',
     "mappings/runtime.toml: entry 2 (__shfl_sync): drop_args changes behaviour, so the status must be 'partial'"),
    ('{ cuda = "cudaMalloc", hip = "hipMalloc", kind = "function", status = "supported" }',
     "mappings/runtime.toml: duplicate CUDA name 'cudaMalloc' (also in mappings/runtime.toml)"),
])
def test_bad_entries_are_named(tmp_path, entry, message):
    write(tmp_path, "runtime", GOOD + "\n" + entry)
    with pytest.raises(MappingError) as info:
        load_tables(tmp_path)
    assert str(info.value) == message


def test_duplicates_across_files(tmp_path):
    write(tmp_path, "runtime", GOOD)
    write(tmp_path, "driver", GOOD)
    with pytest.raises(MappingError) as info:
        load_tables(tmp_path)
    assert str(info.value) == "mappings/runtime.toml: duplicate CUDA name 'cudaMalloc' (also in mappings/driver.toml)"


def test_family_must_match_file_name(tmp_path):
    (tmp_path / "runtime.toml").write_text(HEADER.format(family="rt") + "entries = []\n")
    with pytest.raises(MappingError, match="family 'rt' must equal the file name 'runtime'"):
        load_tables(tmp_path)


def test_broken_toml_names_the_file(tmp_path):
    (tmp_path / "runtime.toml").write_text("schema = \n")
    with pytest.raises(MappingError, match=r"^mappings/runtime.toml: "):
        load_tables(tmp_path)


def test_shipped_tables_load_and_cover_the_core():
    db = default_db()
    assert tables_dir().is_dir()
    families = {f.name for f in db.families}
    assert {"runtime", "driver", "device", "headers", "complex", "cublas", "curand", "cufft",
            "cusparse", "cusolver", "cudnn", "cub", "rtc", "nccl", "nvtx", "coop_groups", "cutensor",
            "nvml", "libcu", "thrust"} <= families
    with_hip = [m for m in db.names.values() if m.hip]
    assert len(with_hip) >= 500
    assert db.names["cudaMalloc"].hip == "hipMalloc"
    assert db.names["cublasSgemm"].hip == "hipblasSgemm"
    assert db.names["cudaMemcpyToSymbol"].symbol_arg == 1
    assert db.headers["cuda_runtime.h"].hip == "hip/hip_runtime.h"
    assert len(db.headers) >= 60
    assert db.newest >= parse_version("6.0")
    assert db.names["ncclAllReduce"].hip == "ncclAllReduce"         # RCCL keeps NCCL's names
    assert db.names["nvtxRangePushA"].hip == "roctxRangePushA"
    assert db.names["nvmlInit_v2"].status == "unsupported"


def test_resolve_respects_the_target_release():
    db = default_db()
    limit = db.names["cudaDeviceSetLimit"]
    assert limit.resolve(parse_version("5.2"))[:2] == (None, "newer")
    assert limit.resolve(db.newest) == ("hipDeviceSetLimit", "", "")


def test_cache_is_used_and_invalidated_by_a_table_change(tmp_path, monkeypatch):
    from portkit.core.tables.mappings import load_tables_cached
    monkeypatch.setenv("PORTKIT_CACHE_DIR", str(tmp_path / "cache"))
    tables = tmp_path / "tables"
    tables.mkdir()
    write(tables, "runtime", GOOD)
    assert load_tables_cached(tables).names["cudaMalloc"].hip == "hipMalloc"
    assert len(list((tmp_path / "cache").glob("tables-*.json"))) == 1
    assert load_tables_cached(tables).names["cudaMalloc"].hip == "hipMalloc"
    write(tables, "runtime", GOOD.replace("hipMalloc", "hipMallocX").replace('"1.6"', '"1.7"'))
    assert load_tables_cached(tables).names["cudaMalloc"].hip == "hipMallocX"
