"""verify's stand-in for torch's build-time hipify: its own map and rules, applied as data.

A PyTorch extension's sources stay CUDA (convert writes only torch's gaps): torch's ROCm build
hipifies them (torch/utils/cpp_extension.py -> hipify_python, `is_pytorch_extension=True`) before
hipcc sees them. portkit's conversion is not what that build compiles: it keeps
`#include <ATen/cuda/CUDAContext.h>`, which torch rewrites to ATen/hip/HIPContext.h, and so every
kernel unit stopped in torch's CUDA headers (`cuda_runtime_api.h` not found), its code unseen. So
the copy verify compiles for such a tree is made the way torch makes it, per file it hipifies
(ProjectFacts.torch_sources: the extension's sources and the tree headers they include):

- every word of torch's map (mappings/torch_hipify.toml, hipify_python.PYTORCH_MAP) between two
  non-word characters becomes its value, the longest word first, comments and strings too;
- `#include "X"` / `#include <X>` of torch's CUDA folders (ATen/cuda, ATen/native/.../cuda, THC)
  becomes the hipified path torch's get_hip_file_path gives (ATen/hip/HIPContext.h);
- in .cu/.cuh, the std:: math calls of MATH_TRANSPILATIONS lose their std:: (`std::max(` -> `::max(`);
- a file with device code and no HIP runtime include gets `#include "hip/hip_runtime.h"` first
  (hip_header_magic).

Where this differs from torch, on purpose: files keep their names (torch writes foo_hip.cuh /
foo.hip and rewrites the includes of the tree's own headers to them: the same bytes under another
name), so that each error is placed back at the tree's line; `<<<...>>>` stays (torch writes
hipLaunchKernelGGL; hip-clang compiles both); no "automatically generated" first line.
"""

from __future__ import annotations

import posixpath
import re

from ...core.tables.torch_hipify import TorchHipify, load

# hipify_python's RE_QUOTE_HEADER and RE_ANGLE_HEADER, and the folders its mk_repl rewrites
_QUOTE = re.compile(rb'#include "([^"]+)"')
_ANGLE = re.compile(rb"#include <([^>]+)>")
_TORCH_CUDA = (b"ATen/cuda", b"ATen/native/cuda", b"ATen/native/nested/cuda", b"ATen/native/quantized/cuda",
               b"ATen/native/sparse/cuda", b"ATen/native/transformers/cuda", b"THC/")
_HIP_RUNTIME = re.compile(rb'#include ("hip/hip_runtime(?:_api)?\.h"|<hip/hip_runtime(?:_api)?\.h>)')
_SYNCTHREADS = re.compile(rb":?:?\b(__syncthreads)\b(\w*\()")


def hipify(data: bytes, rel: str, table: TorchHipify | None = None) -> bytes:
    """`data` (the file `rel` of the tree) as torch's build-time hipify writes it."""
    table = table or load()
    out = table.words.sub(lambda m: table.names[m.group(0).decode()].encode(), data)
    out = _QUOTE.sub(lambda m: b'#include "' + _hip_path(m.group(1)) + b'"', out)
    out = _ANGLE.sub(lambda m: b"#include <" + _hip_path(m.group(1)) + b">", out)
    if rel.endswith((".cu", ".cuh")) and "PowKernel" not in rel:
        for name, value in table.math.items():
            out = out.replace(f"{name}(".encode(), f"{value}(".encode())
    return _header_magic(out)


def _hip_path(name: bytes) -> bytes:
    """get_hip_file_path(name, is_pytorch_extension=True) for an include of torch's CUDA folders; any
    other include as it is (torch renames the tree's own headers, which this copy keeps by name)."""
    if not (name.startswith(_TORCH_CUDA) or name.startswith(b"THC") and not name.startswith(b"THCP")):
        return name
    folder, filename = posixpath.split(name.decode("utf-8", "surrogateescape"))
    root, ext = posixpath.splitext(filename)
    ext = ".hip" if ext == ".cu" else ext
    new_folder = folder.replace("cuda", "hip").replace("CUDA", "HIP").replace("THC", "THH")
    root = root.replace("cuda", "hip").replace("CUDA", "HIP")
    root = root.replace("THC", "THH") if new_folder != "caffe2/core" else root
    if new_folder == folder and root + ext == filename:
        root += "_hip"
    return posixpath.join(new_folder, root + ext).encode("utf-8", "surrogateescape")


def _header_magic(data: bytes) -> bytes:
    """hip_header_magic: device code and no HIP runtime include gets one, first. A `<<<` counts as
    device code: torch rewrites each launch to hipLaunchKernelGGL before it looks."""
    if _HIP_RUNTIME.search(data):
        return data
    if any(word in data for word in (b"<<<", b"hipLaunchKernelGGL", b"__global__", b"__shared__")) \
            or _SYNCTHREADS.search(data):
        return b'#include "hip/hip_runtime.h"\n' + data
    return data
