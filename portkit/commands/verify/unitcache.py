"""Each unit's compile result kept between runs of verify on one tree (issue 48: an 800-file tree).

A unit is compiled again only when something it reads changed. The key covers the unit's command
(compiler, flags, header pack path), the bytes of the unit and of every project file its
directives reach (worker_includes: the same walk that refuses devices and FIFOs), and what stands
for the headers outside the tree: the pack's manifest (which pins every file of it), or the
compiler's own file for an installed ROCm. What is kept is what the compiler said (exit status,
output) and the headers the stand-ins found missing; a unit over the time limit is never kept.
Headers outside the tree that are neither the pack's nor the installed ROCm's (a dependency given
with -I or by the build) are in the key by their folder only: after changing one, --no-cache.

One slot per tree and compiler in portkit's data cache (core/datacache.py: JSON with a digest,
this user's files only), rewritten after each run with the units of that run, so it never grows
past the tree. PORTKIT_NO_CACHE=1 or `verify --no-cache` turns it off (the test suite runs with it off).
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from ...core import datacache
from . import compiler as compilers

FORMAT = 1


def enabled(asked: bool = True) -> bool:
    return asked and os.environ.get("PORTKIT_NO_CACHE", "") in ("", "0")


def headers_identity(compiler: compilers.Compiler) -> str:
    """What stands for every header outside the tree: the pack's pinned manifest, else the
    installed compiler's and its driver's file (an upgraded ROCm is another file)."""
    if compiler.pack is not None:
        return hashlib.sha256((compiler.pack.root / "manifest.json").read_bytes()).hexdigest()
    parts = []
    for path in filter(None, (compiler.path, compiler.driver)):
        try:
            st = os.stat(path)
        except OSError:
            continue
        parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


def unit_key(cmd: list[str], files: list[str], identity: str) -> str:
    """The key of one unit's result: its command, the bytes of the project files it reaches, the headers."""
    key = hashlib.sha256(f"verify-unit {FORMAT}\0{identity}\0".encode())
    for arg in cmd:
        key.update(arg.encode("utf-8", "surrogateescape") + b"\0")
    for path in sorted(files):
        try:
            data = Path(path).read_bytes()
        except OSError:
            data = b"\0unreadable"
        key.update(path.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(data).digest())
    return key.hexdigest()


class UnitCache:
    """The kept results of one tree for one compiler, read once and written back once."""

    def __init__(self, root: Path, compiler: compilers.Compiler, asked: bool = True):
        self.on = enabled(asked)
        self.identity = headers_identity(compiler) if self.on else ""
        self.slot = "verify-" + hashlib.sha256(f"{root.resolve()}\0{compiler.path}".encode()).hexdigest()[:20]
        stored = datacache.load_slot(self.slot) if self.on else None
        self.kept: dict = stored if isinstance(stored, dict) and stored.get("format") == FORMAT else {}
        self.used: dict[str, dict] = {}
        self.hits = 0
        self._lock = threading.Lock()    # compilers run in threads (-j)

    def get(self, key: str) -> tuple[compilers.CompileRun, list[str]] | None:
        entry = self.kept.get("units", {}).get(key) if self.on else None
        try:
            run = compilers.CompileRun(tuple(entry["command"]), int(entry["returncode"]), str(entry["output"]), 0.0)
            missing = [str(h) for h in entry["missing"]]
        except (TypeError, KeyError, ValueError):
            return None     # none kept, or a record this code does not read: compile
        with self._lock:
            self.used[key] = entry
            self.hits += 1
        return run, missing

    def put(self, key: str, run: compilers.CompileRun, missing: list[str]) -> None:
        if self.on and not run.timed_out:
            with self._lock:
                self.used[key] = {"command": list(run.command), "returncode": run.returncode, "output": run.output,
                                  "missing": list(missing)}

    def save(self) -> None:
        if self.on:
            datacache.store_slot(self.slot, {"format": FORMAT, "units": self.used})
