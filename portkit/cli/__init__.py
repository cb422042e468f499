"""The command line: flags -> settings -> command -> formatter -> exit code (app.py is the parser).

`main` answers `portkit --version` before importing the parser and the commands: a version
check (an IDE, a CI step, a pre-commit probe) then costs the interpreter's start-up, no more.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else argv) == ["--version"]:
        from ..core.version import __version__
        print(f"portkit {__version__}")
        return 0
    from .app import main as run
    return run(argv)


def run() -> None:
    """The program (the `portkit` script, `python -m portkit`): main(), then an exit that does not
    take the interpreter apart. Freeing every object one by one (the 10,000 mapping records, the
    rules, the trees) took 35 ms of each 0.3 s `portkit check` at a commit, and 50-80 ms after an
    audit of a large tree. What an exit does that matters is done first: the atexit handlers
    (multiprocessing's, logging's, weakref.finalize) and the standard streams flushed; a stream
    that cannot be flushed (a reader gone) ends the program with 120, as Python's own exit does.
    main() itself never leaves this way: tests and library callers go on after it.

    The cyclic garbage collector runs 30 times less often than Python's default (every 20,000
    allocations of container objects, not 700), as mypy does for the same reason: a scan makes
    objects by the hundred thousand (nodes, edits) and almost no reference cycles, and each of the
    collector's passes walks every live object; at the default it took 6-10% of the audit of a
    generated 5 MB file. Worker processes are forked from this one and inherit it."""
    import gc
    gc.set_threshold(20_000, 10, 10)
    code = main()
    import atexit
    import os
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:   # a broken pipe or a full disk: what Python's own exit reports as 120
        os._exit(120 if code == 0 else code)
    os._exit(code)


__all__ = ["main", "run"]
