"""CMake: CUDA as a language (or FindCUDA) to CMake's native HIP language.

The result is what current ROCm documents: `project(... HIP)` / `enable_language(HIP)` (CMake
3.21+), `.cu` sources marked `LANGUAGE HIP`, `CMAKE_HIP_*` variables and `HIP_*` target
properties, GPU targets from --offload-arch, and ROCm's CMake packages (`find_package(hip)`,
`find_package(hipblas)` ...) with their imported targets for `CUDA::*`. What has no
counterpart is left in place and reported (PK508); each choice made for the user is a note
(PK509). See docs/build.md for building the result on Debian/Ubuntu's packaged ROCm.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..context import ScanContext
from .cmake_lexer import Arg, Command, commands
from .nvcc import Translation, Word, translate
from .table import BuildTable
from .words import apply, note, report, rewritten

HIP_LANGUAGE_MIN = (3, 21)
# CMAKE_CUDA_<X> variables with a CMAKE_HIP_<X> twin; other CMAKE_CUDA_* names are reported.
HIP_VARIABLES = {
    "STANDARD", "STANDARD_REQUIRED", "EXTENSIONS", "FLAGS", "FLAGS_DEBUG", "FLAGS_RELEASE",
    "FLAGS_RELWITHDEBINFO", "FLAGS_MINSIZEREL", "FLAGS_INIT", "ARCHITECTURES", "COMPILER",
    "COMPILER_ID", "COMPILER_VERSION", "COMPILER_LOADED", "COMPILE_FEATURES", "VISIBILITY_PRESET",
    "OUTPUT_EXTENSION", "COMPILER_LAUNCHER", "CLANG_TIDY", "LINKER_LAUNCHER",
    "USE_RESPONSE_FILE_FOR_LIBRARIES", "USE_RESPONSE_FILE_FOR_INCLUDES", "USE_RESPONSE_FILE_FOR_OBJECTS",
}
DROPPED_VARIABLES = {"RESOLVE_DEVICE_SYMBOLS": "HIP links device code without a separate resolve step"}
# CUDA_<X> target properties with a HIP_<X> twin.
HIP_PROPERTIES = {"CUDA_STANDARD", "CUDA_STANDARD_REQUIRED", "CUDA_EXTENSIONS", "CUDA_ARCHITECTURES"}
DROPPED_PROPERTIES = {
    "CUDA_RESOLVE_DEVICE_SYMBOLS": "HIP links device code without a separate resolve step",
    "CUDA_PTX_COMPILATION": "there is no PTX on ROCm",
}
TARGET_COMMANDS = {"add_executable", "add_library", "cuda_add_executable", "cuda_add_library"}
SOURCE_SUFFIX = ".cu"
FINDCUDA_RENAMES = {
    "cuda_add_executable": "add_executable", "cuda_add_library": "add_library",
    "cuda_include_directories": "include_directories",
}
FINDCUDA_LIB_COMMANDS = {"cuda_add_cublas_to_target": "cublas", "cuda_add_cufft_to_target": "cufft"}
TOOLKIT_VARIABLES = {   # CUDAToolkit / FindCUDA results with a hip package counterpart
    "CUDAToolkit_INCLUDE_DIRS": "hip_INCLUDE_DIRS", "CUDA_INCLUDE_DIRS": "hip_INCLUDE_DIRS",
    "CUDAToolkit_FOUND": "hip_FOUND", "CUDA_FOUND": "hip_FOUND",
}
_CMAKE_CUDA = re.compile(r"\bCMAKE_CUDA_([A-Z_]+)\b")
_TARGET = re.compile(r"\bCUDA::([A-Za-z0-9_]+)")
_GENEX = re.compile(r"\$<(COMPILE_LANGUAGE|LINK_LANGUAGE|COMPILE_LANG_AND_ID|LINK_LANG_AND_ID):CUDA(,NVIDIA)?")
_CUDA_VAR = re.compile(r"\$\{(CUDA(?:Toolkit)?_[A-Za-z0-9_]+)\}|\b(CUDA(?:Toolkit)?_FOUND)\b")
# What FindCUDAToolkit and FindCUDA define (CUDAToolkit_* all are); other CUDA_* names are the
# project's own variables (cuda-samples' CUDA_PTX_FILE ...) and are left alone.
FINDCUDA_RESULTS = re.compile(r"CUDAToolkit_\w+|CUDA_(?:VERSION\w*|TOOLKIT_\w+|SDK_ROOT_DIR|INCLUDE_DIRS|"
                              r"NVCC_EXECUTABLE|HOST_COMPILER|PROPAGATE_HOST_FLAGS|SEPARABLE_COMPILATION|"
                              r"HAS_FP16|FOUND|LIBRARIES|\w+_LIBRARY|\w+_LIBRARIES)")
_CUDA_GENEX_BODY = re.compile(r"\$<\$<(?:COMPILE_LANGUAGE|COMPILE_LANG_AND_ID):CUDA(?:,NVIDIA)?>:")
_STD_FEATURE = re.compile(r"\bcuda_std_(\d+)\b")     # target_compile_features(... cuda_std_17)
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)*((?:\.\.\.)[\d.]+)?$")


@dataclass
class _File:
    ctx: ScanContext
    table: BuildTable
    text: str
    cmds: list[Command]
    hip_language: bool = False          # the file enables the HIP language (after migration)
    packages: dict[str, int] = field(default_factory=dict)   # ROCm package -> first use offset
    find_at: int | None = None          # where find_package(CUDAToolkit|CUDA) was: insert after it
    cu_vars: dict[str, list[str]] = field(default_factory=dict)  # set(VAR a.cu ...) -> .cu values
    whole_vars: set[str] = field(default_factory=set)             # file(GLOB VAR *.cu): only .cu files
    done: set[int] = field(default_factory=set)                   # args (by start) already rewritten
    inserts: dict[int, list[str]] = field(default_factory=dict)   # offset -> text, in order of arrival
    marked: set[str] = field(default_factory=set)                 # sources already LANGUAGE HIP

    @property
    def targets(self) -> tuple[str, ...]:
        return self.ctx.options.offload_arch


def migrate(ctx: ScanContext, table: BuildTable) -> None:
    text = ctx.source.data.decode("latin-1")
    # A command with no `)` runs to the end of the file: CMake rejects it, and a line inserted
    # after it would land inside it (a second run would insert it again). Leave it as written.
    f = _File(ctx, table, text, [c for c in commands(text) if c.close < len(text)])
    f.marked = _marked_hip(f.cmds)
    for cmd in f.cmds:
        handler = _HANDLERS.get(cmd.lower)
        if handler is not None:
            handler(f, cmd)
        elif cmd.lower.startswith("cuda_") and cmd.lower not in FINDCUDA_RENAMES:
            note(ctx, "PK508", cmd.start, cmd.close + 1, f"`{cmd.name}` (FindCUDA) has no HIP counterpart; "
                 "rewrite it with add_executable/add_library and LANGUAGE HIP sources", cmd.name)
        for arg in cmd.args:
            if arg.start not in f.done:
                _rewrite_names(f, cmd, arg)
    _insert_packages(f)
    _bump_minimum(f)
    for offset, texts in f.inserts.items():   # several insertions at one place are one edit
        ctx.edit(offset, offset, "".join(texts).encode("latin-1"), "build")


# ---------------------------------------------------------------- per-command handlers

def _project(f: _File, cmd: Command) -> None:
    for arg in cmd.args[1:]:
        if arg.kind == "unquoted" and arg.text == "CUDA":
            _edit(f, arg, "HIP")
            f.hip_language = True


def _enable_language(f: _File, cmd: Command) -> None:
    for arg in cmd.args:
        if arg.kind == "unquoted" and arg.text == "CUDA":
            _edit(f, arg, "HIP")
            f.hip_language = True


def _find_package(f: _File, cmd: Command) -> None:
    if not cmd.args or cmd.args[0].value not in ("CUDAToolkit", "CUDA"):
        return
    legacy = cmd.args[0].value == "CUDA"
    _edit(f, cmd.args[0], "hip")
    if len(cmd.args) > 1 and re.fullmatch(r"\d+(\.\d+)*", cmd.args[1].value):
        version = cmd.args[1]
        _delete_arg(f, cmd, 1)
        note(f.ctx, "PK509", version.start, version.end, f"CUDA version requirement {version.value} dropped: "
             "hip's version is the ROCm release, not comparable", version.value)
    if legacy and not f.hip_language and not any(c.lower in ("project", "enable_language") and
                                                 any(a.text == "CUDA" for a in c.args) for c in f.cmds):
        _insert_before(f, cmd, "enable_language(HIP)")
        f.hip_language = True
    if f.find_at is None:
        f.find_at = cmd.close + 1


def _targets(f: _File, cmd: Command) -> None:
    """add_executable / add_library / cuda_add_*: mark the .cu sources LANGUAGE HIP."""
    values = cmd.values()
    if len(values) < 2 or any(v in ("IMPORTED", "ALIAS", "INTERFACE", "OBJECT_IMPORTED") for v in values[1:2]):
        return
    if cmd.lower in FINDCUDA_RENAMES:
        f.ctx.edit(cmd.start, cmd.start + len(cmd.name), FINDCUDA_RENAMES[cmd.lower].encode(), "build")
        _findcuda_options(f, cmd)
    sources = _sources(f, cmd, cmd.args[1:])
    if sources:
        _insert_after(f, cmd, f"set_source_files_properties({' '.join(sources)} PROPERTIES LANGUAGE HIP)")
        _host_sources_need_hip(f, cmd)


def _host_sources_need_hip(f: _File, cmd: Command) -> None:
    """C++ files beside the .cu files of a target: with CUDA they saw the runtime headers through
    the toolkit's include path; as plain C++ next to HIP sources they need hip::host (its headers
    and the __HIP_PLATFORM_AMD__ define) unless the target links it already."""
    target = cmd.args[0].value
    cxx = [a for a in cmd.args[1:] if re.search(r"\.(?:cpp|cc|cxx|c\+\+|C)$", a.value)]
    if not cxx:
        return
    links = [c for c in f.cmds if c.lower == "target_link_libraries" and c.args and c.args[0].value == target]
    if any(re.search(r"CUDA::cudart|CUDA::cuda_driver|hip::host|hip::device|CUDA_LIBRARIES", a.value)
           for c in links for a in c.args[1:]):
        return
    plain = any(c.args[1].value not in ("PRIVATE", "PUBLIC", "INTERFACE") for c in links if len(c.args) > 1)
    _insert_after(f, cmd, f"target_link_libraries({cmd.args[0].text}{'' if plain else ' PRIVATE'} hip::host)")
    _need(f, "hip", cmd.start)


def _target_sources(f: _File, cmd: Command) -> None:
    sources = _sources(f, cmd, cmd.args[1:])
    if sources:
        _insert_after(f, cmd, f"set_source_files_properties({' '.join(sources)} PROPERTIES LANGUAGE HIP)")


def _sources(f: _File, cmd: Command, args: list[Arg]) -> list[str]:
    """The .cu files among `args`, by name or through a variable set in this file."""
    found: list[str] = []
    for arg in args:
        value = arg.value
        if value == "OPTIONS":
            break
        if value.endswith(SOURCE_SUFFIX) and "$<" not in value:
            found.append(arg.text)
            continue
        m = re.fullmatch(r"\$\{(\w+)\}", value)
        if not m:
            continue
        if m.group(1) in f.whole_vars:
            found.append(value)
        elif m.group(1) in f.cu_vars:
            found += f.cu_vars[m.group(1)]
    return [s for s in dict.fromkeys(found) if s not in f.marked]


def _marked_hip(cmds: list[Command]) -> set[str]:
    """Sources the file already compiles as HIP (a converted file converts to itself)."""
    marked: set[str] = set()
    for cmd in cmds:
        values = cmd.values()
        if cmd.lower == "set_source_files_properties" and "PROPERTIES" in values:
            at = values.index("PROPERTIES")
            pairs = values[at + 1:]
            if any(pairs[k] == "LANGUAGE" and pairs[k + 1] == "HIP" for k in range(0, len(pairs) - 1, 2)):
                marked.update(a.text for a in cmd.args[:at])
    return marked


def _findcuda_options(f: _File, cmd: Command) -> None:
    """cuda_add_*(... OPTIONS flags): the flags become target_compile_options after the call."""
    names = [a.value for a in cmd.args]
    if "OPTIONS" not in names:
        return
    at = names.index("OPTIONS")
    words = [Word(a.value, a.start, a.end) for a in cmd.args[at + 1:]]
    new = [_names_in(f, cmd, w) for w in rewritten(f.ctx, words, translate(words, f.table, f.targets))]
    start = cmd.args[at - 1].end
    f.ctx.edit(start, cmd.args[-1].end, b"", "build", covers=True)
    f.done.update(a.start for a in cmd.args[at:])
    if new:
        target = cmd.args[0].text
        _insert_after(f, cmd, f"target_compile_options({target} PRIVATE "
                              f"\"$<$<COMPILE_LANGUAGE:HIP>:{';'.join(new)}>\")")


def _set(f: _File, cmd: Command) -> None:
    values = cmd.values()
    if not values:
        return
    var = values[0]
    cu = [a.text for a in cmd.args[1:] if a.value.endswith(SOURCE_SUFFIX)]
    if cu:
        f.cu_vars[var] = f.cu_vars.get(var, []) + cu
    if var == "CMAKE_CUDA_ARCHITECTURES" and len(cmd.args) > 1:
        _replace_architectures(f, cmd, cmd.args[1:_value_end(cmd.args, 1)])
    elif var == "CMAKE_CUDA_SEPARABLE_COMPILATION":
        if _is_on(values[1:2]):
            _replace_command(f, cmd, ['string(APPEND CMAKE_HIP_FLAGS " -fgpu-rdc")',
                                      'add_link_options("$<$<LINK_LANGUAGE:HIP>:-fgpu-rdc;--hip-link>")'])
        else:
            _replace_command(f, cmd, [])
    elif var == "CUDA_NVCC_FLAGS":
        _nvcc_flags_variable(f, cmd, cmd.args[1:_value_end(cmd.args, 1)])
    elif var in ("CMAKE_CUDA_FLAGS",) or var.startswith("CMAKE_CUDA_FLAGS_"):
        _flags_in_strings(f, cmd.args[1:], cmd)
    else:
        _loose_flags(f, cmd.args[1:])


def _list(f: _File, cmd: Command) -> None:
    values = cmd.values()
    if len(values) >= 2 and values[0] == "APPEND":
        var = values[1]
        cu = [a.text for a in cmd.args[2:] if a.value.endswith(SOURCE_SUFFIX)]
        if cu:
            f.cu_vars[var] = f.cu_vars.get(var, []) + cu
        if var == "CUDA_NVCC_FLAGS":
            _nvcc_flags_variable(f, cmd, cmd.args[2:])
        else:
            _loose_flags(f, cmd.args[2:])


def _string(f: _File, cmd: Command) -> None:
    values = cmd.values()
    if len(values) >= 2 and values[0] == "APPEND" and values[1].startswith("CMAKE_CUDA_FLAGS"):
        _flags_in_strings(f, cmd.args[2:], cmd)


def _file(f: _File, cmd: Command) -> None:
    values = cmd.values()
    if len(values) >= 3 and values[0] in ("GLOB", "GLOB_RECURSE"):
        patterns = [v for v in values[2:] if v not in ("CONFIGURE_DEPENDS", "LIST_DIRECTORIES", "RELATIVE",
                                                       "true", "false")]
        if patterns and all(p.endswith("*" + SOURCE_SUFFIX) for p in patterns):
            f.whole_vars.add(values[1])


def _nvcc_flags_variable(f: _File, cmd: Command, args: list[Arg]) -> None:
    """FindCUDA's CUDA_NVCC_FLAGS (a list) becomes words appended to CMAKE_HIP_FLAGS (a string)."""
    words = [w for a in args if a.value != "${CUDA_NVCC_FLAGS}" for w in _list_items(a.value, a.start)]
    new = [_names_in(f, cmd, w) for w in rewritten(f.ctx, words, translate(words, f.table, f.targets))]
    _replace_command(f, cmd, [f'string(APPEND CMAKE_HIP_FLAGS " {" ".join(new)}")'] if new else [])


