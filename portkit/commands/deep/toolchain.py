"""What deep mode needs from the machine, found once, with a one-line error for each gap.

- libclang's Python bindings (`pip install 'portkit[deep]'`, the `libclang` package);
- clang's resource headers (`__clang_cuda_runtime_wrapper.h`, stddef.h...): the PyPI wheel
  ships none, so they come from an installed clang (`clang-NN -print-resource-dir`; Debian's
  clang-15 comes with hipcc). The libclang library installed beside those headers is used when
  there is one, so the parser and its headers are the same release; otherwise the wheel's;
- the CUDA headers (`--cuda-path`, default /usr/local/cuda): the API's declarations and types.
"""

from __future__ import annotations

import glob
import importlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import PortkitError

DEFAULT_CUDA_PATH = Path("/usr/local/cuda")
_CLANG_NAMES = ["clang"] + [f"clang-{v}" for v in range(30, 9, -1)]


@dataclass(frozen=True)
class Toolchain:
    resource_dir: str
    libclang: str            # the shared library to load ("" = the wheel's own)
    cuda_path: str
    clang_version: str       # of the clang the resource headers came from, e.g. "19"

    def describe(self) -> str:
        lib = self.libclang or "libclang from the PyPI wheel"
        return f"clang {self.clang_version} headers ({self.resource_dir}), {lib}, CUDA at {self.cuda_path}"


def find(cuda_path: Path | None = None, resource_dir: Path | None = None) -> Toolchain:
    """The toolchain, or PortkitError naming what is missing and how to get it."""
    try:
        importlib.import_module("clang.cindex")
    except ImportError:
        raise PortkitError("--engine clang needs libclang's Python bindings: pip install 'portkit[deep]' "
                           "(the libclang package)") from None
    cuda = Path(cuda_path or os.environ.get("CUDA_PATH") or DEFAULT_CUDA_PATH)
    if not (cuda / "include" / "cuda_runtime.h").is_file():
        raise PortkitError(f"--cuda-path {cuda}: no include/cuda_runtime.h there; deep mode reads the CUDA "
                           "headers for the API's declarations (install the CUDA toolkit or pass --cuda-path)")
    if resource_dir is not None:
        if not (Path(resource_dir) / "include" / "__clang_cuda_runtime_wrapper.h").is_file():
            raise PortkitError(f"--clang-resource-dir {resource_dir}: not a clang resource directory "
                               "(no include/__clang_cuda_runtime_wrapper.h)")
        found = [(_version_of(str(resource_dir)), str(resource_dir))]
    else:
        found = installed_resource_dirs()
    if not found:
        raise PortkitError("--engine clang needs clang's resource headers and none was found: install clang "
                           "(apt-get install clang-19; hipcc brings clang-15) or pass --clang-resource-dir DIR")
    with_library = [(v, r, lib) for v, r in found for lib in [_library_beside(r)] if lib]
    version, resource, library = with_library[0] if with_library else (found[0][0], found[0][1], "")
    return Toolchain(resource, library, str(cuda), version)


def installed_resource_dirs() -> list[tuple[str, str]]:
    """(major version, resource dir) of every clang on PATH, newest first."""
    seen: dict[str, str] = {}
    for name in _CLANG_NAMES:
        exe = shutil.which(name)
        if exe is None:
            continue
        try:
            out = subprocess.run([exe, "-print-resource-dir"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            continue
        resource = out.stdout.strip()
        if out.returncode == 0 and resource and \
                os.path.isfile(os.path.join(resource, "include", "__clang_cuda_runtime_wrapper.h")):
            seen.setdefault(os.path.realpath(resource), _version_of(resource))
    return sorted(((v, r) for r, v in seen.items()), key=lambda vr: _major(vr[0]), reverse=True)


def _library_beside(resource_dir: str) -> str:
    """libclang of the same installation: <prefix>/lib/clang/<version> -> <prefix>/lib/libclang*.so*."""
    lib_dir = os.path.dirname(os.path.dirname(os.path.realpath(resource_dir)))
    candidates = sorted(glob.glob(os.path.join(lib_dir, "libclang.so*")) +
                        glob.glob(os.path.join(lib_dir, "libclang-[0-9]*.so*")))
    return candidates[0] if candidates else ""


def _version_of(resource_dir: str) -> str:
    match = re.search(r"/clang/(\d+)", str(resource_dir))
    return match.group(1) if match else "?"


def _major(version: str) -> int:
    return int(version) if version.isdigit() else -1
