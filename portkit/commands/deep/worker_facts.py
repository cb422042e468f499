"""The facts deep mode reads from libclang's tree, one handler per cursor kind.

`on_<CURSOR_KIND>` methods, called by ClangUnit's walk with the stack of enclosing cursors:
device functions made so by a macro, kernel launches (with the macro that makes them and
whether they run in device code), ballot results stored in 32 bits, 32-bit lane masks, and
`warpSize` where C++ needs a constant. worker.py's docstring lists the facts; refine.py turns
them into findings. Imports nothing else of portkit.
"""

from __future__ import annotations

import re

from .worker_macros import MacroUnit

BALLOTS = {"__ballot_sync", "__ballot", "__activemask"}
NARROW_BIT_OPS = {"__popc", "__ffs", "__clz", "__brev"}   # tree-sitter's PK204 reports these itself
MASKED = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
          "__any_sync", "__all_sync", "__uni_sync", "__match_any_sync", "__match_all_sync",
          "__syncwarp", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
          "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync", "__activemask"}
CONSTANT_CONTEXTS = ("STATIC_ASSERT", "CASE_STMT", "ENUM_CONSTANT_DECL")


class Unit(MacroUnit):
    """The unit the worker runs: MacroUnit plus the handlers, by cursor kind."""

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

    def in_device(self, stack: list) -> bool:
        for node in reversed(stack):
            if node.kind.name in ("FUNCTION_DECL", "CXX_METHOD", "FUNCTION_TEMPLATE", "LAMBDA_EXPR"):
                attrs = {c.kind.name for c in node.get_children() if c.kind.name.startswith("CUDA")}
                if attrs & {"CUDADEVICE_ATTR", "CUDAGLOBAL_ATTR"}:
                    return True
                if node.kind.name != "LAMBDA_EXPR":
                    return False
        return False

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