def _flags_in_strings(f: _File, args: list[Arg], cmd: Command | None = None) -> None:
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
        _replace_command(f, cmd, [])
        return
    for arg, words, result in plans:
        apply(f.ctx, words, result)
        _rewrite_names(f, None, arg)
        f.done.add(arg.start)


def _blank_words(arg: Arg) -> list[Word]:
    """The blank-separated words of an argument's value, at their places in the file."""
    offset = arg.start + (1 if arg.kind == "quoted" else 0)
    return [Word(m.group(0), offset + m.start(), offset + m.end()) for m in re.finditer(r"\S+", arg.value)]


def _list_items(text: str, base: int) -> list[Word]:
    """The items of a CMake list ("a;b"), `text` starting at byte `base`; empty items skipped."""
    items, pos = [], base
    for part in text.split(";"):
        if part:
            items.append(Word(part, pos, pos + len(part)))
        pos += len(part) + 1
    return items


def _loose_flags(f: _File, args: list[Arg]) -> None:
    """Unambiguous nvcc options in any other value (list(APPEND GENCODE "-gencode=arch=...")),
    one argument at a time: a variable of nvcc options is translated where it is built."""
    for arg in args:
        if arg.kind not in ("quoted", "unquoted") or not arg.value.startswith("-"):
            continue
        words = _blank_words(arg)
        result = translate(words, f.table, f.targets, nvcc_context=False)
        if result.changes:
            apply(f.ctx, words, result)
            f.done.add(arg.start)


