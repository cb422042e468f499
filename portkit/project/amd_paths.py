"""The AMD paths a tree already has beyond `#if` branches and shims: parallel AMD implementations
and builds that compile for AMD (issue 30's "already-ported work priced as new").

Read from file names and build files, never run:

- **A parallel AMD implementation** is a directory whose name carries an AMD token (`hip`,
  `rocm`, `amd`, `ck` as one of its `-`/`_`/`.`-separated words) beside a CUDA directory of the
  same name without it (also under a `cuda/` sibling: xformers' attention/hip_fmha beside
  attention/cuda/fmha), or with `cuda` in its place: flash-attention's `csrc/flash_attn_ck`
  beside `csrc/flash_attn`, ggml's `src/ggml-hip` beside `src/ggml-cuda`. When the AMD
  directory's build files name the CUDA directory's files (`../ggml-cuda/*.cu`), it compiles them
  for AMD (the CUDA code is the AMD code, hipified as it is built); otherwise it replaces them
  (flash_attn_ck is a new implementation on composable_kernel): the CUDA directory costs nothing
  to port.
- **A parallel AMD file** is the same beside a CUDA file of the same directory: `X.hip` beside
  `X.cu`, or a name with an AMD word beside the name without it (or with `cuda` for it):
  bitsandbytes' `kernels.hip`/`kernels_hip.cuh` beside `kernels.cu`/`kernels.cuh`, ROCm/apex's
  `conv_bias_relu_rocm.cpp` beside `conv_bias_relu.cpp`. Unless it includes the CUDA file (then it
  compiles it), it replaces it: the CUDA file costs nothing to port, and the AMD one is AMD code.
- **A build that compiles for AMD**: CMake `enable_language(HIP)`, `LANGUAGES ... HIP`,
  `find_package(hip)`, `LANGUAGE HIP`; a setup.py that branches on `IS_HIP_EXTENSION`,
  `torch.version.hip`, a `rocm` build target or a name with a `rocm` word (Transformer Engine's
  `if rocm_build():`, apex's `IS_ROCM_PYTORCH`); a Makefile that calls `hipcc`. The tree then
  "already builds for AMD" (the estimate prices its residue, not a conversion) only when the code
  backs the branch (issue 53: `if torch.version.hip:` may only add a macro): `sources_differ`
  here, or what estimate/scope.py reads in the scan (the HIP API in the sources, or nothing above
  low left for a person where torch hipifies them at build time).

A build may also **translate its sources as it builds** (`hipify_step()`): faiss's CMake runs
faiss/gpu/hipify.sh (hipify-perl) before it compiles, a Makefile may call hipify-perl, and torch
hipifies a CUDAExtension's sources when it builds on ROCm. Such a tree's files stay CUDA on disk;
verify compiles them as that build would see them (portkit/commands/verify/build_hipify.py).

`covered()` says which files such builds compile: those under the build file's directory, under
a directory an AMD directory's build compiles, and every file they include, transitively (ggml's
include/ggml.h, reached from src/ggml-cuda). convert leaves them byte for byte (issue 31: a
dual-vendor tree keeps its NVIDIA build).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from ..core.files import Entry, read
from . import torch_extension
from .includes import include_lines

AMD_TOKENS = frozenset({"hip", "rocm", "amd", "ck"})
_WORD = re.compile(r"[-_.]")
_CMAKE_HIP = re.compile(rb"\benable_language\s*\(\s*HIP\b|\bLANGUAGES?\b[^)\n]*\bHIP\b|\bfind_package\s*\(\s*hip\b",
                        re.I)
# a setup.py that branches on it: `if IS_HIP_EXTENSION:`, `if torch.version.hip`, `BUILD_TARGET == "rocm"`
_SETUP_HIP = re.compile(rb"^[ \t]*(?:el)?if\b[^\n]*(?:\bIS_HIP_EXTENSION\b|\btorch\.version\.hip\b|[\"']rocm[\"']"
                        rb"|\b(?:[A-Za-z]+_)*(?:rocm|ROCM|ROCm)(?:_\w+)?\b)", re.M)
_MAKE_HIP = re.compile(rb"\bhipcc\b")
_SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hip", ".py")


@dataclass(frozen=True)
class AmdImplementation:
    """One AMD path of the tree: a directory (a parallel implementation) or a build file."""

    path: str                    # the AMD directory or file, or the build file
    kind: str                    # "directory", "file" or "build"
    evidence: str                # what says so, in the tree's own words
    replaces: str = ""           # the CUDA directory a parallel implementation stands in for
    compiles: str = ""           # the CUDA directory an AMD directory's build compiles for AMD

    def record(self) -> dict:
        return {"path": self.path, "kind": self.kind, "evidence": self.evidence,
                "replaces": self.replaces, "compiles": self.compiles}


@dataclass(frozen=True)
class AmdPaths:
    """The tree's AMD implementations; `builds` says the tree already builds for AMD."""

    implementations: tuple[AmdImplementation, ...] = ()
    amd_dirs: tuple[str, ...] = field(default=())        # directories of AMD code: not CUDA to port

    @property
    def builds(self) -> bool:
        return any(i.kind == "build" or i.compiles for i in self.implementations)

    @property
    def sources_differ(self) -> bool:
        """The AMD build compiles sources of its own (a parallel directory or file): evidence about the
        code, which a build branch alone is not (estimate/scope.py)."""
        return any(i.kind != "build" for i in self.implementations)

    @property
    def replaced(self) -> tuple[str, ...]:
        return tuple(sorted(i.replaces for i in self.implementations if i.replaces))

    def replaced_by(self, path: str) -> str:
        """The AMD directory that replaces the CUDA directory `path` lies in, or ""."""
        for i in self.implementations:
            if i.replaces and (path == i.replaces if i.kind == "file" else path.startswith(i.replaces + "/")):
                return i.path
        return ""

    def is_amd(self, path: str) -> bool:
        """AMD code: a file under an AMD directory, or a parallel AMD file (an implementation of its own,
        so that a calibration snapshot, which keeps the implementations, keeps it too)."""
        return any(path.startswith(d + "/") for d in self.amd_dirs) or \
            any(i.kind == "file" and i.path == path for i in self.implementations)


