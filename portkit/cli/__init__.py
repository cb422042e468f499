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


__all__ = ["main"]