def _custom_command(f: _File, cmd: Command) -> None:
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
        note(f.ctx, "PK508", tool.start, tool.end, f"a custom build step runs nvcc (`{tool.value}`); rewrite "
             "it for clang (-x hip --offload-arch=...; no fatbin or PTX output)", tool.value)
        end = next((j for j in range(k + 2, len(args)) if args[j].value in _CUSTOM_KEYWORDS), len(args))
        words = [Word(a.value, a.start, a.end) for a in args[k + 2:end] if a.kind in ("quoted", "unquoted")]
        apply(f.ctx, words, translate(words, f.table, f.targets))
        f.done.update(w.start for w in words)


_CUSTOM_KEYWORDS = {"COMMAND", "OUTPUT", "DEPENDS", "WORKING_DIRECTORY", "COMMENT", "VERBATIM", "BYPRODUCTS",
                    "MAIN_DEPENDENCY", "IMPLICIT_DEPENDS", "USES_TERMINAL", "COMMAND_EXPAND_LISTS",
                    "RESULT_VARIABLE", "OUTPUT_VARIABLE", "ERROR_VARIABLE", "SOURCES", "DEPFILE", "ALL",
                    "TIMEOUT", "OUTPUT_QUIET", "ERROR_QUIET"}


def _set_target_properties(f: _File, cmd: Command) -> None:
    values = cmd.values()
    if "PROPERTIES" not in values:
        return
    at = values.index("PROPERTIES")
    targets = [a.text for a in cmd.args[:at]]
    pairs = cmd.args[at + 1:]
    after: list[str] = []
    removed = [(pairs[k], pairs[k + 1]) for k in range(0, len(pairs) - 1, 2)
               if _property(f, pairs[k], [pairs[k + 1]], after, targets)]
    if removed and len(removed) * 2 >= len(pairs):
        _replace_command(f, cmd, after)
        return
    for name, value in removed:
        _delete_pair(f, name, [value])
    for line in after:
        _insert_after(f, cmd, line)


