"""verify's stand-in for a build that translates its sources as it builds.

Some trees stay CUDA on disk and are translated by their own AMD build before it compiles: faiss's
CMake runs faiss/gpu/hipify.sh (hipify-perl) in its ROCm branch, and torch hipifies a
CUDAExtension's sources when it builds on ROCm (project/amd_paths.hipify_step finds the line that
says so). convert leaves such a tree as it is (its own AMD build compiles it), so verify compiled
the untranslated files and every unit stopped at `'cublas_v2.h' file not found` (faiss: 69 units).

verify now compiles each unit as that build would see it: the tree is converted by portkit's own
conversion (convert's settings for the release verify explains against, the AMD-built files too)
into a copy outside the tree, never in it: a folder of portkit's cache named by the tree, so that
the per-unit results are kept across runs, or a temporary one with --no-cache. The units are
compiled there, and each error is placed back at its line in the tree (explain.line_map of the
file's two versions). What stands in for the step is named in the report's line: for torch's
(a setup.py CUDAExtension) torch's own hipify map and rules, applied as data to the files torch
hipifies (torch_hipify.py), since portkit's conversion keeps what torch rewrites (ATen/cuda
includes, at::cuda streams) and the units stopped in torch's CUDA headers; for any other step
(faiss's hipify.sh: hipify-perl) portkit's conversion, where what is seen is portkit's, of every
line: hipify-perl, blind to the preprocessor, also rewrites the project's own AMD branches
(`#include <device_functions.h>` under faiss's `#ifdef USE_AMD_ROCM`), which convert leaves as the
maintainers wrote them (Options.hipify_amd_branches). A tree the stand-in leaves unchanged is
compiled as it is.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from ...core.datacache import cache_dir
from ...core.files import discover
from ...core.tables.mappings import format_version
from ...core.tables import torch_hipify as torch_table
from ...project import amd_paths, torch_extension
from ...project.pipeline import git_ignored
from ..results import VerifyOptions, VerifyResult
from . import torch_hipify, torch_release
from .explain import line_map

PORTKIT = "portkit's conversion"


def step(out: Path, opts: VerifyOptions) -> str:
    """The build line that translates the tree's sources at build time (`FILE:LINE: text`), or ""."""
    _, entries, _ = discover([out], git_ignored([out], opts.config))
    return amd_paths.hipify_step(entries)


def standin(where: str) -> str:
    """What stands in for the step at `where`: torch's map for a setup.py's CUDAExtension."""
    if where.split(":", 1)[0].rsplit("/", 1)[-1] == "setup.py":
        return f"torch {torch_table.load().version}'s hipify map (mappings/torch_hipify.toml)"
    return PORTKIT


def translated(out: Path, opts: VerifyOptions, where: str = "") -> Path | None:
    """`out` translated as its build would, into a folder outside it (standin() says by what); None
    when that changes nothing (a tree already converted: compiled as it is)."""
    prefix = torch_release.COPY if standin(where) != PORTKIT else "hipified-"
    if opts.cache:
        folder = cache_dir() / (prefix + hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:20])
        folder.parent.mkdir(parents=True, exist_ok=True)
    else:
        folder = Path(tempfile.mkdtemp(prefix="portkit-" + prefix))
    changed = _by_torch(out, opts, folder) if prefix.startswith("torch") else _by_portkit(out, opts, folder, bool(where))
    if changed:
        return folder
    if not opts.cache:
        shutil.rmtree(folder, ignore_errors=True)
    return None


def _by_portkit(out: Path, opts: VerifyOptions, folder: Path, step: bool) -> bool:
    """convert's conversion, its tables and settings, of the AMD-built files too; for a build's
    hipify `step` every line of them: also the project's own AMD branches, which convert leaves as
    the maintainers wrote them and hipify-perl (faiss's hipify.sh), blind to the preprocessor,
    rewrites (`<device_functions.h>` under `#ifdef USE_AMD_ROCM`: 43 of faiss's 76 units)."""
    from ..convert import configured, convert_paths
    release = format_version(opts.rocm) if opts.rocm is not None else None
    done = convert_paths([out], configured(opts.config, rocm=release, output=folder, leave_amd_built=False,
                                           needs_person=False, jobs=opts.jobs, cache=opts.cache,
                                           scan={"hipify_amd_branches": step}))
    return any(outcome.changed for outcome in done.outcomes)


def _by_torch(out: Path, opts: VerifyOptions, folder: Path) -> bool:
    """The tree copied into `folder` (emptied first: nothing of an older copy is compiled), each file
    torch hipifies at build time as torch writes it, every other file as it is."""
    root, entries, _ = discover([out], git_ignored([out], opts.config))
    hipified = torch_extension.learn(entries)
    shutil.rmtree(folder, ignore_errors=True)
    changed = False
    for entry in entries:
        data = entry.path.read_bytes()
        if entry.rel in hipified:
            new = torch_hipify.hipify(data, entry.rel)
            changed, data = changed or new != data, new
        target = folder / entry.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return changed


def placed_back(result: VerifyResult, out: Path, copy: Path, where: str, keep: bool) -> VerifyResult:
    """The copy's result as the tree's: its root, and each error at its line in the tree's file."""
    maps: dict[str, dict[int, int]] = {}

    def placed(rel: str, line: int) -> int:
        if rel not in maps:
            maps[rel] = _line_map(out / rel, copy / rel)
        return maps[rel].get(line, line)

    for unit in result.units:
        for error in unit.errors:
            if error.rel is None:
                continue
            error.line = placed(error.rel, error.line)
            if error.consequence_of:   # "file:line" of its cause, in the copy's lines too
                rel, _, line = error.consequence_of.rpartition(":")
                error.consequence_of = f"{rel}:{placed(rel, int(line))}" if line.isdigit() else error.consequence_of
    result.root = out
    result.hipify_step, result.hipify_standin = where, standin(where)
    if not keep:
        shutil.rmtree(copy, ignore_errors=True)
    return result


def _line_map(original: Path, converted: Path) -> dict[int, int]:
    try:
        old, new = original.read_bytes().splitlines(), converted.read_bytes().splitlines()
    except OSError:
        return {}
    return line_map(old, new)


def inner_options(out: Path, opts: VerifyOptions) -> VerifyOptions:
    """The copy's options: the CUDA lines shown come from `--source`, else from the tree itself."""
    return replace(opts, source=opts.source or out)
