"""nvcc options written in CMake, handed word by word to nvcc.py's translation.

Where CMake holds them: CMAKE_CUDA_FLAGS strings (`set`/`string(APPEND)`), compile and link
option commands (including `$<$<COMPILE_LANGUAGE:CUDA>:...>` lists only nvcc reads), custom
build steps that run nvcc themselves, and nvcc options in any other value. CMake lists
(`a;b`) and blank-separated strings are split into `Word`s at their byte offsets, so each
translated option is an edit in place.
"""

from __future__ import annotations

import re

from . import cmake_genex as genex
from .cmake_file import CMakeFile, replace_command
from .cmake_lexer import Arg, Command
from .cmake_names import rewrite_names
from .nvcc import Word, translate
from .words import apply, note, report
from ..engine.codes import Code
from ..core.edits import EditKind

_CUSTOM_KEYWORDS = {"COMMAND", "OUTPUT", "DEPENDS", "WORKING_DIRECTORY", "COMMENT", "VERBATIM", "BYPRODUCTS",
                    "MAIN_DEPENDENCY", "IMPLICIT_DEPENDS", "USES_TERMINAL", "COMMAND_EXPAND_LISTS",
                    "RESULT_VARIABLE", "OUTPUT_VARIABLE", "ERROR_VARIABLE", "SOURCES", "DEPFILE", "ALL",
                    "TIMEOUT", "OUTPUT_QUIET", "ERROR_QUIET"}


def compile_options(f: CMakeFile, cmd: Command) -> None:
    """nvcc words among target_compile_options / add_compile_options / target_link_options.

    Words are read with the generator expression each is in (cmake_genex.py): those only nvcc
    reads are translated as nvcc's, branch by branch, so an IF keeps its commas and a valued
    option its value. A CUDA expression left empty (`$<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>`:
    clang needs no switch) goes with its arguments, and the command goes when nothing else is left."""
    args = [a for a in cmd.args[1 if cmd.lower.startswith("target_") else 0:]
            if a.value not in ("PRIVATE", "PUBLIC", "INTERFACE", "BEFORE")]
    reading = genex.read(args, f.text)
    plans = [(s, translate(s.words, f.table, f.targets)) for s in reading.segments if s.context == "cuda" and s.words]
    emptied = [g for g in reading.genexes if _emptied(g, reading, plans) and _args_of(g, args)]
    for g in emptied:
        for segment, result in plans:
            if segment.words and g.start <= segment.words[0].start < g.end:
                report(f.ctx, segment.words, result)
    covered = [a for g in emptied for a in _args_of(g, args)]
    if emptied and len(covered) == len(args):
        replace_command(f, cmd, [])
        return
    for arg in covered:
        start = arg.start
        while start > 0 and f.text[start - 1] in " \t":
            start -= 1
        f.ctx.edit(start, arg.end, b"", "build", covers=True, kind=EditKind.BUILD)
        f.done.add(arg.start)
    gone = {a.start for a in covered}
    for segment, result in plans:
        if not any(w.start >= a.start and w.end <= a.end for a in covered for w in segment.words[:1]):
            apply(f.ctx, segment.words, result, style="semicolon")
    words = [w for w in reading.segments[0].words if w.text.startswith("-") and
             not any(a.start in gone and a.start <= w.start < a.end for a in args)]
    if words:
        apply(f.ctx, words, translate(words, f.table, f.targets, nvcc_context=False))


def _emptied(g: genex.Genex, reading: genex.Reading, plans: list) -> bool:
    """A CUDA-only expression whose every option goes, written as whole arguments."""
    inside = [s for s in reading.segments if s.context != "none" and s.words and g.start <= s.words[0].start < g.end]
    if g.kind != "cond" or not inside or any(s.context != "cuda" for s in inside):
        return False
    results = {id(s): r for s, r in plans}
    return all(len(results[id(s)].deleted()) == len(s.words) for s in inside)


def _args_of(g: genex.Genex, args: list[Arg]) -> list[Arg]:
    """The arguments an expression is written as, when it is exactly those (else none)."""
    mine = [a for a in args if a.start < g.end and a.end > g.start]
    first = mine[0].start + (1 if mine[0].kind == "quoted" else 0) if mine else -1
    last = mine[-1].end - (1 if mine[-1].kind == "quoted" else 0) if mine else -1
    return mine if first == g.start and last == g.end else []


