"""A CMake lexer: command invocations with their arguments and byte positions.

CMake's grammar is small (commands, quoted / bracket / unquoted arguments, comments), so a
hand-written scanner reads it exactly; nothing is evaluated. Text is handled as latin-1 so
that every character index is the byte offset in the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACKET_OPEN = re.compile(r"\[(=*)\[")


@dataclass(frozen=True)
class Arg:
    text: str          # as written, quotes included
    start: int
    end: int
    kind: str          # "unquoted", "quoted", "bracket", "paren" (a bare "(" or ")")

    @property
    def value(self) -> str:
        """The argument without its quotes or brackets (escapes are left as written)."""
        if self.kind == "quoted":
            return self.text[1:-1]
        if self.kind == "bracket":
            m = _BRACKET_OPEN.match(self.text)
            n = len(m.group(0)) if m else 2
            return self.text[n:-n]
        return self.text


@dataclass
class Command:
    name: str
    start: int         # the command name's first byte
    open: int          # the "("
    close: int         # the ")"
    args: list[Arg] = field(default_factory=list)

    @property
    def lower(self) -> str:
        return self.name.lower()

    def values(self) -> list[str]:
        return [a.value for a in self.args if a.kind != "paren"]


def _skip_bracket(text: str, i: int) -> int | None:
    """End (exclusive) of a bracket argument or comment starting at text[i] == "[", or None."""
    m = _BRACKET_OPEN.match(text, i)
    if not m:
        return None
    close = "]" + m.group(1) + "]"
    end = text.find(close, m.end())
    return len(text) if end == -1 else end + len(close)


def _skip_comment(text: str, i: int) -> int:
    """End of the comment starting at text[i] == "#"."""
    if i + 1 < len(text) and text[i + 1] == "[":
        end = _skip_bracket(text, i + 1)
        if end is not None:
            return end
    nl = text.find("\n", i)
    return len(text) if nl == -1 else nl


def _quoted_end(text: str, i: int) -> int:
    j = i + 1
    while j < len(text):
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch == '"':
            return j + 1
        j += 1
    return len(text)


def _unquoted_end(text: str, i: int) -> int:
    j = i
    while j < len(text):
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch in " \t\r\n()#\"":
            break
        j += 1
    return j


def commands(text: str) -> list[Command]:
    """Every command invocation in the file, in order (nested parentheses stay inside one)."""
    out: list[Command] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            i = _skip_comment(text, i)
            continue
        m = _IDENT.match(text, i) if (ch.isalpha() or ch == "_") else None
        if not m:
            i += 1
            continue
        j = m.end()
        while j < n and text[j] in " \t":
            j += 1
        if j >= n or text[j] != "(":
            i = m.end()
            continue
        cmd = Command(m.group(0), i, j, j)
        i = _arguments(text, j + 1, cmd)
        out.append(cmd)
    return out


def _arguments(text: str, i: int, cmd: Command) -> int:
    depth = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in " \t\r\n":
            i += 1
        elif ch == "#":
            i = _skip_comment(text, i)
        elif ch == "(":
            depth += 1
            cmd.args.append(Arg("(", i, i + 1, "paren"))
            i += 1
        elif ch == ")":
            if depth == 0:
                cmd.close = i
                return i + 1
            depth -= 1
            cmd.args.append(Arg(")", i, i + 1, "paren"))
            i += 1
        elif ch == '"':
            end = _quoted_end(text, i)
            cmd.args.append(Arg(text[i:end], i, end, "quoted"))
            i = end
        elif ch == "[" and _BRACKET_OPEN.match(text, i):
            end = _skip_bracket(text, i) or n
            cmd.args.append(Arg(text[i:end], i, end, "bracket"))
            i = end
        else:
            end = max(_unquoted_end(text, i), i + 1)
            cmd.args.append(Arg(text[i:end], i, end, "unquoted"))
            i = end
    cmd.close = n
    return n
