"""Which units a build's own hipify step is for, when the tree has more than one build.

torch hipifies a CUDAExtension's sources when that extension builds on ROCm, and nothing else:
tiny-cuda-nn's setup.py builds bindings/torch/tinycudann/bindings.cpp with src/*.cu, while its root
CMakeLists.txt builds src/*.cu, samples/ and benchmarks/ as HIP with no hipify at all. verify took
torch's map as the step of the whole tree, so the CMake units compiled from the torch-hipified
copy: 3 stopped at `include/tiny-cuda-nn/vec.h:307 use of undeclared identifier 'atomicAdd'` (a
header convert leaves to torch, which torch's map leaves CUDA) and none compiled as its build does.

Now the torch copy is for the units only the extension compiles (its sources no CMake target
lists); the other units, a CMake target's, compile from portkit's conversion of the tree (every
file converted, the extension's too: that build has no hipify), as before the torch stand-in. A
tree where no CMake target compiles a file is the extension's alone and compiles as it did.
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
from ...project import torch_extension
from ...project.buildconfig import TreeConfig
from ...project.pipeline import git_ignored
from ..results import VerifyOptions, VerifyResult
from . import packs

_UNIT_SUFFIXES = (".cu", ".hip", ".cpp", ".cc", ".cxx", ".c")


def extension_units(out: Path, opts: VerifyOptions) -> frozenset[str] | None:
    """The units torch's hipify is for: the CUDAExtensions' sources that no CMake target of the tree
    compiles. None when no CMake target compiles any file of the tree: every unit is torch's."""
    _, entries, _ = discover([out], git_ignored([out], opts.config))
    sources = {rel for rel, why in torch_extension.learn(entries).items() if "included from" not in why}
    tree = TreeConfig(out, opts.offload_arch)
    built = {e.rel for e in entries if e.kind == "source" and e.rel.endswith(_UNIT_SUFFIXES) and tree.built_by(e.rel)}
    if not built:
        return None
    return frozenset(sources - built)


def converted(out: Path, opts: VerifyOptions) -> Path | None:
    """`out` as a build without hipify compiles it: every file converted by portkit's conversion, the
    extension's too (convert leaves them CUDA for torch), into a copy outside the tree (portkit's
    cache, named by the tree, or a temporary folder with --no-cache); None when nothing changes."""
    from ..convert import configured, convert_paths
    if opts.cache:
        folder = cache_dir() / ("converted-" + hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:20])
        folder.parent.mkdir(parents=True, exist_ok=True)
    else:
        folder = Path(tempfile.mkdtemp(prefix="portkit-converted-"))
    release = format_version(opts.rocm) if opts.rocm is not None else None
    done = convert_paths([out], configured(opts.config, rocm=release, output=folder, leave_amd_built=False,
                                           needs_person=False, jobs=opts.jobs, cache=opts.cache,
                                           extension_sources="hip"))
    if any(outcome.changed for outcome in done.outcomes):
        return folder
    if not opts.cache:
        shutil.rmtree(folder, ignore_errors=True)
    return None


def merged(cmake: VerifyResult | None, torch: VerifyResult | None, where: str, standin: str,
           pack: bool) -> VerifyResult:
    """The two runs as one result: the units of both in the tree's order, each configuration once
    with its units counted together, the step and its stand-in named with the units it was for."""
    runs = [r for r in (cmake, torch) if r is not None]
    result = replace(runs[0], units=sorted((u for r in runs for u in r.units), key=lambda u: u.rel))
    configs: dict = {}
    for run in runs:
        for config, n in run.configurations:
            configs[config] = configs.get(config, 0) + n
    result.configurations = list(configs.items())
    seen = set()
    result.skipped = [s for r in runs for s in r.skipped if (s.rel, s.reason) not in seen and not seen.add((s.rel, s.reason))]
    result.unmatched = sorted({u for r in runs for u in r.unmatched})
    result.amd_selectors = tuple(dict.fromkeys(n for r in runs for n in r.amd_selectors))
    result.seconds = sum(r.seconds for r in runs)
    result.torch = next((r.torch for r in runs if r.torch), None)
    result.torch_units = sum(r.torch_units for r in runs)
    result.missing_libraries = packs.missing_libraries({u.rel: u.missing_headers for u in result.units}, pack)
    result.hipify_step, result.hipify_standin = where, standin
    result.hipify_units = tuple(u.rel for u in torch.units) if torch is not None else ()   # never None: scoped
    return result
