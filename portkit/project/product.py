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
"""

from __future__ import annotations

import re

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
