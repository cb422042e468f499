"""The libclang side of deep mode, run in its own process: one translation unit in, facts out.

`python -m portkit.commands.deep.worker` reads one JSON request on stdin (the file, its flags, the
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

What lives where: this module is the process (request in, answer out, its memory limit);
worker_unit.py the unit's passes, positions and walk; worker_macros.py which macro a cursor
comes from (the macro facts); worker_facts.py the other facts, one handler per cursor kind;
worker_includes.py the devices, FIFOs and /proc files the unit's includes name, which clang
reads as empty. All five import nothing of portkit but each other, so starting the worker
stays cheap.
"""

from __future__ import annotations

import json
import sys

from .worker_facts import Unit
from .worker_unit import setup_range_list

# The address space one unit may use. Real units need far less: llm.c's 24 units, ggml's
# ggml-cuda.cu, fattn.cu, mmq.cu and a unit including all of Thrust, CUB, libcu++, cuBLAS and
# <regex> peaked at 380-560 MB (VmPeak, clang 19), a third of it libclang's mappings. What text
# cannot tell the worker (a computed #include of /dev/zero behind a function-like macro) grew it
# by gigabytes in seconds until a CI runner was killed; this bounds that, 7x above the largest
# unit measured.
MEMORY_LIMIT = 4 << 30
OUT_OF_MEMORY = 3    # the exit status engine.py reads as "over MEMORY_LIMIT"


def main() -> int:
    request = json.loads(sys.stdin.read())
    sys.setrecursionlimit(20000)   # the walk recurses per AST level; deep expressions nest far
    limit = _limit_memory()
    from clang import cindex   # imported here so that a missing package is the parent's error
    if request.get("libclang"):
        cindex.Config.set_library_file(request["libclang"])
    cindex.Config.set_compatibility_check(False)
    try:
        answer = Unit(cindex, request).run()
    except (MemoryError, cindex.TranslationUnitLoadError):
        if not limit or _peak() < limit // 2:   # a buffer that doubles fails with up to half the limit in use
            raise
        sys.stderr.write(f"clang needed more than the {limit / 2**30:.3g} GiB of memory deep mode gives a unit\n")
        return OUT_OF_MEMORY
    sys.stdout.write(json.dumps(answer))
    return 0


def _limit_memory() -> int:
    """RLIMIT_AS at MEMORY_LIMIT, or lower where the parent's limit already is: the limit in
    force, in bytes (0: none could be set)."""
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(MEMORY_LIMIT, hard)
        if soft == resource.RLIM_INFINITY or soft > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        return min(limit, soft) if soft != resource.RLIM_INFINITY else limit
    except (ImportError, ValueError, OSError):
        return 0    # no resource module (Windows) or no such limit: the per-file time limit still ends it


def _peak() -> int:
    """The most address space this process has held (VmPeak), in bytes; 0 where unknown."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmPeak:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


if __name__ == "__main__":
    from clang import cindex as _ci
    setup_range_list(_ci)
    sys.exit(main())
