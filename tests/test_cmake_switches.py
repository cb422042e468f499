"""Issue 50: the sources a CMake option off by default adds are that option's code, priced apart
(docs/estimate.md, "The build's own switches"; buildfiles/cmake_switches.py).

fixtures/audit/cmake_switches follows faiss's CMake: `option(IDX_ENABLE_CUVS ... OFF)`, whose
gpu/CMakeLists.txt appends Cagra.cu and impl/CuvsUtils.cu to the GPU sources and defines
USE_NVIDIA_CUVS, a test added by a project macro under the option, a cache variable off
(`IDX_USE_FAST`) whose `if(NOT ...) else()` branch appends a list set earlier, and a test switch
(IDX_BUILD_TESTS) that the definition of done turns on. Its .cu files compile with nvcc
(-I gpu; Flat.cu with and without -DUSE_NVIDIA_CUVS).
"""

from __future__ import annotations

from pathlib import Path

from conftest import REPO, write_tree
from portkit.commands.audit import AuditOptions, audit_paths
from portkit.commands.scan.walk import Options
from portkit.core.files import discover
from portkit.project import optional
from portkit.project.pipeline import optional_inputs
from portkit.report.model import audit_document

TREE = REPO / "fixtures" / "audit" / "cmake_switches"


def _learn(root: Path, defines: tuple = ()) -> optional.OptionalCode:
    _, entries, _ = discover([root])
    return optional.learn(optional_inputs(entries), defines)


def _audit(root: Path) -> dict:
    return audit_document(audit_paths([root], AuditOptions(scan=Options(audit=True, rocm=(6, 2, 0)))))


def test_the_sources_an_option_off_by_default_adds_are_its_code():
    found = _learn(TREE)
    # Select.cu is appended under the option too, but listed by default: default; the header only
    # optional code includes follows; IDX_BUILD_TESTS builds only tests: not a feature
    assert found.files == {"gpu/Cagra.cu": "IDX_ENABLE_CUVS", "gpu/impl/CuvsUtils.cu": "IDX_ENABLE_CUVS",
                           "gpu/impl/CuvsUtils.h": "IDX_ENABLE_CUVS", "gpu/test/TestCagra.cu": "IDX_ENABLE_CUVS",
                           "gpu/impl/Fast.cu": "IDX_USE_FAST"}
    # the CMake files' own optional lines, and the sources' #if on the -D the option's block adds
    assert found.ranges == {"CMakeLists.txt": [(10, 10, "IDX_ENABLE_CUVS")],
                            "gpu/CMakeLists.txt": [(7, 10, "IDX_ENABLE_CUVS"), (16, 16, "IDX_USE_FAST"),
                                                   (23, 25, "IDX_ENABLE_CUVS")],
                            "gpu/test/CMakeLists.txt": [(10, 10, "IDX_ENABLE_CUVS")],
                            "gpu/Flat.cu": [(4, 5, "IDX_ENABLE_CUVS")]}


def test_the_estimate_prices_the_option_apart_with_its_name():
    doc = _audit(TREE)
    optional_items = sorted((i["kind"], i["key"], i["optional"], i["findings"])
                            for i in doc["estimate"]["items"] if i["optional"])
    assert optional_items == [
        ("dependency", "libcudacxx", "IDX_ENABLE_CUVS",
         ["gpu/Cagra.cu:14", "gpu/Cagra.cu:2", "gpu/Flat.cu:4", "gpu/impl/CuvsUtils.cu:2", "gpu/impl/CuvsUtils.cu:7",
          "gpu/test/TestCagra.cu:2", "gpu/test/TestCagra.cu:7"]),
        ("pattern", "PK201", "IDX_ENABLE_CUVS", ["gpu/Cagra.cu:10"]),
        ("pattern", "PK202:__shfl_down_sync", "IDX_USE_FAST", ["gpu/impl/Fast.cu:6"]),
        ("pattern", "PK203:__ballot_sync", "IDX_ENABLE_CUVS", ["gpu/Cagra.cu:9"]),
        ("pattern", "PK203:__shfl_down_sync", "IDX_USE_FAST", ["gpu/impl/Fast.cu:6"]),
        ("pattern", "PK204:__ballot_sync:mask", "IDX_ENABLE_CUVS", ["gpu/Cagra.cu:9"]),
        ("unit", "review_converted_ref", "IDX_ENABLE_CUVS", []), ("unit", "review_converted_ref", "IDX_USE_FAST", []),
        ("unit", "validate_kernel", "IDX_ENABLE_CUVS", []), ("unit", "validate_kernel", "IDX_USE_FAST", [])]
    assert [(o["feature"], o["items"]) for o in doc["estimate"]["optional"]] == [
        ("IDX_ENABLE_CUVS", 6), ("IDX_USE_FAST", 4)]
    # the default build's test stays in the headline (the test switch is done's own)
    headline = {f for i in doc["estimate"]["items"] if not i["optional"] for f in i["findings"]}
    assert {"gpu/Flat.cu:10", "gpu/test/TestFlat.cu:1"} <= headline


