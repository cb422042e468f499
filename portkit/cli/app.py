"""Command line: flags -> API call -> formatter -> exit code; nothing else.

The commands' options and runs live in cli_convert, cli_audit (audit, report), cli_info (rules,
explain, mappings), cli_gate (check, baseline, hook), cli_verify and cli_deep (shared deep-mode
options); cli_common holds what they share. This module builds the parser and maps errors to
exit codes.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys

from . import check as cli_gate
from .common import codes, progress_factory
from ..core.errors import PortkitError
from ..report.safe_text import safe
from ..core.version import __version__

# rich, the converter and the report modules are imported by the commands that use them: the
# pre-commit hook (`portkit check`) must start fast.


GATE_COMMANDS = ("check", "baseline", "hook")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; for a gate command (`portkit check ...`, what the pre-commit hook runs at
    every commit) that command's family alone: building every command's options imported their
    modules, 30 ms of each commit."""
    parser = argparse.ArgumentParser(
        prog="portkit", description="Port CUDA C/C++ to AMD HIP and tell what will not port.")
    parser.add_argument("--version", action="version", version=f"portkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    if command in GATE_COMMANDS:
        cli_gate.add_parsers(sub, codes)
        return parser
    from . import (audit as cli_audit, convert as cli_convert, completion as cli_completion, info as cli_info,
        verify as cli_verify)
    cli_convert.add_parser(sub)
    cli_audit.add_parsers(sub)          # audit, report
    cli_info.add_rules_parsers(sub)     # rules, explain
    cli_gate.add_parsers(sub, codes)    # check, baseline, hook
    cli_verify.add_parser(sub)
    cli_info.add_mappings_parser(sub)
    cli_completion.add_parser(sub)
    return parser


def _stop_workers() -> None:
    """End the worker processes of an interrupted command now (core/pool.py), rather than when
    they have converted every file already queued."""
    pool = sys.modules.get("portkit.core.pool")   # loaded only if a command started some
    if pool is not None:
        pool.stop_all()


class Terminated(BaseException):
    """SIGTERM, raised where the program is, so that unfinished atomic writes clean up."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    parser = build_parser(given[0] if given else None)
    import signal
    import threading
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        args = parser.parse_args(argv)   # option types raise PortkitError: one line, exit 2
        if args.command in GATE_COMMANDS:
            return cli_gate.run(args)
        from . import (audit as cli_audit, convert as cli_convert, completion as cli_completion, info as cli_info,
            verify as cli_verify)
        if args.command == "convert":
            return cli_convert.run(args)
        if args.command == "mappings":
            return cli_info.run_mappings(args)
        if args.command == "audit":
            return cli_audit.run_audit(args)
        if args.command == "report":
            return cli_audit.run_report(args)
        if args.command in ("rules", "explain"):
            return cli_info.run_rules(args)
        if args.command == "completion":
            return cli_completion.run(args, parser)
        if args.command == "verify":
            from rich.console import Console
            return cli_verify.run(args, progress_factory(Console(stderr=True), "compiling"))
        parser.error(f"unknown command {args.command}")
    except PortkitError as exc:
        print(f"portkit: error: {safe(exc)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        _stop_workers()
        print("portkit: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        _stop_workers()
        print("portkit: terminated", file=sys.stderr)
        return 143
    except BrokenPipeError:
        return 0
    except OSError as exc:
        if exc.errno not in WRITE_ERRNOS or not _writing_output(exc):
            return _internal(exc)
        print(f"portkit: error: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # an internal error: one line unless PORTKIT_DEBUG asks for the traceback
        return _internal(exc)
    return 0


# a full disk, a quota, a file too large or a device error on standard output (`> /dev/full`):
# the user's to fix, one line and exit 2, never "internal error, please report it"
WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)


def _writing_output(exc: OSError) -> bool:
    """True when the error came from writing standard output: a write to a file names it, and
    the files portkit writes itself go through output.py, which reports their own errors."""
    if exc.filename is not None:
        return False
    try:
        sys.stdout.flush()   # what is still buffered fails the same way: dropped, not retried at exit
    except OSError:
        pass
    try:   # what is left in the buffer would fail again when the interpreter exits
        sys.stdout = open(os.devnull, "w")
    except OSError:
        pass
    return True


def _internal(exc: BaseException) -> int:
    if os.environ.get("PORTKIT_DEBUG"):
        raise exc
    print(f"portkit: internal error: {type(exc).__name__}: {safe(exc)} "
          f"(set PORTKIT_DEBUG=1 for details, and please report it)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
