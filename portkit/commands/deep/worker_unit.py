"""One translation unit inside libclang, for the worker: its two passes, paths and the walk.

`ClangUnit` parses the unit for the host and then the device, keeps the positions that are in
the project's own files (under the root, outside the CUDA toolkit), records the lines of
inactive `#if` branches, and walks every declaration, calling the `on_<CURSOR_KIND>` method
its subclasses define (worker_macros.py, worker_facts.py) for each cursor of that kind. Facts
are collected in `add` and deduplicated across the two passes; `run` returns the answer
worker.py writes as JSON. Like worker.py, this imports nothing else of portkit.
"""

from __future__ import annotations

import ctypes
import os

from .worker_includes import read_regular, scan

SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim")


class ClangUnit:
    """libclang's side of one unit: positions, file texts, the passes and the walk."""

    def __init__(self, cindex, request: dict):
        self.ci = cindex
        self.kinds = cindex.CursorKind
        self.request = request
        self.root = os.path.join(os.path.realpath(request["root"]), "")
        self.cuda = os.path.join(os.path.realpath(request["cuda_path"]), "")
        self._inside: dict[str, str | None] = {}
        self._text: dict[str, bytes] = {}
        self._by_handle: dict[int, tuple[str | None, bool]] = {}
        self.facts: dict[str, dict] = {}      # "kind|rel|line|col|..." -> fact (dedupe across passes)
        self.macro_defs: dict[str, list[tuple[int, int, str]]] = {}   # rel -> (start, end offset, name)
        self.macro_uses: dict[tuple[str, int], str] = {}              # (rel, offset) -> macro name
        self.macro_ends: dict[tuple[str, int], int] = {}              # (rel, offset) -> end of the use
        self.macro_by_name: dict[str, tuple[str, int, int]] = {}      # name -> (rel, start, end)
        self.inactive: dict[str, set[int]] | None = None             # rel -> lines, intersected over passes
        self.errors: list[str] = []
        self.seen_files: set[str] = set()
        self.pass_files: set[str] = set()

    # -- paths and positions ---------------------------------------------------------------

    def rel(self, name: str | None) -> str | None:
        """The file's path relative to the root, or None outside the project (system, CUDA)."""
        if not name:
            return None
        if name not in self._inside:
            real = os.path.realpath(name)
            inside = real.startswith(self.root) and not real.startswith(self.cuda)
            self._inside[name] = real[len(self.root):].replace(os.sep, "/") if inside else None
        return self._inside[name]

    def file_rel(self, location) -> str | None:
        """rel of the file a location is in (expansion point); None outside the project."""
        return self.file_of(location)[0]

    def file_of(self, location) -> tuple[str | None, bool]:
        """(rel or None, inside the CUDA toolkit) of a location's file, cached by libclang's file
        handle: a unit has tens of thousands of declarations, nearly all in a few headers."""
        f = self.ci.c_object_p()
        self.ci.conf.lib.clang_getInstantiationLocation(location, ctypes.byref(f), None, None, None)
        if not f:
            return None, False
        key = ctypes.cast(f, ctypes.c_void_p).value
        if key not in self._by_handle:
            name = self.ci.conf.lib.clang_getFileName(self.ci.File(f))
            self._by_handle[key] = (self.rel(name), os.path.realpath(name).startswith(self.cuda))
        return self._by_handle[key]

    def spelling(self, location) -> tuple[str | None, int, int, int]:
        """(rel, line, column, offset) where the token is written (inside a macro body for
        tokens a macro produced); the ordinary location is where the macro is used."""
        f, line, col, off = self.ci.c_object_p(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
        self.ci.conf.lib.clang_getSpellingLocation(location, ctypes.byref(f), ctypes.byref(line),
                                                   ctypes.byref(col), ctypes.byref(off))
        name = self.ci.conf.lib.clang_getFileName(self.ci.File(f)) if f else None
        return self.rel(name), line.value, col.value, off.value

    def position(self, cursor) -> tuple[str | None, int, int]:
        loc = cursor.location
        return self.file_rel(loc), loc.line, loc.column

    def text(self, rel: str) -> bytes:
        """A project file's bytes; b"" for one that is not a regular file (clang saw its empty
        stand-in: a FIFO's open would block here as it did in clang)."""
        if rel not in self._text:
            self._text[rel] = read_regular(os.path.join(self.root, rel))
        return self._text[rel]

    def add(self, kind: str, rel: str, line: int, column: int, **extra) -> None:
        key = "|".join([kind, rel, str(line), str(column)] + [f"{k}={extra[k]}" for k in sorted(extra)])
        if key not in self.facts:
            self.facts[key] = {"kind": kind, "path": rel, "line": line, "column": column, **extra}

    # -- the two passes ----------------------------------------------------------------------

    def args(self, side: str) -> list[str]:
        req = self.request
        args = ["-x", "cuda", f"--cuda-path={req['cuda_path']}", "-nocudalib", "-resource-dir",
                req["resource_dir"], "-idirafter", SHIM, "-Wno-unknown-cuda-version", "-ferror-limit=0",
                f"-std={req.get('std') or 'c++17'}"]
        cccl = os.path.join(req["cuda_path"], "include", "cccl")
        if os.path.isdir(cccl):   # CUDA 13 keeps libcu++/Thrust/CUB here; nvcc adds it, clang does not know to
            args += ["-isystem", cccl]
        if side == "host":
            args.append("--cuda-host-only")
        else:
            args += ["--cuda-device-only", f"--cuda-gpu-arch={req.get('arch') or 'sm_75'}"]
        return args + list(req.get("flags", ()))

    def run(self) -> dict:
        index = self.ci.Index.create()
        options = self.ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
        # devices, FIFOs and /proc files the directives name are read as empty (worker_includes.py)
        blocked = scan(self.request["file"], self.args("host"), self.request["root"])
        unsaved = [(name, "") for name in blocked.stand_ins]
        for side in ("host", "device"):
            if side == "device" and not any(b"__CUDA_ARCH" in self.text(rel) for rel in self.seen_files):
                break   # only __CUDA_ARCH__ tells the passes apart: without it the device pass sees the same
            tu = index.parse(self.request["file"], args=self.args(side), unsaved_files=unsaved, options=options)
            for diag in tu.diagnostics if side == "host" else ():   # the device pass repeats them
                name = diag.location.file.name if diag.location.file else None
                rel = self.rel(name)
                # errors in the project's files, and fatal ones anywhere (they end the parse early)
                if diag.severity >= 4 or (diag.severity >= 3 and rel):
                    message = f"{rel or name}:{diag.location.line}: {diag.spelling}"
                    if message not in self.errors:
                        self.errors.append(message)
            self.walk_top(tu.cursor)
            self.skipped(tu)
        inactive = {rel: line_runs(lines) for rel, lines in (self.inactive or {}).items() if lines}
        return {"facts": sorted(self.facts.values(), key=lambda f: (f["path"], f["line"], f["column"], f["kind"])),
                "inactive": inactive, "errors": self.errors[:20], "files": sorted(self.seen_files),
                "blocked": blocked.notes}

    def skipped(self, tu) -> None:
        """The lines of inactive #if branches, per project file seen in this pass."""
        lib = self.ci.conf.lib
        lib.clang_getAllSkippedRanges.restype = ctypes.POINTER(_RangeList)
        lib.clang_getAllSkippedRanges.argtypes = [ctypes.c_void_p]
        lib.clang_disposeSourceRangeList.argtypes = [ctypes.POINTER(_RangeList)]
        ranges = lib.clang_getAllSkippedRanges(tu.obj)
        this_pass: dict[str, set[int]] = {rel: set() for rel in self.pass_files}
        try:
            for i in range(ranges.contents.count):
                r = ranges.contents.ranges[i]
                start, end = r.start, r.end
                rel = self.rel(start.file.name if start.file else None)
                if rel is None:
                    continue
                # the #if/#else lines themselves are live; the lines strictly between are not
                this_pass.setdefault(rel, set()).update(range(start.line + 1, end.line))
        finally:
            lib.clang_disposeSourceRangeList(ranges)
        if self.inactive is None:
            self.inactive = this_pass
            return
        for rel, lines in this_pass.items():
            if rel in self.inactive:
                self.inactive[rel] &= lines     # live in either pass means live
            else:
                self.inactive[rel] = lines

    # -- the walk ----------------------------------------------------------------------------

    def walk_top(self, tu_cursor) -> None:
        """Macros first (the walk asks which macro a position belongs to), then declarations."""
        self.pass_files = set()
        declarations = []
        for cursor in tu_cursor.get_children():
            loc = cursor.location
            rel = self.file_rel(loc)
            if rel is None:
                continue
            self.pass_files.add(rel)
            self.seen_files.add(rel)
            kind = cursor.kind
            if kind == self.kinds.MACRO_DEFINITION:
                self.macro_defs.setdefault(rel, []).append(
                    (cursor.extent.start.offset, cursor.extent.end.offset, cursor.spelling))
                self.macro_by_name[cursor.spelling] = (rel, cursor.extent.start.offset, cursor.extent.end.offset)
            elif kind == self.kinds.MACRO_INSTANTIATION:
                self.macro_uses.setdefault((rel, loc.offset), cursor.spelling)
                self.macro_ends.setdefault((rel, loc.offset), cursor.extent.end.offset)
            elif kind != self.kinds.INCLUSION_DIRECTIVE:
                declarations.append(cursor)
        for cursor in declarations:
            self.walk(cursor, [])

    def walk(self, cursor, stack: list) -> None:
        kind = cursor.kind.name
        handler = getattr(self, "on_" + kind, None)
        if handler is not None:
            handler(cursor, stack)
        stack.append(cursor)
        for child in cursor.get_children():
            self.walk(child, stack)
        stack.pop()


class _RangeList(ctypes.Structure):
    pass


def line_runs(lines: set[int]) -> list[list[int]]:
    """Sorted lines as [first, last] runs (the worker's answer and engine.py's merge share it)."""
    out: list[list[int]] = []
    for line in sorted(lines):
        if out and out[-1][1] == line - 1:
            out[-1][1] = line
        else:
            out.append([line, line])
    return out


def setup_range_list(cindex) -> None:
    _RangeList._fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.POINTER(cindex.SourceRange))]
