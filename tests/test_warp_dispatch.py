"""`--fix warp`'s run-time 32/64 dispatch of a one-warp launch (rules/_warpdispatch.py, PK208):
fixtures/warp_dispatch/*, byte for byte, on the simulator with the host asking the device its width,
and compiled: both instantiations exist in every device pass's code object."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from hip_nvidia import compile_for_nvidia, patched_include_dir
from portkit.commands.convert import convert_bytes
from portkit.core.tables.mappings import parse_version
from portkit.engine.context import Options
from warpsim import AMD32, AMD64, CUDA32, HIP_NVIDIA, SimError
from warpsim.fixture import expected, read_case, simulate

CASE = Path(__file__).resolve().parent.parent / "fixtures" / "warp_dispatch" / "host_dispatch_block_width"
FIX = Options(rocm=parse_version("5.2"), fixes=frozenset({"warp"}))
DISPATCH = re.compile(r"if \(portkit_device_warp_size\(\) == 64\) \{\n(.*?)\n        \} else \{\n.*?\n        \}", re.S)


def _convert(data: bytes, options: Options = FIX) -> bytes:
    _scan, out = convert_bytes("input.cu", data, options)
    return data if out is None else out


def outcome(source: str, target) -> dict | str:
    try:
        return simulate(source, read_case(CASE), target)
    except SimError as err:
        return f"SimError: {err}"


def compile_time_form() -> str:
    """The fixed output as --fix warp wrote it before the dispatch: `k<WARP_SIZE>`, `block_dims(WARP_SIZE, ...)`."""
    fixed = (CASE / "expected.hip").read_text()
    body = DISPATCH.search(fixed).group(1)
    return DISPATCH.sub(lambda _m: "\n".join(line[4:] for line in body.replace("64", "WARP_SIZE").split("\n")).lstrip(), fixed)


def test_fixture_converts_to_expected_and_is_idempotent():
    data, fixed = (CASE / "input.cu").read_bytes(), (CASE / "expected.hip").read_bytes()
    assert _convert(data) == fixed
    assert _convert(fixed) == fixed
    assert _convert(data, replace(FIX, fixes=frozenset())) != fixed
    assert fixed.count(b"static inline int portkit_device_warp_size()") == 1


def test_the_launch_and_its_block_shape_are_dispatched_and_the_rest_is_left():
    fixed = (CASE / "expected.hip").read_text()
    assert ("        if (portkit_device_warp_size() == 64) {\n"
            "            const dim3 block_dims(64, 1, 1);\n"
            "            rms_norm_f32<64><<<nrows, block_dims, 0, stream>>>(x, dst, ncols);\n"
            "        } else {\n"
            "            const dim3 block_dims(32, 1, 1);\n"
            "            rms_norm_f32<32><<<nrows, block_dims, 0, stream>>>(x, dst, ncols);\n"
            "        }\n") in fixed
    assert "rms_norm_f32<1024><<<nrows, block_dims, 0, stream>>>" in fixed   # not a warp: left
    assert "hipDeviceGetAttribute(&width, hipDeviceAttributeWarpSize, device);" in fixed


def test_the_fixed_code_is_right_on_every_device_with_the_host_asking_its_width():
    case = read_case(CASE)
    assert outcome((CASE / "input.cu").read_text(), CUDA32) == expected(case, 32)
    fixed = (CASE / "expected.hip").read_text()
    for target in (AMD32, AMD64, HIP_NVIDIA):   # no host_wave exemption: the host asks the device
        assert outcome(fixed, target) == expected(case, target.wave)


def test_the_compile_time_form_launches_an_instantiation_a_wave32_device_never_compiled():
    case, old = read_case(CASE), compile_time_form()
    assert "rms_norm_f32<WARP_SIZE><<<nrows, block_dims, 0, stream>>>" in old
    assert outcome(old, AMD64) == expected(case, 64)
    assert outcome(old, AMD32).startswith("SimError: the host launches rms_norm_f32<64>, which the device pass "
                                          "never instantiated (it names [(32,), (1024,)])")


def test_a_kernel_that_asserts_its_width_keeps_the_compile_time_form():
    """Both instantiations would fail its static_assert on one pass: left, with PK208's note."""
    src = (CASE / "input.cu").read_bytes().replace(
        b"    const int tid = threadIdx.x;\n", b"    const int tid = threadIdx.x;\n    static_assert(block_size == WARP_SIZE || block_size == 1024, \"\");\n", 1)
    out = _convert(src)
    assert b"portkit_device_warp_size" not in out and b"rms_norm_f32<WARP_SIZE><<<" in out


def test_a_block_shape_used_after_the_launch_is_not_moved_into_the_branches():
    src = (CASE / "input.cu").read_bytes().replace(
        b"(x, dst, ncols);\n    } else {", b"(x, dst, ncols);\n        (void)block_dims;\n    } else {", 1)
    out = _convert(src)
    assert b"portkit_device_warp_size" not in out and b"rms_norm_f32<WARP_SIZE><<<" in out


def _hipcc() -> str:
    found = shutil.which("hipcc")
    if found is None:
        if os.environ.get("PORTKIT_REQUIRE_TOOLS") == "1":
            pytest.fail("hipcc not found")
        pytest.skip("hipcc not found")
    return found


def _device_kernels(source: Path, arch: str, tmp_path: Path) -> set[str]:
    out = tmp_path / f"{arch}.s"
    subprocess.run([_hipcc(), "-x", "hip", f"--offload-arch={arch}", "--cuda-device-only", "-S", str(source), "-o", str(out)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"}, timeout=300)
    return set(re.findall(r"^\t\.globl\t(_ZL12rms_norm_f32ILi\d+EE\w+)", out.read_text(), re.M))


@pytest.mark.compile
def test_both_widths_are_in_the_code_object_of_wave64_and_wave32_devices(tmp_path: Path):
    kernels = {f"_ZL12rms_norm_f32ILi{w}EEvPKfPfi" for w in (32, 64, 1024)}
    assert _device_kernels(CASE / "expected.hip", "gfx90a", tmp_path) == kernels
    assert _device_kernels(CASE / "expected.hip", "gfx1030", tmp_path) == kernels
    old = tmp_path / "old.hip"
    old.write_text(compile_time_form())
    assert _device_kernels(old, "gfx1030", tmp_path) == kernels - {"_ZL12rms_norm_f32ILi64EEvPKfPfi"}


@pytest.mark.compile
def test_the_input_compiles_with_nvcc_and_the_output_through_hips_nvidia_backend(tmp_path: Path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found")
    subprocess.run([nvcc, "-c", str(CASE / "input.cu"), "-o", os.devnull], check=True, capture_output=True, timeout=300)
    done = compile_for_nvidia(CASE / "expected.hip", [patched_include_dir(tmp_path)])
    assert done.returncode == 0, done.stderr[-2000:]
