"""The libclang side of deep mode, run in its own process: one translation unit in, facts out.

`python -m portkit.deep.worker` reads one JSON request on stdin (the file, its flags, the
toolchain) and writes one JSON answer on stdout. libclang is C++ behind ctypes: on some inputs
it aborts or crashes the whole process, so the parent (engine.py) runs this with a time limit
and falls back to tree-sitter for the file when it dies. Nothing here imports the rest of
portkit: a crash here costs one file, never the run.

The unit is parsed as nvcc compiles it: once for the host and once for the device
(`__CUDA_ARCH__` set), because `#if __CUDA_ARCH__ >= 800` code is live only on one side; the
device pass is skipped when no project file the unit reads mentions `__CUDA_ARCH__`, since it
would then see the same code. Facts
are positions in the project's own files (under the root), never in CUDA's or the system's
headers:

- macro: a CUDA declaration referenced from a project macro's body, or a kernel launch made by
  it, at the place the macro is used (the tree-sitter pass sees only the definition);
- launch: every kernel launch, whether it sits in device code (dynamic parallelism);
- device: function definitions that are device code because of a macro (`HD void f()`);
- ballot32 / mask32: a ballot result stored in 32 bits, a 32-bit variable used as a lane mask;
- warpsize: `warpSize` where a constant expression is needed;
- inactive: the lines of `#if` branches this configuration does not compile.

What lives where: this module is the process (request in, answer out); worker_unit.py the
unit's passes, positions and walk; worker_macros.py which macro a cursor comes from (the
macro facts); worker_facts.py the other facts, one handler per cursor kind. All four import
nothing of portkit but each other, so starting the worker stays cheap.
"""

from __future__ import annotations

import json
import sys

from .worker_facts import Unit
from .worker_unit import setup_range_list


def main() -> int:
    request = json.loads(sys.stdin.read())
    sys.setrecursionlimit(20000)   # the walk recurses per AST level; deep expressions nest far
    from clang import cindex   # imported here so that a missing package is the parent's error
    if request.get("libclang"):
        cindex.Config.set_library_file(request["libclang"])
    cindex.Config.set_compatibility_check(False)
    answer = Unit(cindex, request).run()
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    from clang import cindex as _ci
    setup_range_list(_ci)
    sys.exit(main())