def learn(entries: list[Entry]) -> AmdPaths:
    """The AMD implementations of a file set (paths relative to its root)."""
    dirs = _directories(entries)
    found: list[AmdImplementation] = []
    amd_dirs = []
    for directory in sorted(dirs):
        name = directory.rsplit("/", 1)[-1]
        words = _WORD.split(name.lower())
        if not AMD_TOKENS.intersection(words) or len(words) < 2:
            continue
        amd_dirs.append(directory)
        counterpart = _counterpart(directory, dirs)
        if not counterpart:
            continue
        compiled = _compiles(entries, directory, counterpart)
        found.append(AmdImplementation(
            directory, "directory",
            f"{directory} builds {counterpart}'s sources for AMD" if compiled else
            f"{directory} is an AMD implementation beside {counterpart}",
            replaces="" if compiled else counterpart, compiles=counterpart if compiled else ""))
    found += _file_twins(entries)
    found += _builds(entries)
    return AmdPaths(tuple(found), tuple(amd_dirs))


_CUDA_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".h", ".hpp")


def _file_twins(entries: list[Entry]) -> list[AmdImplementation]:
    """Parallel AMD files (the module docstring): each with the CUDA file it replaces."""
    sources = {e.rel: e for e in entries if e.kind == "source"}
    found = []
    for rel, entry in sorted(sources.items()):
        counterpart = _file_counterpart(rel, sources)
        if not counterpart:
            continue
        if _includes(entry, counterpart) or _includes(sources[counterpart], rel):
            continue   # one compiles the other: anthonix/llm.c's cuda_common.h includes amd_common.cuh
        found.append(AmdImplementation(rel, "file", f"{rel} is an AMD implementation beside {counterpart}",
                                       replaces=counterpart))
    return found


