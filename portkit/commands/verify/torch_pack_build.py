"""Build a torch header pack from a torch wheel: what a ROCm torch's include/ gives an extension.

verify cannot reach a PyTorch CUDA extension's code without torch's headers (ATen, c10,
torch/extension.h), and a ROCm torch is not installed here. The CUDA wheel on PyPI has the same
headers but its CUDA-specific ones (ATen/cuda, c10/cuda) only as CUDA: a ROCm torch's build runs
torch's own hipify over them and installs the results next to them as ATen/hip, c10/hip. This
builder does the same with the wheel's own torch/utils/hipify (so the mapping is the release's),
keeps only what extension code includes (the headers at the top of torch/, torch's C++ API and ATen/, and the CUDA/HIP headers,
with everything they include, followed through every #include whatever its condition), and
writes manifest.json naming the wheel, its sha256, the release tag and every file's sha256.

Nothing of the wheel is installed; the hipify module runs from a temporary copy of its five
files, on a temporary copy of the headers. The same wheel gives the same bytes (test_torch_pack).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import re
import sys
import tempfile
import zipfile
from pathlib import Path

INCLUDE = "torch/include/"
HIPIFY = "torch/utils/hipify/"
HIPIFY_FILES = ("__init__.py", "constants.py", "cuda_to_hip_mappings.py", "hipify_python.py", "version.py")
# torch's C++ API headers live under torch/csrc/api/include, which torch's build adds with -I
SEARCH = ("", "torch/csrc/api/include/")
# what extension code includes: the headers at the top of torch/ (extension.h, script.h,
# library.h ...), of the C++ API (torch/torch.h, torch/all.h ...) and of ATen/, and the device
# folders; what these include is followed (closure)
ROOT_FOLDERS = ("torch/", "torch/csrc/api/include/torch/", "ATen/")
DEVICE_FOLDERS = ("ATen/cuda/", "c10/cuda/", "ATen/hip/", "c10/hip/")
HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".inl", ".hh")
_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)


class TorchPackError(Exception):
    """The wheel lacks what the builder needs: one line for the user."""


def wheel_facts(wheel: Path) -> tuple[str, str]:
    """(torch version, sha256) of a wheel, from its METADATA and its bytes."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    with zipfile.ZipFile(wheel) as z:
        meta = next((n for n in z.namelist() if n.endswith(".dist-info/METADATA")), None)
        if meta is None:
            raise TorchPackError(f"{wheel}: not a wheel (no .dist-info/METADATA)")
        version = re.search(rb"^Version: *(\S+)", z.read(meta), re.M)
    if version is None:
        raise TorchPackError(f"{wheel}: METADATA names no version")
    return version.group(1).decode(), digest


def build(wheel: Path, rocm: str = "6.2") -> dict[str, bytes]:
    """Every file of the pack, by its path in the pack, manifest.json included."""
    version, digest = wheel_facts(wheel)
    with zipfile.ZipFile(wheel) as z:
        names = sorted(n for n in z.namelist() if not n.endswith("/"))
        headers = {n[len(INCLUDE):]: z.read(n) for n in names if n.startswith(INCLUDE)}
        hipify_sources = {f: z.read(HIPIFY + f) for f in HIPIFY_FILES if HIPIFY + f in names}
        licence = next((z.read(n) for n in names if n.endswith(".dist-info/LICENSE")), None)
    if not headers or len(hipify_sources) != len(HIPIFY_FILES):
        raise TorchPackError(f"{wheel}: no torch/include/ or no torch/utils/hipify/ in the wheel")
    headers.update(hipified(headers, hipify_sources))
    kept = closure(headers)
    written = {f"include/{rel}": headers[rel] for rel in kept}
    if licence is not None:
        written["licenses/torch-LICENSE"] = licence
    base = version.split("+")[0]
    manifest = {"schema": 1, "kind": "torch", "torch": base, "rocm": rocm,
                "source": {"wheel": wheel.name, "sha256": digest, "tag": f"v{base}"},
                "built": "torch/include/ of the wheel; ATen/hip and c10/hip from ATen/cuda and c10/cuda by the "
                         "wheel's torch/utils/hipify (hipify_python, as torch's ROCm build); only the headers "
                         "the top of torch/, torch/csrc/api/include/torch/ and ATen/ and the cuda/hip folders reach (portkit "
                         "torch_pack_build.py)",
                "files": {rel: hashlib.sha256(data).hexdigest() for rel, data in sorted(written.items())}}
    written["manifest.json"] = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    return written


