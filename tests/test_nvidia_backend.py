"""The NVIDIA side of HIP is a target (issue 31): portkit's outputs compile through HIP's NVIDIA
backend (nvcc, -D__HIP_PLATFORM_NVIDIA__, sm_90), not only with hipcc for AMD.

A HIP port replaces the CUDA code; a project that still ships to NVIDIA builds the same HIP source
there. The warp fixtures (`--fix warp`) and the polyfill header (its NVIDIA branch) are where
portkit writes platform-dependent code, so each of their outputs is compiled here, one test each.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import REPO, require_rocm_libraries
from test_compile_fixtures import skip_declared
from hip_nvidia import HIP_HEADERS, PatchError, apply_patches, compile_for_nvidia, patched_include_dir
from hip_nvidia_patches import PATCHES, Patch

WARP = sorted(p.parent for p in (REPO / "fixtures" / "warp").glob("*/expected.hip"))
POLYFILLS = sorted(p.parent for p in (REPO / "fixtures" / "polyfills").glob("*/expected.hip"))
# Plain conversions where convert writes HIP's mask-less votes, with their NVIDIA helper (rewrite/nvidia_votes.py)
VOTES = sorted(p.parent for p in (REPO / "fixtures" / "convert").glob("*/expected.hip")
               if b"HIP's mask-less votes through HIP's NVIDIA backend" in p.read_bytes())
# Plain conversions of Thrust code that names Thrust's CUDA backend (thrust::cuda::, thrust/system/cuda/),
# which the conversion renames to rocThrust's: CUDA's own Thrust (CCCL) is what HIP's NVIDIA backend
# compiles with. (Each compile takes about 10 s: Thrust code that names no backend is not compiled here.)
THRUST = sorted(p.parent for p in (REPO / "fixtures" / "convert").glob("*/input.cu")
                if re.search(rb"thrust::cuda::|thrust/system/cuda/", p.read_bytes()))
# Debian's ROCm 5.2 packages no hipBLAS (test_polyfills.py compiles this case wherever it is installed).
HIPBLAS = Path("/usr/include/hipblas/hipblas.h")

# Outputs that do not build for NVIDIA because of portkit, each with the compiler's words: strict,
# so a fix shows as XPASS; a failure with other words is a plain failure. (Issue 31 fixed the
# mask-less votes and the polyfill header's AMD-only definitions; rewrite/nvidia_thrust.py the
# thrust::hip policy that CUDA's Thrust does not declare.)
KNOWN_BUGS: dict[str, tuple[str, str]] = {}


def _params(group: str, folders: list[Path]) -> list:
    """One test per fixture; a known portkit bug is xfail(strict) on AssertionError only, so a
    missing tool under PORTKIT_REQUIRE_TOOLS=1 (pytest.fail) still fails."""
    params = []
    for folder in folders:
        name = f"{group}/{folder.name}"
        marks = ()
        if name in KNOWN_BUGS:
            marks = pytest.mark.xfail(strict=True, raises=AssertionError, reason=KNOWN_BUGS[name][1])
        params.append(pytest.param(folder, id=name, marks=marks))
    return params


@pytest.fixture(scope="session")
def hip_include(tmp_path_factory) -> Path:
    """HIP's headers patched for CUDA 13, copied once per session (per worker under xdist)."""
    return patched_include_dir(tmp_path_factory.mktemp("hip_nvidia"))


def _assert_compiles(name: str, path: Path, hip_include: Path) -> None:
    run = compile_for_nvidia(path, [hip_include])
    known = KNOWN_BUGS.get(name, ("",))[0]
    if known and run.returncode != 0 and known not in run.stderr:
        pytest.fail(f"fails, but not with the known bug's words ({known}):\n{run.stderr[-6000:]}")
    assert run.returncode == 0, run.stderr[-6000:]


@pytest.mark.parametrize("folder", _params("warp", WARP))
@pytest.mark.compile
def test_warp_fix_output_compiles_for_nvidia(folder: Path, hip_include: Path):
    """`--fix warp` writes PORTKIT_WAVEFRONT_SIZE, 32 through HIP's NVIDIA backend."""
    skip_declared(folder)
    _assert_compiles(f"warp/{folder.name}", folder / "expected.hip", hip_include)


def test_some_plain_conversions_write_mask_less_votes():
    assert [f.name for f in VOTES] == ["warp_vote_ballot"]


@pytest.mark.parametrize("folder", _params("convert", VOTES))
@pytest.mark.compile
def test_mask_less_votes_compile_for_nvidia(folder: Path, hip_include: Path):
    """`__ballot_sync(m, p)` -> `__ballot(p)` is CUDA's pre-Volta vote through HIP's NVIDIA backend,
    which ptxas refuses for sm_70+, unless the helper convert writes makes it the `_sync` form."""
    _assert_compiles(f"convert/{folder.name}", folder / "expected.hip", hip_include)


def test_the_thrust_conversions_are_found():
    assert [f.name for f in THRUST] == ["thrust_algorithms", "thrust_cuda_backend_names"]


@pytest.mark.parametrize("folder", _params("convert", THRUST))
@pytest.mark.compile
def test_thrust_conversions_compile_for_nvidia(folder: Path, hip_include: Path):
    """A HIP port of Thrust code compiles with CUDA's Thrust on NVIDIA (rocThrust is AMD's)."""
    _assert_compiles(f"convert/{folder.name}", folder / "expected.hip", hip_include)


@pytest.mark.parametrize("folder", _params("polyfills", POLYFILLS))
@pytest.mark.compile
def test_polyfill_output_compiles_for_nvidia(folder: Path, hip_include: Path, tmp_path: Path):
    """The output includes "portkit_polyfills.h" from its own folder, as convert writes them."""
    require_rocm_libraries([folder / "expected.hip"])
    if b"hipblas" in (folder / "expected.hip").read_bytes() and not HIPBLAS.is_file():
        pytest.skip("hipBLAS is not installed (Debian's ROCm 5.2 does not package it)")
    shutil.copy(folder / "expected.hip", tmp_path / "input.hip")
    shutil.copy(folder / "expected_polyfills.h", tmp_path / "portkit_polyfills.h")
    _assert_compiles(f"polyfills/{folder.name}", tmp_path / "input.hip", hip_include)


def test_every_patch_applies_to_the_installed_headers_once(hip_include: Path):
    """Each patch's new text is in the copy, and the original headers are left as they were."""
    for patch in PATCHES:
        assert (hip_include / "hip" / patch.file).read_text(encoding="utf-8").count(patch.new) == 1, patch.why
        assert "portkit tests" not in (HIP_HEADERS / patch.file).read_text(encoding="utf-8")


def test_a_patch_that_does_not_match_fails_loudly(tmp_path: Path):
    """A header that changed must break the tests, never be compiled half-patched."""
    (tmp_path / "a.h").write_text("int f();\nint f();\n")
    with pytest.raises(PatchError, match=r"occurs 0 times, expected once"):
        apply_patches(tmp_path, [Patch("a.h", "int g();\n", "", "g")])
    with pytest.raises(PatchError, match=r"occurs 2 times, expected once"):
        apply_patches(tmp_path, [Patch("a.h", "int f();\n", "", "f")])
    (tmp_path / "b.h").write_text("int f();\n")
    apply_patches(tmp_path, [Patch("b.h", "int f();\n", "#if X\nint f();\n#endif\n", "f")])
    assert (tmp_path / "b.h").read_text() == "#if X\nint f();\n#endif\n"
