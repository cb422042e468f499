"""The build's configuration of a tree: language standard, include directories and definitions.

verify compiles each unit as the project's build would: with the standard it asks for (hipcc
5.2 defaults to C++11, most CUDA projects ask for C++17), its include directories and its
definitions. They come, in order of trust, from a compile_commands.json (compdb.py), the
CMakeLists.txt files of the unit's directory and its parents (buildconfig_cmake.py), or the
nearest Makefile (read here); with none, the compiler's defaults.

Build files are untrusted text and nothing in them is evaluated or run: a value is kept only
when it is a plain standard (`c++17`), a plain directory (no variable left unresolved, no
generator expression but `$<BUILD_INTERFACE:...>`, an existing directory that is not the CUDA
toolkit's) or a plain definition (`NAME` or `NAME=VALUE` of letters, digits and `_.+-:/,`).
Definitions under a condition (`if(...)`, `ifeq`) are options of the build and are left out,
unless the condition names the HIP build (HIP, ROCM, AMD): those are the ones verify wants.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from . import cmake_reach
from .buildvalues import HIP_CONDITION, IMPORTED_DEFINES, STD, FileConfig, read_options
from ..core.files import read_regular

__all__ = ["STD", "BuildConfig", "FileConfig", "TreeConfig", "read_make"]

CMAKE_NAMES = ("CMakeLists.txt",)
MAKE_NAMES = ("GNUmakefile", "makefile", "Makefile")


@dataclass(frozen=True)
class BuildConfig:
    """The configuration one or more units compile with, and where it came from."""

    origin: str                          # "CMake", "Makefile", "compile database" or "default"
    files: tuple[str, ...] = ()          # the build files read, relative to the tree
    std: str | None = None
    includes: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    assumed: tuple[str, ...] = ()        # values a settled CMake if() read (project/cmake_settle.py)

    @property
    def key(self) -> str:
        """The unit's `flags_from` in the JSON."""
        return {"CMake": "cmake", "Makefile": "makefile", "compile database": "compile_commands"}.get(
            self.origin, "tree")

    def flags(self) -> tuple[str, ...]:
        std = (f"-std={self.std}",) if self.std else ()
        return std + tuple(f"-I{d}" for d in self.includes) + tuple(f"-D{d}" for d in self.defines)


DEFAULT = BuildConfig("default")