# where a header of the wheel's include/ stands in pytorch's own tree when its ROCm build hipifies it:
# hipify_python picks its map by that path (is_pytorch_file: aten/ takes the PyTorch map, word by
# word; c10/cuda the Caffe2 one). Hipified as include/ATen/cuda, the ATen headers took the Caffe2
# map, which renames `cuda` inside every word: TORCH_CUDA_CPP_API became TORCH_HIP_CPP_API, which
# nothing defines, and at::cuda became at::hip, so no extension unit compiled past HIPContext.h.
_IN_PYTORCH = (("ATen/", "aten/src/ATen/"), ("c10/", "c10/"))


def _pytorch_path(rel: str) -> str:
    return next(tree + rel[len(inc):] for inc, tree in _IN_PYTORCH if rel.startswith(inc))


def hipified(headers: dict[str, bytes], hipify_sources: dict[str, bytes]) -> dict[str, bytes]:
    """ATen/hip and c10/hip as a ROCm torch's build writes them: the wheel's hipify run, in
    PyTorch-project mode, over a temporary copy of ATen/cuda and c10/cuda laid out as in pytorch's
    tree (aten/src/ATen/cuda, c10/cuda), so that each gets the map torch's build gives it."""
    with tempfile.TemporaryDirectory(prefix="portkit-torch-") as tmp:
        work = Path(tmp)
        module = _load_hipify(work / "hipify", hipify_sources)
        project = work / "pytorch"
        for rel, data in headers.items():
            if rel.startswith(("ATen/cuda/", "c10/cuda/")):
                (project / _pytorch_path(rel)).parent.mkdir(parents=True, exist_ok=True)
                (project / _pytorch_path(rel)).write_bytes(data)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            module.hipify(project_directory=str(project), output_directory=str(project),
                          header_include_dirs=[str(project)], includes=["*/aten/src/ATen/cuda/*", "*/c10/cuda/*"],
                          show_detailed=False, show_progress=False, is_pytorch_extension=False)
        written = {}
        for inc, tree in _IN_PYTORCH:
            hip = project / tree / "hip"
            for p in sorted(hip.rglob("*")) if hip.is_dir() else ():
                if p.is_file():
                    written[inc + "hip/" + p.relative_to(hip).as_posix()] = p.read_bytes()
        return written


def _load_hipify(folder: Path, sources: dict[str, bytes]):
    """The wheel's hipify package, imported from its own files under a private name."""
    folder.mkdir(parents=True)
    for name, data in sources.items():
        (folder / name).write_bytes(data)
    name = f"_portkit_torch_hipify_{hashlib.sha256(b''.join(sources.values())).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py", submodule_search_locations=[str(folder)])
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    try:
        spec.loader.exec_module(package)
        return importlib.import_module(f"{name}.hipify_python")
    finally:
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]


def closure(headers: dict[str, bytes]) -> list[str]:
    """The headers the roots and the device folders include, followed through every #include
    (whatever its #if: a ROCm build takes branches a CUDA one does not), found next to the
    includer or on torch's two include paths; includes of other libraries are not followed."""
    todo = [rel for rel in headers if rel.endswith(HEADER_SUFFIXES) and (rel.startswith(DEVICE_FOLDERS) or any(
        rel.startswith(folder) and "/" not in rel[len(folder):] for folder in ROOT_FOLDERS))]
    seen = set(todo)
    while todo:
        rel = todo.pop()
        folder = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
        for name in _INCLUDE.findall(headers[rel]):
            target = name.decode("utf-8", "replace")
            found = next((c for c in (_join(folder, target), *(p + target for p in SEARCH)) if c in headers), None)
            if found is not None and found not in seen:
                seen.add(found)
                todo.append(found)
    return sorted(seen)


def _join(folder: str, name: str) -> str:
    parts: list[str] = []
    for part in (folder + name).split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def write(files: dict[str, bytes], out: Path) -> None:
    for rel, data in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def archive(files: dict[str, bytes], target: Path, top: str) -> None:
    """The pack as a .tar.xz with sorted names, no owners and time 0, as the ROCm pack's archive:
    the same bytes from the same wheel."""
    import lzma
    import tarfile
    with lzma.open(target, "wb", preset=9) as raw, tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(files):
            info = tarfile.TarInfo(f"{top}/{rel}")
            info.size, info.mtime, info.mode = len(files[rel]), 0, 0o644
            tar.addfile(info, io.BytesIO(files[rel]))
