"""CMake targets and their sources, properties, libraries and GPU architectures.

add_executable / add_library / target_sources: the `.cu` sources (named, or through a
variable cmake.py saw set) get `set_source_files_properties(... LANGUAGE HIP)`, and C++
sources beside them link hip::host unless the target does already. Target properties:
`CUDA_<X>` becomes `HIP_<X>`, separable compilation becomes -fgpu-rdc options, what HIP has
no use for goes (PK509).
Library names (`cublas`) and CMAKE_CUDA_ARCHITECTURES / CUDA_ARCHITECTURES values are
replaced by ROCm's libraries and the --offload-arch targets.
"""

from __future__ import annotations

import re

from .cmake_file import CMakeFile, delete_pair, edit, insert_after, is_on, need, replace_command
from .cmake_findcuda import findcuda_options
from .cmake_lexer import Arg, Command
from .words import note
from ..engine.codes import Code
from ..core.edits import EditKind

SOURCE_SUFFIX = ".cu"
# The CUDA_<X> target properties and what they become are data: mappings/build.toml [cmake]
# (hip_properties, dropped_properties).


def add_target(f: CMakeFile, cmd: Command) -> None:
    """add_executable / add_library / cuda_add_*: mark the .cu sources LANGUAGE HIP."""
    values = cmd.values()
    if len(values) < 2 or any(v in ("IMPORTED", "ALIAS", "INTERFACE", "OBJECT_IMPORTED") for v in values[1:2]):
        return
    renames = f.table.cmake.findcuda_commands
    if cmd.lower in renames:
        f.ctx.edit(cmd.start, cmd.start + len(cmd.name), renames[cmd.lower].encode(), "build", kind=EditKind.BUILD)
        findcuda_options(f, cmd)
    sources = _sources(f, cmd, cmd.args[1:])
    if sources:
        insert_after(f, cmd, f"set_source_files_properties({' '.join(sources)} PROPERTIES LANGUAGE HIP)")
        _host_sources_need_hip(f, cmd)


def _host_sources_need_hip(f: CMakeFile, cmd: Command) -> None:
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
    insert_after(f, cmd, f"target_link_libraries({cmd.args[0].text}{'' if plain else ' PRIVATE'} hip::host)")
    need(f, "hip", cmd.start)


def target_sources(f: CMakeFile, cmd: Command) -> None:
    sources = _sources(f, cmd, cmd.args[1:])
    if sources:
        insert_after(f, cmd, f"set_source_files_properties({' '.join(sources)} PROPERTIES LANGUAGE HIP)")


def mixed_glob(f: CMakeFile, cmd: Command) -> None:
    """file(GLOB SRCS src/*.cu src/*.cpp): the .cu files of the list, globbed again beside it, are
    compiled as HIP. CMake knows only `.hip` as HIP, and marking the whole list would compile the
    C++ files (and any header it holds) as HIP too (issue 48: a globbed list's .cu files were not
    compiled at all)."""
    var = cmd.args[1].value
    if f"${{{var}_CU}}" in f.marked:
        return
    patterns: list[str] = []
    args = cmd.args[2:]
    for k, arg in enumerate(args):
        if arg.value in _GLOB_OPTIONS or arg.value.endswith("*" + SOURCE_SUFFIX) or \
                (k > 0 and args[k - 1].value in ("RELATIVE", "LIST_DIRECTORIES")):
            patterns.append(arg.text)
        elif arg.value in ("RELATIVE", "LIST_DIRECTORIES"):
            patterns.append(arg.text)
    insert_after(f, cmd, f"file({cmd.args[0].text} {var}_CU {' '.join(patterns)})")
    insert_after(f, cmd, f"set_source_files_properties(${{{var}_CU}} PROPERTIES LANGUAGE HIP)")


_GLOB_OPTIONS = ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS")


def aux_source_directory(f: CMakeFile, cmd: Command) -> None:
    """aux_source_directory(dir VAR) collects the sources of the languages the project enables:
    with HIP instead of CUDA, no .cu file. They are globbed and added, and compiled as HIP."""
    if len(cmd.args) < 2 or f"${{{cmd.args[1].value}_CU}}" in f.marked:
        return
    folder, var = cmd.args[0].value.rstrip("/"), cmd.args[1].value
    insert_after(f, cmd, f'file(GLOB {var}_CU "{folder}/*{SOURCE_SUFFIX}")')
    insert_after(f, cmd, f"list(APPEND {var} ${{{var}_CU}})")
    insert_after(f, cmd, f"set_source_files_properties(${{{var}_CU}} PROPERTIES LANGUAGE HIP)")


