"""Build a ROCm header pack from ROCm's public source repositories (docs/verify.md, "Header packs").

A pack is what a ROCm installation's include/ holds for HIP and the libraries portkit's tables
map to, taken from each repository at the release's `rocm-X.Y.Z` tag and never built: the
headers as they are, plus the few files CMake would generate (hip_version.h, bin/.hipVersion,
each library's version and export headers), written here from the release's own version
numbers as their CMakeLists write them. Two places read sources through this one builder, so
that both produce the same bytes and one pinned manifest checks both:
  - tools/build_rocm_header_pack.py, from local git clones (`git show`, no checkout);
  - pack_fetch.py, from the repositories' source archives downloaded at the pinned commits.
All of it is MIT-licensed; every repository's licence goes to licenses/.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol

HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".inl", ".cuh", ".inc")


@dataclass(frozen=True)
class Library:
    """One library's headers: where they sit in its repository and how its CMake installs them."""
    repository: str            # "ROCm/hipBLAS"
    folder: str                # the headers folder in the repository ("" = its top)
    into: str                  # the install folder under include/
    licence: str               # the licence file at the repository's top
    templates: tuple[str, ...] = ()   # *.in files under `folder` CMake configures (written without .in)
    variable: str = ""         # the templates' variable prefix: @hipblas_VERSION_MAJOR@
    export: str = ""           # generate_export_header's prefix, when the headers include NAME-export.h
    only: tuple[str, ...] = ()        # just these files of `folder` (roctx.h of roctracer)
    release_version: bool = False     # versioned as the ROCm release itself (rocm-core)


# HIP itself is two repositories (ROCm/HIP's include/hip, clr's hipamd/include/hip) and is in every pack.
HIP = (Library("ROCm/HIP", "include/hip", "hip", "LICENSE.txt"),
       Library("ROCm/clr", "hipamd/include/hip", "hip", "LICENCE"))
LIBRARIES = {
    "hipblas": Library("ROCm/hipBLAS", "library/include", "hipblas", "LICENSE.md",
                       ("hipblas-version.h.in",), "hipblas", "HIPBLAS"),
    "hipblaslt": Library("ROCm/hipBLASLt", "library/include", "hipblaslt", "LICENSE.md",
                         ("hipblaslt-version.h.in",), "hipblaslt", "HIPBLASLT"),
    "hipsparse": Library("ROCm/hipSPARSE", "library/include", "hipsparse", "LICENSE.md",
                         ("hipsparse-version.h.in",), "hipsparse", "HIPSPARSE"),
    "hiprand": Library("ROCm/hipRAND", "library/include/hiprand", "hiprand", "LICENSE.txt",
                       ("hiprand_version.h.in",), "hiprand"),
    "rocrand": Library("ROCm/rocRAND", "library/include/rocrand", "rocrand", "LICENSE.txt",
                       ("rocrand_version.h.in",), "rocrand"),
    "rocprim": Library("ROCm/rocPRIM", "rocprim/include/rocprim", "rocprim", "LICENSE.txt",
                       ("rocprim_version.hpp.in",), "rocprim"),
    "hipcub": Library("ROCm/hipCUB", "hipcub/include/hipcub", "hipcub", "LICENSE.txt",
                      ("hipcub_version.hpp.in",), "hipcub"),
    "rocthrust": Library("ROCm/rocThrust", "thrust", "thrust", "LICENSE",
                         ("rocthrust_version.hpp.in",), "rocthrust"),
    # roctx: only roctx.h, which needs nothing generated (roctracer's other headers are the tracer's)
    "roctx": Library("ROCm/roctracer", "inc", "roctracer", "LICENSE", only=("roctx.h",)),
    "rocm-core": Library("ROCm/rocm-core", "", "rocm-core", "copyright",
                         ("rocm_version.h.in", "rocm_getpath.h.in"), release_version=True),
}
# What a pack holds unless asked otherwise: every library above. The copy the tests use
# (fixtures/rocm-headers/) holds only what the golden fixtures include.
DEFAULT_LIBRARIES = tuple(LIBRARIES)

