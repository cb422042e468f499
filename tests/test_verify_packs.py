"""verify against a ROCm release that is not installed (issue 32): header packs, clang, the report.

The tests use the committed pack fixtures/rocm-headers/rocm-6.2.0-headers.tar.xz (HIP's and the
libraries' headers of ROCm 6.2.0, built by tools/build_rocm_header_pack.py from ROCm's repositories
at tag rocm-6.2.0: the pinned pack a download gives) and Debian's clang-19; the hipcc here is ROCm 5.2.
"""

from __future__ import annotations

import json
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

import hip_pch
from cases import all_cases
from conftest import REPO, require_tool, write_tree, PACK62_ARCHIVE, clang19
from portkit.cli.app import main
from portkit.commands.verify import VerifyOptions, packs, verify_tree
from portkit.core.errors import PortkitError

ARCHIVE = PACK62_ARCHIVE
BF16 = REPO / "fixtures" / "convert" / "bf16_types" / "input.cu"
# the include folders of the libraries whose headers the pack holds; a case using another is not compiled against it
PACKED = {"hip", "hipblas", "hipblaslt", "hipsparse", "hiprand", "rocrand", "rocprim", "hipcub", "thrust",
          "roctracer", "rocm-core", "hipfft", "hipsolver", "rccl"}
LIBRARY_INCLUDE = re.compile(rb'#\s*include\s*[<"](hip\w*|roc\w*|rccl|miopen|thrust|hipcub|rocprim)/')



def test_the_pack_is_what_its_manifest_pins(pack62: Path):
    pack = packs.load(pack62, (6, 2, 0))
    assert pack.pinned and pack.describe().endswith("; pinned)")
    assert (pack.release, pack.libraries) == ((6, 2, 0), ("hip", "hipblas", "hipblaslt", "hipsparse", "hiprand",
                                                          "rocrand", "rocprim", "hipcub", "rocthrust", "roctx",
                                                          "rocm-core", "hipfft", "hipsolver", "rccl"))
    assert [s.split("@")[0] for s in pack.sources] == [
        "ROCm/HIP", "ROCm/clr", "ROCm/hipBLAS", "ROCm/hipBLASLt", "ROCm/hipSPARSE", "ROCm/hipRAND", "ROCm/rocRAND",
        "ROCm/rocPRIM", "ROCm/hipCUB", "ROCm/rocThrust", "ROCm/roctracer", "ROCm/rocm-core", "ROCm/hipFFT",
        "ROCm/hipSOLVER", "ROCm/rccl"]
    assert sorted(p.name for p in (pack62 / "include").iterdir()) == sorted(PACKED)
    assert "#define HIP_VERSION_PATCH 41133" in (pack62 / "include" / "hip" / "hip_version.h").read_text()
    # the generated version headers, as each library's CMake writes them
    assert "#define ROCRAND_VERSION 300100\n" in (pack62 / "include/rocrand/rocrand_version.h").read_text()
    assert "#define HIPRAND_VERSION 201100\n" in (pack62 / "include/hiprand/hiprand_version.h").read_text()
    assert "#define ROCM_VERSION_MINOR   2\n" in (pack62 / "include/rocm-core/rocm_version.h").read_text()
    assert "#define ROCTHRUST_VERSION_MAJOR 3\n" in (pack62 / "include/thrust/rocthrust_version.hpp").read_text()
    assert sorted(p.name for p in (pack62 / "licenses").iterdir()) == [
        "HIP-LICENSE.txt", "clr-LICENCE", "hipBLAS-LICENSE.md", "hipBLASLt-LICENSE.md", "hipCUB-LICENSE.txt",
        "hipFFT-LICENSE.md", "hipRAND-LICENSE.txt", "hipSOLVER-LICENSE.md", "hipSPARSE-LICENSE.md", "rccl-LICENSE.txt",
        "rocPRIM-LICENSE.txt", "rocRAND-LICENSE.txt", "rocThrust-LICENSE", "rocm-core-copyright", "roctracer-LICENSE"]


