"""verify on PyTorch extensions: every error of an upstream unit explained (issue 53).

fixtures/verify_real/cub_alias_cascade is causal-conv1d's forward kernel traits, reduced (README.md
there): torch's hipify leaves `cub::` as it is, so `using BlockLoadT = cub::BlockLoad<...>` stops at
`use of undeclared identifier 'cub'` (PK506), and clang then reports the uses of the aliases that
were never declared, none of which quotes `cub`: they were "unexplained" (commands/verify/cascade.py).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from conftest import REPO, clang19
from portkit.cli.app import main
from portkit.commands.results import ErrorReport
from portkit.core.findings import Finding

CASCADE = REPO / "fixtures" / "verify_real" / "cub_alias_cascade" / "input"
KERNEL = "csrc/causal_conv1d_fwd.cu"


def _errors(doc: dict) -> list[tuple]:
    return [(e["path"], e["line"], [f["code"] for f in e["findings"]], e["consequence_of"])
            for u in doc["units"] for e in u["errors"]]


@pytest.mark.compile
def test_the_uses_of_an_alias_the_explained_error_stopped_are_its_consequences(pack62: Path, tmp_path: Path, capsys):
    """The extension as its authors left it (convert now writes the alias: the test below)."""
    clang19()
    out = tmp_path / "out"
    shutil.copytree(CASCADE, out)
    main(["verify", str(out), "--source", str(CASCADE), "--rocm", "6.2", "--rocm-headers", str(pack62),
          "--offline", "--no-cache", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    cause, scan = f"{KERNEL}:13", "csrc/selective_scan_fwd.cu"
    assert _errors(doc) == [(KERNEL, 13, ["PK506"], None),   # using BlockLoadT = cub::BlockLoad<...>
                            # std::max({sizeof(typename BlockLoadT::TempStorage), ...}): torch's hipify
                            # wrote ::max( there, the PK312 of the line as the tree has it
                            (KERNEL, 16, ["PK312"], None),
                            (KERNEL, 15, [], cause),          # the constexpr that statement initialises
                            (KERNEL, 23, [], f"{KERNEL}:16"),  # no member named 'BlockLoadT' in '...traits<...>'
                            (KERNEL, 26, [], f"{KERNEL}:16"),  # no type named 'BlockLoadT'
                            (scan, 17, ["PK312"], None),      # kNElts = ... std::min(8, kNItems), ::min once hipified
                            (scan, 18, [], f"{scan}:17")]     # static_assert(kNItems % kNElts == 0)
    assert (doc["summary"]["explained"], doc["summary"]["unexplained"]) == (2, 0)


@pytest.mark.compile
def test_after_convert_the_alias_serves_the_cub_names(pack62: Path, tmp_path: Path, capsys):
    """convert writes `namespace cub = hipcub;` under `#ifdef USE_ROCM` after the CUB includes
    (scan/torch_person.py), and torch's build defines USE_ROCM (verify/torch_pack.DEFINES; given by
    hand here, no torch pack): the `cub` error and its cascade are gone, the PK312s stay."""
    clang19()
    out = tmp_path / "out"
    assert main(["convert", str(CASCADE), "-o", str(out), "--rocm", "6.2", "-q"]) in (0, 1)
    assert b"#ifdef USE_ROCM\nnamespace cub = hipcub;\n#endif\n" in (out / KERNEL).read_bytes()
    capsys.readouterr()
    main(["verify", str(out), "--source", str(CASCADE), "--rocm", "6.2", "--rocm-headers", str(pack62),
          "--offline", "--no-cache", "--format", "json", "-D", "USE_ROCM=1"])
    doc = json.loads(capsys.readouterr().out)
    scan = "csrc/selective_scan_fwd.cu"
    assert _errors(doc) == [(KERNEL, 19, ["PK312"], None), (scan, 17, ["PK312"], None), (scan, 18, [], f"{scan}:17")]
    assert (doc["summary"]["explained"], doc["summary"]["unexplained"]) == (2, 0)


def _pk506(line: int) -> Finding:
    return Finding(code="PK506", name="torch-cuda-extension", severity="high", category="build", path=KERNEL,
                   line=line, column=1, end_line=line, end_column=2, message="m", subject="cub")


def test_only_errors_that_name_a_stopped_alias_follow_from_it():
    from portkit.commands.verify.cascade import failed_declarations
    lines = [line.encode() + b"\n" for line in (CASCADE / KERNEL).read_text().splitlines()]
    errors = [ErrorReport(KERNEL, 13, 70, "error", "use of undeclared identifier 'cub'", findings=[_pk506(14)]),
              ErrorReport(KERNEL, 16, 32, "error", "use of undeclared identifier 'BlockLoadT'"),
              ErrorReport(KERNEL, 23, 58, "error", "no member named 'BlockLoadT' in 'Traits<128, 4, float>'"),
              ErrorReport(KERNEL, 25, 5, "error", "unknown type name 'input_t'"),    # names no alias of cub
              ErrorReport("other.cu", 16, 1, "error", "use of undeclared identifier 'BlockLoadT'")]
    failed_declarations(errors, lambda rel: lines if rel == KERNEL else [])
    assert [e.consequence_of for e in errors] == [None, f"{KERNEL}:13", f"{KERNEL}:13", None, None]


def test_a_member_of_a_class_whose_instantiation_failed_follows_from_that_failure():
    """mamba: `no type named 'scan_t' in 'Selective_Scan_fwd_kernel_traits<...>'` after the traits'
    kNElts failed (PK312): scan_t is declared after it, and went with the instantiation."""
    from portkit.commands.verify.cascade import failed_declarations
    scan = "csrc/selective_scan_fwd.cu"
    lines = (CASCADE / scan).read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines, 1) if b"std::min(8, kNItems)" in line)
    pk312 = Finding(code="PK312", name="torch-hipify-min-max", severity="high", category="language", path=scan,
                    line=at, column=1, end_line=at, end_column=2, message="m", subject="std::min")
    errors = [ErrorReport(scan, at, 26, "error", "constexpr variable 'kNElts' must be initialized by a constant "
                                                 "expression", findings=[pk312]),
              ErrorReport(scan, at + 1, 19, "error", "static assertion expression is not an integral constant expression"),
              ErrorReport(scan, 24, 5, "error", "no type named 'scan_t' in 'Selective_Scan_fwd_kernel_traits<32, 16, "
                                                "__half>'"),
              ErrorReport(scan, 24, 5, "error", "no type named 'scan_t' in 'Other_traits<32>'")]
    failed_declarations(errors, lambda rel: lines)
    assert [e.consequence_of for e in errors] == [None, f"{scan}:{at}", f"{scan}:{at}", None]


SCATTER = REPO / "fixtures" / "torch_setup" / "scatter_loop"


def _located(rel: str, line: int, message: str):
    from portkit.commands.verify.diagnostics import Diagnostic, Located
    return Located(Diagnostic("error", message, rel, line, 1), rel, line, 1)


def test_a_noexcept_function_torch_s_op_no_longer_takes_is_the_older_torch_s():
    """pytorch_scatter's version.cpp: `RegisterOperators().op(name, &scatter::cuda_version)` with
    `cuda_version() noexcept`, fine at C++14, matches no overload at the C++17 torch 2.1+ needs."""
    from portkit.commands.verify import torch_release
    lines = (SCATTER / "csrc" / "version.cpp").read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines, 1) if b"RegisterOperators().op(" in line)
    code, subject, message = torch_release.explain(
        _located("csrc/version.cpp", at, "no matching member function for call to 'op'"), lines)
    assert (code, subject) == ("PK506", "op")
    assert message.startswith("&scatter::cuda_version is noexcept, which C++17 makes part of its type")
    # the same error where no noexcept function is passed is not this
    plain = [line.replace(b" noexcept", b"") for line in lines]
    assert torch_release.explain(_located("csrc/version.cpp", at, "no matching member function for call to 'op'"),
                                 plain) is None


@pytest.mark.parametrize("header,instead", [("THH/THH.h", "ATen/hip/HIPContext.h"),
                                            ("THC/THCAtomics.cuh", "ATen/cuda/Atomic.cuh"),
                                            ("THH/THHNumerics.cuh", "ATen/hip/HIPContext.h")])
def test_a_thc_or_thh_header_is_the_legacy_library_torch_1_11_removed(header: str, instead: str):
    from portkit.commands.verify import torch_release
    code, subject, message = torch_release.explain(
        _located("csrc/k.cu", 3, f"'{header}' file not found"), [b"#include <" + header.encode() + b">\n"])
    assert (code, subject) == ("PK506", header)
    assert "torch 1.11 removed the legacy" in message and f"include ATen's {instead} instead" in message


def test_the_benchmark_says_which_failing_units_fail_only_on_the_older_torch(tmp_path: Path, monkeypatch):
    """benchmarks/torch_extensions.py: a port "already builds for AMD" while a unit fails is said
    with why, where the unit fails only where it was written for an older torch than the pack's."""
    import importlib.util
    import subprocess
    spec = importlib.util.spec_from_file_location("torch_extensions_bench", REPO / "benchmarks" / "torch_extensions.py")
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, bench)   # its dataclasses look their module up
    spec.loader.exec_module(bench)
    older = {"code": "PK506", "message": "&f is noexcept, ... the call was written for an older torch built at C++14"}
    amd = {"code": "PK001", "message": "no HIP equivalent"}
    doc = {"summary": {"units": 3, "not_reached": 0}, "torch": None, "units": [
        {"path": "csrc/version.cpp", "status": "failed", "not_reached": False,
         "errors": [{"consequence_of": None, "findings": [older]}, {"consequence_of": "csrc/version.cpp:33", "findings": []}]},
        {"path": "csrc/k.cu", "status": "failed", "not_reached": False,
         "errors": [{"consequence_of": None, "findings": [older]}, {"consequence_of": None, "findings": [amd]}]},
        {"path": "csrc/ok.cu", "status": "compiled", "not_reached": False, "errors": []}]}

    def fake_portkit(*args, **kwargs):
        (tmp_path / "v.json").write_text(json.dumps(doc))
        return subprocess.CompletedProcess(args, 0, "", "")
    monkeypatch.setattr(bench, "portkit", fake_portkit)
    got = bench.verify(tmp_path, tmp_path, [], tmp_path / "v.json")
    assert (got["failing"], got["older_only"]) == (["csrc/version.cpp", "csrc/k.cu"], ["csrc/version.cpp"])


