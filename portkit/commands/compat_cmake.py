"""--compat-header's CMake files: the HIP build as an option beside the CUDA build (buildfiles/cmake_dual.py).

One option serves the tree, named after its top project() (`project(particles ...)` ->
PARTICLES_USE_HIP), as ggml's GGML_HIP and faiss's FAISS_ENABLE_ROCM serve theirs. Each CMake
file the HIP-only migration changes gets its if/else blocks (in the worker, with the other files);
the option() line is declared once over the tree afterwards, in the top CMakeLists.txt with a
project() above the files that test it (where the project's other options are), or in the file
itself when none is above it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..buildfiles.cmake_dual import DualCMake, calls_project, dual, option_line, option_name, project_name
from ..core.files import Entry, read_regular
from ..core.source import SourceFile
from .scan.job import Job, scan_file


@dataclass(frozen=True)
class CMakeCompat:
    """What the declaration pass needs of one CMake file."""

    dual: DualCMake
    project: bool       # it calls project(): a place to declare the option for the files below it
    data: bytes         # the file as read


def tree_option(entries: list[Entry], root: Path) -> str:
    """The option for the tree: from the project() of the CMakeLists.txt nearest the root (by
    depth, then name), else from the root folder's name."""
    lists = sorted((e for e in entries if e.kind == "cmake" and e.path.name == "CMakeLists.txt"),
                   key=lambda e: (e.rel.count("/"), e.rel))
    for entry in lists:
        try:
            name = project_name(read_regular(entry.path, entry.named))
        except OSError:
            continue
        if name:
            return option_name(name)
    return option_name(root.absolute().name)


def cmake_entry(source: SourceFile, job: Job, option: str) -> tuple[CMakeCompat, bytes | None]:
    """One CMake file in the dual form: its declaration facts and its new bytes (None: unchanged)."""
    scan = scan_file(source, "cmake", job)
    result = dual(source.data, scan.edits, option)
    return CMakeCompat(result, calls_project(source.data), source.data), result.output


def declare(files: list, option: str) -> None:
    """Add option(NAME ...) where the files that test it find it: each such file's top
    CMakeLists.txt with a project() above it (itself when none), unless one declares it already.
    `files`: compat's FileCompat records; those of CMake files carry `.cmake`."""
    cmake = {f.entry.rel: f for f in files if getattr(f, "cmake", None) is not None}
    places: set[str] = set()
    for rel, f in sorted(cmake.items()):
        if f.cmake.dual.uses:
            places.add(_declarer(rel, cmake))
    for rel in sorted(places):
        f = cmake[rel]
        if f.cmake.dual.declares:
            continue
        current = f.output if f.output is not None else f.cmake.data
        at = f.cmake.dual.option_at
        f.output = current[:at] + option_line(option, f.cmake.dual.newline) + current[at:]


def _declarer(rel: str, cmake: dict) -> str:
    """The CMakeLists.txt with a project() in the highest folder above `rel` (or beside it)."""
    folder = PurePosixPath(rel).parent
    for up in reversed([folder, *folder.parents]):
        name = (up / "CMakeLists.txt").as_posix().removeprefix("./")
        if name in cmake and cmake[name].cmake.project:
            return name
    return rel
