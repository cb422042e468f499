"""Which files of a converted tree are translation units, and the flags each one compiles with.

Two sources of flags, in order of trust:

- a compile_commands.json (`-p`): the project's own include paths and macros, its file names
  mapped from the CUDA tree into the converted one;
- the tree itself: each `#include` that does not resolve next to the including file is looked
  up by its path suffix among the tree's headers (the nearest match wins), and the directory
  that makes it resolve is added with -I. That is how a sample that includes
  <helper_cuda.h> finds Common/ without being told.

The build's own configuration (its language standard, include directories and definitions, from
the CMakeLists.txt or Makefile above each unit; buildconfig.py) goes in front of the inferred
directories: `configured`.

Headers are not compiled on their own: their errors show up in the units that include them.
Plain C++ files are units only when they use HIP (a HIP include or a hip* name), so a
converted tree's unrelated host code does not turn into compile noise.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from . import compdb
from .buildconfig import BuildConfig, TreeConfig
from ..core.files import Entry, read_regular
from .includes import include_lines, nearest

UNIT_SUFFIXES = (".cu", ".hip")
HOST_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++")
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".h++", ".cuh", ".inl", ".inc", ".ipp", ".tpp", ".tcc")
_USES_HIP = re.compile(rb"\bhip[A-Z_]\w*|[<\"]hip/")


@dataclass(frozen=True)
class Unit:
    """One file to compile: its place in the converted tree and its extra flags."""

    rel: str
    path: Path
    flags: tuple[str, ...] = ()
    flags_from: str = "tree"        # "tree" (inferred), "cmake", "makefile" or "compile_commands"


def is_unit(entry: Entry, data: bytes) -> bool:
    suffix = entry.path.suffix.lower()
    return suffix in UNIT_SUFFIXES or (suffix in HOST_SUFFIXES and bool(_USES_HIP.search(data)))


class HeaderIndex:
    """The tree's headers by every path suffix ("c.h", "b/c.h", "a/b/c.h"), to resolve includes."""

    def __init__(self, root: Path, entries: list[Entry]):
        self.root = root
        self.by_suffix: dict[str, list[str]] = {}
        for entry in entries:
            # a file a source includes is one whatever its name (includes.follow marked it)
            if not (entry.is_source or entry.path.suffix.lower() in HEADER_SUFFIXES + UNIT_SUFFIXES + HOST_SUFFIXES):
                continue
            parts = entry.rel.split("/")
            for i in range(len(parts)):
                self.by_suffix.setdefault("/".join(parts[i:]), []).append(entry.rel)
        self._includes: dict[str, list[tuple[bool, str]]] = {}

    def includes(self, rel: str) -> list[tuple[bool, str]]:
        """(quoted, spelled path) of each #include in the file, read once."""
        if rel not in self._includes:
            try:
                data = read_regular(self.root / rel, follow=True)
            except OSError:
                data = b""
            self._includes[rel] = include_lines(data)
        return self._includes[rel]

    def nearest(self, spelled: str, near: str) -> str | None:
        """The tree file an include names, closest to the file `near` (longest shared directory)."""
        found = self.by_suffix.get(os.path.normpath(spelled).replace(os.sep, "/"))
        return nearest(found, near) if found else None


# C, C++ and POSIX headers a compiler finds in its own directories: an angle-bracket include of
# one never makes a tree folder an include directory (llm.c's dev/unistd.h, a Windows shim that
# includes <direct.h>, took the place of the system's <unistd.h> in every unit; issue 32).
SYSTEM_HEADERS = frozenset(
    "assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h math.h setjmp.h "
    "signal.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h stdlib.h stdnoreturn.h "
    "string.h tgmath.h threads.h time.h uchar.h wchar.h wctype.h "
    "unistd.h fcntl.h dirent.h dlfcn.h pthread.h sched.h semaphore.h strings.h poll.h termios.h glob.h getopt.h "
    "sys/types.h sys/stat.h sys/time.h sys/mman.h sys/wait.h sys/socket.h sys/resource.h sys/ioctl.h netdb.h "
    "algorithm any array atomic bitset cassert cctype cerrno cfloat chrono cinttypes climits cmath complex "
    "condition_variable cstdarg cstddef cstdint cstdio cstdlib cstring ctime deque exception filesystem "
    "fstream functional future initializer_list iomanip ios iosfwd iostream istream iterator limits list map "
    "memory mutex new numeric optional ostream queue random ratio regex set shared_mutex sstream stack "
    "stdexcept streambuf string string_view system_error thread tuple type_traits typeindex typeinfo "
    "unordered_map unordered_set utility valarray variant vector".split())


