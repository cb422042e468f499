"""The torch header pack: a PyTorch extension's units compiled as torch's ROCm build compiles them.

A unit that includes torch's headers (torch/extension.h, ATen/..., c10/..., here or through a
project header) stops at the first one when torch is not installed: "not reached", its code
never seen. With the torch pack (torch_pack_build.py: the wheel's include/, its ATen/cuda and
c10/cuda hipified to ATen/hip and c10/hip by the wheel's own hipify), such a unit gets the
include paths and definitions torch.utils.cpp_extension gives a HIP extension, and the Python
headers torch/extension.h needs, and is compiled against the ROCm pack like any other unit.

Where verify looks for it, first found wins: --torch-headers DIR|FILE, $PORTKIT_TORCH_HEADERS,
a torch pack among the packs of the --rocm-headers folder, the user cache
($XDG_CACHE_HOME/portkit/torch-headers/VERSION, where an archive given once is unpacked). Every
file is checked against the manifest before use, as for the ROCm packs; none is downloaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import PortkitError
from .packs import ARCHIVES, MANIFEST, extract

ENV = "PORTKIT_TORCH_HEADERS"
# The torch packs portkit knows: the sha256 of manifest.json, which pins every file by its own
# hash. torch 2.5.1 (its ROCm wheels are built for ROCm 6.1 and 6.2) from the PyPI wheel
# torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl: fixtures/rocm-headers/torch-2.5.1-headers.tar.xz.
PINNED = {"2.5.1": "76dbbdbd5f01f0b9f076dfad2610a3447cfa5b93248b08f7878f97cd382e7682"}
# What torch.utils.cpp_extension gives a HIP extension's sources (COMMON_HIP_FLAGS,
# COMMON_HIPCC_FLAGS, the extension header switch and the ABI of the PyPI wheels, -std=c++17):
# first in the command, so that the unit's own -std and -D come after and win.
# HIPBLAS_V2 is COMMON_HIP_FLAGS' own (torch 2.5.1: hipBLAS's hipDataType API, which ATen/hip uses).
DEFINES = ("-D__HIP_PLATFORM_AMD__=1", "-DUSE_ROCM=1", "-DHIPBLAS_V2", "-DCUDA_HAS_FP16=1",
           "-D__HIP_NO_HALF_OPERATORS__=1", "-D__HIP_NO_HALF_CONVERSIONS__=1", "-DTORCH_API_INCLUDE_EXTENSION_H",
           "-D_GLIBCXX_USE_CXX11_ABI=0", "-std=c++17")
# an #include of torch's: the extension header, the C++ API, ATen, c10 (caffe2's too, which c10 wraps)
_TORCH_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"](?:torch/|ATen/|c10/|caffe2/)', re.M)


@dataclass(frozen=True)
class TorchPack:
    root: Path
    version: str
    rocm: str
    wheel: str
    pinned: bool

    def describe(self) -> str:
        pin = "pinned" if self.pinned else "not a pack portkit pins"
        return f"torch {self.version} header pack at {self.root} (from {self.wheel}; {pin})"

    def flags(self, unit: Path) -> list[str]:
        """What a HIP CUDAExtension's compile of `unit` gets from torch: include paths, definitions."""
        include = self.root / "include"
        dirs = [include, include / "torch" / "csrc" / "api" / "include"]
        python = python_include()
        if python is not None:
            dirs.append(python)
        name = re.sub(r"\W", "_", unit.stem) or "ext"
        return [arg for d in dirs for arg in ("-isystem", str(d))] + [*DEFINES, f"-DTORCH_EXTENSION_NAME={name}"]


# torch's headers from 2.1 on refuse anything older than C++17 (c10/util/C++17.h: "C++17 or later
# compatible compiler is required to use PyTorch."); a build that names -std=c++14 was written for
# an older torch (pytorch_scatter's root CMakeLists.txt, its C++ API build, beside the setup.py whose
# CUDAExtension torch compiles at C++17). Compiled as written, every such unit stops at that #error
# and verify learns nothing of its code: it is compiled at C++17, and the report line says so.
_OLD_STD = re.compile(r"-std=(?:c|gnu)\+\+(98|03|0x|11|1y|14)")


def lift_std(command: list[str]) -> tuple[list[str], str]:
    """`command` with each -std older than C++17 raised to -std=c++17, and the last one raised
    ("" when none): torch's headers need C++17 (above); the unit's other flags keep their order."""
    old = [arg for arg in command if _OLD_STD.fullmatch(arg)]
    return [("-std=c++17" if _OLD_STD.fullmatch(arg) else arg) for arg in command], (old[-1] if old else "")


def lifted_line(lifted: list[str], pack: TorchPack) -> str:
    """What the report's torch line adds when units were raised to C++17 (lift_std), else ""."""
    if not lifted:
        return ""
    olds = " and ".join(sorted(set(lifted)))
    return (f"; {len(lifted)} of them built with {olds}, which torch {pack.version}'s headers refuse "
            f"(C++17 or later): compiled at -std=c++17, the build was written for an older torch")


