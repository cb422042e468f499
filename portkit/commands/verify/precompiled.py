"""A unit's leading system includes, through hip/hip_runtime.h, parsed once per compile configuration.

Nearly every converted unit begins with `#include <hip/hip_runtime.h>` (convert puts it first), and
parsing that header is ~1.0-1.2 s of a unit's ~1.3 s compile (issue 52; ggml has 187 units). A unit
whose first lines are system includes ending at the runtime compiles the same through a PCH of
exactly those lines, made with exactly the unit's command (compiler, flags, -D, -std, targets,
pack): its own includes of them are then no-ops (their include guards), and clang refuses a PCH
made with other options, so a mismatch is a failed compile, never a silent pass.

A PCH holds one side, so the unit is checked twice, device then host (`--cuda-device-only`,
`--cuda-host-only`), the host side only when the device side compiled, as clang's driver does in one
invocation. The rules are tests/hip_pch.py's, and a unit falls back to its plain command when: it
starts otherwise (a `/* */` comment alone on its lines is skipped, like `//`); the prefix does not
compile alone, or says anything (a warning the PCH would not repeat); its own -I/-iquote folders
hold a file under a name one the PCH read could be found by (the plain compile would read that
one); the command has -include, a response file or a --cuda-* option, a C++20 or later standard
(clang's one-definition check between a PCH and the unit fails on the HIP wrapper both hold), or (an
object, not a syntax check) more than one target; no other unit of the run shares its configuration and prefix (a PCH
costs about one plain compile to make). The reported command stays the plain one.

PCHs live in a temporary folder for the run and are built under one lock, so -j workers never race
and no PCH outlives the headers it was made from. PORTKIT_VERIFY_NO_PCH=1 compiles every unit plainly.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
import threading
from collections import Counter
from pathlib import Path

from . import compiler
from .compiler import CompileRun, environment

ENV = "PORTKIT_VERIFY_NO_PCH"
LINE = re.compile(rb"([^\n]*)\n")
SYSTEM_INCLUDE = re.compile(rb"[ \t]*#[ \t]*include[ \t]*<([\w./+-]+)>[ \t]*\r?")
BLANK_OR_COMMENT = re.compile(rb"[ \t]*(//.*)?\r?")
# a /* */ comment alone on its lines (a licence): its newlines kept, so every line keeps its number
BLOCK_COMMENT = re.compile(rb"^[ \t]*/\*(?:[^*]|\*(?!/))*\*/[ \t]*\r?$", re.M)
RUNTIME = "hip/hip_runtime.h"
SIDES = ("--cuda-device-only", "--cuda-host-only")
_OWN_FLAGS = ("-iquote", "-I")
_REFUSED = ("-include", "-imacros", "@", "--cuda-", "-E", "-M")
# C++20 and later: clang checks every definition the PCH and the unit both hold for one definition
# rule (the HIP runtime wrapper clang includes into each is in both), and clang 19 finds
# __clang_hip_math.h's `max`/`min` and cuda_wrappers/new's `operator new` "different in different
# modules": a false error in every faiss unit (-std=c++20) that compiles plainly
_NEW_STANDARD = re.compile(r"-std=(?:c|gnu)\+\+(?:2[a-z0-9]|[3-9][0-9])")


def leading_includes(data: bytes) -> tuple[str, ...] | None:
    """The system headers a unit includes before anything else, through hip/hip_runtime.h; None when
    another line (code, a macro, a quoted include) comes first or the runtime is not among them."""
    headers = []
    data = BLOCK_COMMENT.sub(lambda m: b"\n" * m.group().count(b"\n"), data)
    for line in LINE.finditer(data):
        text = line.group(1)
        if BLANK_OR_COMMENT.fullmatch(text):
            continue
        include = SYSTEM_INCLUDE.fullmatch(text)
        if include is None:
            return None
        headers.append(include.group(1).decode())
        if headers[-1] == RUNTIME:
            return tuple(headers)
    return None


def split(cmd: list[str]) -> tuple[list[str], list[str], list[str]] | None:
    """The command as (configuration, action, unit and output): `... -fsyntax-only UNIT` (a pack) or
    `... -c UNIT -o /dev/null` (an installed ROCm); None for any other shape."""
    if len(cmd) > 2 and cmd[-2] == "-fsyntax-only":
        return cmd[:-2], ["-fsyntax-only"], cmd[-1:]
    if len(cmd) > 4 and cmd[-4] == "-c" and cmd[-2:] == ["-o", os.devnull]:
        if sum(arg.startswith("--offload-arch=") for arg in cmd) != 1:
            return None      # device-only -c with -o takes one target
        return cmd[:-4], ["-c"], cmd[-3:]
    return None


def own_folders(base: list[str]) -> tuple[list[str], list[Path]] | None:
    """The configuration without its -I/-iquote folders (the PCH is shared by units that differ only
    there: every unit's own folder), and those folders; None for a flag the PCH cannot follow."""
    shared, found, args = [base[0]], [], iter(base[1:])
    for arg in args:
        if arg.startswith(_REFUSED) or _NEW_STANDARD.fullmatch(arg):
            return None
        flag = next((f for f in _OWN_FLAGS if arg.startswith(f)), None)
        if flag is None:
            shared.append(arg)
        else:
            found.append(Path((arg[len(flag):] or next(args, "")).strip('"')))
    return shared, found


def included_names(depfile: Path) -> frozenset[str]:
    """Every name under which a file the prefix pulled in could be found in another folder (each tail
    of its path): a unit's own folder holding one would shadow it in the plain compile."""
    text = depfile.read_text(errors="replace").replace("\\\n", " ")
    names = set()
    for token in re.split(r"(?<!\\)\s+", text.split(":", 1)[-1]):
        parts = Path(token.replace("\\ ", " ")).parts
        names.update("/".join(parts[i:]) for i in range(1, len(parts)))
    return frozenset(n for n in names if n)


class Prefixes:
    """The PCHs of one verify run, made the first time a configuration and prefix ask for them."""

    def __init__(self, system_include: Path | None, commands: list[list[str]], cwd: Path, enabled: bool | None = None):
        self.system_include = system_include.resolve() if system_include else None
        self.on = os.environ.get(ENV, "") in ("", "0") if enabled is None else enabled
        # a PCH costs about one plain compile to make: only a configuration two units share gets one
        self.units = Counter(filter(None, (self._key(cmd, cwd)[0] for cmd in commands))) if self.on else Counter()
        self.made: dict[str, tuple[dict[str, Path], frozenset[str]] | None] = {}
        self._lock = threading.Lock()
        self._folder: tempfile.TemporaryDirectory | None = None
        self.used = 0

    def compile(self, cmd: list[str], cwd: Path, timeout: float) -> CompileRun:
        """The unit's compile, through a PCH when one checks the same; else its plain command."""
        sides = self._sides(cmd, cwd) if self.on else None
        if sides is None:
            return compiler.compile_unit(cmd, cwd, timeout)
        base, action, tail = split(cmd)
        runs: list[CompileRun] = []
        for side, pch in sides.items():
            left = timeout - sum(r.seconds for r in runs)
            runs.append(compiler.compile_unit([*base, side, "-Xclang", "-include-pch", "-Xclang", str(pch), *action,
                                               *tail], cwd, max(left, 1.0)))
            if runs[-1].returncode or runs[-1].timed_out:
                break
        with self._lock:
            self.used += 1
        return CompileRun(tuple(cmd), runs[-1].returncode, "".join(r.output for r in runs),
                          sum(r.seconds for r in runs), timed_out=runs[-1].timed_out)

    def _key(self, cmd: list[str], cwd: Path) -> tuple[str | None, tuple, list[str], list[Path]]:
        """The key of the unit's PCH (None: compiled plainly), its prefix, the shared command, its own folders."""
        parts = split(cmd)
        try:
            headers = leading_includes(Path(cwd, parts[2][0]).read_bytes()) if parts else None
        except OSError:
            headers = None
        config = own_folders(parts[0]) if headers is not None else None
        if config is None:
            return None, (), [], []
        shared, where = config
        return hashlib.sha256("\0".join([*shared, "", *headers]).encode("utf-8", "surrogateescape")).hexdigest(), \
            headers, shared, where

    def _sides(self, cmd: list[str], cwd: Path) -> dict[str, Path] | None:
        key, headers, shared, where = self._key(cmd, cwd)
        if key is None or self.units[key] < 2:
            return None
        with self._lock:     # built once, before any worker uses it
            if key not in self.made:
                self.made[key] = self._build(shared, headers, cwd, key[:16])
            made = self.made[key]
        if made is None or self._shadowed(made[1], [Path(cwd, d) for d in where]):
            return None
        return made[0]

    def _shadowed(self, names: frozenset[str], where: list[Path]) -> bool:
        own = [d for d in where if self.system_include is None or d.resolve() != self.system_include]
        return any((d / n).exists() for d in own for n in names)

    def _build(self, shared: list[str], headers: tuple[str, ...], cwd: Path,
               name: str) -> tuple[dict[str, Path], frozenset[str]] | None:
        """Each side's PCH of the prefix and the names of what it read; None when a side fails or says anything."""
        if self._folder is None:
            self._folder = tempfile.TemporaryDirectory(prefix="portkit-pch-")
        folder = Path(self._folder.name)
        header, deps = folder / f"{name}.h", folder / f"{name}.d"
        header.write_text("".join(f"#include <{h}>\n" for h in headers))
        sides = {side: folder / f"{name}{side[6:-5]}.pch" for side in SIDES}
        for side, out in sides.items():
            try:
                proc = subprocess.run([*shared, side, "-Xclang", "-emit-pch", "-MD", "-MF", str(deps), "-S",
                                       str(header), "-o", str(out)],
                                      cwd=cwd, capture_output=True, env=environment(), timeout=300)
                names = included_names(deps) if proc.returncode == 0 else frozenset()
            except (OSError, subprocess.SubprocessError):
                return None
            if proc.returncode or proc.stdout.strip() or proc.stderr.strip():
                return None
        return sides, names
