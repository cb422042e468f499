"""nvcc options written in CMake, handed word by word to nvcc.py's translation.

Where CMake holds them: CMAKE_CUDA_FLAGS strings (`set`/`string(APPEND)`), compile and link
option commands (including `$<$<COMPILE_LANGUAGE:CUDA>:...>` lists only nvcc reads), custom
build steps that run nvcc themselves, and nvcc options in any other value. CMake lists
(`a;b`) and blank-separated strings are split into `Word`s at their byte offsets, so each
translated option is an edit in place.
"""

from __future__ import annotations

import re

from .cmake_file import CMakeFile, replace_command
from .cmake_lexer import Arg, Command
from .cmake_names import rewrite_names
from .nvcc import Translation, Word, translate
from .words import apply, note, report
from ..engine.codes import Code
from ..core.edits import EditKind

_CUDA_GENEX_BODY = re.compile(r"\$<\$<(?:COMPILE_LANGUAGE|COMPILE_LANG_AND_ID):CUDA(?:,NVIDIA)?>:")
_CUSTOM_KEYWORDS = {"COMMAND", "OUTPUT", "DEPENDS", "WORKING_DIRECTORY", "COMMENT", "VERBATIM", "BYPRODUCTS",
                    "MAIN_DEPENDENCY", "IMPLICIT_DEPENDS", "USES_TERMINAL", "COMMAND_EXPAND_LISTS",
                    "RESULT_VARIABLE", "OUTPUT_VARIABLE", "ERROR_VARIABLE", "SOURCES", "DEPFILE", "ALL",
                    "TIMEOUT", "OUTPUT_QUIET", "ERROR_QUIET"}


def compile_options(f: CMakeFile, cmd: Command) -> None:
    """nvcc words among target_compile_options / add_compile_options / target_link_options.

    A CUDA generator expression left empty (`$<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>`: clang
    needs no switch) goes with its argument, and the command goes when nothing else is left."""
    words: list[Word] = []
    emptied: list[tuple[Arg, list[Word], Translation]] = []
    options = [a for a in cmd.args[1 if cmd.lower.startswith("target_") else 0:]
               if a.value not in ("PRIVATE", "PUBLIC", "INTERFACE", "BEFORE")]
    for arg in cmd.args:
        m = _CUDA_GENEX_BODY.match(arg.value)
        if m:   # $<$<COMPILE_LANGUAGE:CUDA>:a;b>: only nvcc reads these
            base = arg.start + (1 if arg.kind == "quoted" else 0) + m.end()
            body = arg.value[m.end():-1] if arg.value.endswith(">") else arg.value[m.end():]
            inner = list_items(body, base)
            result = translate(inner, f.table, f.targets)
            if inner and len(result.deleted()) == len(inner):
                emptied.append((arg, inner, result))
                f.done.add(arg.start)
                continue
            apply(f.ctx, inner, result, style="semicolon")
            rewrite_names(f, cmd, Arg(arg.text[:m.end() + (1 if arg.kind == "quoted" else 0)], arg.start,
                                       base, "unquoted"))
            f.done.add(arg.start)
        elif arg.kind in ("unquoted", "quoted") and arg.value.startswith("-"):
            words.append(Word(arg.value, arg.start, arg.end))
    for arg, inner, result in emptied:
        report(f.ctx, inner, result)
    if emptied and len(emptied) == len(options):
        replace_command(f, cmd, [])
        return
    for arg, _, _ in emptied:
        start = arg.start
        while start > 0 and f.text[start - 1] in " \t":
            start -= 1
        f.ctx.edit(start, arg.end, b"", "build", covers=True, kind=EditKind.BUILD)
    if words:
        apply(f.ctx, words, translate(words, f.table, f.targets, nvcc_context=False))


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
    for k, arg in enumerate(args):
        if arg.kind not in ("quoted", "unquoted") or not arg.value.startswith("-"):
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