class TreeConfig:
    """The build configuration of each directory of a tree, read once per build file."""

    def __init__(self, root: Path, hip_architectures: tuple[str, ...] = ("gfx90a",)):
        self.root = root
        # the cache variables the HIP build's configure gives (verify --configure passes the same)
        self.given = {"CMAKE_HIP_ARCHITECTURES": ";".join(hip_architectures)}
        self._files: dict[Path, FileConfig | None] = {}
        self._dirs: dict[str, BuildConfig] = {}

    def for_unit(self, rel: str) -> BuildConfig:
        here = rel.rsplit("/", 1)[0] if "/" in rel else ""
        if here not in self._dirs:
            self._dirs[here] = self._for_dir(here)
        origin, files, top, own = self._dirs[here]
        if origin == "default":
            return DEFAULT
        return self._merge(origin, files, top, own, str(Path(os.path.normpath(self.root / rel))))

    def left_out(self, rel: str) -> str | None:
        """`FILE:LINE` of the CMakeLists.txt line that leaves the unit out of the project's HIP
        build (buildconfig_cmake.py), or None."""
        why = self.left_out_why(rel)
        return None if why is None else why[0]

    def left_out_why(self, rel: str) -> tuple[str, str] | None:
        """(`FILE:LINE`, the command) that leaves the unit out of the project's HIP build: a
        `list(REMOVE_ITEM ...)` under its HIP condition, or an `add_subdirectory` of a folder the
        unit is in that only a branch that build never takes reaches, or only an option that build
        has OFF by default (verify compiles the default AMD build), or a git submodule's own CMake
        project no add_subdirectory reaches (cmake_reach.py); None when none does."""
        here = rel.rsplit("/", 1)[0] if "/" in rel else ""
        if here not in self._dirs:
            self._dirs[here] = self._for_dir(here)
        origin, files, top, _ = self._dirs[here]
        unit = str(Path(os.path.normpath(self.root / rel)))
        for path in files if origin == "CMake" else ():
            config = self._read(path, top)
            where = path.relative_to(self.root).as_posix()
            if config is not None and unit in config.hip_left_out:
                return f"{where}:{config.hip_left_out[unit]}", "list(REMOVE_ITEM ...) under its HIP condition"
            if config is not None and unit in config.unbuilt:
                return f"{where}:{config.unbuilt[unit][0]}", config.unbuilt[unit][1]
            for folder, (line, written, why) in (config.left_out_dirs.items() if config is not None else ()):
                if unit.startswith(folder + os.sep):
                    return f"{where}:{line}", f"add_subdirectory({written}) {why}"
        cut = cmake_reach.unreached(files, self.root, Path(unit)) if origin == "CMake" else None
        if cut is not None:
            return cut[1].relative_to(self.root).as_posix(), \
                f"no add_subdirectory reaches {cut[0].parent.relative_to(self.root).as_posix()}, a git submodule's own project"
        return None

    def built_by(self, rel: str) -> str | None:
        """The CMakeLists.txt (relative to the tree) with a target that compiles the unit: one that
        names it as a source, or, with sources it cannot read (a glob, a loop), one of the unit's own
        folder; None when no CMake target does. verify's stand-in for torch's hipify is for the
        units only a CUDAExtension compiles: a CMake build compiles its own without hipify."""
        here = rel.rsplit("/", 1)[0] if "/" in rel else ""
        if here not in self._dirs:
            self._dirs[here] = self._for_dir(here)
        origin, files, top, own = self._dirs[here]
        unit = str(Path(os.path.normpath(self.root / rel)))
        for path in files if origin == "CMake" else ():
            config = self._read(path, top)
            if config is not None and (any(unit in srcs for srcs in config.target_sources.values())
                                       or (path.parent == own and config.partial_sources)):
                return path.relative_to(self.root).as_posix()
        return None

    def _for_dir(self, here: str) -> tuple[str, list[Path], Path, Path]:
        """The build files that configure the units of one directory."""
        parts = here.split("/") if here else []
        chain = [self.root.joinpath(*parts[:i]) for i in range(len(parts) + 1)]
        cmake = [d / CMAKE_NAMES[0] for d in chain if (d / CMAKE_NAMES[0]).is_file()]
        if cmake:
            return "CMake", cmake, cmake[0].parent, chain[-1]
        for d in reversed(chain):
            for name in MAKE_NAMES:
                if (d / name).is_file():
                    return "Makefile", [d / name], d, d
        return "default", [], self.root, self.root

    def _merge(self, origin: str, files: list[Path], top: Path, own: Path, unit: str) -> BuildConfig:
        """The files' settings together. A target's definitions count for the units it lists as
        sources; when no target lists the unit, those whose sources are not all known (a glob, a
        variable, a foreach loop's `${NAME}.cu`) count for the units of their own directory: targets
        of the parent directories are other libraries (faiss's CPU variants define
        COMPILE_SIMD_AVX512). The libraries those targets link add what they pass on (an INTERFACE
        library's definitions; hip::host's)."""
        configs = [(path, c) for path in files if (c := self._read(path, top)) is not None]
        targets = {t for _, c in configs for t, srcs in c.target_sources.items() if unit in srcs}
        if not targets:
            targets = {t for path, c in configs if path.parent == own
                       for t in (*c.target_defines, *c.target_links)
                       if not c.target_sources.get(t) or t in c.partial_sources}
        merged = FileConfig()
        for path, config in configs:
            if config.std:
                merged.add_std(config.std)
            for d in config.includes:
                merged.add_include(d)
            for d in config.defines + [d for t in config.target_defines if t in targets for d in config.target_defines[t]]:
                merged.add_define(d)
        for d in _linked_defines([c for _, c in configs], targets):
            merged.add_define(d)
        rels = tuple(p.relative_to(self.root).as_posix() for p in files)
        assumed = tuple(dict.fromkeys(a for _, c in configs for a in c.assumed))
        return BuildConfig(origin, rels, merged.std, tuple(merged.includes), tuple(merged.defines), assumed)

    def _read(self, path: Path, top: Path) -> FileConfig | None:
        if path not in self._files:
            try:
                text = read_regular(path, follow=True).decode("latin-1")   # never blocks on a FIFO
            except OSError:
                self._files[path] = None
                return None
            if path.name == CMAKE_NAMES[0]:
                from .buildconfig_cmake import read_cmake
                above = self._above(path, top)
                self._files[path] = read_cmake(text, path.parent, top, dict(above.functions) if above else {},
                                               self.given, dict(above.options) if above else {})
            else:
                self._files[path] = read_make(text, path.parent)
        return self._files[path]


    def _above(self, path: Path, top: Path) -> FileConfig | None:
        """The nearest CMakeLists.txt above `path`, read: the functions and macros it knows (its
        own and those above it: a call in a subdirectory reads the body its parent defined) and the
        option() defaults it leaves (faiss/gpu's `if(FAISS_ENABLE_CUVS)`, declared at the top)."""
        folder = path.parent
        while folder != top and top in folder.parents:
            folder = folder.parent
            above = folder / CMAKE_NAMES[0]
            if above.is_file():
                return self._read(above, top)
        return None


