"""The sources a PyTorch extension's build hands to torch's build-time hipify.

PyTorch for ROCm hipifies a CUDAExtension's sources when it builds (torch/utils/cpp_extension.py
calls torch/utils/hipify with the extension's `sources` as extra files, and every header of the
build directory that a source includes is hipified with them). Maintainers of such extensions keep
those files CUDA, for the NVIDIA build, and fix by hand only what torch's hipify cannot convert; so
convert writes only those fixes there (commands/torch_sources.py). This module finds the files:
the `sources=` of each `CUDAExtension(...)` (or its second positional argument) and of each
torch.utils.cpp_extension `load(...)` a Python file that names cpp_extension makes, the file
evaluated without running it (torch_extension_eval.py: loops, globs, listdir/walk filters,
comprehensions, helper functions, an alias such as pytorch_scatter's `Extension = CppExtension if
suffix == 'cpu' else CUDAExtension`), relative to the file's directory, as torch resolves them when
the build runs there. Then the project headers those sources include, transitively.

A file another build of the tree compiles is not the extension's alone: tiny-cuda-nn's setup.py
builds the root's src/*.cu, which its root CMakeLists.txt builds too, and a CMake build for HIP has
no hipify step, so left CUDA they break it. Such a source (one a CMake target compiles,
buildconfig.TreeConfig.built_by), and a header a unit of such a build includes, is converted as
every other file; torch's hipify leaves the HIP it then meets as it is (no key of its map is a HIP
name or one of its own outputs).
"""

from __future__ import annotations

import ast
import fnmatch
import posixpath
from pathlib import Path

from ..core.files import Entry, read
from .buildconfig import TreeConfig
from .includes import include_lines
from .torch_extension_eval import extension_calls

_HEADERS = (".h", ".cuh", ".hpp", ".hh", ".inl")
_UNITS = (".cu", ".cpp", ".cc", ".cxx", ".c")


def learn(entries: list[Entry]) -> dict[str, str]:
    """{rel: evidence} of every file torch's build-time hipify converts: the extensions' sources
    (`setup.py:LINE: CUDAExtension`) and the headers they include (`... (included)`), less what
    another build of the tree compiles: a CMake target's unit, a header one of those includes."""
    rels = {e.rel for e in entries if e.kind is not None}
    found: dict[str, str] = {}
    for entry in entries:
        if entry.kind != "python":
            continue
        data, skipped = read(entry)
        if data is None or skipped is not None or b"cpp_extension" not in data:
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):   # a file Python cannot read builds nothing we can see
            continue
        folder = posixpath.dirname(entry.rel)
        for line, call, patterns in evaluated(entry.rel, tree, rels):
            for pattern in patterns:
                for rel in _matching(rels, posixpath.normpath(posixpath.join(folder, pattern))):
                    found.setdefault(rel, f"{entry.rel}:{line}: {call}")
    if not found:
        return found
    built = _built_elsewhere(entries)
    theirs = _with_headers(entries, {rel: "" for rel in built}, spelled_path=True)
    only = _with_headers(entries, {rel: why for rel, why in found.items() if rel not in built})
    return {rel: why for rel, why in only.items() if rel not in theirs}


def evaluated(rel: str, tree: ast.Module, rels: set[str]) -> list[tuple[int, str, list[str]]]:
    """The extension calls the file makes and their sources, the file evaluated without running
    it (torch_extension_eval.py: loops, globs, aliases such as pytorch_scatter's `Extension = ...
    CUDAExtension`), its globs answered from the walked files under its folder."""
    folder = posixpath.dirname(rel)
    under = {r[len(folder) + 1:] if folder else r for r in rels if not folder or r.startswith(folder + "/")}
    return extension_calls(tree, posixpath.basename(rel), under)


def first_call(entry: Entry, entries: list[Entry]) -> str:
    """`FILE:LINE: text` of the first extension call the setup.py makes with sources, found by
    evaluating it (amd_paths.hipify_step's evidence where no `CUDAExtension(` is spelled), or ""."""
    data, skipped = read(entry)
    if data is None or skipped is not None or b"cpp_extension" not in data:
        return ""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return ""
    calls = evaluated(entry.rel, tree, {e.rel for e in entries if e.kind is not None})
    if not calls:
        return ""
    line = calls[0][0]
    return f"{entry.rel}:{line}: {data.splitlines()[line - 1].decode('utf-8', 'replace').strip()[:100]}"


def _built_elsewhere(entries: list[Entry]) -> set[str]:
    """The units a CMake target of the tree compiles (each entry's tree read from where it lies:
    the root its `rel` is relative to)."""
    trees: dict[Path, TreeConfig] = {}
    built = set()
    for entry in entries:
        if entry.kind != "source" or not entry.rel.endswith(_UNITS):
            continue
        path = entry.path.absolute().as_posix()
        if not path.endswith("/" + entry.rel):
            continue
        root = Path(path[:-len(entry.rel) - 1])
        tree = trees.setdefault(root, TreeConfig(root))
        if tree.built_by(entry.rel):
            built.add(entry.rel)
    return built


def _matching(rels: set[str], pattern: str) -> list[str]:
    if not any(c in pattern for c in "*?["):
        return [pattern] if pattern in rels else []
    return sorted(r for r in rels if fnmatch.fnmatchcase(r, pattern.replace("**/", "*")))


def _with_headers(entries: list[Entry], found: dict[str, str], spelled_path: bool = False) -> dict[str, str]:
    """The sources and the tree's headers they include, transitively: torch hipifies an included
    header of the build directory with the source (hipify_python.preprocessor's header rewrite).
    A header is found by its name, as torch's rewrite finds it; with `spelled_path`, only where the
    include spells its path's end (`<tiny-cuda-nn/vec.h>`), as another build's -I finds it: a
    `common.h` of that build's must not take the extension's own `common.h` from it."""
    by_name: dict[str, list[str]] = {}
    for entry in entries:
        if entry.kind == "source" and entry.rel.endswith(_HEADERS):
            by_name.setdefault(posixpath.basename(entry.rel), []).append(entry.rel)
    paths = {e.rel: e for e in entries}
    todo = list(found)
    while todo:
        rel = todo.pop()
        data, skipped = read(paths[rel]) if rel in paths else (None, None)
        if data is None or skipped is not None:
            continue
        for _quoted, spelled in include_lines(data):
            here = posixpath.normpath(posixpath.join(posixpath.dirname(rel), spelled))
            named = by_name.get(posixpath.basename(spelled), [])
            if spelled_path:
                named = [h for h in named if ("/" + h).endswith("/" + posixpath.normpath(spelled))]
            for header in ([here] if here in paths else named):
                if header.rsplit("/", 1)[-1] == posixpath.basename(spelled) and header not in found:
                    found[header] = found[rel].split(": ", 1)[0] + f": included from {rel}"
                    todo.append(header)
    return dict(sorted(found.items()))
