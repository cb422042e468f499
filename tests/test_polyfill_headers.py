"""Header polyfills (docs/polyfills.md): `#include <cooperative_groups/reduce.h>` (and scan.h), headers
no ROCm release before 7.13 has, become the include of portkit_polyfills.h; one include per file, also
with name polyfills or with both headers; the function objects the two share are defined once;
re-runs keep them; audit prices them as converted; other releases and --no-polyfills leave the
headers reported."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, require_tool
from portkit.rewrite import polyfills
from portkit.cli.app import main
from portkit.core.tables.mappings import MappingError

FIXTURES = REPO / "fixtures" / "polyfills"
REDUCE = "cooperative_groups::reduce"
WHY = ("PK001 cooperative_groups/reduce.h has no HIP equivalent: HIP's cooperative groups have no reduce/scan "
       "collectives; use a __shfl_xor loop or hipcub::WarpReduce/BlockReduce.")
KERNEL = ("#include <cooperative_groups.h>\n"
          "#include <cooperative_groups/reduce.h>\n"
          "namespace cg = cooperative_groups;\n"
          "__global__ void k(float *x) {\n"
          "    auto t = cg::tiled_partition<16>(cg::this_thread_block());\n"
          "    x[threadIdx.x] = cg::reduce(t, x[threadIdx.x], cg::plus<float>());\n")


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    tree = tmp_path / "tree"
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    return tree


def test_directive_becomes_the_header_include_spelled_from_the_folder(tmp_path, capsys):
    tree = _tree(tmp_path, {"sub/k.cu": KERNEL + "}\n"})
    assert main(["convert", str(tree), "--in-place", "--rocm", "5.2"]) == 0
    assert capsys.readouterr().out.splitlines()[:3] == [
        "portkit convert: 1 file scanned (7 lines), 1 changed, 0 partially parsed, 0 skipped",
        "CUDA references: 2 found, 2 converted, 0 left (100.0% converted)",
        "Polyfills for ROCm 5.2: 1 name defined in portkit_polyfills.h, written:"]
    assert (tree / "sub" / "k.cu").read_text() == (
        "\n#include <hip/hip_runtime.h>\n#include <hip/hip_cooperative_groups.h>\n"
        '#include "../portkit_polyfills.h"\n' + KERNEL.split("\n", 2)[2] + "}\n")
    header = (tree / "portkit_polyfills.h").read_text()
    assert "#include <hip/hip_cooperative_groups.h>\n" in header
    assert "#if HIP_VERSION < 71300000  // ROCm 7.13 has it\nnamespace cooperative_groups {\n" in header


def test_with_a_name_polyfill_the_file_gets_one_include(tmp_path):
    """The include after the runtime header serves both; the reduce.h directive goes (from `#`
    to its path, as hipify-clang deletes a header), and a re-run changes nothing."""
    tree = _tree(tmp_path, {"k.cu": KERNEL + "    __syncwarp();\n}\n"})
    assert main(["convert", str(tree), "--in-place", "--rocm", "5.2", "-q"]) == 0
    text = (tree / "k.cu").read_bytes()
    assert text.splitlines()[:5] == [b"", b"#include <hip/hip_runtime.h>", b'#include "portkit_polyfills.h"',
                                     b"#include <hip/hip_cooperative_groups.h>", b""]
    assert text.count(b"portkit_polyfills.h") == 1
    header = (tree / "portkit_polyfills.h").read_bytes()
    assert b"// cooperative_groups::reduce: " in header and b"// portkit_syncwarp: " in header
    assert main(["convert", str(tree), "--in-place", "--rocm", "5.2", "-q"]) == 0
    assert (tree / "k.cu").read_bytes() == text
    assert (tree / "portkit_polyfills.h").read_bytes() == header


def test_rerun_over_converted_code_keeps_the_body(tmp_path, capsys):
    case = FIXTURES / "cg_reduce"
    tree = _tree(tmp_path, {"input.cu": (case / "expected.hip").read_text()})
    (tree / "portkit_polyfills.h").write_bytes((case / "expected_polyfills.h").read_bytes())
    assert main(["convert", str(tree), "--check", "--rocm", "5.2"]) == 0
    assert ("Polyfills for ROCm 5.2: 1 name defined in portkit_polyfills.h, unchanged:"
            in capsys.readouterr().out.splitlines())


def test_only_releases_before_7_13_get_it_and_no_polyfills_turns_it_off(tmp_path, capsys):
    tree = _tree(tmp_path, {"k.cu": KERNEL + "}\n"})
    for extra, reported in ((["--rocm", "7.12"], False), (["--rocm", "7.13"], True),
                            (["--rocm", "5.2", "--no-polyfills"], True)):
        assert main(["convert", str(tree), "--check", *extra]) == 1
        lines = capsys.readouterr().out.splitlines()
        assert (f"  k.cu:2:10: {WHY}" in lines) == reported, extra
        assert any(line.startswith("Polyfills for ROCm 7.12: 1 name") for line in lines) == (not reported)


def test_audit_prices_the_header_as_converted(tmp_path, capsys):
    tree = _tree(tmp_path, {"k.cu": KERNEL + "}\n"})
    assert main(["audit", str(tree), "--rocm", "5.2", "--format", "json"]) == 0
    s = json.loads(capsys.readouterr().out)["summary"]
    assert (s["by_code"], s["cuda_refs"], s["refs_converted"], s["refs_left"]) == ({}, 2, 2, 0)
    assert [(p["name"], p["serves"], p["files"]) for p in s["polyfills"]] == [
        (REDUCE, ["cooperative_groups/reduce.h"], ["k.cu"])]
    assert main(["audit", str(tree), "--rocm", "5.2", "--format", "json", "--no-polyfills"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(f["line"], f["code"]) for f in doc["findings"]] == [(2, "PK001")]
    assert doc["summary"]["refs_left"] == 1


def test_table_maps_the_header_and_checks_the_short_name(tmp_path):
    record = polyfills.table()["cooperative_groups/reduce.h"]
    assert (record.name, record.serves, record.headers) == (REDUCE, (), ("cooperative_groups/reduce.h",))
    assert "reduce" not in polyfills.table()
    bad = tmp_path / "polyfills.toml"
    bad.write_text('[[polyfill]]\nname = "ns::f"\nserves_headers = ["x.h"]\nsince = "5.2"\nnote = "n"\n'
                   'body = "namespace ns { void g(); }"\n')
    with pytest.raises(MappingError, match=r"^polyfills.toml: polyfill ns::f: the body does not define ns::f$"):
        polyfills.load(bad)



BOTH = ("#include <cooperative_groups.h>\n"
        "#include <cooperative_groups/reduce.h>\n"
        "#include <cooperative_groups/scan.h>\n"
        "namespace cg = cooperative_groups;\n"
        "__global__ void k(int *x) {\n"
        "    auto t = cg::tiled_partition<16>(cg::this_thread_block());\n"
        "    int v = x[threadIdx.x];\n"
        "    x[threadIdx.x] = cg::reduce(t, v, cg::plus<int>()) + cg::exclusive_scan(t, v, cg::bit_or<int>());\n"
        "}\n")


@pytest.mark.compile
def test_reduce_and_scan_headers_give_one_include_and_one_set_of_function_objects(tmp_path):
    """The first directive becomes the include, the second goes; cg::plus and its siblings are one
    record both need, written once before them, and the header compiles with hipcc."""
    tree = _tree(tmp_path, {"k.cu": BOTH})
    assert main(["convert", str(tree), "--in-place", "--rocm", "5.2", "-q"]) == 0
    text = (tree / "k.cu").read_text()
    assert text.split("\n")[:5] == ["", "#include <hip/hip_runtime.h>", "#include <hip/hip_cooperative_groups.h>",
                                     '#include "portkit_polyfills.h"', ""]
    assert text.split("\n", 5)[5] == BOTH.split("\n", 3)[3]
    header = (tree / "portkit_polyfills.h").read_text()
    assert [line for line in header.split("\n") if line.startswith("// cooperative_groups::")] == [
        "// " + f"{p.name}: {p.note}" for p in (polyfills.by_name()[n] for n in (
            "cooperative_groups::plus", "cooperative_groups::inclusive_scan", REDUCE))]
    assert header.count("struct plus {") == 1 and header.count("portkit_shuffle_words(const T& v") == 1
    hipcc = require_tool("hipcc", "hipcc")
    run = subprocess.run([hipcc, "-x", "hip", "--offload-arch=gfx90a", "-c", str(tree / "k.cu"), "-o", os.devnull],
                         env={**os.environ, "HIP_PLATFORM": "amd"}, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_rerun_keeps_the_scans_for_a_file_calling_only_exclusive_scan(tmp_path, capsys):
    """`calls`: a re-run finds the scans by `exclusive_scan(` as well as `inclusive_scan(`."""
    only_scan = BOTH.replace("#include <cooperative_groups/reduce.h>\n", "")
    tree = _tree(tmp_path, {"k.cu": only_scan.replace("cg::reduce(t, v, cg::plus<int>()) + ", "")})
    assert main(["convert", str(tree), "--in-place", "--rocm", "5.2", "-q"]) == 0
    header = (tree / "portkit_polyfills.h").read_bytes()
    assert main(["convert", str(tree), "--check", "--rocm", "5.2"]) == 0
    assert ("  cooperative_groups::inclusive_scan (1 file): " + polyfills.by_name()[
        "cooperative_groups::inclusive_scan"].note) in capsys.readouterr().out.splitlines()
    assert (tree / "portkit_polyfills.h").read_bytes() == header


def test_a_needed_record_must_exist(tmp_path):
    bad = tmp_path / "polyfills.toml"
    bad.write_text('[[polyfill]]\nname = "ns::f"\nserves_headers = ["x.h"]\nneeds = ["ns::g"]\nsince = "5.2"\n'
                   'note = "n"\nbody = "namespace ns { void f(); }"\n')
    with pytest.raises(MappingError, match=r"^polyfills.toml: polyfill ns::f: needs ns::g, which no record defines$"):
        polyfills.load(bad)


def test_a_header_included_but_never_called_into_is_deleted(tmp_path, capsys):
    """llm.c's attention_backward.cu includes scan.h and calls no scan: the directive goes (as
    hipify-clang deletes a header), the header holds reduce only, and a re-run over the result,
    which keeps a header polyfill only for the calls it sees, writes the same bytes."""
    tree = _tree(tmp_path, {"k.cu": KERNEL.replace("reduce.h>\n", "reduce.h>\n#include <cooperative_groups/scan.h>\n")
                            + "}\n"})
    assert main(["convert", str(tree), "--in-place", "--rocm", "5.2", "-q"]) == 0
    text = (tree / "k.cu").read_text()
    assert text.startswith('\n#include <hip/hip_runtime.h>\n#include <hip/hip_cooperative_groups.h>\n'
                           '#include "portkit_polyfills.h"\n\nnamespace cg = cooperative_groups;\n')
    header = (tree / "portkit_polyfills.h").read_text()
    assert "inclusive_scan" not in header and "reduce(" in header
    before = {p.name: p.read_bytes() for p in tree.iterdir()}
    assert main(["convert", str(tree), "--in-place", "--rocm", "5.2", "-q"]) == 0
    assert {p.name: p.read_bytes() for p in tree.iterdir()} == before

