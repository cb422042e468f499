"""Rewrite blockers: the catalogue (mappings/rewrites.toml) and its loader, PK402 on a
flash-attention-like project, its cost per use, and the conversion headline of every format."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from conftest import REPO
from portkit.core.tables import ecosystem, blockers as rewrites
from portkit.commands.audit import AuditOptions, audit_paths
from portkit.core.errors import PortkitError
from portkit.report import html, text
from portkit.report.model import audit_document, conversion_headline
from portkit.report.audit_load import load, load_record
from portkit.report.audit_model import Summary
from portkit.commands.scan.walk import Options

AUDIT = REPO / "fixtures" / "audit"
CATALOGUE = REPO / "mappings" / "rewrites.toml"
ROCM52 = Options(audit=True, rocm=(5, 2, 0))


def audit(path: Path) -> dict:
    return audit_document(audit_paths([path], AuditOptions(scan=ROCM52)))


def test_catalogue_names_the_briefs_libraries_and_no_drop_in_one():
    cat = rewrites.default()
    assert [e.id for e in cat.entries] == [
        "cutlass", "cute", "hopper-tma-wgmma", "tensorrt", "tensorrt-llm", "cudnn-frontend", "nvshmem", "cudla",
        "optix", "npp", "nvjpeg", "nvdec", "nvenc", "cufile", "cublasdx", "cufftdx", "cusolverdx", "cuquantum"]
    assert cat.by_library("thrust") is None and cat.by_library("cub") is None
    assert all(e.source.startswith("https://") and e.alternative for e in cat.entries)
    assert cat.by_namespace("cute").id == "cute" and cat.by_namespace("nvinfer1").id == "tensorrt"
    assert cat.by_prefix("SM90_TMA_LOAD").id == "hopper-tma-wgmma" and cat.by_call("nvshmemx_quiet").id == "nvshmem"


def test_every_ecosystem_blocker_library_is_in_the_catalogue():
    """One place per library: what ecosystem.toml marks blocker is reported by PK402, never PK401."""
    cat = rewrites.default()
    assert sorted(lib.id for lib in ecosystem.default().libraries
                  if lib.blocker and cat.by_library(lib.id) is None) == []


def test_cost_per_use_comes_from_the_entry():
    cat = rewrites.default()
    assert cat.hours("cutlass", "kernel") == (8.0, 24.0, 80.0)
    assert cat.hours("tensorrt", "api") == (4.0, 12.0, 40.0)
    assert cat.hours("nvshmem", "line") == (0.5, 2.0, 6.0)
    assert cat.hours("cutlass", "use") == cat.mention == (0.1, 0.25, 1.0)


BAD = [
    ('id = "x"\nlibrary = "cub"', "x: CUB is drop-in on ROCm (hipCUB (on top of rocPRIM)), not a rewrite"),
    ('id = "x"\nlibrary = "nosuch"', "x: library nosuch is not in ecosystem.toml"),
    ('id = "x"\nname = "X"\ncolour = "red"', "x: unknown fields ['colour']"),
    ('id = "x"\nlibrary = "optix"\npackages = ["nosuch"]', "x: package nosuch is not in ecosystem.toml"),
    ('id = "x"\nname = "X"\nper = "file"', "x: work must be one of rewrite, different-library, no-equivalent "
                                         "and per one of kernel, api, line"),
]
FIELDS = 'alternative = "a"\nrocm_since = ""\nwork = "rewrite"\nper = "kernel"\nhours = [1, 2, 3]\nsource = "s"\n'


@pytest.mark.parametrize("record, message", BAD, ids=[m.split(":")[1].strip()[:20] for _, m in BAD])
def test_loader_errors_are_one_line_naming_the_entry(tmp_path: Path, record: str, message: str):
    path = tmp_path / "rewrites.toml"
    body = FIELDS.replace('per = "kernel"\n', "") if "per =" in record else FIELDS
    path.write_text(f"schema = 1\nmention = [0, 0, 1]\n[[rewrite]]\n{record}\n{body}", encoding="utf-8")
    with pytest.raises(PortkitError) as err:
        rewrites.load(path, ecosystem.default())
    assert str(err.value) == f"{path}: {message}"


def test_loader_refuses_a_library_in_two_entries(tmp_path: Path):
    path = tmp_path / "rewrites.toml"
    entry = f'[[rewrite]]\nid = "{{}}"\nlibrary = "optix"\n{FIELDS}'
    path.write_text("schema = 1\nmention = [0, 0, 1]\n" + entry.format("a") + entry.format("b"), encoding="utf-8")
    with pytest.raises(PortkitError, match=r": b: library optix is already in entry a$"):
        rewrites.load(path, ecosystem.default())


FLASH = [
    ("CMakeLists.txt", 2, "PK501"), ("CMakeLists.txt", 4, "PK402"), ("CMakeLists.txt", 6, "PK402"),
    ("CMakeLists.txt", 7, "PK502"),
    ("csrc/attn_fwd_kernel.h", 5, "PK402"), ("csrc/attn_fwd_kernel.h", 6, "PK402"),
    ("csrc/attn_fwd_kernel.h", 13, "PK402"), ("csrc/attn_fwd_kernel.h", 21, "PK402"),
    ("csrc/attn_fwd_kernel.h", 24, "PK005"), ("csrc/attn_fwd_kernel.h", 62, "PK402"),
    ("csrc/attn_fwd_sm90.h", 4, "PK402"), ("csrc/attn_fwd_sm90.h", 5, "PK402"), ("csrc/attn_fwd_sm90.h", 6, "PK402"),
    ("csrc/attn_fwd_sm90.h", 13, "PK402"), ("csrc/attn_fwd_sm90.h", 14, "PK402"),
]


def test_flash_attention_like_code_shows_its_blockers():
    doc = audit(AUDIT / "flash_attention_like")
    assert [(f["path"], f["line"], f["code"]) for f in doc["findings"]] == FLASH
    assert doc["summary"]["blockers"] == 12 == doc["estimate"]["blockers"]
    by_line = {(f["path"], f["line"]): f for f in doc["findings"]}
    kernel = by_line[("csrc/attn_fwd_kernel.h", 21)]
    assert kernel["message"] == (
        "using namespace cute: CuTe (CUTLASS 3 layout algebra, CuTe DSL) has no drop-in on AMD (the kernels are "
        "rewritten); instead: CK Tile (composable_kernel's tile programming API), or Triton (ROCm 6.4+)")
    hopper = by_line[("csrc/attn_fwd_sm90.h", 13)]
    assert hopper["message"].startswith("cute::SM90_TMA_LOAD: Hopper TMA/WGMMA through CuTe") and \
        hopper["message"].endswith("; see also PK301, PK306")
    include = by_line[("csrc/attn_fwd_kernel.h", 5)]
    assert include["effort_hours"] == {"low": 0.1, "likely": 0.25, "high": 1.0}   # a mention, not a kernel


def test_headline_of_the_flash_attention_like_project():
    doc = audit(AUDIT / "flash_attention_like")
    assert conversion_headline(load(doc).summary).text == (
        "6 of 6 CUDA references (100.0%) converted mechanically; 12 findings need a person "
        "(high severity or worse); blockers: 12")


def test_sample_project_no_longer_headlines_converted_automatically():
    """Three high warp-size findings (and one more) stand: the headline says a person is needed."""
    doc = audit(REPO / "fixtures" / "sample_project")
    assert doc["summary"]["by_severity"]["high"] == 4 and doc["summary"]["blockers"] == 0
    out = io.StringIO()
    text.render(load(doc), out)
    lines = out.getvalue().splitlines()
    assert lines[3] == ("58 of 58 CUDA references (100.0%) converted mechanically; 4 findings need a person "
                        "(high severity or worse); blockers: 0")
    assert "Converted automatically" not in out.getvalue()
    page = _html(doc)
    assert '<p class="conversion" id="conversion">58 of 58 CUDA references (100.0%) converted mechanically; ' \
           '4 findings need a person (high severity or worse); blockers: 0.</p>' in page


def _html(doc: dict) -> str:
    out = io.StringIO()
    html.render(load(doc), out)
    return out.getvalue()


@pytest.mark.parametrize("severity, expected", [
    ({"blocker": 0, "high": 0}, "Converted automatically: 9 of 10 CUDA references (90.0%); 1 left for people; "
                                "blockers: 0"),
    ({"blocker": 1, "high": 0}, "9 of 10 CUDA references (90.0%) converted mechanically; 1 finding needs a person "
                                "(high severity or worse); blockers: 1"),
    ({"blocker": 2, "high": 3}, "9 of 10 CUDA references (90.0%) converted mechanically; 5 findings need a person "
                                "(high severity or worse); blockers: 2"),
])
def test_one_function_decides_the_headline(severity, expected):
    summary = {"by_severity": {**severity, "medium": 7}, "refs_converted": 9, "cuda_refs": 10,
               "converted_share": 0.9, "refs_left": 1}
    assert conversion_headline(load_record(Summary, summary)).text == expected


def test_a_host_function_using_cutlass_is_a_use_and_a_device_function_a_kernel(tmp_path: Path):
    src = tmp_path / "gemm.cu"
    src.write_text("template <typename T> __device__ void tile(T* p) { cutlass::half_t h; }\n"
                   "void launch() { cutlass::half_t h; }\n", encoding="utf-8")
    doc = audit(src)
    assert [(f["line"], f["code"], f["message"].split(":")[0]) for f in doc["findings"]] == \
        [(1, "PK402", "cutlass"), (2, "PK402", "cutlass")]
    kernel, host = doc["findings"]
    assert kernel["effort_hours"] == {"low": 8.0, "likely": 24.0, "high": 80.0}
    assert host["effort_hours"]["high"] < 1.0   # a mention, discounted as a repeat in the file
