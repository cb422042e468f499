"""Makefiles: nvcc to hipcc, its flags to clang's, CUDA libraries to ROCm's.

Make is read as logical lines (backslash continuations joined, positions kept) split into
words; `$(...)` references and quoted strings stay whole. A line reaches nvcc when it runs nvcc
(by name or through a variable that holds it) or assigns a variable such a line uses (NVCCFLAGS,
GENCODE_FLAGS ...): there, every option is translated and unknown ones are reported. Elsewhere
only what is unambiguously CUDA changes (-lcudart, -arch=sm_XX). Variable names are kept: a
user's `make NVCCFLAGS=...` still works.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..engine.context import ScanContext
from .nvcc import Change, Translation, Word, translate
from .table import BuildTable
from .words import apply, note
from ..engine.codes import Code
from ..core.edits import EditKind

_NVCC = re.compile(r'^["\']?(?:(?!-)\S*/)?nvcc(?:\.exe)?["\']?$')
_HIPCC = re.compile(r'^["\']?(?:(?!-)\S*/)?hipcc["\']?$')
_ASSIGN = re.compile(r"^\s*(?:(?:export|override)\s+)*([A-Za-z_][A-Za-z0-9_.-]*)\s*(?:\+|\?|:|::|!)?=")
_REF = re.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]")
_FLAG_VAR_HINT = re.compile(r"NVCC|GENCODE|CUDA\w*FLAGS|CUFLAGS|\bSMS\b")
_TOOLKIT = re.compile(r"/usr/local/cuda|\$[({](?:CUDA_PATH|CUDA_HOME|CUDA_ROOT|CUDA_DIR|CUDA_TOOLKIT\w*|"
                      r"CUDA_INSTALL_PATH|CUDA_LIB\w*|CUDA_INC\w*)[)}]")
ROCM_LIB = "/opt/rocm/lib"
# A make function call that produces GPU architecture options ($(foreach sm,$(SMS),-gencode ...)).
_COMPUTED_ARCH = re.compile(r"^\$\((?:foreach|patsubst|addprefix|subst)\s.*(?:-gencode|--generate-code|-arch[= ]|"
                            r"--gpu-architecture)", re.S)


@dataclass
class _Line:
    start: int
    text: str            # the logical line with continuations kept (latin-1, same length as the bytes)
    recipe: bool
    words: list[Word]
    var: str | None      # the variable assigned, if any
    value_from: int      # index of the first word of the value (assignments)


def migrate(ctx: ScanContext, table: BuildTable) -> None:
    text = ctx.source.data.decode("latin-1")
    lines = list(_logical_lines(text))
    compilers, flag_vars = _nvcc_variables(lines)
    # A variable that holds the compiler is one after conversion too (NVCC ?= hipcc): a later
    # assignment to it is then treated the same on the second run as on the first.
    holders = compilers | {line.var for line in lines if line.var is not None
                           and any(_HIPCC.match(w.text) for w in line.words[line.value_from:])}
    flag_vars -= holders
    for line in lines:
        words = line.words[line.value_from:]
        if not words:
            continue
        invokes = _invokes_nvcc(words, compilers)
        context = invokes or (line.var is not None and (line.var in flag_vars or line.var in compilers))
        for w in words:
            if _NVCC.match(w.text):
                ctx.edit(w.start, w.end, b"hipcc", "build", kind=EditKind.BUILD)
        _toolkit_paths(ctx, words)
        computed = [w for w in words if _COMPUTED_ARCH.match(w.text)]
        for w in computed:
            _computed_architectures(ctx, w)
        options = [w for w in words if not _NVCC.match(w.text) and not _TOOLKIT.search(w.text) and w not in computed]
        if line.var is not None and line.var in holders and not invokes:
            continue
        apply(ctx, options, translate(options, table, ctx.options.offload_arch, nvcc_context=context))


def _computed_architectures(ctx: ScanContext, word: Word) -> None:
    """$(foreach sm,$(SMS),-gencode arch=compute_$(sm),code=sm_$(sm)): the list of CUDA targets
    becomes the AMD targets chosen with --offload-arch (SMS is then unused)."""
    targets = ctx.options.offload_arch
    ctx.edit(word.start, word.end, " ".join(f"--offload-arch={t}" for t in targets).encode(), "build", kind=EditKind.BUILD)
    shown = word.text if len(word.text) <= 40 else word.text[:39] + "…"
    note(ctx, Code.BUILD_MIGRATION_CHOICE, word.start, word.end, f"GPU targets computed by make (`{shown}`) replaced by "
         f"{', '.join(targets)} (--offload-arch); AMD chips do not correspond to sm_XX, choose them with "
         "--offload-arch", word.text)


def _logical_lines(text: str):
    """Logical lines: continuation lines joined; comments (outside recipes) cut off."""
    pos = 0
    n = len(text)
    while pos < n:
        end = pos
        while True:
            nl = text.find("\n", end)
            if nl == -1:
                end = n
                break
            backslashes = len(text[:nl].rstrip("\r")) - len(text[:nl].rstrip("\r").rstrip("\\"))
            if backslashes % 2 == 1:
                end = nl + 1
                continue
            end = nl
            break
        raw = text[pos:end]
        recipe = raw.startswith("\t")
        code = raw if recipe else _strip_comment(raw)
        words = _words(code, pos)
        var, value_from = None, 0
        m = None if recipe else _ASSIGN.match(code)
        if m:
            var = m.group(1)
            eq = code.index("=", m.end() - 1)
            value_from = next((k for k, w in enumerate(words) if w.start - pos > eq), len(words))
        yield _Line(pos, raw, recipe, words, var, value_from)
        pos = end + 1


def _strip_comment(raw: str) -> str:
    i = 0
    while i < len(raw):
        if raw[i] == "\\":
            i += 2
            continue
        if raw[i] == "#":
            return raw[:i]
        i += 1
    return raw


def _words(code: str, base: int) -> list[Word]:
    """Blank-separated words; $(...), ${...} and quotes never split a word; `\\` newlines are blanks."""
    out: list[Word] = []
    i, n = 0, len(code)
    while i < n:
        if code[i] in " \t\r\n" or (code[i] == "\\" and i + 1 < n and code[i + 1] in "\r\n"):
            i += 1
            continue
        j, depth, quote = i, 0, ""
        while j < n:
            ch = code[j]
            if quote:
                if ch == quote:
                    quote = ""
            elif ch in "\"'":
                quote = ch
            elif ch == "$" and j + 1 < n and code[j + 1] in "({":
                depth += 1
                j += 2
                continue
            elif depth and ch in ")}":
                depth -= 1
            elif not depth and (ch in " \t\r\n" or (ch == "\\" and j + 1 < n and code[j + 1] in "\r\n")):
                break
            j += 1
        out.append(Word(code[i:j], base + i, base + j))
        i = j
    return out


def _nvcc_variables(lines: list[_Line]) -> tuple[set[str], set[str]]:
    """Variables that hold nvcc itself, and variables that nvcc command lines use."""
    compilers = {line.var for line in lines if line.var is not None
                 and any(_NVCC.match(w.text) for w in line.words[line.value_from:])}
    flag_vars: set[str] = set()
    for line in lines:
        words = line.words[line.value_from:]
        if _invokes_nvcc(words, compilers) and not (line.var in compilers):
            flag_vars.update(m.group(1) for w in words for m in _REF.finditer(w.text))
        if line.var is not None and _FLAG_VAR_HINT.search(line.var):
            flag_vars.add(line.var)
    # A variable referenced by an nvcc flags variable is one too (GENCODE_FLAGS inside NVCCFLAGS).
    changed = True
    while changed:
        changed = False
        for line in lines:
            if line.var in flag_vars:
                for w in line.words[line.value_from:]:
                    for m in _REF.finditer(w.text):
                        if m.group(1) not in flag_vars and m.group(1) not in compilers:
                            flag_vars.add(m.group(1))
                            changed = True
    return compilers, flag_vars - compilers


def _invokes_nvcc(words: list[Word], compilers: set[str]) -> bool:
    for w in words:
        if _NVCC.match(w.text):
            return True
        m = _REF.fullmatch(w.text.lstrip("@-+"))
        if m and m.group(1) in compilers:
            return True
    return False


def _toolkit_paths(ctx: ScanContext, words: list[Word]) -> None:
    """-I/-L into the CUDA toolkit: hipcc finds ROCm's headers itself; libraries move to ROCm's.

    Other mentions (`CUDA_PATH ?= /usr/local/cuda`) are left alone: once its -I/-L uses are
    gone such a definition is unused and harmless."""
    changes = []
    for k, w in enumerate(words):
        if not _TOOLKIT.search(w.text):
            continue
        if w.text.startswith(("-I", "-isystem")):
            changes.append(Change(k, k + 1, [], Code.BUILD_MIGRATION_CHOICE, f"`{w.text}` dropped: hipcc adds ROCm's include "
                                  "directory itself", w.text))
        elif w.text.startswith("-L"):
            changes.append(Change(k, k + 1, [f"-L{ROCM_LIB}"], Code.BUILD_MIGRATION_CHOICE, f"`{w.text}` replaced by -L{ROCM_LIB}: "
                                  "ROCm's default prefix (Debian/Ubuntu packages use the system library path)",
                                  w.text))
    if changes:
        apply(ctx, words, Translation(changes))
