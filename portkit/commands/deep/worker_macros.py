"""Which project macro a cursor comes from, and the `macro` facts that follow from it.

The tree-sitter pass sees a macro's definition only; here a CUDA declaration named in a
project macro's body is reported where the macro is used. libclang 19 and later spell a macro
body's tokens inside the body; older libclang answers the expansion point, so the name is then
looked up in the text of the body (and of the macros it uses). Imports nothing else of portkit.
"""

from __future__ import annotations

import re

from .worker_unit import ClangUnit


class MacroUnit(ClangUnit):
    """ClangUnit plus the macro lookups the fact handlers share, and the `macro` fact."""

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


def _cuda_named(name: str) -> bool:
    return name.startswith(("cuda", "cu", "CU", "__shfl", "__ballot", "__syncwarp", "__activemask"))
