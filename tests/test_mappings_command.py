"""`portkit mappings`: coverage, one-name lookup, exports, and the tables against real headers."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

from portkit.cli.app import main
from portkit.core.tables.mappings import default_db
from portkit.report.mappings import render_markdown

from conftest import require_dir

REPO = Path(__file__).resolve().parent.parent


def test_lookup_prints_the_record(capsys):
    assert main(["mappings", "cudaMemcpyToSymbol"]) == 0
    assert capsys.readouterr().out == (
        "cuda        cudaMemcpyToSymbol\nfamily      runtime\nkind        function\n"
        "status      supported\nhip         hipMemcpyToSymbol\nhip_since   1.6\nsymbol_arg  1\n")


def test_lookup_by_hip_name_lists_the_cuda_names(capsys):
    assert main(["mappings", "hipHostMalloc"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[1] for line in out.splitlines() if line.startswith("cuda ")] == [
        "cudaHostAlloc", "cudaMallocHost"]


def test_unknown_name_exits_1(capsys):
    assert main(["mappings", "cudaNoSuchThing"]) == 1
    assert capsys.readouterr().err == "portkit: cudaNoSuchThing: not in the mapping tables\n"


def test_json_export_counts_match_the_tables(capsys):
    assert main(["mappings", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    db = default_db()
    assert doc["summary"]["known"] == len(doc["entries"]) == len(db)
    assert doc["summary"]["with_hip"] == sum(1 for e in doc["entries"] if "hip" in e)
    assert sum(f["known"] for f in doc["families"]) == doc["summary"]["known"]
    assert doc["summary"]["known"] >= 8900      # every name hipify-clang knows, and more
    assert doc["summary"]["with_hip"] >= 4900
    entry = next(e for e in doc["entries"] if e["cuda"] == "cudaGraphInstantiate")
    assert entry["arity_alias"] == {"2": "cudaGraphInstantiateWithFlags", "3": "cudaGraphInstantiateWithFlags"}
    entry = next(e for e in doc["entries"] if e["cuda"] == "cudaStreamWaitEvent")
    assert (entry["default_args"], entry["defaults_in_hip"]) == ({"3": "0"}, "6.1")


def test_csv_export(tmp_path):
    out = tmp_path / "m.csv"
    assert main(["mappings", "--format", "csv", "-o", str(out)]) == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert len(rows) == len(default_db())
    row = next(r for r in rows if r["cuda"] == "cudaMalloc")
    assert (row["hip"], row["status"], row["hip_since"], row["family"]) == ("hipMalloc", "supported", "1.5", "runtime")


def test_docs_mappings_md_is_current():
    """docs/mappings.md is generated: regenerate with `portkit mappings --format markdown -o docs/mappings.md`."""
    buffer = io.StringIO()
    render_markdown(default_db(), buffer)
    assert (REPO / "docs" / "mappings.md").read_text(encoding="utf-8") == buffer.getvalue()


def test_tables_match_the_installed_rocm_headers():
    """Every HIP name claimed for ROCm <= 5.2 (families Debian ships) is declared in its headers."""
    require_dir(Path("/usr/include/hip"), "ROCm HIP headers (apt-get install libamdhip64-dev)")
    require_dir(Path("/usr/include/hiprand"), "hipRAND headers (apt-get install libhiprand-dev)")
    require_dir(Path("/usr/include/hipsparse"), "hipSPARSE headers (apt-get install libhipsparse-dev)")
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "check_mappings_rocm52.py")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("0 not found")
