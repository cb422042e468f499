"""Errors a PyTorch extension meets because it was written for an older torch than the pack's.

verify compiles an extension against one torch (the pinned pack, 2.5.1). Code written for an
older release fails there for reasons that are not AMD's (issue 53), and each is explained here
with the release that changed and what replaces it (PK506, the torch-extension rule):

- **THC / THH headers**: torch 1.11 removed the legacy THC library (`THC/THC.h`,
  `THC/THCAtomics.cuh`...) and with it THH, the name torch's hipify gives it on ROCm (`THH/THH.h`).
  ROCm/apex's port at ROCm 3.x includes them; the replacements are ATen's: `ATen/cuda/CUDAContext.h`
  (`ATen/hip/HIPContext.h` once hipified), `ATen/cuda/Atomic.cuh`, `ATen/cuda/Exceptions.h`.
- **noexcept in a function's type**: torch's headers need C++17 from 2.1 on (torch_pack.lift_std
  raises an older -std), and C++17 made `noexcept` part of a function's type, so
  `torch::RegisterOperators().op(name, &f)` with `f() noexcept` finds no overload; pytorch_scatter
  passes a lambda since fa4f442 ("Fix compilation errors occurring when building with
  PyTorch-nightly").
- **A data type for cuBLAS's compute type**: `cublasGemmEx(..., CUDA_R_32F, CUBLAS_GEMM_DEFAULT)`,
  the form of CUDA 10, whose computeType was a cudaDataType. CUDA 11 made it a
  cublasComputeType_t and keeps the old form through a C++ overload, so nvcc still compiles it;
  hipBLAS's v2 API (`hipblasGemmEx_v2`, what torch's ROCm build and convert at ROCm 6 call) has no
  such overload: `no known conversion from 'hipDataType' to 'hipblasComputeType_t'` (apex's
  mlp_cuda.cu, bitsandbytes' ops.cu). Explained by PK004 with the compute type to write.
- **`__shfl_up(val, d)` on a torch half**: ROCm 5.6 added `__half` and `__half2` overloads of the
  shuffles (amd_hip_fp16.h; hipamd 7e9a4711), and c10::Half converts to both float and __half, so
  pytorch_scatter's port (`#define SHFL_UP_SYNC(mask, var, delta) __shfl_up(var, delta)` under
  USE_ROCM, for ROCm 4/5) is ambiguous at 6.2: `call to '__shfl_up' is ambiguous`, a candidate in
  amd_hip_fp16.h. Explained by PK506, written for an older ROCm: convert the argument first.

And one gap of torch's own headers on ROCm, the same in every release: c10/util/Half-inl.h declares
`__ldg(const c10::Half*)` only for CUDA (`__CUDA_ARCH__`, or clang in CUDA mode), so
pytorch_scatter's `__ldg(out_data + i)` on at::Half finds no overload under HIP (`no known
conversion from 'const c10::Half *'`); its port declares the overload under USE_ROCM (PK506).
"""

from __future__ import annotations

import re

from ...core.findings import Finding
from ...engine.codes import Code
from .diagnostics import Located

COPY = "torch-hipified-"   # the name of the copy build_hipify.translated writes as torch's hipify would

_LEGACY = re.compile(r"(THC|THH)/(\w+)\.(?:h|cuh)$")
_REPLACEMENT = {"THC": "ATen/cuda/CUDAContext.h", "THH": "ATen/hip/HIPContext.h"}
_ATOMICS = {"THC": "ATen/cuda/Atomic.cuh", "THH": "ATen/hip/Atomic.cuh"}
_NO_MATCH = re.compile(r"no matching (?:member )?function for call to '(\w+)'")
_AMBIGUOUS_SHUFFLE = re.compile(r"call to '(__shfl(?:_up|_down|_xor)?)' is ambiguous")
_TORCH_HALF = re.compile(r"no known conversion from '(?:const )?c10::(Half|BFloat16) \*'")
_COMPUTE = re.compile(r"no known conversion from '(hipDataType|hipblasDatatype_t)' to 'hipblasComputeType_t' "
                      r"for (\w+) argument")
_ADDRESS = re.compile(rb"&\s*((?:\w+::)*\w+)\s*[,)]")


