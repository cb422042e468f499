"""What the product is: the code its users get, and the separate distributions beside it.

The estimate's headline answers "what does porting the project as built cost?" (issue 30). Two
kinds of code in a tree are not that product, and each is priced as its own "Not included" line:

- **Benchmarks, tests, examples and development code**: files under a directory named for them
  (`benchmarks/`, `benchs/`, `tests/`, `examples/`, `samples/`, `scripts/`, `dev/`, `docs/` ...)
  or named for them (`test_x.py`, `x_test.cu`, `bench_x.py`, `benchmark_x.py`). A tree that has
  nothing else (a samples collection, a benchmark suite) is priced whole: its code is its product.
- **A second distribution**: a subdirectory with its own `setup.py` (or a `pyproject.toml` with a
  `[project]` table) inside a tree that is itself a Python distribution, which the root's build
  files never name (flash-attention's `hopper/`, FlashAttention-3, has its own setup.py beside the
  root one). Users install it apart. One the root builds (faiss's CMakeLists.txt
  `add_subdirectory(faiss/python)`) is part of the product.

Tests are the exception that "done" makes (issue 50): done means the converted code compiles for AMD
GPUs and passes the project's own tests there, so the tests the project's test command builds are
part of the port (`OwnBuild.tests`): a directory of tests whose CMake registers them with CTest
(`add_test`, `gtest_discover_tests` ...: cuCollections' tests/, faiss's faiss/gpu/test/), the
sources a CMake file registering tests names, and what a Makefile's `test`/`check` target builds
(gunrock's `test: release` runs build_release/bin/unittests). Python tests are run, not built, and
stay apart with the examples, benchmarks and docs.
"""

from __future__ import annotations

import re

from dataclasses import dataclass

from ..buildfiles.cmake_lexer import commands
from ..core.files import Entry, read

NOT_PRODUCT = "benchmarks, tests, examples and dev code"
DIRS = frozenset({"bench", "benchs", "benchmark", "benchmarks", "test", "tests", "testing", "example", "examples",
                  "script", "scripts", "sample", "samples", "demo", "demos", "dev", "doc", "docs", "tutorial",
                  "tutorials", "notebook", "notebooks"})
_FILE = re.compile(r"^(?:test|tests|bench|benchmark)_\w|_(?:test|tests|bench|benchmark)\.\w+$", re.I)
_PROJECT_TABLE = re.compile(rb"^\s*\[project\]", re.M)


def non_product(path: str) -> bool:
    """A benchmark, test, example or development file, by its directory or its name."""
    parts = path.split("/")
    return any(part.lower() in DIRS for part in parts[:-1]) or bool(_FILE.search(parts[-1]))


def distributions(entries: list[Entry]) -> tuple[str, ...]:
    """The directories of the second distributions of a tree that is itself one (none otherwise)."""
    found = [entry.rel.rsplit("/", 1)[0] if "/" in entry.rel else "" for entry in entries
             if _is_distribution(entry)]
    if "" not in found:
        return ()
    root_builds = b"\n".join(data for data in (_bytes(e) for e in entries if e.rel in _ROOT_BUILDS) if data)
    nested = sorted(d for d in found if d and not non_product(d + "/x")
                    and not re.search(re.escape(d.encode()) + rb"(?![\w/])", root_builds))
    return tuple(d for d in nested if not any(d.startswith(o + "/") for o in nested))


def component(path: str, nested: tuple[str, ...]) -> str:
    """The second distribution a file belongs to, or ""."""
    for directory in nested:
        if path.startswith(directory + "/"):
            return directory
    return ""


_ROOT_BUILDS = frozenset({"CMakeLists.txt", "setup.py", "pyproject.toml", "Makefile", "meson.build"})


def _bytes(entry: Entry) -> bytes | None:
    data, skipped = read(entry)
    return data if skipped is None else None


def _is_distribution(entry: Entry) -> bool:
    name = entry.rel.rsplit("/", 1)[-1]
    if name == "setup.py":
        return True
    if name != "pyproject.toml":
        return False
    data = _bytes(entry)
    return data is not None and _PROJECT_TABLE.search(data) is not None


# CTest's ways of registering a test (CMake's own and its GoogleTest, Catch2 and doctest modules)
_REGISTERS = frozenset({"add_test", "gtest_discover_tests", "gtest_add_tests", "catch_discover_tests",
                        "doctest_discover_tests"})
