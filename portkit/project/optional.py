"""Optional and test-only code: what a default build leaves out, so the estimate prices it apart.

A project's headline estimate covers what its default build compiles. Code behind an optional
feature is ported only if the team wants that feature, so it is priced as its own "+N weeks"
line (effort.py). Three signs, read from the sources and build files, no compiler:

- `#ifdef ENABLE_X` / `#if USE_X` / `#if WITH_X` (or a name a CMake `option(X ... OFF)` declares)
  where X is not #defined anywhere in the tree's sources nor given with -D: the branch is the
  optional feature X. The `#if` structure is read with the platform model's directive reader and
  expression evaluator (regions.py, ppexpr.py), in a "default build" world.
- `#if __has_include(<x.h>)`: the branch exists only when the library is installed: feature x.h.
- A translation unit whose own header (`cudnn_att.h` for `cudnn_att.cpp`) is included only inside
  optional branches belongs to that feature as a whole (llm.c's cuDNN attention).
- The build's own switches: a Makefile block a plain `make` skips (make_switches.py: llm.c's
  `ifeq ($(USE_CUDNN), 1)`, named by the -D it adds, ENABLE_CUDNN, so its `-lcudnn` and the
  sources' `#ifdef ENABLE_CUDNN` are one feature), and the extensions setup.py builds only under a
  flag (setup_switches.py: apex's `--fast_layer_norm`). A header included only from optional code
  (a whole optional file or an optional branch) is optional too, transitively. A macro a setup.py
  gives its CUDA extensions by default (setup_defines.py: pytorch_scatter's `define_macros +=
  [('WITH_CUDA', None)]`) is given, as with -D: its `#ifdef WITH_CUDA` is the build being ported.

Paths under benchmarks/, tests/, examples/, scripts/ are test-only: a dependency used only there
is optional too (TEST_ONLY), though findings there stay in the headline (the tests must pass).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import posixpath

from ..core.needles import Needles
from ..core.source import begins_line
from ..engine.platform import ppexpr, regions
from ..buildfiles import cmake_switches, make_switches, setup_switches
from . import optional_cache, setup_defines
from .lazy_sources import Contents
from ..buildfiles.tree_paths import TreePaths
from .product import non_product

TEST_ONLY = "benchmarks, tests and examples"
TEST_DIRS = frozenset({"bench", "benchmark", "benchmarks", "test", "tests", "testing", "example", "examples",
                       "script", "scripts", "sample", "samples", "demo", "demos"})
FLAG = re.compile(r"(?:ENABLE|USE|WITH)_\w+")
_NAME = re.compile(r"[A-Za-z_]\w*")
_HAS_INCLUDE = re.compile(r"__has_include(?:_next)?\s*\(\s*[<\"]([^>\"]+)[>\"]\s*\)")
# From the '#', with the line's start checked in _directive(): a pattern that starts at `^` is
# tried at every line, one that starts with a character only where it occurs (regions.py alike)
_DEFINE = re.compile(rb"#[ \t]*define[ \t]+(\w+)")
_INCLUDE = re.compile(rb"#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]")
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu")


@dataclass
class OptionalCode:
    """Per file: the optional line ranges (first, last, feature), whole optional files, includes."""

    ranges: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    includes: dict[str, list[tuple[int, str]]] = field(default_factory=dict)   # path -> (line, header)
    # per build file (Makefile): every `-l` link as (line, link name); feature(path, line) says
    # whether a plain build links it (workitems._library_sites)
    links: dict[str, list[tuple[int, str]]] = field(default_factory=dict)

    def feature(self, path: str, line: int) -> str:
        """The optional feature the line belongs to, or "" for code the default build compiles."""
        if path in self.files:
            return self.files[path]
        for first, last, name in self.ranges.get(path, ()):
            if first <= line <= last:
                return name
        return ""


def test_only(path: str) -> bool:
    return any(part.lower() in TEST_DIRS for part in path.split("/")[:-1])


def feature_flags(files: Contents, defines: tuple = (),
                  off: frozenset[str] = frozenset(), memo: "optional_cache.Memo | None" = None
                  ) -> tuple[frozenset[str], frozenset[str]]:
    """Macros that name an optional feature: ENABLE_/USE_/WITH_ names and the CMake switches `off`
    (cmake_switches.py: options defaulting to OFF), less those the sources #define (then the
    default build has them) or -D gives."""
    memo = memo or optional_cache.Memo(None)
    defined = {name for path, _, data in files.of_kind("source") for _, name in _defines(memo, path, data)}
    defined |= {name for name, _ in defines}
    return frozenset(off - defined), frozenset(defined)


def _condition(kind: str, text: str, flags, defined: frozenset[str]) -> str | None:
    """The feature a branch's condition needs, when a default build says no and the feature yes."""
    expr = regions.condition(kind, text)[0]
    headers = _HAS_INCLUDE.findall(expr)
    names = {n for n in _NAME.findall(_HAS_INCLUDE.sub("0", expr))
             if n in flags or (FLAG.fullmatch(n) and n not in defined)}
    if not names and not headers:
        return None
    off = {n: ppexpr.UNDEFINED for n in names}
    on = {n: 1 for n in names}
    default = ppexpr.truth(ppexpr.evaluate(_HAS_INCLUDE.sub("0", expr), off))
    wanted = ppexpr.truth(ppexpr.evaluate(_HAS_INCLUDE.sub("1", expr), on))
    # the default build never takes it and the feature may: not default code, whatever else the
    # test names (faiss: `defined(USE_NVIDIA_CUVS) && !defined(FAISS_CUVS_NO_IVFSQ)`)
    if default is False and wanted is not False:
        labels = flags if isinstance(flags, dict) else {}
        return ", ".join(sorted({labels.get(n) or n for n in names}) + sorted(headers))
    return None


