"""What the command-line modules share: option types, the progress bar, writing a report file.

cli.py builds the parser from the per-command modules (cli_convert, cli_audit, cli_info,
cli_gate, cli_verify, cli_deep); each of them turns flags into an API call and a formatter.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import PortkitError

PROGRESS_MIN_FILES = 6


def codes(value: str) -> list[str]:
    return [v for v in value.split(",") if v.strip()]


def add_file_timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument("--file-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="time limit for one file (default 60; 0: none): a file over it is left as it is and "
                        "reported, the run goes on, and the exit code is 2")


def check_file_timeout(value: float) -> float:
    if value < 0:
        raise PortkitError(f"--file-timeout must be 0 (no limit) or positive, not {value:g}")
    return value


def progress_factory(console, verb: str = "converting"):
    def start(total: int):
        if total < PROGRESS_MIN_FILES or not console.is_terminal:
            return None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
        progress = Progress(TextColumn(verb), BarColumn(), MofNCompleteColumn(),
                            TimeRemainingColumn(), console=console, transient=True)
        task = progress.add_task("convert", total=total)
        progress.start()

        def advance(n: int) -> None:
            progress.advance(task, n)
            if progress.finished:
                progress.stop()
        return advance
    return start


def emit(text: str, output: Path, what: str, quiet: bool = False) -> None:
    """Write a report file, then name it on stderr (`what`: "the HTML report"), unless quiet.

    A person who ran a command that writes a file is told where it went; stdout stays for the
    data itself.
    """
    from .convert import atomic_write
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(output, text.encode("utf-8"))
    except OSError as exc:
        raise PortkitError(f"{output}: cannot write: {exc.strerror or exc}") from None
    if not quiet:
        print(f"portkit: wrote {what} to {output}", file=sys.stderr)




def add_platform_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-platform-model", action="store_false", dest="platform_model",
                   help="treat every byte as CUDA code compiled by every build: convert AMD-only and already "
                        "ported #if branches and shim headers too, and cost them (docs/platforms.md)")
