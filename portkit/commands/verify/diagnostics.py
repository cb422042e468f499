"""Reading clang's (and so hipcc's) diagnostics back into data.

verify asks for one line per diagnostic (-fno-caret-diagnostics): `file:line:col: error: text`,
followed by its notes. An error inside a system header (a ROCm or C++ header) is placed at the
first note that points into the converted tree: that is the user's line that caused it. hipcc
compiles each unit for the host and for every GPU target, so the same error can come twice;
it is kept once.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

_LOCATED = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<severity>fatal error|error|warning|note|remark): "
                      r"(?P<message>.*)$")
_UNLOCATED = re.compile(r"^(?:(?P<tool>[\w.+-]+): )?(?P<severity>fatal error|error): (?P<message>.*)$")
_INCLUDED = re.compile(r"^In file included from (?P<path>.+?):(?P<line>\d+):$")
_QUOTED = re.compile(r"'([^']+)'")
# clang's own bookkeeping, not a problem in the code
_NOT_ERRORS = ("too many errors emitted",)


@dataclass
class Diagnostic:
    severity: str                 # "error" or "fatal error"
    message: str
    path: str | None              # as the compiler wrote it; None for errors without a location
    line: int = 0
    column: int = 0
    notes: list[tuple[str, int, int, str]] = field(default_factory=list)   # (path, line, column, text)
    # clang's "In file included from PATH:LINE:" lines before it, outermost (the unit) first
    included_from: list[tuple[str, int]] = field(default_factory=list)

    @property
    def subject(self) -> str | None:
        """The first quoted name of the message ('hipMallocAsync', 'hipblas/hipblas.h')."""
        match = _QUOTED.search(self.message)
        return match.group(1) if match else None


@dataclass(frozen=True)
class Located:
    """An error placed in the converted tree."""

    diagnostic: Diagnostic
    rel: str | None               # file relative to the tree root; None when outside it
    line: int
    column: int


def parse(output: str) -> list[Diagnostic]:
    """The errors of one compile, in order, each with its notes, duplicates removed."""
    errors: list[Diagnostic] = []
    current: Diagnostic | None = None
    chain: list[tuple[str, int]] = []     # the include lines clang printed for the next diagnostic
    for raw in output.splitlines():
        line = raw.rstrip()
        included = _INCLUDED.match(line)
        if included:
            chain.append((included.group("path"), int(included.group("line"))))
            continue
        match = _LOCATED.match(line)
        if match:
            severity = match.group("severity")
            if severity == "note":
                chain = []            # include lines before a note say where the note's file was reached
                if current is not None:
                    current.notes.append((match.group("path"), int(match.group("line")),
                                          int(match.group("column")), match.group("message")))
                continue
            if severity in ("warning", "remark"):
                current, chain = None, []
                continue
            current = Diagnostic(severity, match.group("message"), match.group("path"),
                                 int(match.group("line")), int(match.group("column")), included_from=chain)
            chain = []
            errors.append(current)
            continue
        match = _UNLOCATED.match(line)
        if match and "generated" not in line and not match.group("message").startswith(_NOT_ERRORS):
            current = Diagnostic(match.group("severity"), match.group("message"), None)
            errors.append(current)
    unique: dict[tuple, Diagnostic] = {}
    for d in errors:
        unique.setdefault((d.path, d.line, d.column, d.message), d)
    return list(unique.values())


def locate(diagnostic: Diagnostic, root: Path, cwd: Path) -> Located:
    """Where in the converted tree the error belongs: its own place, else the first note inside the
    tree (an error in a ROCm header instantiated from the user's line, an inline-asm line), else
    the last include line inside the tree: the project's `#include` through which a library header
    reached the error ('driver_types.h' not found, wanted by rocThrust's CUDA backend)."""
    places = [(diagnostic.path, diagnostic.line, diagnostic.column)] if diagnostic.path else []
    places += [(p, l, c) for (p, l, c, _text) in diagnostic.notes]
    places += [(p, l, 1) for (p, l) in reversed(diagnostic.included_from)]
    for path, line, column in places:
        rel = relative(path, root, cwd)
        if rel is not None:
            return Located(diagnostic, rel, line, column)
    return Located(diagnostic, None, diagnostic.line, diagnostic.column)


def relative(path: str | None, root: Path, cwd: Path) -> str | None:
    if not path or path.startswith("<"):
        return None
    full = Path(path) if os.path.isabs(path) else cwd / path
    try:
        return Path(os.path.realpath(full)).relative_to(os.path.realpath(root)).as_posix()
    except ValueError:
        return None


def include_chain(diagnostic: Diagnostic, root: Path, cwd: Path) -> list[str]:
    """`FILE:LINE` of each include from the unit to the header the error is in, when that header is
    a library's (outside the tree) and the project reached it: how a CUDA header got into a HIP
    unit (src/x.hip:2, thrust/system/cuda/error.h:27, .../guarded_driver_types.h:50). Empty for
    an error in the project's own files, whose place says it already."""
    if diagnostic.path is None or relative(diagnostic.path, root, cwd) is not None:
        return []
    if not any(relative(path, root, cwd) is not None for path, _ in diagnostic.included_from):
        return []
    hops = [*diagnostic.included_from, (diagnostic.path, diagnostic.line)]
    return [f"{shown(path, root, cwd)}:{line}" for path, line in hops]


def shown(path: str, root: Path, cwd: Path) -> str:
    """A path as a person reads it: relative to the tree, else from the include folder it was found
    in (`thrust/system/cuda/error.h`, not the pack's or /usr's absolute path)."""
    rel = relative(path, root, cwd)
    if rel is not None:
        return rel
    posix = Path(path).as_posix()
    at = posix.rfind("/include/")
    return posix[at + len("/include/"):] if at >= 0 else posix