def _includes(entry: Entry, target: str) -> bool:
    """Whether `entry` includes a file named as `target` is (or cannot be read: then no claim)."""
    data, skipped = read(entry)
    name = target.rsplit("/", 1)[-1]
    return data is None or skipped is not None or any(spelled.rsplit("/", 1)[-1] == name
                                                      for _, spelled in include_lines(data))


def _file_counterpart(rel: str, sources: dict[str, Entry]) -> str:
    """The CUDA sibling of an AMD file: `X.cu` for `X.hip`; the name without its AMD word, or with
    `cuda` for it, and a C/C++/CUDA suffix (the file's own first)."""
    folder, _, name = rel.rpartition("/")
    prefix = folder + "/" if folder else ""
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem:
        return ""
    if suffix == "hip":
        return next((prefix + stem + s for s in (".cu", ".cpp") if prefix + stem + s in sources), "")
    for with_cuda, without in _namesakes(stem):
        for base in (with_cuda, *without):
            for s in ("." + suffix, *_CUDA_SUFFIXES):
                sibling = prefix + base + s
                if base and sibling != rel and sibling in sources:
                    return sibling
    return ""


def _namesakes(name: str) -> list[tuple[str, tuple[str, str]]]:
    """For each AMD word of `name` (its `-`/`_`/`.`-separated words): the name with `cuda` in its
    place, and the name without it (the separator before it dropped, or the one after)."""
    words = re.split(r"([-_.])", name)   # keep the separators
    return [("".join(words[:i] + ["cuda"] + words[i + 1:]).strip("-_."),
             ("".join(words[:max(i - 1, 0)] + words[i + 1:]).strip("-_."), "".join(words[:i] + words[i + 2:]).strip("-_.")))
            for i, word in enumerate(words) if word.lower() in AMD_TOKENS]


def _directories(entries: list[Entry]) -> set[str]:
    """Every directory holding a source, build or Python file (and its parents)."""
    out: set[str] = set()
    for entry in entries:
        if entry.kind is None or not (entry.rel.endswith(_SOURCE_SUFFIXES) or entry.kind in ("cmake", "make")):
            continue
        parts = entry.rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            out.add("/".join(parts[:i]))
    return out


def _counterpart(directory: str, dirs: set[str]) -> str:
    """The CUDA sibling of an AMD directory: its name without the AMD word, or with `cuda` for it,
    or without it under a `cuda/` sibling (xformers' attention/hip_fmha beside attention/cuda/fmha)."""
    parent, _, name = directory.rpartition("/")
    prefix = parent + "/" if parent else ""
    for with_cuda, without in _namesakes(name):
        for sibling in (prefix + with_cuda, *(prefix + rest for rest in without if rest),
                        *(prefix + "cuda/" + rest for rest in without if rest)):
            if sibling != directory and sibling in dirs:
                return sibling
    return ""


def _compiles(entries: list[Entry], directory: str, counterpart: str) -> bool:
    """The AMD directory's build files name the CUDA directory (`../ggml-cuda/*.cu`)."""
    name = counterpart.rsplit("/", 1)[-1].encode()
    for entry in entries:
        if entry.kind in ("cmake", "make") and entry.rel.startswith(directory + "/"):
            data, skipped = read(entry)
            if data is not None and skipped is None and re.search(rb"\.\./" + re.escape(name) + rb"\b", data):
                return True
    return False


def _builds(entries: list[Entry]) -> list[AmdImplementation]:
    """Build files that compile for AMD, with the line that says so."""
    out = []
    for entry in entries:
        name = entry.rel.rsplit("/", 1)[-1]
        pattern = (_CMAKE_HIP if entry.kind == "cmake" else _MAKE_HIP if entry.kind == "make"
                   else _SETUP_HIP if name == "setup.py" else None)
        if pattern is None:
            continue
        data, skipped = read(entry)
        if data is None or skipped is not None:
            continue
        match = pattern.search(data)
        if match is not None:
            line = data.count(b"\n", 0, match.start()) + 1
            start = data.rfind(b"\n", 0, match.start()) + 1
            end = data.find(b"\n", match.end())
            text = data[start:end if end >= 0 else len(data)].decode("utf-8", "replace").strip()[:100]
            out.append(AmdImplementation(entry.rel, "build", f"{entry.rel}:{line}: {text}"))
    return out


