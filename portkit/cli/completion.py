"""`portkit completion bash|zsh|fish`: the shell completion script, generated from the parser.

Generated, never written by hand, so that a command or option completes the day it is added: the
script is built from the very parser `portkit` runs (app.build_parser), with each option's choices
(`--format json`) and the shell's own file completion for paths. It imports only argparse, so it
starts as fast as `portkit --version`. docs/completion.md has the install lines.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import PurePath

from ..core.errors import PortkitError
from .completion_shells import Arg, Command, bash, fish, zsh

SHELLS = ("bash", "zsh", "fish")
RELEASE_METAVAR = "X.Y"   # --rocm: completed with the releases the tables know
PATH_METAVARS = frozenset({"DIR", "FILE", "PATH"})   # values named so are paths even without type=Path
_WORD = re.compile(r"[A-Za-z0-9_.+=-]+")               # what a name or a choice may be, unquoted, in every shell


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("completion", help="print the shell completion script (bash, zsh, fish)",
                       description="Print a completion script for SHELL to standard output, generated from "
                                   "portkit's own options. Install it with, e.g., `portkit completion bash > "
                                   "~/.local/share/bash-completion/completions/portkit` (docs/completion.md).")
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash, zsh or fish")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    sys.stdout.write(script(parser, args.shell))
    sys.stdout.flush()
    return 0


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for `shell` of the command `parser` describes."""
    render = {"bash": bash, "zsh": zsh, "fish": fish}
    if shell not in render:
        raise PortkitError(f"completion: unknown shell {shell!r} (known: {', '.join(SHELLS)})")
    root, commands = model(parser)
    return render[shell](parser.prog, root, commands)


def model(parser: argparse.ArgumentParser) -> tuple[Command, tuple[Command, ...]]:
    """The top-level options (as a nameless command) and each subcommand, in the parser's order."""
    commands: list[Command] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                commands.append(Command(_word(name), short(helps.get(name) or sub.description or ""),
                                        _args(sub)))
    return Command("", "", _args(parser)), tuple(commands)


def _args(parser: argparse.ArgumentParser) -> tuple[Arg, ...]:
    out = []
    for a in parser._actions:
        if a.help == argparse.SUPPRESS or isinstance(a, argparse._SubParsersAction):
            continue
        metavar = a.metavar if isinstance(a.metavar, str) else (a.dest.upper() if a.option_strings else a.dest)
        is_path = (isinstance(a.type, type) and issubclass(a.type, PurePath)) or metavar in PATH_METAVARS
        takes_value = a.nargs != 0
        out.append(Arg(names=tuple(_word(n) for n in a.option_strings), help=short(_expand(a)),
                       metavar=metavar, takes_value=takes_value,
                       choices=tuple(_word(str(c)) for c in a.choices) if a.choices and takes_value
                       else _releases() if metavar == RELEASE_METAVAR and takes_value else (),
                       path=takes_value and is_path,
                       repeat=isinstance(a, (argparse._AppendAction, argparse._ExtendAction, argparse._CountAction))
                       or a.nargs in ("*", "+", argparse.REMAINDER),
                       optional=not a.option_strings and a.nargs in ("?", "*")))
    return tuple(out)


def _releases() -> tuple[str, ...]:
    """The ROCm releases the shipped tables know (X.Y of every name's first release), oldest
    first: what `--rocm` takes, offered as a list of choices although any X.Y is accepted."""
    from ..core.tables.mappings import default_db
    db = default_db()
    found = {m.hip_since[:2] for m in (*db.names.values(), *db.headers.values()) if m.hip_since}
    return tuple(f"{major}.{minor}" for major, minor in sorted(found))


def _word(text: str) -> str:
    """A name or choice goes into the scripts unquoted: anything else is a bug in the parser."""
    if not _WORD.fullmatch(text):
        raise PortkitError(f"completion: {text!r} cannot be completed safely (letters, digits, _.+=- only)")
    return text


def _expand(action: argparse.Action) -> str:
    text = action.help or ""
    if "%" in text:   # argparse's own placeholders: %(default)s, %(prog)s ...
        try:
            text = text % {**vars(action), "prog": "portkit"}
        except (KeyError, TypeError, ValueError):
            pass
    return text


def short(text: str, limit: int = 70) -> str:
    """The first clause of a help text, with the characters no shell's description may hold removed
    (quotes stay: each shell quotes them its own way)."""
    text = " ".join(text.split())
    text = re.split(r" \(|; |: |\. ", text, maxsplit=1)[0].rstrip(".")
    text = re.sub(r"[\[\]`$\\\":{}]", "", text)
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + "..."
    return text