def test_hipcub_s_block_headers_of_rocm_3_5_are_converted(tmp_path: Path):
    """bitsandbytes' csrc/kernels.cu stopped at `'cub/block/block_discontinuity.cuh' file not found`,
    unexplained: the header table lacked three block headers hipCUB has had since ROCm 3.5 (its
    rocm-3.5.0 tag: block_discontinuity.hpp, block_exchange.hpp, block_histogram.hpp)."""
    src = tmp_path / "k.cu"
    src.write_text("#include <cub/block/block_discontinuity.cuh>\n#include <cub/block/block_exchange.cuh>\n"
                   "#include <cub/block/block_histogram.cuh>\n__global__ void k(int *x) { x[threadIdx.x] = 0; }\n")
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "--rocm", "6.2", "-q"]) in (0, 1)
    assert (out / "k.cu").read_text() == (
        "\n#include <hip/hip_runtime.h>\n#include <hipcub/block/block_discontinuity.hpp>\n"
        "#include <hipcub/block/block_exchange.hpp>\n#include <hipcub/block/block_histogram.hpp>\n"
        "__global__ void k(int *x) { x[threadIdx.x] = 0; }\n")


LEGACY_GEMM = REPO / "fixtures" / "verify_real" / "cublas_legacy_compute" / "input"


