"""What the command-line modules share: option types, the progress bar, writing a report file.

cli.py builds the parser from the per-command modules (cli_convert, cli_audit, cli_info,
cli_gate, cli_verify, cli_deep); each of them turns flags into an API call and a formatter.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Callable, TextIO

from ..core.errors import PortkitError

PROGRESS_MIN_FILES = 6


def codes(value: str) -> list[str]:
    return [v for v in value.split(",") if v.strip()]


# Numbers on the command line, as argparse `type=`s: a bad value is a PortkitError (one line,
# exit 2, the house style), not argparse's usage block. nan and inf parse as floats and slip
# through `<` comparisons, so every check states what IS allowed.
MIN_SECONDS = 0.01        # below this a time limit only makes every file fail
MAX_SECONDS = 1e6         # about 11 days; larger values overflow the timers
MAX_JOBS = 1024
MAX_TEAM = 1000


def seconds(option: str, zero_is_none: bool = False) -> Callable[[str], float]:
    """A time limit in seconds: finite, at least MIN_SECONDS (or 0, meaning none, where allowed)."""
    def parse(text: str) -> float:
        value = _float(option, text)
        if zero_is_none and value == 0:
            return 0.0
        if value <= 0:
            allowed = "0 (no limit) or positive" if zero_is_none else "positive"
            raise PortkitError(f"{option} must be {allowed}, not {text.strip()}")
        if not MIN_SECONDS <= value <= MAX_SECONDS:
            raise PortkitError(f"{option} must be between {MIN_SECONDS:g} and {MAX_SECONDS:g} seconds, "
                               f"not {text.strip()}")
        return value
    return parse


def bounded(option: str, low: float, high: float) -> Callable[[str], float]:
    """A finite number between low and high (hours in a week ...)."""
    def parse(text: str) -> float:
        value = _float(option, text)
        if not low <= value <= high:
            raise PortkitError(f"{option} must be between {low:g} and {high:g}, not {text.strip()}")
        return value
    return parse


def count(option: str, maximum: int) -> Callable[[str], int]:
    """A whole number from 1 to `maximum` (workers, people)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise PortkitError(f"{option} must be a whole number, not {text.strip()!r}") from None
        if value < 1:
            raise PortkitError(f"{option} must be at least 1, not {value}")
        if value > maximum:
            raise PortkitError(f"{option} must be at most {maximum}, not {value}")
        return value
    return parse


def _float(option: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise PortkitError(f"{option} must be a number, not {text.strip()!r}") from None
    if not math.isfinite(value):
        raise PortkitError(f"{option} must be a finite number, not {text.strip()}")
    return value


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask: a container or `taskset` may allow fewer
    than the machine has), the default of -j."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):   # macOS and Windows have no affinity call
        return os.cpu_count() or 1


def add_jobs(p: argparse.ArgumentParser, what: str = "worker processes") -> None:
    p.add_argument("-j", "--jobs", type=count("--jobs", MAX_JOBS), default=min(usable_cpus(), MAX_JOBS),
                   metavar="N", help=f"{what} (default: the CPUs this process may use, here "
                                     f"{usable_cpus()}; 1: no other process; at most {MAX_JOBS})")


def add_no_cache(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-cache", action="store_false", dest="cache",
                   help="scan every file, neither reusing nor keeping results by file content "
                        "(the cache: docs/how-it-works.md; PORTKIT_NO_CACHE=1 does the same)")


def add_file_timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument("--file-timeout", type=seconds("--file-timeout", zero_is_none=True), default=60.0,
                   metavar="SECONDS",
                   help="time limit for one file (default 60; 0: none): a file over it is left as it is and "
                        "reported, the run goes on, and the exit code is 2")


def check_file_timeout(value: float) -> float:
    """The --file-timeout value (checked when parsed; kept for callers that build args themselves)."""
    return seconds("--file-timeout", zero_is_none=True)(repr(value))


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


def emit_rendered(render: Callable[[TextIO], object], output: Path, what: str, quiet: bool = False) -> None:
    """Write the report file `render(stream)` writes, then name it on stderr (`what`: "the HTML
    report"), unless quiet: a person who ran a command that writes a file is told where it went;
    stdout stays for the data itself. The text is encoded into the file as it is rendered: a large
    audit's report is never held whole as text and again as bytes (core/named_output.py)."""
    import io

    from ..core.named_output import write_output_with
    from ..report.safe_text import safe

    def write(handle) -> None:
        # a file atomically, a device or FIFO as a stream; a file name's undecodable bytes (kept as
        # surrogates) are written back as those bytes, as on standard output; no newline translation
        stream = io.TextIOWrapper(handle, encoding="utf-8", errors="surrogateescape", newline="")
        try:
            render(stream)
        finally:
            stream.detach()   # flushed; the handle stays its owner's to close
    write_output_with(output, write)
    if not quiet:
        print(f"portkit: wrote {what} to {safe(output)}", file=sys.stderr)


