"""The libclang side of deep mode, run in its own process: one translation unit in, facts out.

`python -m portkit.deep.worker` reads one JSON request on stdin (the file, its flags, the
toolchain) and writes one JSON answer on stdout. libclang is C++ behind ctypes: on some inputs
it aborts or crashes the whole process, so the parent (engine.py) runs this with a time limit
and falls back to tree-sitter for the file when it dies. Nothing here imports the rest of
portkit: a crash here costs one file, never the run.

The unit is parsed as nvcc compiles it: once for the host and once for the device
(`__CUDA_ARCH__` set), because `#if __CUDA_ARCH__ >= 800` code is live only on one side; the
device pass is skipped when no project file the unit reads mentions `__CUDA_ARCH__`, since it
would then see the same code. Facts
are positions in the project's own files (under the root), never in CUDA's or the system's
headers:

- macro: a CUDA declaration referenced from a project macro's body, or a kernel launch made by
  it, at the place the macro is used (the tree-sitter pass sees only the definition);
- launch: every kernel launch, whether it sits in device code (dynamic parallelism);
- device: function definitions that are device code because of a macro (`HD void f()`);
- ballot32 / mask32: a ballot result stored in 32 bits, a 32-bit variable used as a lane mask;
- warpsize: `warpSize` where a constant expression is needed;
- inactive: the lines of `#if` branches this configuration does not compile.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sys

BALLOTS = {"__ballot_sync", "__ballot", "__activemask"}
NARROW_BIT_OPS = {"__popc", "__ffs", "__clz", "__brev"}   # tree-sitter's PK204 reports these itself
MASKED = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
          "__any_sync", "__all_sync", "__uni_sync", "__match_any_sync", "__match_all_sync",
          "__syncwarp", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
          "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync", "__activemask"}
CONSTANT_CONTEXTS = ("STATIC_ASSERT", "CASE_STMT", "ENUM_CONSTANT_DECL")
SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim")


def main() -> int:
    request = json.loads(sys.stdin.read())
    sys.setrecursionlimit(20000)   # the walk recurses per AST level; deep expressions nest far
    from clang import cindex   # imported here so that a missing package is the parent's error
    if request.get("libclang"):
        cindex.Config.set_library_file(request["libclang"])
    cindex.Config.set_compatibility_check(False)
    answer = Unit(cindex, request).run()
    sys.stdout.write(json.dumps(answer))
    return 0


class Unit:
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

    def text(self, rel: str) -> bytes:
        if rel not in self._text:
            try:
                with open(os.path.join(self.root, rel), "rb") as fh:
                    self._text[rel] = fh.read()
            except OSError:
                self._text[rel] = b""
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
        for side in ("host", "device"):
            if side == "device" and not any(b"__CUDA_ARCH" in self.text(rel) for rel in self.seen_files):
                break   # only __CUDA_ARCH__ tells the passes apart: without it the device pass sees the same
            tu = index.parse(self.request["file"], args=self.args(side), options=options)
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
                "inactive": inactive, "errors": self.errors[:20], "files": sorted(self.seen_files)}

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

    def via_macro(self, cursor, name: str = "") -> tuple[str | None, str, int, int, int] | None:
        """(macro name used here, spelling rel/line/col/offset) when the cursor comes from a
        project macro's body; None when it is written where it stands (or is a macro argument)."""
        loc = cursor.location
        rel = self.file_rel(loc)
        if rel is None:
            return None
        spell_rel, line, col, off = self.spelling(loc)
        if spell_rel == rel and off == loc.offset:
            # libclang before 19 answers the expansion point for a macro body's tokens as well:
            # find the name in the body of the macro used here (or of a macro it uses)
            return self.body_by_text(rel, loc.offset, name or cursor.spelling)
        if spell_rel is None or not self.in_macro_body(spell_rel, off):
            return None
        return self.macro_uses.get((rel, loc.offset)), spell_rel, line, col, off

    def body_by_text(self, rel: str, offset: int, name: str):
        macro = self.macro_uses.get((rel, offset))
        if macro is None or not name:
            return None
        pattern = re.compile(rb"(?<![\w$])" + re.escape(name.encode()) + rb"(?![\w$])")
        use = self.text(rel)[offset:self.macro_ends.get((rel, offset), offset)]
        if pattern.search(use[len(macro):]):
            return None   # written in the arguments: tree-sitter sees it where it stands
        todo, seen = [macro], set()
        while todo:
            current = todo.pop(0)
            if current in seen or current not in self.macro_by_name or len(seen) > 8:
                continue
            seen.add(current)
            def_rel, start, end = self.macro_by_name[current]
            body = self.text(def_rel)[start:end]
            head = re.match(rb"[\w$]+(\([^)]*\))?", body)
            skip = head.end() if head else 0
            found = pattern.search(body, skip)
            if found:
                at = start + found.start()
                text = self.text(def_rel)
                line = text.count(b"\n", 0, at) + 1
                return macro, def_rel, line, at - (text.rfind(b"\n", 0, at) + 1) + 1, at
            todo += [m.decode() for m in re.findall(rb"[A-Za-z_]\w*", body[skip:]) if m.decode() in self.macro_by_name]
        return None

    def in_macro_body(self, rel: str, offset: int) -> bool:
        return any(start <= offset <= end for start, end, _ in self.macro_defs.get(rel, ()))

    def defining_macro(self, rel: str, offset: int) -> str:
        for start, end, name in self.macro_defs.get(rel, ()):
            if start <= offset <= end:
                return name
        return ""

    def in_device(self, stack: list) -> bool:
        for node in reversed(stack):
            if node.kind.name in ("FUNCTION_DECL", "CXX_METHOD", "FUNCTION_TEMPLATE", "LAMBDA_EXPR"):
                attrs = {c.kind.name for c in node.get_children() if c.kind.name.startswith("CUDA")}
                if attrs & {"CUDADEVICE_ATTR", "CUDAGLOBAL_ATTR"}:
                    return True
                if node.kind.name != "LAMBDA_EXPR":
                    return False
        return False

    def position(self, cursor) -> tuple[str | None, int, int]:
        loc = cursor.location
        return self.file_rel(loc), loc.line, loc.column

    # -- handlers, by cursor kind --------------------------------------------------------------

    def on_FUNCTION_DECL(self, cursor, stack) -> None:
        if not cursor.is_definition():
            return
        attrs = {c.kind.name for c in cursor.get_children() if c.kind.name.startswith("CUDA")}
        if not attrs & {"CUDADEVICE_ATTR", "CUDAGLOBAL_ATTR"}:
            return
        rel, line, col = self.position(cursor)
        if rel is None:
            return
        start = cursor.extent.start.offset
        head = self.text(rel)[start:cursor.location.offset]
        if b"__device__" in head or b"__global__" in head:
            return   # written out: tree-sitter sees it already
        kind = "global" if "CUDAGLOBAL_ATTR" in attrs else \
            "host_device" if "CUDAHOST_ATTR" in attrs else "device"
        self.add("device", rel, line, col, name=cursor.spelling, function=kind,
                 end_line=cursor.extent.end.line)

    on_CXX_METHOD = on_FUNCTION_DECL
    on_FUNCTION_TEMPLATE = on_FUNCTION_DECL

    def on_DECL_REF_EXPR(self, cursor, stack) -> None:
        name = cursor.spelling
        if name == "warpSize":
            self.warp_size(cursor, stack)
        self.macro_ref(cursor, name)

    def on_TYPE_REF(self, cursor, stack) -> None:
        name = cursor.spelling.split()[-1] if cursor.spelling else ""
        self.macro_ref(cursor, name)

    def macro_ref(self, cursor, name: str) -> None:
        """A CUDA declaration named from a project macro's body: reported where the macro is used."""
        target = cursor.referenced
        if target is None or not name:
            return
        if not self.file_of(target.location)[1] and not _cuda_named(name):
            return
        via = self.via_macro(cursor, name)
        if via is None:
            return
        macro, spell_rel, line, col, off = via
        rel, use_line, use_col = self.position(cursor)
        self.add("macro", rel, use_line, use_col, name=name, macro=macro or self.defining_macro(spell_rel, off),
                 defined_in=spell_rel, def_line=line, def_column=col)

    def on_CALL_EXPR(self, cursor, stack) -> None:
        name = cursor.spelling
        if self._is_launch(cursor):
            rel, line, col = self.position(cursor)
            if rel is None:
                return
            name = name or self._callee_name(cursor)
            via = self.via_macro(cursor, name)
            macro = ""
            if via is not None:
                macro = via[0] or self.defining_macro(via[1], via[4])
            elif self.macro_uses.get((rel, cursor.location.offset)):
                macro = self.macro_uses[(rel, cursor.location.offset)]   # `LAUNCH(k, n)`: k is an argument
            self.add("launch", rel, line, col, name=name, macro=macro, device=self.in_device(stack))
            return
        if name in BALLOTS:
            self.ballot(cursor, stack, name)
        if name in MASKED and name != "__activemask":
            self.mask(cursor, name)

    @staticmethod
    def _is_launch(cursor) -> bool:
        """A kernel call: clang keeps the `<<<...>>>` configuration as a call among its children
        (also in templates, where the kernel itself is still unresolved)."""
        return any(c.kind.name == "CALL_EXPR" and c.spelling in ("__cudaPushCallConfiguration", "cudaConfigureCall")
                   for c in cursor.get_children())

    @staticmethod
    def _callee_name(cursor) -> str:
        for child in cursor.walk_preorder():
            if child.kind.name in ("OVERLOADED_DECL_REF", "DECL_REF_EXPR", "MEMBER_REF_EXPR") and child.spelling:
                return child.spelling
        return "(kernel)"

    def ballot(self, cursor, stack, name: str) -> None:
        """Where the ballot's value goes: a 32-bit variable, return value or parameter."""
        child = cursor
        for parent in reversed(stack):
            pk = parent.kind.name
            if pk in ("UNEXPOSED_EXPR", "PAREN_EXPR"):
                child = parent
                continue
            if pk == "CSTYLE_CAST_EXPR":
                if _bits(parent.type) == 32:
                    self._ballot_fact(cursor, name, "a cast", parent.type.spelling)
            elif pk == "VAR_DECL":
                # `auto` deduces CUDA's 32 bits here but HIP's 64 there: it follows the mask
                if _bits(parent.type) == 32 and parent.type.kind.name not in ("AUTO", "DECLTYPE") \
                        and not self._spelled_auto(parent):
                    self._ballot_fact(cursor, name, parent.spelling, parent.type.spelling)
            elif pk in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR"):
                children = list(parent.get_children())
                if len(children) == 2 and children[1] == child and _bits(children[0].type) == 32 \
                        and _assigns(self, parent, children[0]):
                    self._ballot_fact(cursor, name, children[0].spelling or "", children[0].type.spelling)
            elif pk == "RETURN_STMT":
                function = next((s for s in reversed(stack) if s.kind.name in ("FUNCTION_DECL", "CXX_METHOD",
                                                                                 "FUNCTION_TEMPLATE")), None)
                if function is not None and _bits(function.result_type) == 32:
                    self._ballot_fact(cursor, name, f"return of {function.spelling}",
                                      function.result_type.spelling)
            elif pk == "CALL_EXPR" and parent.spelling not in NARROW_BIT_OPS and parent.referenced is not None:
                args = list(parent.get_arguments())
                index = next((i for i, a in enumerate(args) if a == child), None)
                params = list(parent.referenced.get_arguments()) if index is not None else []
                if index is not None and index < len(params) and _bits(params[index].type) == 32:
                    self._ballot_fact(cursor, name, f"argument {index + 1} of {parent.spelling}",
                                      params[index].type.spelling)
            return

    def _spelled_auto(self, declaration) -> bool:
        rel = self.file_rel(declaration.location)
        head = self.text(rel)[declaration.extent.start.offset:declaration.location.offset] if rel else b""
        return bool(re.search(rb"\b(auto|decltype)\b", head))

    def _ballot_fact(self, cursor, name: str, target: str, type_name: str) -> None:
        rel, line, col = self.position(cursor)
        if rel is None:
            return
        via = self.via_macro(cursor)
        macro = (via[0] or self.defining_macro(via[1], via[4])) if via else ""
        self.add("ballot32", rel, line, col, name=name, target=target, type=type_name, macro=macro)

    def mask(self, cursor, name: str) -> None:
        """The lane mask argument: a 32-bit variable (not a literal: PK203 reads those)."""
        args = list(cursor.get_arguments())
        if not args:
            return
        arg = args[0]
        while arg.kind.name in ("UNEXPOSED_EXPR", "PAREN_EXPR"):
            inner = list(arg.get_children())
            if len(inner) != 1:
                break
            arg = inner[0]
        if arg.kind.name not in ("DECL_REF_EXPR", "MEMBER_REF_EXPR"):
            return
        if _bits(arg.type) != 32 or arg.referenced is None:
            return
        if arg.referenced.kind.name not in ("VAR_DECL", "PARM_DECL", "FIELD_DECL"):
            return
        rel, line, col = self.position(arg)
        if rel is None:
            return
        self.add("mask32", rel, line, col, name=name, variable=arg.spelling, type=arg.type.spelling)

    def warp_size(self, cursor, stack) -> None:
        """warpSize where C++ needs a constant: ROCm 7 made it a run-time value."""
        context = ""
        for parent in reversed(stack):
            pk = parent.kind.name
            if pk in CONSTANT_CONTEXTS:
                context = {"STATIC_ASSERT": "static_assert", "CASE_STMT": "case label",
                           "ENUM_CONSTANT_DECL": "enumerator"}[pk]
                break
            # a name's only expression children are its template arguments (`f<warpSize>()`)
            templated = pk == "DECL_REF_EXPR" or (pk in ("VAR_DECL", "FIELD_DECL", "TYPE_REF") and any(
                c.kind.name in ("TEMPLATE_REF", "OVERLOADED_DECL_REF") for c in parent.get_children()))
            if templated and (pk not in ("VAR_DECL", "FIELD_DECL") or cursor.location.offset < parent.location.offset):
                context = "template argument"   # `Lanes<warpSize>::count`, `Tile<warpSize> t`, `f<warpSize>()`
                break
            if pk in ("VAR_DECL", "FIELD_DECL"):
                rel = self.file_rel(parent.location)
                if parent.type.kind.name in ("CONSTANTARRAY", "DEPENDENTSIZEDARRAY") and rel is not None:
                    between = self.text(rel)[parent.location.offset:cursor.location.offset]
                    if b"=" not in between:
                        context = "array size"
                        break
                if rel is not None and b"constexpr" in self.text(rel)[parent.extent.start.offset:parent.location.offset]:
                    context = "constexpr variable"
                break
            if pk in ("TEMPLATE_REF", "TYPE_REF", "TEMPLATE_NON_TYPE_PARAMETER"):
                context = "template argument"
                break
            if pk in ("COMPOUND_STMT", "FUNCTION_DECL", "CALL_EXPR", "RETURN_STMT", "IF_STMT"):
                break
        if not context:
            return
        rel, line, col = self.position(cursor)
        if rel is not None:
            self.add("warpsize", rel, line, col, context=context)