def test_minus_d_puts_the_option_back_in_the_headline():
    found = _learn(TREE, (("IDX_ENABLE_CUVS", "1"),))
    assert found.files == {"gpu/impl/Fast.cu": "IDX_USE_FAST"}


def test_an_option_on_by_default_or_set_on_is_the_default_build(tmp_path: Path):
    root = write_tree(tmp_path, {
        "CMakeLists.txt": (
            'option(WITH_GPU "gpu" ON)\noption(USE_EXTRA "extra" OFF)\n'
            "if(HAVE_CUDA)\n  set(USE_EXTRA ON)\nendif()\n"
            "set(SRC a.cu)\nif(WITH_GPU)\n  list(APPEND SRC b.cu)\nendif()\n"
            "if(NOT WITH_GPU)\n  list(APPEND SRC c.cu)\nendif()\n"
            "if(USE_EXTRA)\n  list(APPEND SRC d.cu)\nendif()\nadd_library(x ${SRC})\n"),
        "a.cu": "", "b.cu": "", "c.cu": "", "d.cu": ""})
    found = _learn(root)
    # ON is the default; USE_EXTRA is set on in a branch, so its default is not known to be off;
    # turning a default option off is not a feature: nothing is optional
    assert found.files == {}
    assert found.ranges == {}


def test_conditions_read_in_three_values():
    from portkit.buildfiles import cmake_switches   # here, so the other tests fail on their asserts without it
    switches, on = frozenset({"X", "Y"}), frozenset({"G"})
    assert cmake_switches.branch([["X"]], switches, on) == "X"
    assert cmake_switches.branch([["NOT", "X"], None], switches, on) == "X"          # else of if(NOT X)
    assert cmake_switches.branch([["X", "AND", "NOT", "TARGET", "t"]], switches, on) == "X"
    assert cmake_switches.branch([["X", "OR", "WIN32"]], switches, on) == ""        # may hold by default
    assert cmake_switches.branch([["G", "AND", "Y"]], switches, on) == "Y"
    assert cmake_switches.branch([["NOT", "G"]], switches, on) == ""
    assert cmake_switches.branch([["${X}", "STREQUAL", "ON"]], switches, on) == "X"
    assert cmake_switches.branch([["Y"], ["X"]], switches, on) == "X"               # elseif(X)


def test_a_glob_finds_what_comparing_every_path_finds():
    """file(GLOB ...) looks only at the paths that begin with the pattern's literal text (buildfiles/tree_paths.py):
    the same matches as fnmatch over every path of the tree, for both GLOB kinds."""
    import fnmatch
    from portkit.buildfiles import cmake_switches
    from portkit.buildfiles.tree_paths import TreePaths
    paths = frozenset(["src/a.cu", "src/ab/c.cu", "src/ab.cu", "src/b/d.cpp", "srcx/a.cu", "x.cu", "src/[x].cu",
                       "src/a/b/c.cu", "tests/t.cu"])
    walk = cmake_switches._Walk("CMakeLists.txt", "", TreePaths(paths), "", frozenset(), frozenset())

    def every(pattern: str, kind: str) -> list[str]:
        if kind == "GLOB_RECURSE":
            return sorted(p for p in paths if fnmatch.fnmatchcase(p, pattern))
        parts = pattern.split("/")
        return sorted(p for p in paths if len(p.split("/")) == len(parts)
                      and all(fnmatch.fnmatchcase(a, b) for a, b in zip(p.split("/"), parts)))
    patterns = ["src/*.cu", "src/a*", "*.cu", "src/a?.cu", "src/[ab].cu", "src/[[]x].cu", "src/ab/*.cu", "src/*/*.cu",
                "src/a.cu", "sr?/a.cu", "tests/*", "none/*.cu", ""]
    for pattern in patterns:
        for kind in ("GLOB", "GLOB_RECURSE"):
            assert sorted(walk.glob(pattern, kind)) == every(pattern, kind), (pattern, kind)
    assert sorted(walk.glob("src/*.cu", "GLOB_RECURSE")) == ["src/[x].cu", "src/a.cu", "src/a/b/c.cu", "src/ab.cu",
                                                             "src/ab/c.cu"]