# How each CMakeLists states its version, first match wins.
_VERSIONS = (re.compile(r'rocm_setup_version\s*\(\s*VERSION\s+"?(\d+)\.(\d+)\.(\d+)'),
             re.compile(r'set\s*\(\s*VERSION_STRING\s+"(\d+)\.(\d+)\.(\d+)"'),
             re.compile(r'set\s*\(\s*\w+_VERSION\s+"(\d+)\.(\d+)\.(\d+)"'))
# What rocRAND's CMake puts in rocrand_version.h with its default ENABLE_INLINE_ASM=ON.
_ROCRAND_INLINE_ASM = ("\n// Enables inline asm optimisations\n"
                       "#if !defined(ROCRAND_ENABLE_INLINE_ASM) && !defined(ROCRAND_DISABLE_INLINE_ASM)\n"
                       "    #define ROCRAND_ENABLE_INLINE_ASM\n#endif")
_LEFT_OVER = re.compile(r"@[A-Za-z_][A-Za-z0-9_]*@")


class Source(Protocol):
    """One repository at the release: what the builder reads (a git clone or a source archive)."""
    repository: str
    tag: str
    commit: str

    def files(self, folder: str) -> list[str]: ...
    def read(self, path: str) -> bytes: ...


class PackError(Exception):
    """A source lacks what the builder needs (a tag, a file, a version): one line for the user."""


def build(release: str, open_source: Callable[[str], Source], libraries: tuple[str, ...] | list[str]) -> dict[str, bytes]:
    """Every file of the pack, by its path in the pack, manifest.json included."""
    written: dict[str, bytes] = {}
    sources: dict[str, Source] = {}

    def source(repository: str) -> Source:
        if repository not in sources:
            sources[repository] = open_source(repository)
        return sources[repository]

    def take(lib: Library, keep_templates: bool = False) -> Source:
        src = source(lib.repository)
        prefix = f"{lib.folder}/" if lib.folder else ""
        for path in src.files(lib.folder):
            rel = path[len(prefix):]
            if lib.only and rel not in lib.only:
                continue
            if not rel.endswith(HEADER_SUFFIXES) or "/" in rel and lib.release_version:
                continue
            written[f"include/{lib.into}/{rel}"] = src.read(path)
        written[f"licenses/{lib.repository.split('/')[1]}-{lib.licence}"] = src.read(lib.licence)
        return src

    hip = take(HIP[0])
    take(HIP[1])
    major, minor, patch = (int(n) for n in hip.read("VERSION").decode().split()[1::2][:3])
    _hip_version_files(written, major, minor, patch)
    for name in libraries:
        lib = LIBRARIES[name]
        src = take(lib)
        if not lib.templates:
            continue
        version = tuple(int(n) for n in release.split(".")) if lib.release_version else _version(src)
        for template in lib.templates:
            path = f"{lib.folder}/{template}" if lib.folder else template
            text = _configure(src.read(path).decode(), lib, version, release)
            written[f"include/{lib.into}/{template[:-3]}"] = text.encode()
        if lib.export:
            written[f"include/{lib.into}/{name}-export.h"] = export_header(lib.export)
    manifest = {"schema": 1, "release": release, "libraries": ["hip", *libraries],
                "sources": [{"repository": s.repository, "tag": s.tag, "commit": s.commit}
                            for s in sources.values()],
                "files": {rel: hashlib.sha256(data).hexdigest() for rel, data in sorted(written.items())}}
    written["manifest.json"] = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    return written