def _property(f: _File, name: Arg, values: list[Arg], after: list[str], targets: list[str]) -> bool:
    """Migrate one target property; True when the caller must remove the name/value pair."""
    prop = name.value
    if prop in HIP_PROPERTIES:
        _edit(f, name, "HIP_" + prop[len("CUDA_"):])
        if prop == "CUDA_ARCHITECTURES":
            _replace_architectures(f, None, values)
        return False
    if prop == "CUDA_SEPARABLE_COMPILATION":
        f.done.add(name.start)
        if _is_on([v.value for v in values[:1]]):
            for target in targets:
                after += [f"target_compile_options({target} PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-fgpu-rdc>)",
                          f'target_link_options({target} PUBLIC "$<$<LINK_LANGUAGE:HIP>:-fgpu-rdc;--hip-link>")']
        return True
    if prop in DROPPED_PROPERTIES:
        f.done.add(name.start)
        note(f.ctx, "PK509", name.start, values[-1].end if values else name.end,
             f"`{prop}` removed: {DROPPED_PROPERTIES[prop]}", prop)
        return True
    if prop.startswith("CUDA_"):
        note(f.ctx, "PK508", name.start, name.end, f"target property `{prop}` has no HIP counterpart; "
             "left in place (CMake ignores it without the CUDA language)", prop)
        f.done.add(name.start)
    return False


