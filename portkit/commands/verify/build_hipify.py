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
file's two versions). portkit's conversion stands in for the project's hipify step: where the two
translate differently, what is seen is portkit's, and the report says so in one line. Any verify
of a tree with such a step goes this way (a torch extension's too): a tree the conversion leaves
unchanged is compiled as it is.
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
from ...project import amd_paths
from ...project.pipeline import git_ignored
from ..results import VerifyOptions, VerifyResult
from .explain import line_map


def step(out: Path, opts: VerifyOptions) -> str:
    """The build line that translates the tree's sources at build time (`FILE:LINE: text`), or ""."""
    _, entries, _ = discover([out], git_ignored([out], opts.config))
    return amd_paths.hipify_step(entries)


def translated(out: Path, opts: VerifyOptions) -> Path | None:
    """`out` converted by portkit into a folder outside it; None when the conversion changes nothing
    (a tree already converted: compiled as it is)."""
    from ..convert import configured, convert_paths
    if opts.cache:
        folder = cache_dir() / ("hipified-" + hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:20])
        folder.parent.mkdir(parents=True, exist_ok=True)
    else:
        folder = Path(tempfile.mkdtemp(prefix="portkit-hipified-"))
    release = format_version(opts.rocm) if opts.rocm is not None else None
    done = convert_paths([out], configured(opts.config, rocm=release, output=folder, leave_amd_built=False,
                                           needs_person=False, jobs=opts.jobs, cache=opts.cache))
    if any(outcome.changed for outcome in done.outcomes):
        return folder
    if not opts.cache:
        shutil.rmtree(folder, ignore_errors=True)
    return None


def placed_back(result: VerifyResult, out: Path, copy: Path, where: str, keep: bool) -> VerifyResult:
    """The copy's result as the tree's: its root, and each error at its line in the tree's file."""
    maps: dict[str, dict[int, int]] = {}
    for unit in result.units:
        for error in unit.errors:
            if error.rel is None:
                continue
            if error.rel not in maps:
                maps[error.rel] = _line_map(out / error.rel, copy / error.rel)
            error.line = maps[error.rel].get(error.line, error.line)
    result.root = out
    result.hipify_step = where
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
