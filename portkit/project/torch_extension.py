"""The sources a PyTorch extension's build hands to torch's build-time hipify.

PyTorch for ROCm hipifies a CUDAExtension's sources when it builds (torch/utils/cpp_extension.py
calls torch/utils/hipify with the extension's `sources` as extra files, and every header of the
build directory that a source includes is hipified with them). Maintainers of such extensions keep
those files CUDA, for the NVIDIA build, and fix by hand only what torch's hipify cannot convert; so
convert writes only those fixes there (commands/torch_sources.py). This module finds the files:
the `sources=` of each `CUDAExtension(...)` (or its second positional argument) in a setup.py that
imports from torch.utils.cpp_extension, and of each `load(...)`/`load_inline`-free `load` call of a
script that imports it, as list literals, names bound to lists in the file, `+` of these, and
`glob.glob(...)` patterns; relative to the file's directory, as torch resolves them when the build
runs there. Then the project headers those sources include, transitively.

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
        for line, call, patterns in _extension_sources(tree):
            for pattern in patterns:
                for rel in _matching(rels, posixpath.normpath(posixpath.join(folder, pattern))):
                    found.setdefault(rel, f"{entry.rel}:{line}: {call}")
    if not found:
        return found
    built = _built_elsewhere(entries)
    theirs = _with_headers(entries, {rel: "" for rel in built}, spelled_path=True)
    only = _with_headers(entries, {rel: why for rel, why in found.items() if rel not in built})
    return {rel: why for rel, why in only.items() if rel not in theirs}


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


def _extension_sources(tree: ast.Module) -> list[tuple[int, str, list[str]]]:
    """(line, callee, source patterns) of each extension the module builds."""
    lists = _bound_lists(tree)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name not in ("CUDAExtension", "load"):
            continue
        value = next((k.value for k in node.keywords if k.arg == "sources"), None)
        if value is None and name == "CUDAExtension" and len(node.args) > 1:
            value = node.args[1]
        patterns = _strings(value, lists) if value is not None else []
        if patterns:
            out.append((node.lineno, name, patterns))
    return out


def _bound_lists(tree: ast.Module) -> dict[str, list[str]]:
    """Names the file binds to lists of sources (`sources = [...]`, `sources += [...]`), in order."""
    lists: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            lists[node.targets[0].id] = _strings(node.value, lists)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            lists.setdefault(node.target.id, []).extend(_strings(node.value, lists))
    return lists


def _strings(node: ast.AST, lists: dict[str, list[str]]) -> list[str]:
    """The path strings and glob patterns an expression of sources stands for (what it cannot
    read, a computed name, stands for nothing: that file is then converted as any other)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for item in node.elts for s in _strings(item, lists)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _strings(node.left, lists) + _strings(node.right, lists)
    if isinstance(node, ast.Name):
        return list(lists.get(node.id, []))
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in ("glob", "iglob", "list", "sorted") and node.args:
            return _strings(node.args[0], lists)
        if name == "join":   # os.path.join("csrc", "a.cu"): the parts it can read
            parts = [_strings(a, lists) for a in node.args]
            if all(len(p) == 1 for p in parts):
                return [posixpath.join(*(p[0] for p in parts))]
    return []


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
