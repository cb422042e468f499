"""rewrite/nvidia_thrust.py: rocThrust's names in a conversion also build with CUDA's Thrust through
HIP's NVIDIA backend (thrust_algorithms, compiled there by tests/test_nvidia_backend.py)."""

from portkit.commands.convert import convert_bytes
from portkit.engine.context import Options
from portkit.rewrite.nvidia_thrust import MARK, helper
from portkit.rewrite.nvidia_votes import PLATFORM

SOURCE = (b"#include <thrust/system/cuda/execution_policy.h>\r\n"
          b"#include <thrust/sort.h>\r\n"
          b"void order(float* p, int n, cudaStream_t s) { thrust::sort(thrust::cuda::par.on(s), p, p + n); }\r\n")


def _convert(data: bytes, options: Options = Options()) -> bytes:
    _scan, out = convert_bytes("k.cu", data, options)
    return data if out is None else out


def test_the_policy_alias_and_the_backend_include_for_both_platforms():
    """The alias block after the HIP runtime header, then the converted include written for both
    platforms (CUDA's header on NVIDIA, rocThrust's otherwise), in the file's own line ends."""
    out = _convert(SOURCE)
    assert out == (b"\r\n#include <hip/hip_runtime.h>\r\n"
                   + helper(b"\r\n", include=False)
                   + PLATFORM + b"\r\n#include <thrust/system/cuda/execution_policy.h>\r\n#else\r\n"
                   b"#include <thrust/system/hip/execution_policy.h>\r\n#endif\r\n"
                   b"#include <thrust/sort.h>\r\n"
                   b"void order(float* p, int n, hipStream_t s) { thrust::sort(thrust::hip::par.on(s), p, p + n); }\r\n")
    assert helper(b"\n", include=False) == (
        PLATFORM + b"\n" + MARK + b", which builds with CUDA's Thrust: its CUDA backend under rocThrust's name\n"
        b"#include <thrust/system/cuda/execution_policy.h>\nnamespace thrust { namespace hip = cuda; }\n#endif\n")
    assert _convert(out) == out   # a re-run leaves both as they are


def test_thrust_without_its_cuda_backend_gets_nothing():
    data = b"#include <thrust/sort.h>\nvoid order(float* p, int n) { thrust::sort(thrust::device, p, p + n); }\n"
    assert _convert(data) == data
    only_include = b"#include <thrust/system/cuda/vector.h>\n"
    assert MARK not in _convert(only_include)
    assert _convert(only_include).count(b"#else\n#include <thrust/system/hip/vector.h>\n#endif\n") == 1


def test_an_audit_writes_no_block():
    scan, _ = convert_bytes("k.cu", SOURCE, Options(audit=True))
    assert scan.edits == []


def test_the_error_names_get_their_aliases_too():
    """thrust::system::cuda::errc and thrust::[system::]cuda_category become rocThrust's
    thrust::system::hip and hip_category, which CUDA's Thrust lacks: the block names them there too
    (thrust_cuda_backend_names compiles through HIP's NVIDIA backend: tests/test_nvidia_backend.py).
    The category is a function, defined once per translation unit under its own #ifndef."""
    data = (b"#include <thrust/system/cuda/error.h>\n"
            b"int code(const thrust::system_error& e) {\n"
            b"  if (e.code().category() != thrust::cuda_category()) return -1;\n"
            b"  return thrust::system::cuda::errc::errc_t(e.code().value()); }\n")
    out = _convert(data)
    block = helper(b"\n", include=False, system=True, category=True)
    assert block == (PLATFORM + b"\n" + MARK + b", which builds with CUDA's Thrust: its CUDA backend under rocThrust's name\n"
                     b"#include <thrust/system/cuda/execution_policy.h>\n#include <thrust/system/cuda/error.h>\n"
                     b"namespace thrust { namespace hip = cuda; }\n"
                     b"namespace thrust { namespace system { namespace hip = cuda; } }\n"
                     b"#ifndef PORTKIT_THRUST_HIP_CATEGORY\n#define PORTKIT_THRUST_HIP_CATEGORY\n"
                     b"namespace thrust { namespace system { inline const error_category& hip_category() "
                     b"{ return cuda_category(); } } using system::hip_category; }\n#endif\n#endif\n")
    # no runtime call: the block includes the HIP runtime header itself, as the policy's does
    assert out.startswith(helper(b"\n", include=True, system=True, category=True))
    assert b"thrust::hip_category()" in out and b"thrust::system::hip::errc::errc_t" in out
    assert _convert(out) == out
    only_category = b"#include <thrust/system_error.h>\nauto& c = thrust::system::cuda_category();\n"
    assert _convert(only_category).startswith(helper(b"\n", include=True, category=True))