def _set_property(f: _File, cmd: Command) -> None:
    values = cmd.values()
    if "PROPERTY" not in values:
        return
    at = values.index("PROPERTY")
    scope = values[0]
    if len(values) <= at + 1:
        return
    name = cmd.args[at + 1]
    rest = cmd.args[at + 2:]
    if scope == "SOURCE" and name.value == "LANGUAGE":
        for arg in rest:
            if arg.text == "CUDA":
                _edit(f, arg, "HIP")
        return
    if scope != "TARGET":
        return
    targets = [a.text for a in cmd.args[1:at] if a.value not in ("APPEND", "APPEND_STRING")]
    after: list[str] = []
    if name.value == "CUDA_SEPARABLE_COMPILATION" or name.value in DROPPED_PROPERTIES:
        _property(f, name, rest, after, targets)
        _replace_command(f, cmd, after)
        f.done.update(a.start for a in cmd.args)
    else:
        _property(f, name, rest, after, targets)


def _set_source_files_properties(f: _File, cmd: Command) -> None:
    values = cmd.values()
    for k, value in enumerate(values[:-1]):
        if value == "LANGUAGE" and cmd.args[k + 1].text == "CUDA":
            _edit(f, cmd.args[k + 1], "HIP")


def _link_libraries(f: _File, cmd: Command) -> None:
    """Plain library names (`cublas`, `cudart`) in target_link_libraries / link_libraries."""
    for arg in cmd.args[1 if cmd.lower == "target_link_libraries" else 0:]:
        lib = f.table.by_link.get(arg.value) if arg.kind == "unquoted" else None
        if lib is None:
            continue
        if lib.hip_target:
            _edit(f, arg, lib.hip_target)
            _need(f, lib.hip_package, arg.start)
        else:
            note(f.ctx, "PK508", arg.start, arg.end, f"`{arg.value}`: {lib.why}", arg.value)
            f.done.add(arg.start)