def _line(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _directive(pattern: re.Pattern, data: bytes):
    """The matches of `pattern` (from a directive's '#') that begin their line, as `^[ \\t]*#`."""
    for m in pattern.finditer(data):
        if begins_line(data, m.start()):
            yield m


def _numbered(data: bytes, matches):
    """(line, match) for matches in order: the lines counted once through the file, not from its
    start at each match (a large file has thousands of #includes and #defines)."""
    line, counted = 1, 0
    for m in matches:
        line += data.count(b"\n", counted, m.start())
        counted = m.start()
        yield line, m


def file_ranges(data: bytes, flags: frozenset[str], defined: frozenset[str]) -> list[tuple[int, int, str]]:
    """The optional branches of one file as (first line, last line, feature), outermost feature wins."""
    out: list[tuple[int, int, str]] = []
    stack: list[list] = []   # per open #if: [enclosing feature, open branch start, its feature]
    for m in regions.directives(data):
        kind = m.group(1).decode()
        if kind in ("define", "undef"):
            continue
        text, after = regions.directive_text(data, m)
        if kind in ("if", "ifdef", "ifndef"):
            outer = stack[-1][2] if stack else ""
            stack.append([outer, after, ""])
        elif not stack:
            continue
        else:
            group = stack[-1]
            if group[2] and not group[0]:
                out.append((_line(data, group[1]), _line(data, m.start()), group[2]))
            if kind == "endif":
                stack.pop()
                continue
            group[1] = after
        group = stack[-1]
        feature = "" if kind == "else" else _condition(kind, text.decode("utf-8", "replace"), flags, defined)
        group[2] = group[0] or feature or ""
    return out


def _derived(files: Contents, flags, defined, memo: optional_cache.Memo) -> dict[str, str]:
    """Macros #defined inside an optional branch (mfu.h: `#if __has_include(<nvml.h>)` then
    `#define USE_NVML 1`): testing them tests that feature, whatever the #else defines."""
    out: dict[str, str] = {}
    encoded = Needles(f.encode() for f in flags)

    def found_in(path: str, data: bytes) -> list[tuple]:   # (name, feature) of the file's #defines in a branch
        if b"__has_include" not in data and not encoded.any_in(data):
            return []
        ranges = file_ranges(data, flags, defined)
        return [(name, feature) for line, name in _defines(memo, path, data) if ranges
                for first, last, feature in ranges if first <= line <= last]
    key = "d" + optional_cache.ranges_key(flags, defined, FLAG.fullmatch)[1:]
    for path, _, data in files.of_kind("source"):
        for name, feature in memo.per_file(path, data, key, lambda: found_in(path, data)):
            out.setdefault(name, feature)
    return out


def _defines(memo: optional_cache.Memo, path: str, data: bytes) -> list[tuple]:
    """(line, name) of each `#define` beginning a line of the source."""
    return memo.per_file(path, data, "defines", lambda: [(line, m.group(1).decode()) for line, m in
                                                         _numbered(data, _directive(_DEFINE, data))])


def learn(files: "Contents | list[tuple[str, str, bytes]]", defines: tuple = (), store=None) -> OptionalCode:
    """The optional code of a tree: `files` are (path, kind, bytes) of every scanned file. `store`
    (file_facts.FactsStore): what it learns per file and from the CMake files is kept there
    between runs (optional_cache.py); none: all learned here."""
    files = files if isinstance(files, Contents) else Contents.given(list(files))
    memo = optional_cache.Memo(store)
    defines = tuple(defines) + _setup_defines(files, {name for name, _ in defines})
    given = frozenset(name for name, _ in defines)
    cmake, ported = memo.cmake({p: d.decode("latin-1") for p, _, d in files.of_kind("cmake")},
                               files.paths(), given, lambda: _cmake(files, given))
    defines += tuple((name, 1) for name in sorted(ported - given))
    flags, defined = feature_flags(files, defines, cmake.switches, memo)
    found = OptionalCode()
    built, make_flags = _build_switches(files, found, set(given))
    _merge_cmake(cmake, found, built, make_flags)
    derived = _derived(files, {**{f: f for f in flags}, **make_flags}, defined, memo)
    flags = {**{f: f for f in flags}, **make_flags, **derived}
    key = optional_cache.ranges_key(flags, defined, FLAG.fullmatch)
    for path, _, data in files.of_kind("source"):
        ranges = memo.per_file(path, data, key, lambda: file_ranges(data, flags, defined))
        if ranges:
            found.ranges[path] = list(ranges)
        found.includes[path] = list(memo.per_file(path, data, "includes", lambda: [
            (line, m.group(1).decode("utf-8", "replace")) for line, m in _numbered(data, _directive(_INCLUDE, data))]))
    found.files = {p: f for p, f in built.items() if f}
    for path, feature in _optional_units(found).items():
        if path not in built:   # a source setup.py builds by default stays default
            found.files.setdefault(path, feature)
    _included_only_optional(found, frozenset(built))
    return found


def _setup_defines(files, given: set[str]) -> tuple[tuple[str, int], ...]:
    """The macros each setup.py's default build gives its CUDA extensions (setup_defines.py:
    pytorch_scatter's WITH_CUDA), as if given with -D: code under them is the build being ported."""
    paths = files.paths()
    found = set()
    for path, _, data in files.of_kind("python"):
        if path.rsplit("/", 1)[-1] == "setup.py":
            found |= setup_defines.default_macros(path, data, paths)
    return tuple((name, 1) for name in sorted(found - given))


def _build_switches(files, found: OptionalCode, given: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Read the Makefiles' and setup.py's switches into `found` (their own optional lines, the
    links); returns ({source: feature, "" = default} of what setup.py builds, {-D name: feature}
    of what the Makefiles' optional blocks add). A feature given with -D is the default build."""
    sources = TreePaths(files.paths("source"))   # sorted once for every setup.py's globs
    built: dict[str, str] = {}
    make_flags: dict[str, str] = {}
    for path, kind, data in files.of_kind("make", "python"):
        if kind == "make":
            read = make_switches.read(data)
            ranges = [r for r in read.ranges if r[2] not in given]
            make_flags.update({d: f for d, f in read.defines.items() if f not in given and d not in given})
            found.links[path] = read.links
            for source, feature in _make_units(path, read.units, sources).items():
                if feature not in given and built.get(source) != "":
                    built[source] = min(feature, built.get(source, feature))
        elif kind == "python" and path.rsplit("/", 1)[-1] == "setup.py":
            listed, ranges = setup_switches.learn(path, data, sources)
            for source, feature in listed.items():
                built[source] = "" if not feature or built.get(source) == "" else min(feature, built.get(source, feature))
        else:
            continue
        if ranges:
            found.ranges[path] = ranges
    return built, make_flags


def _make_units(makefile: str, units: dict[str, str], sources: frozenset[str]) -> dict[str, str]:
    """The tree's sources a Makefile's optional blocks alone build: a unit is named relative to
    the Makefile's directory, without its suffix (`cudnn_att.o` is cudnn_att.cpp or .cu)."""
    folder = posixpath.dirname(makefile)
    out: dict[str, str] = {}
    for unit, feature in units.items():
        stem = posixpath.normpath(posixpath.join(folder, unit))
        out.update({stem + suffix: feature for suffix in SOURCE_SUFFIXES if stem + suffix in sources})
    return out


def _cmake(files, given: frozenset[str]) -> tuple[cmake_switches.CMakeSwitches, frozenset[str]]:
    """The CMake switches, less the ones that build only tests, benchmarks or examples
    (BUILD_TESTS: the test command's own switch, which the definition of done turns on), and the
    -D names the switch taken as the build being ported adds (LightGBM's USE_CUDA block's
    add_definitions(-DUSE_CUDA): its .cu files' `#ifdef USE_CUDA` bodies are that build)."""
    texts = {path: data.decode("latin-1") for path, _, data in files.of_kind("cmake")}
    if not texts:
        return cmake_switches.CMakeSwitches(), frozenset()
    paths = files.paths()
    lexed: cmake_switches.Lexed = {}   # the second learning below reads the same files
    found = cmake_switches.learn(texts, paths, given, lexed)
    apart = {label for label, added in found.added.items()
             if label in found.testing or all(non_product(p) for p in added if p.endswith(SOURCE_SUFFIXES))}
    # CUDA behind a switch only (CTranslate2's WITH_CUDA, 0 .cu built without it): that switch is
    # the build being ported, as setup.py's biggest CUDA switch is (setup_switches._default)
    cuda = {label: sum(p.endswith(".cu") for p in added) for label, added in found.added.items() if label not in apart}
    ported: frozenset[str] = frozenset()
    if any(cuda.values()) and not any(f == "" for p, f in found.files.items() if p.endswith(".cu")):
        apart.add(max(sorted(cuda), key=cuda.get))
        ported = frozenset(name for name, f in found.defines.items() if f == max(sorted(cuda), key=cuda.get))
    return (cmake_switches.learn(texts, paths, given | apart, lexed) if apart else found), ported


def _merge_cmake(cmake: cmake_switches.CMakeSwitches, found: OptionalCode, built: dict[str, str],
                 make_flags: dict[str, str]) -> None:
    """The compile units (and CMake files) each switch adds join setup.py's (a default listing
    wins), their blocks' lines are optional, and the -D names they add are the switch's feature."""
    for path, feature in cmake.files.items():
        if path.endswith(SOURCE_SUFFIXES) or path.rsplit("/", 1)[-1] == "CMakeLists.txt":
            built[path] = "" if not feature or built.get(path) == "" else min(feature, built.get(path, feature))
    for path, ranges in cmake.ranges.items():
        found.ranges[path] = ranges
    make_flags.update({name: feature for name, feature in cmake.defines.items() if name not in make_flags})


def _stem(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0] if "." in base else base


def _optional_units(found: OptionalCode) -> dict[str, str]:
    """Files whose own header is included only from optional branches (and at least once)."""
    uses: dict[str, set[str]] = {}   # header stem -> features of its includes ("" = default)
    for path, includes in found.includes.items():
        for line, header in includes:
            if _stem(header) != _stem(path):   # a unit including its own header says nothing
                uses.setdefault(_stem(header), set()).add(found.feature(path, line))
    out = {}
    for path in found.includes:
        features = uses.get(_stem(path), set())
        if features and "" not in features:
            out[path] = sorted(features)[0]
    return out


def _included_only_optional(found: OptionalCode, pinned: frozenset[str]) -> None:
    """A header included only from optional code is optional too (apex's contrib headers, included
    by one flag's extension only), and so are the headers only it includes. Includes are resolved
    beside the including file, else by every tree file of that name (unresolved: no use)."""
    by_name: dict[str, list[str]] = {}
    for path in found.includes:
        by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    edges = []   # (including path, the include line's own branch feature, included path)
    by_header: dict[str, list[str]] = {}   # an include's tree files of that name, found once per spelling
    for path, includes in found.includes.items():
        ranges = found.ranges.get(path, ())
        for line, header in includes:
            rel = posixpath.normpath(posixpath.join(posixpath.dirname(path), header))
            if rel in found.includes:
                targets = [rel]
            elif (targets := by_header.get(header)) is None:
                targets = by_header[header] = [p for p in by_name.get(header.rsplit("/", 1)[-1], ())
                                               if p == header or p.endswith("/" + header)]
            branch = next((name for first, last, name in ranges if first <= line <= last), "") if ranges else ""
            edges += [(path, branch, t) for t in targets if t != path]
    for _ in range(8):   # a few rounds: each makes the headers of the newly optional ones optional
        uses: dict[str, set[str]] = {}
        for path, branch, target in edges:   # found.feature(path, line), the files as this round has them
            uses.setdefault(target, set()).add(found.files[path] if path in found.files else branch)
        new = {t: sorted(f)[0] for t, f in uses.items() if "" not in f and t not in found.files
               and t not in pinned and not t.endswith(SOURCE_SUFFIXES)}
        if not new:
            return
        found.files.update(new)