# a build file's command that translates sources: hipify.sh, hipify-perl, hipify-clang, hipify_python,
# torch's hipify (not in a comment: the line's first word is no `#`)
_HIPIFY = re.compile(rb"^[ \t]*[^#\s][^\n]*?\bhipify(?:[-_][a-z]+)?(?:\.sh|\.py)?\b[^\n]*", re.M | re.I)
_TORCH_EXTENSION = re.compile(rb"^[^#\n]*\bCUDAExtension\s*\([^\n]*", re.M)
_TORCH_NOTE = " (torch hipifies a CUDAExtension's sources when it builds on ROCm)"


def hipify_step(entries: list[Entry]) -> str:
    """`FILE:LINE: text` of the first build line that translates the tree's sources at build time
    (the module docstring), or "": a CMake or Makefile command that runs hipify, else a setup.py's
    CUDAExtension, which torch hipifies when it builds on ROCm."""
    found = ""
    for entry in entries:
        name = entry.rel.rsplit("/", 1)[-1]
        pattern = _HIPIFY if entry.kind in ("cmake", "make") else _TORCH_EXTENSION if name == "setup.py" else None
        if pattern is None:
            continue
        data, skipped = read(entry)
        match = pattern.search(data) if data is not None and skipped is None else None
        if match is None:   # pytorch_scatter's `Extension = ... CUDAExtension`, then `Extension(...)`
            where = torch_extension.first_call(entry, entries) if pattern is _TORCH_EXTENSION and data else ""
            found = found or (where + _TORCH_NOTE if where else "")
            continue
        line = data.count(b"\n", 0, match.start()) + 1
        where = f"{entry.rel}:{line}: {match.group(0).decode('utf-8', 'replace').strip()[:100]}"
        if pattern is _HIPIFY:
            return where
        found = found or where + _TORCH_NOTE
    return found


def covered(entries: list[Entry], amd: AmdPaths) -> dict[str, str]:
    """The files the tree's AMD builds compile, each with the evidence (see the module docstring)."""
    roots: list[tuple[str, str]] = []   # (directory prefix, evidence); "" is the whole tree
    for i in amd.implementations:
        if i.kind == "build":
            folder = i.path.rsplit("/", 1)[0] if "/" in i.path else ""
            roots.append((folder, i.evidence))
        elif i.compiles:
            roots += [(i.compiles, i.evidence), (i.path, i.evidence)]
    if not roots:
        return {}
    out: dict[str, str] = {}
    for entry in entries:
        for folder, evidence in roots:
            if entry.kind is not None and (not folder or entry.rel.startswith(folder + "/")):
                out[entry.rel] = evidence
                break
    return _with_includes(entries, out)


def _with_includes(entries: list[Entry], out: dict[str, str]) -> dict[str, str]:
    """Add every file a covered source includes, transitively, with its includer's evidence."""
    by_rel = {e.rel: e for e in entries if e.kind is not None}
    by_suffix: dict[str, list[str]] = {}
    for rel in by_rel:
        parts = rel.split("/")
        for i in range(len(parts)):
            by_suffix.setdefault("/".join(parts[i:]), []).append(rel)
    todo = [rel for rel in out if by_rel[rel].kind == "source"]
    while todo:
        rel = todo.pop()
        data, skipped = read(by_rel[rel])
        if data is None or skipped is not None or b"include" not in data:
            continue
        here = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
        for quoted, spelled in include_lines(data):
            local = _normal(here + spelled) if quoted else ""
            target = local if local in by_rel else min(by_suffix.get(_normal(spelled), ()), key=len, default="")
            if target and target not in out and by_rel[target].kind == "source":
                out[target] = out[rel]
                todo.append(target)
    return out


def _normal(path: str) -> str:
    return posixpath.normpath(path) if path else ""
