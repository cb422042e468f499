"""Which files of a tree no GPU compiler ever reads: host-only code, where the GPU rules do not apply.

A warp is a GPU's, and so are hip-clang's strictness and inline PTX: `constexpr int kLanes = 32` in
an AVX-512 kernel (faiss's sq-avx512.cpp) is sixteen floats to a register, not a warp, and a
`0xffffffff` compared with a `_mm256_movemask_epi8` result (faiss's simdlib_avx2.h) is 32 bytes,
not 32 lanes. Such files are compiled by the host compiler before the port and after it, so
what the AMD GPU needs says nothing about them. Rules and passes that only apply where a GPU
compiler reads the code declare it (engine/rule.py's `gpu_only`, engine/passes.py's), and the
scan leaves them out of a host-only file (commands/scan/walk.py); the pre-filter then skips most
such files unparsed (ggml's CPU backends, faiss's SIMD code: three quarters of their lines).

GPU code is what a CUDA or HIP compiler reads: a `.cu`, `.cuh` or `.hip` file, a file that uses
the CUDA or HIP language, runtime or a CUDA library by name (outside comments), and every file
such a file includes, transitively. Includes are followed by the included file's base name,
over every file of that name in the set: more files are GPU code than the compiler would show,
never fewer. Host code that lays data out for the GPU counts too, though it names nothing of
CUDA: every file in a folder that holds a `.cu`, `.cuh` or `.hip` file. faiss's
gpu/impl/InterleavedCodes.cpp packs codes in 32-lane blocks on the host (`i / 32`, `i % 32`),
which its AMD port made `warpSize`; faiss's impl/simdlib/ and ggml's ggml-cpu/ hold no CUDA file.
Two kinds of file are never host-only, because what includes them is unknown: a header nothing
in the set includes (a library's public header, which a user's kernel may include), and every
file of a set that holds no GPU code at all (`portkit audit include/`: its users are elsewhere).
"""

from __future__ import annotations

import posixpath
import re
from collections import deque
from typing import Iterable

# The files a GPU compiler reads by their names; and the translation units of host compilers
# (a file of these suffixes is compiled, not included, unless something includes it).
GPU_SUFFIXES = (".cu", ".cuh", ".hip")
UNIT_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".m", ".mm")

# The CUDA and HIP vocabulary: the language's specifiers and built-ins, the runtime's and the
# driver's names, the libraries' prefixes and namespaces, the compilers' macros, and a launch.
# Whole identifiers only, so `cudaStream_t` counts and `barracuda` does not.
_GPU_WORDS = re.compile(
    rb"\b(?:__(?:global|device|shared|constant|managed|launch_bounds|grid_constant)__|threadIdx|blockIdx|blockDim"
    rb"|gridDim|warpSize|__shfl\w*|__ballot\w*|__activemask|__any_sync|__all_sync|__syncwarp|__syncthreads\w*"
    rb"|__CUDA\w*|__NVCC__|__NVCOMPILER\w*|__HIP\w*|__HIPCC\w*|cuda|cuda[A-Z_]\w*|CUDA\w*|CU_\w+|cu[A-Z]\w*|CU[a-z]\w*"
    rb"|cu(?:blas|blasLt|fft|rand|sparse|solver|dnn|tensor|file|pti)\w*|CUBLAS\w*|CUFFT\w*|CURAND\w*|CUSPARSE\w*"
    rb"|CUDNN\w*|nccl\w*|NCCL\w*|nvrtc\w*|nvtx\w*|nvml\w*|cub|thrust|cutlass|cute|cooperative_groups|nvcuda"
    rb"|hip[A-Z_]\w*|HIP_\w*|roc(?:blas|fft|rand|sparse|solver|prim|thrust|wmma|tx|m_smi)\w*)\b|<<<")
# a comment, or a string or character literal (kept: a "*/" or "//" in one starts no comment)
_COMMENT = re.compile(rb"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|//[^\n]*|/\*.*?(?:\*/|\Z)", re.S)


def uses_gpu(data: bytes) -> bool:
    """Whether `data`, comments left out, names any of the CUDA or HIP vocabulary: a comment that
    says "ported from CUDA" makes no file GPU code, a `cudaStream_t` parameter does."""
    found = _GPU_WORDS.search(data)
    if found is None:
        return False
    if b"/" not in data:
        return True
    return _GPU_WORDS.search(_COMMENT.sub(_blank_comment, data)) is not None


def _blank_comment(found: re.Match) -> bytes:
    text = found.group()
    return text if text[:1] in (b'"', b"'") else b" "


def host_only(files: Iterable[tuple[str, bool, frozenset[str]]]) -> frozenset[str]:
    """The files of a set no GPU compiler reads, from each file's (rel, uses_gpu, the base names
    of its #includes): the module docstring's definition. Empty when the set holds no GPU code."""
    files = list(files)
    by_name: dict[str, list[str]] = {}
    for rel, _, _ in files:
        by_name.setdefault(posixpath.basename(rel), []).append(rel)
    includes = {rel: names for rel, _, names in files}
    roots = [rel for rel, gpu, _ in files if gpu or rel.lower().endswith(GPU_SUFFIXES)]
    if not roots:
        return frozenset()
    reached = set(roots)
    todo = deque(roots)
    while todo:
        for name in includes[todo.popleft()]:
            for rel in by_name.get(name, ()):
                if rel not in reached:
                    reached.add(rel)
                    todo.append(rel)
    included = {name for names in includes.values() for name in names}
    gpu_folders = {posixpath.dirname(rel) for rel, _, _ in files if rel.lower().endswith(GPU_SUFFIXES)}
    return frozenset(rel for rel, _, _ in files if rel not in reached and posixpath.dirname(rel) not in gpu_folders
                     and (rel.lower().endswith(UNIT_SUFFIXES) or posixpath.basename(rel) in included))