def _sources(f: CMakeFile, cmd: Command, args: list[Arg]) -> list[str]:
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


def marked_hip(cmds: list[Command]) -> set[str]:
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


def set_target_properties(f: CMakeFile, cmd: Command) -> None:
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
        replace_command(f, cmd, after)
        return
    for name, value in removed:
        delete_pair(f, name, [value])
    for line in after:
        insert_after(f, cmd, line)


def _property(f: CMakeFile, name: Arg, values: list[Arg], after: list[str], targets: list[str]) -> bool:
    """Migrate one target property; True when the caller must remove the name/value pair."""
    prop = name.value
    dropped = f.table.cmake.dropped_properties
    if prop in f.table.cmake.hip_properties:
        edit(f, name, "HIP_" + prop[len("CUDA_"):])
        if prop == "CUDA_ARCHITECTURES":
            replace_architectures(f, None, values)
        return False
    if prop == "CUDA_SEPARABLE_COMPILATION":
        f.done.add(name.start)
        if is_on([v.value for v in values[:1]]):
            for target in targets:
                after += [f"target_compile_options({target} PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-fgpu-rdc>)",
                          f'target_link_options({target} PUBLIC "$<$<LINK_LANGUAGE:HIP>:-fgpu-rdc;--hip-link>")']
        return True
    if prop in dropped:
        f.done.add(name.start)
        note(f.ctx, Code.BUILD_MIGRATION_CHOICE, name.start, values[-1].end if values else name.end,
             f"`{prop}` removed: {dropped[prop]}", prop)
        return True
    if prop.startswith("CUDA_"):
        note(f.ctx, Code.BUILD_STEP_NOT_MIGRATED, name.start, name.end, f"target property `{prop}` has no HIP counterpart; "
             "left in place (CMake ignores it without the CUDA language)", prop)
        f.done.add(name.start)
    return False


def set_property(f: CMakeFile, cmd: Command) -> None:
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
                edit(f, arg, "HIP")
        return
    if scope != "TARGET":
        return
    targets = [a.text for a in cmd.args[1:at] if a.value not in ("APPEND", "APPEND_STRING")]
    after: list[str] = []
    if name.value == "CUDA_SEPARABLE_COMPILATION" or name.value in f.table.cmake.dropped_properties:
        _property(f, name, rest, after, targets)
        replace_command(f, cmd, after)
        f.done.update(a.start for a in cmd.args)
    else:
        _property(f, name, rest, after, targets)


def set_source_files_properties(f: CMakeFile, cmd: Command) -> None:
    values = cmd.values()
    for k, value in enumerate(values[:-1]):
        if value == "LANGUAGE" and cmd.args[k + 1].text == "CUDA":
            edit(f, cmd.args[k + 1], "HIP")


def link_libraries(f: CMakeFile, cmd: Command) -> None:
    """Plain library names (`cublas`, `cudart`) in target_link_libraries / link_libraries."""
    for arg in cmd.args[1 if cmd.lower == "target_link_libraries" else 0:]:
        lib = f.table.by_link.get(arg.value) if arg.kind == "unquoted" else None
        if lib is None:
            continue
        if lib.hip_target:
            edit(f, arg, lib.hip_target)
            need(f, lib.hip_package, arg.start)
        else:
            note(f.ctx, Code.BUILD_STEP_NOT_MIGRATED, arg.start, arg.end, f"`{arg.value}`: {lib.why}", arg.value)
            f.done.add(arg.start)


def hip_architectures(f: CMakeFile) -> str:
    """The --offload-arch targets as one CMake argument: `gfx90a`, or a quoted list `"gfx90a;gfx942"`."""
    targets = ";".join(f.targets)
    return f'"{targets}"' if ";" in targets else targets


def replace_architectures(f: CMakeFile, cmd: Command | None, values: list[Arg]) -> None:
    if not values:
        return
    text = hip_architectures(f)
    old = " ".join(a.value for a in values)
    f.ctx.edit(values[0].start, values[-1].end, text.encode(), "build", covers=True, kind=EditKind.BUILD)
    f.done.update(a.start for a in values)
    note(f.ctx, Code.BUILD_MIGRATION_CHOICE, values[0].start, values[-1].end,
         f"CUDA architectures {old} replaced by {', '.join(f.targets)} (--offload-arch); AMD chips do not "
         "correspond to sm_XX, choose them with --offload-arch", old)