def flags_in_strings(f: CMakeFile, args: list[Arg], cmd: Command | None = None) -> None:
    """nvcc words inside quoted values ("${CMAKE_CUDA_FLAGS} --use_fast_math").

    When every option goes (`set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} --expt-relaxed-constexpr")`)
    the command would only assign the variable to itself: it is removed, with its notes kept."""
    plans = []
    for arg in args:
        if arg.kind in ("quoted", "unquoted") and arg.value not in ("CACHE", "PARENT_SCOPE", "FORCE"):
            words = _blank_words(arg)
            plans.append((arg, words, translate(words, f.table, f.targets)))
    options = [(k, result) for _, words, result in plans for k, w in enumerate(words) if not w.text.startswith("${")]
    if cmd is not None and options and all(k in result.deleted() for k, result in options):
        for _, words, result in plans:
            report(f.ctx, words, result)
        replace_command(f, cmd, [])
        return
    for arg, words, result in plans:
        apply(f.ctx, words, result)
        rewrite_names(f, None, arg)
        f.done.add(arg.start)


def loose_flags(f: CMakeFile, args: list[Arg]) -> None:
    """Unambiguous nvcc options in any other value (list(APPEND GENCODE "-gencode=arch=...")): a
    variable of nvcc options is translated where it is built. An option's value may be the next
    argument (`list(APPEND NVCC_CMD -ccbin ${CMAKE_CUDA_HOST_COMPILER})`, ggml): the option and
    its value go together, never the option alone (issue 31: a bare compiler path was left)."""
    reading = genex.read(args, f.text)
    for segment in reading.segments[1:]:   # inside generator expressions: only nvcc's branches
        if segment.context == "cuda" and segment.words:
            apply(f.ctx, segment.words, translate(segment.words, f.table, f.targets), style="semicolon")
    inside = {a.start for g in reading.genexes for a in args if a.start < g.end and a.end > g.start}
    for k, arg in enumerate(args):
        if arg.kind not in ("quoted", "unquoted") or not arg.value.startswith("-") or arg.start in inside:
            continue
        words = _blank_words(arg)
        following = args[k + 1] if k + 1 < len(args) else None
        if following is not None and following.kind == "unquoted" and not following.value.startswith("-") \
                and len(words) == 1 and f.table.takes_value(words[0].text):
            words.append(Word(following.value, following.start, following.end))
        result = translate(words, f.table, f.targets, nvcc_context=False)
        if result.changes:
            apply(f.ctx, words, result)
            f.done.add(arg.start)


def custom_command(f: CMakeFile, cmd: Command) -> None:
    """COMMAND ${CMAKE_CUDA_COMPILER} ... in add_custom_command / add_custom_target / execute_process:
    an nvcc command line CMake's HIP language cannot take over; its options are translated and
    the step is reported, because clang needs `-x hip` and has no fatbin/PTX outputs."""
    args = cmd.args
    for k, arg in enumerate(args):
        if arg.value != "COMMAND" or k + 1 >= len(args):
            continue
        tool = args[k + 1]
        if not re.search(r"CMAKE_CUDA_COMPILER\b|CUDAToolkit_NVCC_EXECUTABLE|(?:^|/)nvcc$", tool.value):
            continue
        note(f.ctx, Code.BUILD_STEP_NOT_MIGRATED, tool.start, tool.end, f"a custom build step runs nvcc (`{tool.value}`); rewrite "
             "it for clang (-x hip --offload-arch=...; no fatbin or PTX output)", tool.value)
        end = next((j for j in range(k + 2, len(args)) if args[j].value in _CUSTOM_KEYWORDS), len(args))
        words = [Word(a.value, a.start, a.end) for a in args[k + 2:end] if a.kind in ("quoted", "unquoted")]
        apply(f.ctx, words, translate(words, f.table, f.targets))
        f.done.update(w.start for w in words)


def _blank_words(arg: Arg) -> list[Word]:
    """The blank-separated words of an argument's value, at their places in the file."""
    offset = arg.start + (1 if arg.kind == "quoted" else 0)
    return [Word(m.group(0), offset + m.start(), offset + m.end()) for m in re.finditer(r"\S+", arg.value)]


def list_items(text: str, base: int) -> list[Word]:
    """The items of a CMake list ("a;b"), `text` starting at byte `base`; empty items skipped."""
    items, pos = [], base
    for part in text.split(";"):
        if part:
            items.append(Word(part, pos, pos + len(part)))
        pos += len(part) + 1
    return items
