"""Generator expressions in a command's arguments: which words only nvcc reads, and where they end.

A generator expression may span several arguments (`$<$<COMPILE_LANGUAGE:CUDA>:--default-stream
per-thread>` unquoted is two arguments CMake joins with `;` before it evaluates them) and holds
other expressions. Reading one argument at a time split `--default-stream` from its value, and
reading `-Xcompiler=-Wall,-Wextra` inside `$<IF:...,a,b>` as one word took the comma that
separates IF's branches for -Xcompiler's own (issue 48: both branches merged). So the words are
read here, across the arguments, with the expression each one is in:

- "cuda": in a branch only the CUDA compiler reads (`$<$<COMPILE_LANGUAGE:CUDA>:...>`, IF's true
  branch on that test, through `$<BUILD_INTERFACE:...>` and the like);
- "host": in a branch for other languages (IF's false branch; `$<COMPILE_LANGUAGE:CXX>`);
- "any": outside every expression (the caller decides, as for any argument);
- "none": part of an expression's own syntax or operands (`CUDA`, `Debug`, a target name), or
  glued to a nested expression: never an option to translate.

Words of one `Segment` (one branch of one expression, or the text outside) are translated
together, so a valued option finds its value beside it and nothing crosses an IF's comma.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .cmake_lexer import Arg
from .nvcc import Word

# Expressions whose one operand is content passed through (commas included), in the context
# around them: `$<BUILD_INTERFACE:-Xcompiler=-Wall,-Wextra>`.
_PASS = {"BUILD_INTERFACE", "INSTALL_INTERFACE", "BUILD_LOCAL_INTERFACE", "LINK_ONLY", "DEVICE_LINK",
         "HOST_LINK", "1"}
_LANG_TEST = re.compile(r"\$<(?:COMPILE|LINK)_LANG(?:UAGE|_AND_ID):([A-Za-z_+,]+)>")


@dataclass
class Segment:
    context: str
    words: list[Word] = field(default_factory=list)


@dataclass
class Genex:
    """One `$<...>`: from `start` to `end` (bytes in the file), and its operands' segments."""

    start: int
    around: str                      # the context the expression is in
    top: bool                        # not nested in another expression
    head: str | None = None          # the text before the first ':' (None while it is read)
    kind: str = "other"              # "if", "cond" (a condition's body), "pass", "other"
    param: int = 0
    param_at: int = 0                # where the current operand starts
    cond: str = ""                   # IF's condition
    end: int = -1
    segments: list[Segment] = field(default_factory=list)

    def context(self) -> str:
        """The context of the words of the operand being read."""
        if self.head is None:
            return "none"
        if self.kind == "if":
            if self.param == 0:
                return "none"
            return _branch(self.cond, self.around, self.param == 1) if self.param <= 2 else "none"
        if self.kind == "cond":
            return _branch(self.head, self.around, True)
        return self.around if self.kind == "pass" else "none"


def _branch(cond: str, around: str, taken: bool) -> str:
    """A condition's true or false branch: CUDA only, other languages, or as around it."""
    tests = _LANG_TEST.findall(cond)
    if not tests:
        return around if taken else "none"
    if "NOT:" in cond or "OR:" in cond:
        return "none"
    only_cuda = all(t.split(",") == ["CUDA"] or t.startswith("CUDA,") and ":" not in t for t in tests)
    if taken:
        return "cuda" if only_cuda else "host"
    return "host" if only_cuda else "none"


@dataclass
class Reading:
    """What `read` found: segments of words (in order) and the top-level expressions."""

    segments: list[Segment] = field(default_factory=list)
    genexes: list[Genex] = field(default_factory=list)


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.out = Reading()
        self.top = Segment("any")
        self.out.segments.append(self.top)
        self.stack: list[Genex] = []
        self.word_at: int | None = None
        self.glued = False           # the word being read touches an expression

    def flush(self, end: int, glued: bool = False) -> None:
        if self.word_at is not None:
            g = self.stack[-1] if self.stack else None
            segment = (g.segments[-1] if g.segments else None) if g else self.top
            if segment is not None and not (self.glued or glued):
                segment.words.append(Word(self.text[self.word_at:end], self.word_at, end))
        self.word_at, self.glued = None, False

    def operand(self, g: Genex, at: int) -> None:
        g.param_at = at
        segment = Segment(g.context())
        g.segments.append(segment)
        self.out.segments.append(segment)

    def open(self, at: int) -> None:
        self.flush(at, glued=True)
        around = self.stack[-1].context() if self.stack else "any"
        self.stack.append(Genex(at, around, top=not self.stack, param_at=at + 2))

    def close(self, at: int) -> None:
        g = self.stack[-1]
        if g.head is None:
            _set_head(g, self.text[g.param_at:at])
        self.flush(at)
        self.stack.pop()
        g.end = at + 1
        if g.top:
            self.out.genexes.append(g)
        self.glued = True            # a word right after '>' is part of something larger

    def colon(self, at: int) -> bool:
        g = self.stack[-1] if self.stack else None
        if g is None or g.head is not None:
            return False
        _set_head(g, self.text[g.param_at:at])
        self.word_at, self.glued = None, False     # the head is no word
        self.operand(g, at + 1)
        return True

    def comma(self, at: int) -> bool:
        g = self.stack[-1] if self.stack else None
        if g is None or g.head is None or g.kind not in ("if", "other"):
            return False
        self.flush(at)
        if g.kind == "if" and g.param == 0:
            g.cond = self.text[g.param_at:at]
        g.param += 1
        self.operand(g, at + 1)
        return True


def _set_head(g: Genex, head: str) -> None:
    g.head = head
    if head == "IF":
        g.kind = "if"
    elif head.startswith("$<") or head == "0":
        g.kind = "cond"
    elif head in _PASS:
        g.kind = "pass"


def read(args: list[Arg], text: str) -> Reading:
    """The words of `args` (`text` is the file's) by the expression they are in."""
    r = _Reader(text)
    for arg in args:
        if arg.kind not in ("quoted", "unquoted"):
            continue
        i = arg.start + (1 if arg.kind == "quoted" else 0)
        end = arg.end - (1 if arg.kind == "quoted" else 0)
        while i < end:
            ch = text[i]
            if ch == "\\" and i + 1 < end:
                r.word_at = i if r.word_at is None else r.word_at
                i += 2
                continue
            if text.startswith("$<", i):
                r.open(i)
                i += 2
                continue
            if ch == ">" and r.stack:
                r.close(i)
            elif ch == ":" and r.colon(i):
                pass
            elif ch == "," and r.comma(i):
                pass
            elif ch == ";" or ch in " \t\r\n":
                r.flush(i)
            elif r.word_at is None:
                r.word_at = i
            i += 1
        r.flush(end)    # the end of an argument separates words
    return r.out