def test_a_changed_or_foreign_pack_is_refused_in_one_line(pack62: Path, tmp_path: Path):
    copy = tmp_path / "pack"
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(tmp_path, filter="data")
    (tmp_path / "rocm-6.2.0-headers").rename(copy)
    with pytest.raises(PortkitError, match=r"^.*/pack: a ROCm 6\.2 header pack, not 6\.3$"):
        packs.load(copy, (6, 3, 0))
    header = copy / "include" / "hip" / "hip_runtime.h"
    header.write_bytes(header.read_bytes() + b"\n")
    with pytest.raises(PortkitError, match=r"include/hip/hip_runtime\.h does not match the pack's manifest "
                                           r"\(sha256 [0-9a-f]{12}\.\.\., pinned [0-9a-f]{12}\.\.\.\); rebuild"):
        packs.load(copy, (6, 2, 0))
    with pytest.raises(PortkitError, match=r"not a ROCm header pack \(no manifest\.json"):
        packs.load(tmp_path, None)


@pytest.mark.compile
def test_verify_at_a_release_not_installed_uses_clang_and_the_pack(pack62: Path, tmp_path: Path, capsys):
    """bf16 code for ROCm 6.2 (hip_bf16.h) does not compile with the ROCm 5.2 here; with the 6.2
    pack it is checked as 6.2 would, and the report says which compiler and headers."""
    clang = clang19()
    out = tmp_path / "out"
    assert main(["convert", str(BF16), "-o", str(out / "bf16.hip"), "--rocm", "6.2", "-q"]) == 0
    result = verify_tree(out, VerifyOptions(rocm=(6, 2, 0), rocm_headers=str(pack62)))
    assert (result.compiler.path, result.compiler.pack.root, result.count("compiled")) == (clang, pack62, 1)
    [unit] = result.units
    assert unit.command[-2:] == ("-fsyntax-only", str(out / "bf16.hip"))
    assert f"--rocm-path={pack62}" in unit.command and "-nogpulib" in unit.command
    assert main(["verify", str(out), "--rocm", "6.2", "--rocm-headers", str(pack62.parent), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["compiler"]["headers"]["release"] == "6.2" and doc["compiler"]["headers"]["syntax_only"] is True
    assert doc["compiler"]["note"] is None


@pytest.mark.compile
def test_a_relative_rocm_headers_path_is_the_same_pack(pack62: Path, tmp_path: Path, monkeypatch, capsys):
    """`--rocm-headers packs/x` (relative) failed every unit with an unexplained "cannot find HIP
    runtime": the compiler runs in each unit's folder, where --rocm-path=packs/x names nothing."""
    clang19()
    out = tmp_path / "out"
    assert main(["convert", str(BF16), "-o", str(out / "bf16.hip"), "--rocm", "6.2", "-q"]) == 0
    monkeypatch.chdir(pack62.parent.parent)
    relative = f"{pack62.parent.name}/{pack62.name}"
    assert main(["verify", str(out), "--rocm", "6.2", "--rocm-headers", relative, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["compiled"] == 1 and doc["compiler"]["headers"]["release"] == "6.2"


@pytest.mark.compile
def test_convert_verify_compiles_against_the_conversions_target(pack62: Path, tmp_path: Path, monkeypatch, capsys):
    """`convert --rocm 6.2 --verify` compiled the 6.2 conversion with the ROCm 5.2 installed here
    (it always asked for the compiler's own release): bf16 code failed on hip_bf16.h, which 5.2
    lacks. It now compiles against the target's pack where there is one; without one, the
    installed release compiles and explains, as before, with the note saying so."""
    clang19()
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(packs.ENV, raising=False)
    assert main(["convert", str(BF16), "-o", str(tmp_path / "a"), "--rocm", "6.2", "--verify",
                 "--rocm-headers", str(pack62.parent), "-q"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("portkit verify: 1/1 compiled")
    assert main(["convert", str(BF16), "-o", str(tmp_path / "b"), "--rocm", "6.2", "--verify"]) == 1
    text = capsys.readouterr().out
    assert "Note: no ROCm 6.2 header pack found (not downloaded: $PORTKIT_OFFLINE is set), so the ROCm 5.2 " \
           "headers installed here were used" in text
    assert "1 translation unit: 0 compiled, 1 failed (1 explained by findings, 0 unexplained, 0 not reached)" in text


def test_a_folder_of_packs_without_rocm_takes_its_one_pack(pack62: Path, tmp_path: Path):
    """--rocm-headers names "a ROCm header pack (or a folder of packs by release)"; without --rocm a
    folder of packs was refused as "not a ROCm header pack". Its one pack is taken; of several,
    --rocm chooses, in one line."""
    assert packs.load_given(pack62.parent).root == pack62
    two = tmp_path / "two"
    two.mkdir()
    for name in ("6.2.0", "6.2.1"):
        (two / name).symlink_to(pack62, target_is_directory=True)
    with pytest.raises(PortkitError) as raised:
        packs.load_given(two)
    assert str(raised.value) == f"--rocm-headers {two}: a folder of 2 header packs (6.2.0, 6.2.1): choose one with --rocm X.Y"
    with pytest.raises(PortkitError, match="not a ROCm header pack"):
        packs.load_given(tmp_path / "none")


@pytest.mark.compile
def test_without_a_pack_the_installed_release_is_used_and_said(tmp_path: Path, monkeypatch, capsys):
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(packs.ENV, raising=False)
    out = tmp_path / "out"
    assert main(["convert", str(REPO / "fixtures" / "convert" / "memory_basic" / "input.cu"), "-o",
                 str(out / "m.hip"), "-q"]) == 0
    capsys.readouterr()
    assert main(["verify", str(out), "--rocm", "6.2"]) == 0
    assert ("Note: no ROCm 6.2 header pack found (not downloaded: $PORTKIT_OFFLINE is set), so the ROCm 5.2 headers installed here were used; give one with "
            "--rocm-headers DIR or $PORTKIT_ROCM_HEADERS (docs/verify.md)") in capsys.readouterr().out.splitlines()
    assert main(["verify", str(out), "--rocm", "6.2", "--rocm-headers", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (f"portkit: error: --rocm-headers {tmp_path}: no ROCm 6.2 header pack there "
                                       f"(a folder with manifest.json, or one named by release such as 6.2.0)\n")
    assert main(["verify", str(out), "--rocm", "5.2", "--rocm-headers", str(tmp_path), "-q"]) == 0   # installed: no pack needed
    assert capsys.readouterr().out.startswith("portkit verify: 1/1 compiled")


def test_the_cache_and_the_environment_are_where_packs_are_found(pack62: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(packs.ENV, raising=False)
    assert packs.locate((6, 2, 0)) is None
    monkeypatch.setenv(packs.ENV, str(pack62.parent))
    assert packs.locate((6, 2, 0)).root == pack62
    monkeypatch.delenv(packs.ENV)
    (tmp_path / "portkit" / "rocm-headers").mkdir(parents=True)
    (tmp_path / "portkit" / "rocm-headers" / "6.2.0").symlink_to(pack62, target_is_directory=True)
    assert packs.locate((6, 2, 0)).root == tmp_path / "portkit" / "rocm-headers" / "6.2.0"


def test_an_unconverted_tree_is_refused_in_one_line(tmp_path: Path, capsys):
    tree = tmp_path / "cuda"
    tree.mkdir()
    (tree / "k.cu").write_bytes((REPO / "fixtures" / "convert" / "memory_basic" / "input.cu").read_bytes())
    assert main(["verify", str(tree)]) == 2
    assert capsys.readouterr().err == (f"portkit: error: {tree}: this is CUDA source (1 of 1 files use CUDA, e.g. k.cu, "
                                       f"and none HIP): run `portkit convert {tree} -o OUT` first, then verify OUT\n")


CASES = all_cases()     # also those the hipcc here cannot compile (their libraries, their release)
# a case whose output keeps what HIP lacks for a person by design (its case.toml's hipcc_skip says so):
# clang's errors, each at a site convert reports as PK001 (CUB's dispatch header: the compile stops there)
LEFT_FOR_A_PERSON = {
    "cub_dispatch_internals": ["input.cu:4:10: fatal error: 'cub/device/dispatch/dispatch_radix_sort.cuh' file not found"],
}


def pack62_base(clang: str, pack62: Path) -> list[str]:
    """clang-19's HIP syntax check against the pack (both sides, no device libraries, no warnings)."""
    return [clang, "-x", "hip", "--offload-arch=gfx90a", "-nogpulib", f"--rocm-path={pack62}",
            "-isystem", str(pack62 / "include"), "-w"]


@pytest.fixture(scope="session")
def pack62_pch(pack62: Path, tmp_path_factory) -> hip_pch.Precompiled:
    """The pack's hip_runtime.h precompiled once per session for each side (tests/hip_pch.py): the
    golden cases' checks below took 1.2 s of CPU each, nearly all of it that header."""
    return hip_pch.Precompiled(pack62_base("clang++-19", pack62), ["-fsyntax-only"], tmp_path_factory.mktemp("pch62"))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.compile
def test_every_golden_case_converted_for_6_2_compiles_against_the_6_2_pack(case, pack62: Path, tmp_path: Path,
                                                                            pack62_pch: hip_pch.Precompiled):
    """The goldens are compiled by the hipcc here at 5.2 (test_compile_fixtures.py); converted for
    ROCm 6.2, each compiles against 6.2's own headers too (syntax, both passes)."""
    clang19()
    args = list(case.args)
    if "--rocm" in args:
        written_for = args[args.index("--rocm") + 1]
        if tuple(int(n) for n in written_for.split(".")) > (6, 2):
            pytest.skip(f"written for ROCm {written_for}: portkit pins no pack of that release yet")
        del args[args.index("--rocm"):args.index("--rocm") + 2]
    out = tmp_path / "out"
    assert main(["convert", str(case.input), "-o", str(out / (case.input.name if not case.multi else "")),
                 "-q", "--rocm", "6.2", *args]) in (0, 1)
    files = [p for p in out.rglob("*") if p.is_file()]
    libraries = {m.group(1).decode() for p in files for m in LIBRARY_INCLUDE.finditer(p.read_bytes())} - PACKED
    if libraries:
        pytest.skip(f"uses {', '.join(sorted(libraries))}, whose headers the 6.2 pack does not hold")
    units = [p for p in files if p.suffix in (".cu", ".hip", ".cpp", ".cc")] or \
        [p for p in files if p.suffix in (".h", ".cuh", ".hpp")]   # a header-only case: its headers, as HIP
    assert units
    for unit in units:
        run = pack62_pch.check(["-I", str(out), *case.hipcc_flags], unit)
        if case.name in LEFT_FOR_A_PERSON:
            errors = [line.removeprefix(f"{out}/") for line in run.stderr.splitlines()
                      if re.search(r": (fatal )?error: ", line)]
            assert (run.returncode, errors) == (1, LEFT_FOR_A_PERSON[case.name])
        else:
            assert run.returncode == 0, run.stderr[-4000:]


def test_an_error_that_follows_from_an_explained_one_is_its_consequence():
    """Issue 32: cascades of an explained error were marked "unexplained, please report"."""
    from portkit.commands.results import ErrorReport
    from portkit.commands.verify import consequences
    from portkit.core.findings import Finding
    finding = Finding(code="PK001", name="no-hip-equivalent", severity="high", category="api", path="a.hip",
                      line=3, column=1, end_line=3, end_column=2, message="m", subject="s")
    errors = [ErrorReport("a.hip", 3, 5, "error", "unknown type name 'cudaGraphConditionalHandle'", findings=[finding]),
              ErrorReport("a.hip", 3, 40, "error", "use of undeclared identifier 'x'"),
              ErrorReport("a.hip", 9, 1, "error", "unknown type name 'cudaGraphConditionalHandle'"),
              ErrorReport("a.hip", 12, 1, "error", "no member named 'y' in 'S'")]
    consequences(errors)
    assert [e.consequence_of for e in errors] == [None, "a.hip:3", "a.hip:3", None]
    assert [e.explained for e in errors] == [True, True, True, False]


@pytest.mark.compile
def test_an_error_directive_in_the_nvidia_branch_names_the_macro_the_amd_build_defines(tmp_path: Path, capsys):
    """faiss's DeviceDefs.cuh: `#ifdef USE_AMD_ROCM ... #else #if CUDA_VERSION < 8000 #error ...`. Compiled
    without the project's -DUSE_AMD_ROCM, the #error is explained (PK103) with the flag to pass."""
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    (tmp_path / "k.hip").write_text("#include <hip/hip_runtime.h>\n#ifdef USE_AMD_ROCM\n#define WARPS 64\n#else\n"
                                    "#if CUDA_VERSION < 8000\n#error \"CUDA >= 8.0 is required\"\n#endif\n"
                                    "#define WARPS 32\n#endif\n__global__ void k(int* o) { o[0] = WARPS; }\n")
    assert main(["verify", str(tmp_path)]) == 1
    assert ("    explained by PK103 cuda-version-guard: the NVIDIA build's branch of an #if that USE_AMD_ROCM "
            "selects for AMD: the project's AMD build defines USE_AMD_ROCM, this compile did not (pass "
            "-DUSE_AMD_ROCM, or -p with that build's compile_commands.json)") in capsys.readouterr().out.splitlines()
    assert main(["verify", str(tmp_path), "-D", "USE_AMD_ROCM", "-q"]) == 0


@pytest.mark.compile
def test_an_error_directive_asking_the_build_for_a_macro_says_which_and_its_uses_follow(tmp_path: Path, capsys):
    """tiny-cuda-nn: `#ifndef TCNN_HALF_PRECISION` `#error ... The build system must define this`."""
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    (tmp_path / "k.hip").write_text("#include <hip/hip_runtime.h>\n#ifndef TCNN_HALF_PRECISION\n#error \"the build system "
                                    "must define TCNN_HALF_PRECISION\"\n#endif\n__global__ void k(int* o) "
                                    "{ o[0] = TCNN_HALF_PRECISION; }\n")
    assert main(["verify", str(tmp_path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[4:8] == [
        "  k.hip:3:2: error: \"the build system must define TCNN_HALF_PRECISION\"",
        "    explained by PK103 cuda-version-guard: #error unless TCNN_HALF_PRECISION is defined: the build defines it "
        "where verify does not read (a condition, an option); pass -DTCNN_HALF_PRECISION=VALUE, or -p with the "
        "build's compile_commands.json",
        "  k.hip:5:36: error: use of undeclared identifier 'TCNN_HALF_PRECISION'",
        "    a consequence of the error at k.hip:3 (explained)"]


@pytest.mark.compile
def test_an_address_space_intrinsic_is_a_finding_with_its_fix_and_explains_the_error(pack62: Path, tmp_path: Path):
    """Issue 32: __cvta_generic_to_shared (ggml's cp-async.cuh) failed verify with no finding."""
    clang19()
    out = tmp_path / "out"
    out.mkdir()
    source = (b"#include <cuda_runtime.h>\n__global__ void k(unsigned* o) {\n    __shared__ float tile[32];\n"
              b"    o[threadIdx.x] = __cvta_generic_to_shared(&tile[threadIdx.x]);\n}\n")
    converted = portkit_convert(source)
    (out / "k.hip").write_bytes(converted.output)
    assert [(f.code, f.line, f.message) for f in converted.findings] == [
        ("PK001", 4, "__cvta_generic_to_shared has no HIP equivalent: HIP has no __cvta_generic_to_shared: the LDS "
                     "offset is (size_t)(__attribute__((address_space(3))) void*)p; its users (cp.async, ldmatrix "
                     "PTX) need a rewrite anyway.")]
    result = verify_tree(out, VerifyOptions(rocm=(6, 2, 0), rocm_headers=str(pack62)))
    [unit] = result.units
    assert (unit.status, unit.explained, [f.code for e in unit.errors for f in e.findings]) == ("failed", True, ["PK001"])


@pytest.mark.compile
def test_a_cuda_header_in_the_projects_own_amd_branch_is_explained_by_the_platform_model(pack62: Path, tmp_path: Path,
                                                                                       capsys):
    """faiss's PtxUtils.cuh: `#ifdef USE_AMD_ROCM` `#include <device_functions.h>` (its AMD build runs
    hipify over the tree). Left as ported by convert; verified with -DUSE_AMD_ROCM it is PK103, not
    "unexplained" (43 faiss units at 6.2, once the pack held rocThrust and they were reached)."""
    clang19()
    tree = write_tree(tmp_path / "src", {"k.cu": "#include <cuda_runtime.h>\n#ifdef USE_AMD_ROCM\n"
                                                 "#include <device_functions.h>\n#endif\n__global__ void k() {}\n"})
    out = tmp_path / "out"
    assert main(["convert", str(tree), "-o", str(out), "-q", "--rocm", "6.2", "--convert-amd-built"]) == 0
    assert (out / "k.cu").read_text().splitlines()[:3] == ["#include <hip/hip_runtime.h>", "#ifdef USE_AMD_ROCM",
                                                           "#include <device_functions.h>"]
    result = verify_tree(out, VerifyOptions(rocm=(6, 2, 0), rocm_headers=str(pack62), defines=("USE_AMD_ROCM",)))
    [unit] = result.units
    [error] = unit.errors
    [finding] = error.findings
    assert (unit.status, unit.explained, finding.code, finding.line, finding.message) == (
        "failed", True, "PK103", 3,
        "device_functions.h is CUDA's header (HIP: hip/device_functions.h) in a branch only the project's AMD build "
        "compiles, which portkit leaves as the project wrote it: the project's own AMD build translates it (a hipify "
        "step), or convert with --no-platform-model to convert that branch too")


def portkit_convert(source: bytes):
    from portkit import convert_text
    return convert_text(source, rocm="6.2")


@pytest.mark.compile
def test_every_missing_library_header_is_listed_in_one_run(tmp_path: Path, capsys):
    """Issue 32: one missing header per run took three runs (and three installs) for llm.c."""
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    (tmp_path / "k.hip").write_text("#include <hip/hip_runtime.h>\n#include <hipblas/hipblas.h>\n#include <hipfft/hipfft.h>\n"
                                    "#include \"k_local.h\"\n#include <rccl/rccl.h>\n__global__ void k() {}\n")
    (tmp_path / "k_local.h").write_text("#include <mylib/api.h>\n")
    assert main(["verify", str(tmp_path), "--format", "json"]) == 1
    [unit] = json.loads(capsys.readouterr().out)["units"]
    assert (unit["status"], unit["missing_headers"]) == (
        "not_reached", ["hipblas/hipblas.h", "hipfft/hipfft.h", "mylib/api.h", "rccl/rccl.h"])


def test_a_pack_archive_is_installed_into_the_cache_and_a_foreign_build_is_not_pinned(tmp_path: Path, monkeypatch):
    """The offline way to get a pack: `--rocm-headers rocm-6.2.0-headers.tar.xz` unpacks it into the
    user cache by release, checked; a 6.2.0 pack whose manifest differs from the pinned one is used
    but said not to be pinned; an archive with a path outside it is refused."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    pack = packs.locate((6, 2, 0), str(ARCHIVE))
    assert pack.root == tmp_path / "cache" / "portkit" / "rocm-headers" / "6.2.0" and pack.pinned
    assert packs.locate((6, 2, 0)).root == pack.root                    # found in the cache from now on
    manifest = json.loads((pack.root / "manifest.json").read_text())
    manifest["libraries"].append("local")
    (pack.root / "manifest.json").write_text(json.dumps(manifest))
    assert packs.load(pack.root).describe().endswith("; not a pack portkit pins)")
    evil = tmp_path / "evil.tar.xz"
    with tarfile.open(evil, "w:xz") as tar:
        info = tarfile.TarInfo("../outside.h")
        tar.addfile(info, __import__("io").BytesIO(b""))
    with pytest.raises(PortkitError, match=r"evil\.tar\.xz: \.\./outside\.h: not a file of a header pack$"):
        packs.install(evil)
    assert not (tmp_path / "cache" / "portkit" / "outside.h").exists()