def explain(error: Located, lines: list[bytes]) -> tuple[str, str, str] | None:
    """(code, subject, message) when the error is one of the torch-release differences above."""
    message = error.diagnostic.message
    subject = error.diagnostic.subject or ""
    legacy = _LEGACY.match(subject) if "file not found" in message else None
    if legacy is not None:
        folder, name = legacy.groups()
        instead = _ATOMICS[folder] if "Atomic" in name else _REPLACEMENT[folder]
        return (Code.TORCH_CUDA_EXTENSION, subject,
                f"{subject}: torch 1.11 removed the legacy {folder} headers (THC, THH once hipified for ROCm); "
                f"the code was written for an older torch: include ATen's {instead} instead, which torch's "
                f"hipify maps for ROCm")
    shuffle = _AMBIGUOUS_SHUFFLE.match(message)
    if shuffle is not None and any(path and path.endswith("amd_hip_fp16.h") for path, *_ in error.diagnostic.notes):
        name = shuffle.group(1)
        return (Code.TORCH_CUDA_EXTENSION, name,
                f"{name} has __half and __half2 overloads since ROCm 5.6, and the argument converts both to "
                f"float and to __half (c10::Half does), so the call, written for an older ROCm (before 5.6), is "
                f"ambiguous: convert the argument first, `{name}(static_cast<__half>(var), ...)` or to float")
    called = _NO_MATCH.match(message)
    if called is None:
        return None
    torch_half = next((m for *_, text in error.diagnostic.notes if (m := _TORCH_HALF.search(text))), None)
    if called.group(1) == "__ldg" and torch_half is not None:
        kind = torch_half.group(1)
        return (Code.TORCH_CUDA_EXTENSION, "__ldg",
                f"torch declares __ldg(const c10::{kind}*) for CUDA only (c10/util/{kind}-inl.h), not for HIP: "
                f"under USE_ROCM declare `__device__ c10::{kind} __ldg(const c10::{kind}* p)` reading "
                f"through the pointer (pytorch_scatter's port, csrc/cuda/utils.cuh), or read `*p`")
    legacy = next((m for *_, text in error.diagnostic.notes if (m := _COMPUTE.search(text))), None)
    if legacy is not None:
        return (Code.PARTIAL_CONVERSION, called.group(1),
                f"{called.group(1)} takes a hipblasComputeType_t as its {legacy.group(2)} argument where the "
                f"call passes a data type ({legacy.group(1)}): CUDA 10's form of cublasGemmEx's computeType, "
                f"which CUDA 11+ keeps through a C++ overload and hipBLAS's v2 API does not; write the compute "
                f"type (CUBLAS_COMPUTE_32F for CUDA_R_32F, HIPBLAS_COMPUTE_32F in HIP)")
    if not 0 < error.line <= len(lines):
        return None
    statement = b"".join(lines[max(error.line - 2, 0):error.line + 2])
    for taken in _ADDRESS.findall(statement):
        name = taken.rsplit(b"::", 1)[-1]
        if any(re.search(rb"\b" + re.escape(name) + rb"\s*\([^;{]*\)\s*noexcept\b", line) for line in lines):
            function = taken.decode()
            return (Code.TORCH_CUDA_EXTENSION, called.group(1),
                    f"&{function} is noexcept, which C++17 makes part of its type, and torch's headers need "
                    f"C++17 since torch 2.1: the call was written for an older torch built at C++14; pass "
                    f"a lambda, `[] {{ return {function}(); }}`, or drop the noexcept")
    return None


def before_step(error: Located, facts, breaks_build) -> list[Finding]:
    """The findings of the error's file as it was before torch's hipify (`--source`, the tree's
    own), at the line the copy's error line came from, whose rule breaks a build: torch rewrites
    `std::min(` to `::min(` (PK312), so a scan of the copy no longer sees the call that fails."""
    if error.rel is None or facts.source_root is None or COPY not in facts.root.name:
        return []
    original = facts.of(error.rel).line_map.get(error.line)
    if original is None:
        return []
    cache = facts.__dict__.setdefault("_before_step", {})
    if error.rel not in cache:
        tree = type(facts)(facts.source_root, facts.scan, None, facts.db, facts.project)   # explain.Facts
        cache[error.rel] = tree.of(error.rel).findings
    return [f for f in cache[error.rel] if f.line <= original <= f.end_line and breaks_build(f.code)]