_TEST_DIRS = frozenset({"test", "tests", "testing", "unittest", "unittests"})
_SOURCE = re.compile(r"\.(?:cu|cuh|c|cc|cpp|cxx|h|hh|hpp|hxx|inl)$", re.I)
_MAKE_TEST = re.compile(rb"^(test|tests|check)\s*:(?![:=])", re.M)
_MAKE_RULE = re.compile(rb"^([\w.\-/]+)\s*:(?![:=])([^\n]*)", re.M)
_WORD = re.compile(rb"[\w.\-/]+")
ROOT_BUILDS = ("CMakeLists.txt", "Makefile", "makefile", "GNUmakefile", "setup.py")


@dataclass(frozen=True)
class OwnBuild:
    """What the tree's own build says about the port: its build file at the root (the port style's
    default, estimate/effort.py) and the tests its test command builds (module docstring)."""

    root: str = ""                 # the root's CMakeLists.txt, Makefile or setup.py; "" when none
    tests: tuple[str, ...] = ()    # directories ("dir/") and files the test command builds

    def runs(self, path: str) -> bool:
        """A built test file: under a test directory or named, not a Python test (run, not built)."""
        if path.endswith(".py"):
            return False
        return any(path == t or (t.endswith("/") and path.startswith(t)) for t in self.tests)


def own_build(entries: list[Entry]) -> OwnBuild:
    """The tree's root build file and the tests its test command builds."""
    root = next((e.rel for e in entries if e.rel in ROOT_BUILDS), "")
    stems: dict[str, list[str]] = {}
    for e in entries:
        if non_product(e.rel) and _SOURCE.search(e.rel):
            stems.setdefault(e.rel.rsplit("/", 1)[-1].split(".")[0], []).append(e.rel)
    tests: set[str] = set()
    for e in entries:
        name = e.rel.rsplit("/", 1)[-1]
        if name == "CMakeLists.txt" or name.endswith(".cmake"):
            tests.update(_ctest(e))
        elif name in ("Makefile", "makefile", "GNUmakefile") or name.endswith(".mk"):
            tests.update(_make_test(e, stems))
    return OwnBuild(root, tuple(sorted(tests)))


def _ctest(entry: Entry) -> set[str]:
    """A CMake file registering tests: its directory when that is a test directory, else the
    test sources its commands name."""
    data = _bytes(entry)
    if data is None or not any(w in data for w in (b"add_test", b"_discover_tests", b"gtest_add_tests",
                                                   b"enable_testing")):
        return set()
    found = {c.lower: c for c in commands(data.decode("latin-1"))}
    here = entry.rel.rsplit("/", 1)[0] if "/" in entry.rel else ""
    # a test directory enabling CTest runs its executables by the test command (CTranslate2's tests/)
    if here and any(part.lower() in _TEST_DIRS for part in here.split("/")) \
            and (_REGISTERS | {"enable_testing"}) & set(found):
        return {here + "/"}
    if not _REGISTERS & set(found):
        return set()
    found = commands(data.decode("latin-1"))
    named = {v for c in found for v in c.values() if _SOURCE.search(v) and "$" not in v}
    return {_join(here, v) for v in named if non_product(_join(here, v))}


def _make_test(entry: Entry, stems: dict[str, list[str]]) -> set[str]:
    """What a Makefile's test target builds: the test sources and directories its rule and the
    rules it depends on name (one level of prerequisites: `test: release`)."""
    data = _bytes(entry)
    if data is None or not _MAKE_TEST.search(data):
        return set()
    rules = {m.group(1).decode(): m for m in _MAKE_RULE.finditer(data)}
    words: set[str] = set()
    for target in ("test", "tests", "check"):
        rule = rules.get(target)
        if rule is None:
            continue
        for word in _rule_words(data, rule):
            words.add(word)
            if word in rules and word not in ("test", "tests", "check"):
                words.update(_rule_words(data, rules[word]))
    here = entry.rel.rsplit("/", 1)[0] + "/" if "/" in entry.rel else ""
    out: set[str] = set()
    for word in words:
        stem = word.rstrip("/").rsplit("/", 1)[-1].split(".")[0]
        out.update(stems.get(stem, ()))
        if stem.lower() in _TEST_DIRS:
            out.add(here + stem + "/")
    return out


def _rule_words(data: bytes, rule: re.Match) -> list[str]:
    """The prerequisites and recipe lines (tab-indented, after the rule) of a Makefile rule."""
    text = [rule.group(2)]
    for line in data[rule.end():].split(b"\n")[1:]:
        if not line.startswith(b"\t"):
            break
        text.append(line)
    return [w.decode() for w in _WORD.findall(b" ".join(text))]


def _join(here: str, value: str) -> str:
    parts = [p for p in (here + "/" + value if here else value).split("/") if p not in ("", ".")]
    return "/".join(parts)