def inferred_include_dirs(index: HeaderIndex, unit_rel: str) -> list[str]:
    """Directories (relative to the root) that make the unit's includes resolve inside the tree."""
    dirs: list[str] = []
    seen: set[str] = set()
    todo = [unit_rel]
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        here = rel.rsplit("/", 1)[0] if "/" in rel else ""
        for quoted, spelled in index.includes(rel):
            local = os.path.normpath(os.path.join(here, spelled)).replace(os.sep, "/")
            if quoted and local in index.by_suffix and (index.root / local).is_file():
                todo.append(local)
                continue
            by_dir = [d for d in dirs if (index.root / d / spelled).is_file()]
            if by_dir:
                todo.append(os.path.normpath(os.path.join(by_dir[0], spelled)).replace(os.sep, "/"))
                continue
            if spelled in SYSTEM_HEADERS:
                # <unistd.h> is the system's, even where the tree has a shim of that name; so is a quoted
                # "assert.h" not beside its includer (the compiler falls back to its own directories):
                # CUTLASS's layout/tensor.h made its test/unit/nvrtc/stdlib, NVRTC's stand-ins for
                # assert.h and stdint.h, an include directory of tiny-cuda-nn's units
                continue
            target = index.nearest(spelled, rel)
            if target is None:
                continue        # a system or library header: the compiler's business
            base = target[: len(target) - len(os.path.normpath(spelled))].rstrip("/")
            if base not in dirs:
                dirs.append(base)
            todo.append(target)
    return dirs


def tree_units(root: Path, entries: list[Entry], sources: dict[str, bytes],
               unit: Callable[[Entry, bytes], bool] = is_unit,
               unbuilt: Callable[[str], bool] | None = None) -> list[Unit]:
    """Units of the tree (`unit` decides which files are; deep mode asks for CUDA ones) with
    include directories inferred from it; none for a unit the build leaves out (`unbuilt`), which is
    skipped, never compiled: the search walks every include, and CUTLASS's 696 tests in
    tiny-cuda-nn's dependencies/ took verify minutes before its first compile."""
    index = HeaderIndex(root, entries)
    units = []
    for entry in entries:
        data = sources.get(entry.rel)
        if data is None or not unit(entry, data):
            continue
        if unbuilt is not None and unbuilt(entry.rel):
            units.append(Unit(entry.rel, entry.path, ()))
            continue
        flags = tuple(f"-I{(root / d) if d else root}" for d in inferred_include_dirs(index, entry.rel))
        units.append(Unit(entry.rel, entry.path, flags))
    return units


def configured(units: list[Unit], tree: TreeConfig) -> tuple[list[Unit], list[tuple[BuildConfig, int]]]:
    """The units with their build configuration's flags in front, and each configuration used
    with how many units use it (in the order first used)."""
    out: list[Unit] = []
    used: dict[BuildConfig, int] = {}
    for unit in units:
        config = tree.for_unit(unit.rel)
        used[config] = used.get(config, 0) + 1
        out.append(replace(unit, flags=config.flags() + unit.flags, flags_from=config.key))
    return out, list(used.items())


def database_config(units: list[Unit], database: Path) -> list[tuple[BuildConfig, int]]:
    """How compile_commands.json units are reported: one configuration, with the standards it names."""
    stds = sorted({f[5:] for u in units for f in u.flags if f.startswith("-std=")})
    return [(BuildConfig("compile database", (str(database),), ", ".join(stds) or None), len(units))]


def database_units(root: Path, entries: list[Entry], database: list[compdb.CompileEntry],
                   source_root: Path | None) -> tuple[list[Unit], list[str]]:
    """Units named by a compile_commands.json, mapped into the converted tree, and the database
    files that match no file of the tree (reported, not compiled)."""
    by_rel = {e.rel: e for e in entries}
    # the database names absolute files: a relative --source is compared as the absolute path it means
    source_root = Path(os.path.abspath(source_root)) if source_root else infer_source_root(database, by_rel)
    units: list[Unit] = []
    unmatched: list[str] = []
    seen: set[str] = set()
    for item in database:
        rel = _rel_in_tree(item.file, root, source_root)
        if rel is None or rel not in by_rel:
            unmatched.append(str(item.file))
            continue
        if rel in seen:
            continue
        seen.add(rel)
        flags = tuple(_remap(flag, root, source_root) for flag in item.flags)
        units.append(Unit(rel, by_rel[rel].path, flags, "compile_commands"))
    return units, unmatched


def infer_source_root(database: list[compdb.CompileEntry], by_rel: dict[str, Entry]) -> Path | None:
    """The CUDA tree the database was written for: the prefix that, cut from most of its files,
    leaves a path of the converted tree."""
    votes: dict[Path, int] = {}
    for item in database:
        parts = item.file.parts
        for i in range(1, len(parts)):
            if "/".join(parts[i:]) in by_rel:
                prefix = Path(*parts[:i])
                votes[prefix] = votes.get(prefix, 0) + 1
                break
    return max(votes, key=lambda p: (votes[p], len(str(p)))) if votes else None


def _rel_in_tree(file: Path, root: Path, source_root: Path | None) -> str | None:
    for base in (root, source_root):
        if base is None:
            continue
        try:
            return Path(os.path.normpath(file)).relative_to(os.path.normpath(base)).as_posix()
        except ValueError:
            continue
    return None


def _remap(flag: str, root: Path, source_root: Path | None) -> str:
    """A flag whose path points into the CUDA tree, pointed at the same place in the converted one."""
    if source_root is None:
        return flag
    for prefix in ("-I", "-isystem", "-iquote", "-idirafter", "-include", ""):
        if flag.startswith(prefix) and flag[len(prefix):].startswith("/"):
            path = Path(os.path.normpath(flag[len(prefix):]))
            try:
                rel = path.relative_to(os.path.normpath(source_root))
            except ValueError:
                return flag
            return prefix + str(root / rel)
    return flag