def _compile_options(f: _File, cmd: Command) -> None:
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
            inner = _list_items(body, base)
            result = translate(inner, f.table, f.targets)
            if inner and len(result.deleted()) == len(inner):
                emptied.append((arg, inner, result))
                f.done.add(arg.start)
                continue
            apply(f.ctx, inner, result, style="semicolon")
            _rewrite_names(f, cmd, Arg(arg.text[:m.end() + (1 if arg.kind == "quoted" else 0)], arg.start,
                                       base, "unquoted"))
            f.done.add(arg.start)
        elif arg.kind in ("unquoted", "quoted") and arg.value.startswith("-"):
            words.append(Word(arg.value, arg.start, arg.end))
    for arg, inner, result in emptied:
        report(f.ctx, inner, result)
    if emptied and len(emptied) == len(options):
        _replace_command(f, cmd, [])
        return
    for arg, _, _ in emptied:
        start = arg.start
        while start > 0 and f.text[start - 1] in " \t":
            start -= 1
        f.ctx.edit(start, arg.end, b"", "build", covers=True)
    if words:
        apply(f.ctx, words, translate(words, f.table, f.targets, nvcc_context=False))


def _findcuda_library(f: _File, cmd: Command) -> None:
    lib = f.table.by_link.get(FINDCUDA_LIB_COMMANDS[cmd.lower])
    if not cmd.args or lib is None or not lib.hip_target:
        return
    _replace_command(f, cmd, [f"target_link_libraries({cmd.args[0].text} {lib.hip_target})"])
    _need(f, lib.hip_package, cmd.start)
    f.done.update(a.start for a in cmd.args)


_HANDLERS = {
    "project": _project, "enable_language": _enable_language, "check_language": _enable_language,
    "find_package": _find_package, "set": _set, "list": _list, "string": _string, "file": _file,
    "add_executable": _targets, "add_library": _targets, "cuda_add_executable": _targets,
    "cuda_add_library": _targets, "target_sources": _target_sources,
    "set_target_properties": _set_target_properties, "set_property": _set_property,
    "set_source_files_properties": _set_source_files_properties,
    "target_link_libraries": _link_libraries, "link_libraries": _link_libraries,
    "target_compile_options": _compile_options, "add_compile_options": _compile_options,
    "target_link_options": _compile_options, "add_link_options": _compile_options,
    "cuda_add_cublas_to_target": _findcuda_library, "cuda_add_cufft_to_target": _findcuda_library,
    "add_custom_command": _custom_command, "add_custom_target": _custom_command, "execute_process": _custom_command,
}


# ---------------------------------------------------------------- names inside any argument