def _linked_defines(configs: list[FileConfig], targets: set[str]) -> list[str]:
    """The definitions the libraries `targets` link pass on, through every library they pass
    on in turn (nccl-tests' nccl_tests_options, an INTERFACE library of NCCL_OS_LINUX)."""
    seen: set[str] = set()
    todo = [(t, True) for t in sorted(targets)]     # the targets' own links count, PRIVATE or not
    out: list[str] = []
    while todo:
        target, own = todo.pop(0)
        for config in configs:
            for library, exported in config.target_links.get(target, ()):
                if (own or exported) and library not in seen and library not in targets:
                    seen.add(library)
                    todo.append((library, False))
                    out += IMPORTED_DEFINES.get(library, ())
                    out += [d for c in configs for d in c.target_exports.get(library, ())]
    return out


# --- Makefiles -----------------------------------------------------------------------------------

_ASSIGN = re.compile(r"^\s*(?:(?:export|override)\s+)*([A-Za-z_][A-Za-z0-9_.-]*)\s*(?:\+|\?|:|::|!)?=(.*)$", re.S)
_FLAG_VAR = re.compile(r"FLAGS|INCLUDES?$|INCS?$|DEFINES|DEFS$|^INC_|_INC$", re.I)
_CONDITIONAL = re.compile(r"^\s*(ifeq|ifneq|ifdef|ifndef|else|endif)\b(.*)$")


def read_make(text: str, directory: Path) -> FileConfig:
    """-std=, -I and -D of the flag variables (CFLAGS, NVCCFLAGS, INCLUDES ...) and recipe lines."""
    config = FileConfig()
    hip_stack: list[bool] = []            # per open conditional: does its branch belong to the HIP build
    # per open conditional: is its branch another OS's build (`ifeq ($(OS), Windows_NT)`: llm.c's
    # `/Idev` made its Windows shims, dev/unistd.h, shadow the system headers; issue 32)
    foreign_stack: list[bool] = []
    negated_os: list[bool] = []           # per open conditional: it opened with `ifneq (... another OS)`
    for line in _make_lines(text):
        match = _CONDITIONAL.match(line)
        if match:
            word, rest = match.groups()
            if word == "endif":
                hip_stack, foreign_stack, negated_os = hip_stack[:-1], foreign_stack[:-1], negated_os[:-1]
            elif word == "else" and hip_stack:
                hip_stack[-1] = bool(re.match(r"\s*if", rest)) and bool(HIP_CONDITION.search(rest))
                chained = re.match(r"\s*(ifeq|ifneq)\b(.*)", rest)
                foreign_stack[-1] = _foreign(*chained.groups()) if chained else negated_os[-1]
            elif word != "else":
                hip_stack.append(bool(HIP_CONDITION.search(rest)))
                foreign_stack.append(_foreign(word, rest))
                negated_os.append(word == "ifneq" and _OTHER_OS.search(rest) is not None)
            continue
        if any(foreign_stack):
            continue
        recipe = line.startswith("\t")
        assign = None if recipe else _ASSIGN.match(line)
        if assign is not None and _FLAG_VAR.search(assign.group(1)):
            words = assign.group(2)
        elif recipe:
            words = line
        else:
            continue
        read_options(_words(words), directory, config, defines=all(hip_stack))
    return config


_OTHER_OS = re.compile(r"Windows_NT|Darwin|MINGW|MSYS|CYGWIN")


def _foreign(word: str, rest: str) -> bool:
    """`ifeq ($(OS),Windows_NT)` opens another OS's branch; `ifneq` of the same opens ours."""
    return _OTHER_OS.search(rest) is not None and word == "ifeq"


def _make_lines(text: str):
    """Logical lines (continuations joined), comments cut off outside recipes."""
    pending = ""
    for raw in text.splitlines():
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        line, pending = pending + raw, ""
        if not line.startswith("\t") and "#" in line:
            line = line[:line.index("#")]
        yield line


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text, posix=True)
    except ValueError:                    # an unbalanced quote: take the words as they are
        return text.split()