def python_include() -> Path | None:
    """Where Python.h is (python3-dev's): the running Python's, else the newest under /usr/include."""
    found = sysconfig.get_paths().get("include")
    if found and (Path(found) / "Python.h").is_file():
        return Path(found)
    system = sorted(Path("/usr/include").glob("python3*/Python.h"))
    return system[-1].parent if system else None


def uses_torch(files: list[str]) -> bool:
    """Whether the unit (or a project header it reaches) includes torch's headers."""
    for path in files:
        try:
            if _TORCH_INCLUDE.search(Path(path).read_bytes()):
                return True
        except OSError:
            continue
    return False


def is_torch_pack(folder: Path) -> bool:
    try:
        return json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("kind") == "torch"
    except (OSError, ValueError, AttributeError):
        return False


def load(root: Path) -> TorchPack:
    """The torch pack at `root`, every file checked against its manifest; one line otherwise. Its
    root is made absolute: the compiler runs in the tree, where a relative -isystem names nothing."""
    root = root.absolute()
    manifest_path = root / MANIFEST
    try:
        raw = manifest_path.read_bytes()
        manifest = json.loads(raw.decode("utf-8"))
        if manifest.get("kind") != "torch":
            raise KeyError("kind")
        files, source = dict(manifest["files"]), manifest["source"]
        version, rocm, wheel = str(manifest["torch"]), str(manifest["rocm"]), str(source["wheel"])
    except OSError:
        raise PortkitError(f"{root}: not a torch header pack (no {MANIFEST}; build one with "
                           f"tools/build_torch_header_pack.py)") from None
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        raise PortkitError(f"{manifest_path}: not a torch header pack manifest ({exc})") from None
    for rel, digest in sorted(files.items()):
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise PortkitError(f"{manifest_path}: {rel}: a path outside the pack")
        try:
            actual = hashlib.sha256((root / rel).read_bytes()).hexdigest()
        except OSError:
            raise PortkitError(f"{root}: {rel} is missing from the pack") from None
        if actual != digest:
            raise PortkitError(f"{root}: {rel} does not match the pack's manifest (sha256 {actual[:12]}..., "
                               f"pinned {str(digest)[:12]}...); rebuild the pack")
    pinned = PINNED.get(version) == hashlib.sha256(raw).hexdigest()
    return TorchPack(root, version, rocm, wheel, pinned)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "portkit" / "torch-headers"


def install(archive: Path) -> TorchPack:
    """A torch pack archive unpacked into the user cache (plain files only), checked, kept by version."""
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".unpack-", dir=cache))
    try:
        extract(archive, work)
        tops = [p for p in work.iterdir() if is_torch_pack(p)]
        if len(tops) != 1:
            raise PortkitError(f"{archive}: not a torch header pack archive (no single folder with {MANIFEST})")
        pack = load(tops[0])
        target = cache / pack.version
        if _same_manifest(target, tops[0]):
            try:
                return load(target)   # kept as it is: another verify may be compiling against it
            except PortkitError:
                pass                  # a damaged copy: replaced below
        _replace(tops[0], target, work / "replaced")
        return load(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _same_manifest(a: Path, b: Path) -> bool:
    try:
        return (a / MANIFEST).read_bytes() == (b / MANIFEST).read_bytes()
    except OSError:
        return False


def _replace(new: Path, target: Path, aside: Path) -> None:
    """`new` renamed to `target`. Every verify given the archive used to remove the cached copy
    and unpack it again, so two runs at once (a benchmark beside a user's run) removed the
    headers under each other's compiles ('ATen/BlasBackend.h' file not found, or an internal
    FileNotFoundError from two removals of one folder). A rename is atomic: an older copy is
    renamed aside (removed with the work folder), and when another run put its copy there
    first, that copy is kept if it is the same pack."""
    try:
        target.rename(aside)
    except FileNotFoundError:
        pass
    try:
        new.rename(target)
    except OSError:
        if not _same_manifest(target, new):
            raise PortkitError(f"{target}: another torch pack was unpacked here at the same time; "
                               f"run verify again") from None


def locate(explicit: str | None, rocm_headers: str | None) -> TorchPack | None:
    """The torch pack to use, or None when there is none (units that include torch then stop
    at its first header, as before). An explicit --torch-headers that holds none is an error."""
    for given in (explicit, os.environ.get(ENV)):
        if not given:
            continue
        place = Path(given)
        if given.endswith(ARCHIVES) and place.is_file():
            return install(place)
        found = _in_folder(place)
        if found is None:
            raise PortkitError(f"{given}: no torch header pack there (a folder with {MANIFEST} of kind torch)")
        return load(found)
    places = []
    if rocm_headers and Path(rocm_headers).is_dir():
        places.append(Path(rocm_headers))
    places.append(cache_dir())
    for place in places:
        found = _in_folder(place)
        if found is not None:
            return load(found)
    return None


def _in_folder(place: Path) -> Path | None:
    """`place` itself when it is a torch pack, else its newest torch pack subfolder."""
    if is_torch_pack(place):
        return place
    try:
        held = sorted((p for p in place.iterdir() if p.is_dir() and is_torch_pack(p)), key=lambda p: p.name)
    except OSError:
        return None
    return held[-1] if held else None