def _rewrite_names(f: _File, cmd: Command | None, arg: Arg) -> None:
    """CMAKE_CUDA_* variables, CUDA::* targets, CUDA generator expressions, FindCUDA variables."""
    if arg.kind == "paren" or ("CUDA" not in arg.text and "cuda_std_" not in arg.text):
        return
    text = arg.text
    for m in _CMAKE_CUDA.finditer(text):
        suffix = m.group(1)
        start = arg.start + m.start()
        if suffix in HIP_VARIABLES:
            f.ctx.edit(start, arg.start + m.end(), f"CMAKE_HIP_{suffix}".encode(), "build")
        elif suffix in DROPPED_VARIABLES or suffix == "SEPARABLE_COMPILATION":
            continue
        else:
            note(f.ctx, "PK508", start, arg.start + m.end(), f"`CMAKE_CUDA_{suffix}` has no HIP counterpart",
                 f"CMAKE_CUDA_{suffix}")
    for m in _TARGET.finditer(text):
        lib = f.table.by_target.get(m.group(0))
        start, end = arg.start + m.start(), arg.start + m.end()
        if lib is not None and lib.hip_target:
            f.ctx.edit(start, end, lib.hip_target.encode(), "build")
            _need(f, lib.hip_package, start)
        else:
            why = lib.why if lib is not None and lib.why else "no ROCm library in portkit's build table"
            note(f.ctx, "PK508", start, end, f"`{m.group(0)}`: {why}", m.group(0))
    for m in _STD_FEATURE.finditer(text):
        f.ctx.edit(arg.start + m.start(), arg.start + m.end(), f"hip_std_{m.group(1)}".encode(), "build")
    for m in _GENEX.finditer(text):
        new = f"$<{m.group(1)}:HIP" + (",Clang" if m.group(2) else "")
        f.ctx.edit(arg.start + m.start(), arg.start + m.end(), new.encode(), "build")
    for m in _CUDA_VAR.finditer(text):
        name = m.group(1) or m.group(2)
        start, end = arg.start + m.start(), arg.start + m.end()
        if name in TOOLKIT_VARIABLES:
            new = TOOLKIT_VARIABLES[name]
            f.ctx.edit(start, end, (f"${{{new}}}" if m.group(1) else new).encode(), "build")
        elif name in f.table.by_findcuda and f.table.by_findcuda[name].hip_target:
            lib = f.table.by_findcuda[name]
            f.ctx.edit(start, end, lib.hip_target.encode(), "build")
            _need(f, lib.hip_package, start)
        elif name != "CUDA_NVCC_FLAGS" and FINDCUDA_RESULTS.fullmatch(name):
            note(f.ctx, "PK508", start, end, f"`{name}` describes the CUDA toolkit; no HIP counterpart "
                 "(hip_VERSION and ROCM_PATH describe ROCm)", name)


