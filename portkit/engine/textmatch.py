"""The text rules' helper: report every match of some patterns in a build, dependency or Python
file, one finding per line (the lines: textlines.py), carrying the rule's fix for that line where
the rule has one (engine/fix.py: `convert --fix FAMILY` applies it, audit shows it)."""

from __future__ import annotations

import re
from typing import Callable

from .context import ScanContext
from .fix import Fix
from .rule import Rule
from .textlines import Line, lines


# Lines that only print a message (`$(info nvcc not found)`, `echo "using nvcc"`): not build logic.
_MESSAGE = re.compile(r"^\s*(?:@?echo\b|\$\((?:info|warning|error)\b|message\s*\(|print\s*\()")


def flag_matches(ctx: ScanContext, rule: Rule, pattern: re.Pattern[str], message: str,
                 severity: str | None = None, fix: Callable[[str], str | None] | None = None,
                 fixed_by: Callable[[Line, list[re.Match[str]]], Fix | None] | None = None) -> None:
    """One finding per line where `pattern` matches: spans the matches, names them in the message.
    `fix(line)` words the fix for that line's own code (None: the rule's); `fixed_by(line, matches)`
    is the rule's Fix of that line's finding, or None where its meaning is not certain."""
    for line in lines(ctx):
        if _MESSAGE.match(line.code):
            continue
        found = list(pattern.finditer(line.code))
        if not found:
            continue
        # each once, in the order the matches stand: sorting a set by `line.code.find` put
        # CMAKE_CUDA_FLAGS at CMAKE_CUDA_FLAGS_DEBUG's place, and the tie fell to the set's order,
        # which differs from run to run with Python's string hashing (and the fingerprint with it)
        names = list(dict.fromkeys(" ".join(m.group(0).split()) for m in found))
        ctx.flag(rule, line.offset(found[0].start()), line.offset(found[-1].end()),
                 message.format(", ".join(f"`{n}`" for n in names)), subject=" ".join(names),
                 severity=severity, fix=fix(line.code) if fix is not None else None,
                 fixed_by=fixed_by(line, found) if fixed_by is not None else None)