@pytest.mark.compile
def test_a_data_type_passed_as_cublas_compute_type_is_explained(pack62: Path, tmp_path: Path, capsys):
    """apex's mlp_cuda.cu: cublasGemmEx(..., CUDA_R_64F, CUBLAS_GEMM_DEFAULT), CUDA 10's computeType,
    converted to hipblasGemmEx_v2(..., HIP_R_64F, ...), which takes a hipblasComputeType_t there."""
    clang19()
    out = tmp_path / "out"
    assert main(["convert", str(LEGACY_GEMM), "-o", str(out), "--rocm", "6.2", "-q"]) in (0, 1)
    capsys.readouterr()
    main(["verify", str(out), "--source", str(LEGACY_GEMM), "--rocm", "6.2", "--rocm-headers", str(pack62),
          "--offline", "--no-cache", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert _errors(doc) == [("mlp_gemm.cu", 9, ["PK004"], None)]
    message = doc["units"][0]["errors"][0]["findings"][0]["message"]
    assert message.startswith("hipblasGemmEx_v2 takes a hipblasComputeType_t as its 18th argument where the call "
                              "passes a data type (hipDataType)")


def test_a_shuffle_of_a_torch_half_rocm_5_6_made_ambiguous_is_written_for_an_older_rocm():
    """pytorch_scatter's port: `#define SHFL_UP_SYNC(mask, var, delta) __shfl_up(var, delta)` under
    USE_ROCM on at::Half, which converts to float and to __half, whose overload ROCm 5.6 added (clang's
    notes, as clang-19 writes them against the 6.2 pack, name a candidate in amd_hip_fp16.h)."""
    from portkit.commands.verify import torch_release
    from portkit.commands.verify.diagnostics import Diagnostic, Located
    pack = "/packs/rocm-6.2.0-headers/include/hip/amd_detail/"
    notes = [(pack + "amd_warp_functions.h", 243, 7, "candidate function"),
             (pack + "amd_hip_fp16.h", 1762, 16, "candidate function")]
    message = "call to '__shfl_up' is ambiguous"
    found = torch_release.explain(Located(Diagnostic("error", message, "csrc/cuda/segment_coo_cuda.cu", 39, 13,
                                                     notes=notes), "csrc/cuda/segment_coo_cuda.cu", 39, 13), [])
    assert found[:2] == ("PK506", "__shfl_up") and "written for an older ROCm (before 5.6)" in found[2]
    # ambiguous among the int/float/double overloads alone: not this
    assert torch_release.explain(Located(Diagnostic("error", message, "k.cu", 1, 1, notes=notes[:1]), "k.cu", 1, 1),
                                 []) is None


def test_ldg_of_a_torch_half_has_no_overload_under_hip():
    """pytorch_scatter's segment_coo_cuda.cu: `__ldg(out_data + out_idx)` on at::Half; torch declares
    that overload for CUDA only (notes as clang-19 writes them with the 6.2 and torch 2.5.1 packs)."""
    from portkit.commands.verify import torch_release
    from portkit.commands.verify.diagnostics import Diagnostic, Located
    note = ("/packs/hip/amd_detail/hip_ldg.h", 30, 31, "candidate function not viable: no known conversion from "
            "'const c10::Half *' to 'const char *' for 1st argument")
    message = "no matching function for call to '__ldg'"
    found = torch_release.explain(Located(Diagnostic("error", message, "k.cu", 70, 19, notes=[note]), "k.cu", 70, 19), [])
    assert found[:2] == ("PK506", "__ldg") and found[2].startswith("torch declares __ldg(const c10::Half*) for CUDA only")
    # a pointer to non-const (pytorch_scatter's `scalar_t *out_data`) is the same gap
    mutable = (note[0], 30, 31, note[3].replace("'const c10::Half *'", "'c10::Half *'"))
    found = torch_release.explain(Located(Diagnostic("error", message, "k.cu", 70, 19, notes=[mutable]), "k.cu", 70, 19),
                                  [])
    assert found is not None and found[:2] == ("PK506", "__ldg")
    other = (note[0], 30, 31, "candidate function not viable: no known conversion from 'const Foo *' to 'const char *'")
    assert torch_release.explain(Located(Diagnostic("error", message, "k.cu", 70, 19, notes=[other]), "k.cu", 70, 19),
                                 []) is None