def write(files: dict[str, bytes], out: Path) -> None:
    for rel, data in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def wanted_paths(libraries: tuple[str, ...] | list[str]) -> dict[str, tuple[str, ...]]:
    """By repository, the folders and files the builder reads: what a download keeps of an archive."""
    wanted: dict[str, list[str]] = {}
    for lib in (*HIP, *(LIBRARIES[name] for name in libraries)):
        paths = wanted.setdefault(lib.repository, [])
        paths += [lib.folder or "", lib.licence]
    wanted["ROCm/HIP"].append("VERSION")
    for name in libraries:
        if LIBRARIES[name].templates and not LIBRARIES[name].release_version:
            wanted[LIBRARIES[name].repository].append("CMakeLists.txt")
    return {repo: tuple(dict.fromkeys(paths)) for repo, paths in wanted.items()}


def _hip_version_files(written: dict[str, bytes], major: int, minor: int, patch: int) -> None:
    written["include/hip/hip_version.h"] = (
        "// Generated by portkit's tools/build_rocm_header_pack.py, as clr's CMake writes it\n"
        "#ifndef HIP_VERSION_H\n#define HIP_VERSION_H\n"
        f"#define HIP_VERSION_MAJOR {major}\n#define HIP_VERSION_MINOR {minor}\n#define HIP_VERSION_PATCH {patch}\n"
        "#define HIP_VERSION_GITHASH \"\"\n#define HIP_VERSION_BUILD_ID 0\n#define HIP_VERSION_BUILD_NAME \"\"\n"
        "#define HIP_VERSION    (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)\n"
        "#define __HIP_HAS_GET_PCH 0\n#endif\n").encode()
    version_file = (f"# Generated by portkit\nHIP_VERSION_MAJOR={major}\nHIP_VERSION_MINOR={minor}\n"
                    f"HIP_VERSION_PATCH={patch}\nHIP_VERSION_GITHASH=\n").encode()
    written["bin/.hipVersion"] = version_file          # where clang's --rocm-path looks for the release
    written["share/hip/version"] = version_file


def _version(src: Source) -> tuple[int, ...]:
    text = src.read("CMakeLists.txt").decode("utf-8", "replace")
    for pattern in _VERSIONS:
        found = pattern.search(text)
        if found:
            return tuple(int(n) for n in found.groups())
    raise PackError(f"{src.repository}@{src.tag}: no version in CMakeLists.txt")


def _configure(text: str, lib: Library, version: tuple[int, ...], release: str) -> str:
    """CMake's configure_file(@ONLY) for the variables these templates use; any other is an error."""
    major, minor, patch = version[:3]
    values = {"VERSION_MAJOR": major, "VERSION_MINOR": minor, "VERSION_PATCH": patch, "VERSION_TWEAK": 0,
              "VERSION_NUMBER": major * 100000 + minor * 100 + patch}
    for key, value in values.items():
        text = text.replace(f"@{lib.variable}_{key}@" if lib.variable else f"@{key}@", str(value))
    text = text.replace("@rocrand_ENABLE_INLINE_ASM@", _ROCRAND_INLINE_ASM)
    text = text.replace("@PACKAGE_BUILD_INFO@", f"{release}.0-portkit-pack")
    left = _LEFT_OVER.search(text)
    if left:
        raise PackError(f"{lib.repository}: {left.group(0)} in a template the builder does not know how to fill")
    return text


def export_header(prefix: str) -> bytes:
    """What CMake's generate_export_header writes for a shared library (the macros the headers use)."""
    return (f"#ifndef {prefix}_EXPORT_H\n#define {prefix}_EXPORT_H\n"
            f"#define {prefix}_EXPORT __attribute__((visibility(\"default\")))\n"
            f"#define {prefix}_NO_EXPORT __attribute__((visibility(\"hidden\")))\n"
            f"#define {prefix}_DEPRECATED __attribute__ ((__deprecated__))\n"
            f"#define {prefix}_DEPRECATED_EXPORT {prefix}_EXPORT {prefix}_DEPRECATED\n"
            f"#define {prefix}_DEPRECATED_NO_EXPORT {prefix}_NO_EXPORT {prefix}_DEPRECATED\n"
            f"#endif /* {prefix}_EXPORT_H */\n").encode()