def add_file_set(p: argparse.ArgumentParser) -> None:
    """--exclude and --no-respect-gitignore: which files under the paths are the project's."""
    p.add_argument("--exclude", action="append", default=[], metavar="PATTERN",
                   help="leave files matching PATTERN (a glob on the path relative to the root, `dir/**` for a "
                        "folder) as they are, in addition to [tool.portkit] exclude; repeatable")
    p.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false", default=None,
                   help="also take the files git ignores (default in a git work tree: tracked files and "
                        "untracked ones no .gitignore ignores)")


def file_set(cfg, args: argparse.Namespace):
    """The configuration with the command line's --exclude and --no-respect-gitignore applied."""
    from dataclasses import replace
    excludes = tuple(args.exclude)
    for pattern in excludes:
        if not pattern or "\0" in pattern:
            raise PortkitError(f"--exclude: {pattern!r} is not a pattern")
    if excludes:
        cfg = replace(cfg, exclude=cfg.exclude + excludes)
    if args.respect_gitignore is False:
        cfg = replace(cfg, respect_gitignore=False)
    return cfg


def add_mappings(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mappings", type=Path, action="append", default=[], metavar="FILE",
                   help="a project mapping file (the format of mappings/*.toml), applied over the shipped tables "
                        "after the files [tool.portkit] mappings names; repeatable (docs/mapping-format.md)")


def add_platform_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-platform-model", action="store_false", dest="platform_model",
                   help="treat every byte as CUDA code compiled by every build: convert AMD-only and already "
                        "ported #if branches and shim headers too, and cost them (docs/platforms.md)")


def add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, metavar="FILE",
                   help="the configuration to use: a portkit.toml, or a pyproject.toml with [tool.portkit] (default: "
                        "the nearest one above the files given, up to the repository's root; docs/configuration.md)")


def configuration(args: argparse.Namespace):
    """The configuration of the paths given (--config FILE, else the nearest above them, wherever
    the command runs from), with the command line's file-set flags applied."""
    from ..project import config
    return file_set(config.for_paths(args.paths, args.config), args)


def configuration_line(cfg) -> str | None:
    """The line naming the file whose settings apply ("configuration: pyproject.toml [tool.portkit]";
    None: none, the defaults), relative to the working directory when it lies below it."""
    if cfg.path is None:
        return None
    try:
        shown = cfg.path.relative_to(Path.cwd().absolute()).as_posix()
    except ValueError:
        shown = str(cfg.path)
    return f"configuration: {shown}" + (" [tool.portkit]" if cfg.source.endswith("[tool.portkit]") else "")


def left_out_line(left) -> str | None:
    """What the paths hold that the command did not read, and why (None: nothing left out)."""
    parts = []
    if left.ignored:
        folders = sum(1 for name in left.ignored if name.endswith("/"))
        files = len(left.ignored) - folders
        counted = " and ".join(f"{n:,} {word}{'' if n == 1 else 's'}"
                               for n, word in ((folders, "folder"), (files, "file")) if n)
        shown = ", ".join(left.ignored[:3]) + (", ..." if len(left.ignored) > 3 else "")
        parts.append(f"{counted} git ignores ({shown}; --no-respect-gitignore takes "
                     f"{'it' if len(left.ignored) == 1 else 'them'})")
    if left.excluded:
        parts.append(f"{left.excluded:,} file{'' if left.excluded == 1 else 's'} `exclude` matches "
                     f"(the configuration's or --exclude)")
    return "left out " + "; ".join(parts) if parts else None


def nothing_read(verb: str, paths: list[Path]) -> str:
    """The words for a run that found no file it reads under `paths` ("nothing to audit ...")."""
    from ..report.safe_text import safe
    return (f"nothing to {verb}: no C, C++, CUDA, build or Python file under "
            f"{', '.join(safe(str(p)) for p in paths)}")


def say_scope(cfg, left) -> None:
    """The configuration used and what was left out, on standard error (never mixed with a report)."""
    from ..report.safe_text import safe
    for line in (configuration_line(cfg), left_out_line(left)):
        if line is not None:
            print(f"portkit: {safe(line)}", file=sys.stderr)