class _RangeList(ctypes.Structure):
    pass


def _cuda_named(name: str) -> bool:
    return name.startswith(("cuda", "cu", "CU", "__shfl", "__ballot", "__syncwarp", "__activemask"))


def _bits(clang_type) -> int:
    """Width in bits of an integer type (typedefs resolved); 0 for anything else."""
    canonical = clang_type.get_canonical()
    if canonical.kind.name not in ("UINT", "INT", "ULONG", "LONG", "ULONGLONG", "LONGLONG", "USHORT", "SHORT"):
        return 0
    size = canonical.get_size()
    return size * 8 if size > 0 else 0


def _assigns(unit: Unit, operator, lhs) -> bool:
    """The operator between `lhs` and the right side is `=` (or `|=`...), not `==`."""
    rel = unit.file_rel(operator.location)
    if rel is None:
        return False
    between = unit.text(rel)[lhs.extent.end.offset:operator.extent.end.offset].lstrip()
    return between[:1] in (b"=", b"|", b"&", b"^") and not between.startswith(b"==")


def line_runs(lines: set[int]) -> list[list[int]]:
    """Sorted lines as [first, last] runs (the worker's answer and engine.py's merge share it)."""
    out: list[list[int]] = []
    for line in sorted(lines):
        if out and out[-1][1] == line - 1:
            out[-1][1] = line
        else:
            out.append([line, line])
    return out


def _setup_range_list(cindex) -> None:
    _RangeList._fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.POINTER(cindex.SourceRange))]


if __name__ == "__main__":
    from clang import cindex as _ci
    _setup_range_list(_ci)
    sys.exit(main())
