"""Deep mode's parse step: every translation unit through libclang, in worker processes.

Which units, with which flags: the entries of a compile_commands.json (`-p`), or every CUDA
source of the tree with the include directories its `#include`s need (the same inference as
`portkit verify`) plus the user's -I/-D. Each unit runs in `python -m portkit.commands.deep.worker`
(without the working directory on sys.path) under the per-file time limit; a unit that crashes
libclang or runs out of time costs only its own facts: its files keep the tree-sitter findings,
and the run says so in one note per unit.

A header is seen through every unit that includes it: its facts are the union, and a line is
inactive only when every unit that included the header skipped it.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from ...project import compdb
from ...core.errors import PortkitError
from ...core.files import Entry, read_regular
from ...core.pylaunch import module_command
from ...project.units import Unit, database_units, tree_units
from .toolchain import Toolchain
from .worker import OUT_OF_MEMORY
from .worker_unit import line_runs

SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c++", ".c")
_USES_CUDA = re.compile(rb"\bcuda[A-Z_]\w*|\bcu[A-Z]\w*|__global__|__device__|<<<|[<\"]cuda")
DEFAULT_ARCH = "sm_80"
# the command one unit is parsed with: never imports from the audited directory (pylaunch)
WORKER = module_command("portkit.commands.deep.worker")


@dataclass(frozen=True)
class DeepOptions:
    """What the user gave deep mode: the toolchain, and the configuration to preprocess."""

    toolchain: Toolchain
    database: Path | None = None           # -p: a build directory or compile_commands.json
    flags: tuple[str, ...] = ()            # -I/-D/-U given on the command line
    arch: str = DEFAULT_ARCH               # the device pass's GPU (__CUDA_ARCH__)
    std: str = "c++17"
    timeout: float = 60.0                  # seconds per unit (both passes); 0 = no limit
    jobs: int = 1


@dataclass
class DeepResult:
    """The facts of every unit that parsed, keyed by the project file they are about."""

    facts: dict[str, list[dict]] = field(default_factory=dict)
    inactive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    parsed: set[str] = field(default_factory=set)          # files some unit saw through clang
    units: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)   # (unit, why) -> tree-sitter only
    blocked: list[str] = field(default_factory=list)   # "FILE:LINE: #include ... names X, a FIFO, ..."
    clang_errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    dropped_inactive: int = 0      # findings left out because their lines are not compiled
    added: int = 0                 # findings deep mode added
    settled_partial: int = 0       # PK005 notes clang's parse made moot
    toolchain: str = ""

    def notes(self) -> list[str]:
        out = [f"{rel}: {why}; tree-sitter only for it" for rel, why in self.failed]
        out += [f"{line}; clang read it as empty" for line in self.blocked]
        if not self.units:
            out.append("no translation unit to parse (no .cu file, no C++ file that uses CUDA, nothing "
                       "in -p): tree-sitter findings only")
        if self.clang_errors:
            out.append(f"clang reported {len(self.clang_errors)} error(s) in the project's files or fatal "
                       f"ones in headers (first: {self.clang_errors[0]}); check -p or -I/-D and --cuda-path, "
                       "facts there may be incomplete")
        return out

    def inactive_line(self, rel: str, line: int) -> bool:
        return any(a <= line <= b for a, b in self.inactive.get(rel, ()))


def units(root: Path, entries: list[Entry], opts: DeepOptions) -> list[Unit]:
    """The translation units to parse, with their flags (verify's units, read from the CUDA tree)."""
    if opts.database is not None:
        database = compdb.load(opts.database)
        found, _ = database_units(root, entries, database, root)
        if not found:
            raise PortkitError(f"{compdb.find(opts.database)}: none of its files is under {root}")
        return [replace(u, flags=u.flags + opts.flags) for u in found]
    sources = {}
    for entry in entries:
        if entry.kind == "source" and entry.path.suffix.lower() in SOURCE_SUFFIXES:
            try:
                sources[entry.rel] = read_regular(entry.path, follow=True)
            except OSError:
                continue
    found = tree_units(root, entries, sources, unit=_uses_cuda)
    return [replace(u, flags=u.flags + opts.flags) for u in found]


def _uses_cuda(entry: Entry, data: bytes) -> bool:
    """Every .cu file, and C/C++ sources that name CUDA (headers come in through them)."""
    return entry.path.suffix.lower() == ".cu" or bool(_USES_CUDA.search(data))


def collect(root: Path, entries: list[Entry], opts: DeepOptions,
            progress_factory: Callable[[int], Callable[[int], None] | None] | None = None) -> DeepResult:
    """Parse every unit (in parallel worker processes) and merge what they found."""
    started = time.monotonic()
    todo = units(root, entries, opts)
    progress = progress_factory(len(todo)) if progress_factory else None
    result = DeepResult(units=len(todo), toolchain=opts.toolchain.describe())
    seen_inactive: dict[str, set[int] | None] = {}
    keys: set[str] = set()
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        for unit, (answer, why) in zip(todo, pool.map(lambda u: _parse(root, u, opts), todo)):
            if progress:
                progress(1)
            if answer is None:
                result.failed.append((unit.rel, why))
                continue
            for fact in answer.get("facts", ()):
                key = json.dumps(fact, sort_keys=True)
                if key not in keys:
                    keys.add(key)
                    result.facts.setdefault(fact["path"], []).append(fact)
            for rel in answer.get("files", ()):
                result.parsed.add(rel)
                lines = {n for a, b in answer.get("inactive", {}).get(rel, ()) for n in range(a, b + 1)}
                before = seen_inactive.get(rel)
                seen_inactive[rel] = lines if before is None else before & lines
            for line in answer.get("blocked", ()):
                if line not in result.blocked:      # a header's, once for all the units that include it
                    result.blocked.append(line)
            for error in answer.get("errors", ()):
                if error not in result.clang_errors:
                    result.clang_errors.append(error)
    for rel, lines in seen_inactive.items():
        if lines:
            result.inactive[rel] = [(a, b) for a, b in line_runs(lines)]
    for facts in result.facts.values():
        facts.sort(key=lambda f: (f["line"], f["column"], f["kind"], f.get("name", "")))
    result.seconds = time.monotonic() - started
    return result


def _parse(root: Path, unit: Unit, opts: DeepOptions) -> tuple[dict | None, str]:
    """One unit through the worker: (answer, "") or (None, why it has no answer)."""
    tc = opts.toolchain
    request = {"file": str(unit.path), "root": str(root), "cuda_path": tc.cuda_path,
               "resource_dir": tc.resource_dir, "libclang": tc.libclang, "flags": list(unit.flags),
               "arch": opts.arch, "std": opts.std}
    try:
        done = subprocess.run(WORKER, input=json.dumps(request),
                              capture_output=True, text=True, timeout=opts.timeout or None)
    except subprocess.TimeoutExpired:
        return None, f"clang took longer than {opts.timeout:g} s (--file-timeout)"
    except OSError as exc:
        return None, f"could not start the clang worker ({exc})"
    if done.returncode != 0:
        if done.returncode < 0:
            try:
                name = signal.Signals(-done.returncode).name
            except ValueError:
                name = str(-done.returncode)
            return None, f"libclang crashed ({name})"
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        if done.returncode == OUT_OF_MEMORY:
            return None, last[:200]
        return None, f"the clang worker failed ({last[:200]})"
    try:
        return json.loads(done.stdout), ""
    except ValueError:
        return None, "the clang worker's answer was unreadable"