def _names_in(f: _File, cmd: Command, word: str) -> str:
    """`word`, moved into new text (a flag string, target_compile_options), with the names that
    _rewrite_names changes in place changed here: the next run sees them as already ported."""
    def variable(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        if name in TOOLKIT_VARIABLES:
            return f"${{{TOOLKIT_VARIABLES[name]}}}" if m.group(1) else TOOLKIT_VARIABLES[name]
        lib = f.table.by_findcuda.get(name)
        if lib is not None and lib.hip_target:
            _need(f, lib.hip_package, cmd.start)
            return lib.hip_target
        return m.group(0)

    def target(m: re.Match) -> str:
        lib = f.table.by_target.get(m.group(0))
        if lib is None or not lib.hip_target:
            return m.group(0)
        _need(f, lib.hip_package, cmd.start)
        return lib.hip_target

    word = _CUDA_VAR.sub(variable, word)
    word = _TARGET.sub(target, word)
    word = _CMAKE_CUDA.sub(lambda m: f"CMAKE_HIP_{m.group(1)}" if m.group(1) in HIP_VARIABLES else m.group(0), word)
    word = _STD_FEATURE.sub(lambda m: f"hip_std_{m.group(1)}", word)
    return _GENEX.sub(lambda m: f"$<{m.group(1)}:HIP" + (",Clang" if m.group(2) else ""), word)


# ---------------------------------------------------------------- architectures, packages, version

def _replace_architectures(f: _File, cmd: Command | None, values: list[Arg]) -> None:
    if not values:
        return
    targets = ";".join(f.targets)
    text = f'"{targets}"' if ";" in targets else targets
    old = " ".join(a.value for a in values)
    f.ctx.edit(values[0].start, values[-1].end, text.encode(), "build", covers=True)
    f.done.update(a.start for a in values)
    note(f.ctx, "PK509", values[0].start, values[-1].end,
         f"CUDA architectures {old} replaced by {', '.join(f.targets)} (--offload-arch); AMD chips do not "
         "correspond to sm_XX, choose them with --offload-arch", old)


def _need(f: _File, package: str, at: int) -> None:
    if package and package not in f.packages:
        f.packages[package] = at


def _insert_packages(f: _File) -> None:
    """find_package for each ROCm library used: after find_package(hip), else before first use."""
    libs = sorted(p for p in f.packages if p != "hip")
    if not libs:
        return
    if f.find_at is not None:
        cmd = next(c for c in f.cmds if c.close + 1 == f.find_at)
        for package in libs:
            _insert_after(f, cmd, f"find_package({package} REQUIRED)")
        return
    for package in libs:
        at = f.packages[package]
        cmd = next(c for c in f.cmds if c.start <= at <= c.close)
        _insert_before(f, cmd, f"find_package({package} REQUIRED)")


def _bump_minimum(f: _File) -> None:
    if not f.hip_language:
        return
    for cmd in f.cmds:
        if cmd.lower != "cmake_minimum_required":
            continue
        values = cmd.values()
        if "VERSION" not in values or values.index("VERSION") + 1 >= len(values):
            return
        arg = cmd.args[values.index("VERSION") + 1]
        m = _VERSION.match(arg.value)
        if m and (int(m.group(1)), int(m.group(2))) < HIP_LANGUAGE_MIN:
            new = "%d.%d" % HIP_LANGUAGE_MIN + (m.group(3) or "")
            _edit(f, arg, new)
            note(f.ctx, "PK509", arg.start, arg.end, f"minimum CMake raised from {arg.value} to {new}: "
                 "CMake's HIP language needs 3.21", arg.value)
        return


# ---------------------------------------------------------------- edit helpers

def _edit(f: _File, arg: Arg, text: str) -> None:
    f.ctx.edit(arg.start, arg.end, text.encode("latin-1"), "build", covers=True)
    f.done.add(arg.start)


def _value_end(args: list[Arg], start: int) -> int:
    for k in range(start, len(args)):
        if args[k].value in ("CACHE", "PARENT_SCOPE"):
            return k
    return len(args)


def _is_on(values: list[str]) -> bool:
    return bool(values) and values[0].upper() in ("ON", "TRUE", "YES", "1", "Y")


def _delete_arg(f: _File, cmd: Command, k: int) -> None:
    arg = cmd.args[k]
    f.ctx.edit(cmd.args[k - 1].end, arg.end, b"", "build", covers=True)
    f.done.add(arg.start)


def _delete_pair(f: _File, name: Arg, values: list[Arg]) -> None:
    """Remove a property name and its values; a pair on a line of its own takes the line."""
    end = values[-1].end if values else name.end
    start = name.start
    data = f.text
    while start > 0 and data[start - 1] in " \t":
        start -= 1
    rest = end
    while rest < len(data) and data[rest] in " \t\r":
        rest += 1
    if (start == 0 or data[start - 1] == "\n") and rest < len(data) and data[rest] == "\n":
        end = rest + 1
    f.ctx.edit(start, end, b"", "build", covers=True)
    f.done.add(name.start)
    f.done.update(v.start for v in values)


def _line_bounds(f: _File, cmd: Command) -> tuple[int, int, str]:
    """Start of the command's line, the end of its last line (after any comment), its indentation."""
    text = f.text
    line_start = text.rfind("\n", 0, cmd.start) + 1
    indent = text[line_start:cmd.start]
    if indent.strip():
        indent = ""
    line_end = text.find("\n", cmd.close)
    return line_start, (len(text) if line_end == -1 else line_end), indent


def _insert_after(f: _File, cmd: Command, line: str) -> None:
    _, line_end, indent = _line_bounds(f, cmd)
    f.inserts.setdefault(line_end, []).append(f"\n{indent}{line}")


def _insert_before(f: _File, cmd: Command, line: str) -> None:
    line_start, _, indent = _line_bounds(f, cmd)
    if f.text[line_start:cmd.start].strip():
        line_start = cmd.start
    f.inserts.setdefault(line_start, []).append(f"{indent}{line}\n")


def _replace_command(f: _File, cmd: Command, lines: list[str]) -> None:
    """Replace the command by `lines` (same indentation); none removes its whole line."""
    line_start, line_end, indent = _line_bounds(f, cmd)
    alone = not f.text[line_start:cmd.start].strip() and not f.text[cmd.close + 1:line_end].strip()
    if lines:
        f.ctx.edit(cmd.start, cmd.close + 1, f"\n{indent}".join(lines).encode("latin-1"), "build", covers=True)
    elif alone:
        end = min(line_end + 1, len(f.text))
        f.ctx.edit(line_start, end, b"", "build", covers=True)
    else:
        f.ctx.edit(cmd.start, cmd.close + 1, b"", "build", covers=True)
    f.done.update(a.start for a in cmd.args)
