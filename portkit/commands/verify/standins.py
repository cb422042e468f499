"""Every missing header of a unit in one run, not one per run (issue 32).

A compiler stops at the first header it cannot find, so a unit that needs three libraries that
are not installed took three runs (and three installs) to learn about them. When a unit stops
there, verify compiles it again with an empty stand-in for each header found missing so far, in a
temporary folder passed as the last include directory, until no new header is missing (at most
MAX_ROUNDS). Only the headers are kept: what the compiler says after a stand-in (the names it
should have declared) says nothing about the port, so the unit's report stays the first run's.
The runs with stand-ins only preprocess (`-E -o /dev/null`): a missing header is found by the
preprocessor, and a compile after the stand-ins went through the unit's whole code, for errors
that are thrown away (faiss: 0.4 s a run instead of 2-20 s).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from . import compiler as compilers

MAX_ROUNDS = 8
_MISSING = re.compile(r"fatal error: '([^']+)' file not found")


def missing_headers(first: compilers.CompileRun, cmd: list[str], cwd: Path, timeout: float) -> list[str]:
    """The headers the unit cannot find, in the order the compiler met them; [] when the first
    run did not stop at one."""
    found = _MISSING.findall(first.output)
    if not found or first.timed_out:
        return []
    missing = list(dict.fromkeys(found))
    with tempfile.TemporaryDirectory(prefix="portkit-standins-") as tmp:
        stand_ins = Path(tmp)
        for _ in range(MAX_ROUNDS):
            for header in missing:
                path = stand_ins / header
                if ".." in Path(header).parts or Path(header).is_absolute():
                    return missing     # a path outside the folder: never written
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch()
            again = compilers.compile_unit(preprocess_only([cmd[0], f"-idirafter{stand_ins}", *cmd[1:]]), cwd, timeout)
            new = [h for h in dict.fromkeys(_MISSING.findall(again.output)) if h not in missing]
            if not new or again.timed_out:
                break
            missing += new
    return missing


# what makes a compile command compile: taken out, so that the preprocessor alone runs
_COMPILING = ("-c", "-fsyntax-only")


def preprocess_only(cmd: list[str]) -> list[str]:
    """The same command, preprocessing only, its output thrown away (`-E ... -o /dev/null`)."""
    out = [cmd[0], "-E", *(arg for arg in cmd[1:] if arg not in _COMPILING)]
    return out if "-o" in out else [*out, "-o", os.devnull]
