"""The build configuration a CMakeLists.txt asks for, read with the CMake lexer, never evaluated.

Read: `CMAKE_CXX_STANDARD` / `CMAKE_CUDA_STANDARD` / `CMAKE_HIP_STANDARD`, the `CXX_STANDARD`-
style target properties, `cxx_std_NN` / `cuda_std_NN` compile features and `-std=` options;
`include_directories` / `target_include_directories`; `add_compile_definitions`,
`add_definitions(-D...)`, `target_compile_definitions` (per target, and what it passes on:
INTERFACE, PUBLIC); `target_link_libraries` (which libraries pass their definitions on to whom).

Resolved: the variables that name directories (`CMAKE_CURRENT_SOURCE_DIR`,
`CMAKE_CURRENT_LIST_DIR`: this file's directory; `PROJECT_SOURCE_DIR`, `CMAKE_SOURCE_DIR`,
`<name>_SOURCE_DIR`: the top CMakeLists.txt's), a variable remembered with one literal value no
condition set (`ESSENTIALS_VERSION=${ESSENTIALS_VERSION}`), and the cache variables the HIP build's
configure gives (`CMAKE_HIP_ARCHITECTURES`: verify's --offload-arch); a value with any other
variable is dropped. A function or macro is read where it is called, its parameters replaced by
the call's arguments (gunrock's `add_essentials_example(bfs)`, defined one directory up).
A block counts when the HIP build on Linux takes it (cmake_branches.py: a condition that names HIP,
the Linux branch of an OS test, the else() of the NVIDIA build's switch that names HIP) or when the
innermost condition names HIP and no block around it is known to be left out; an add_subdirectory
only a branch that build never takes reaches leaves its folder out, and so does one only under
`if(OPT)` of an option() that build has OFF by default and this file never sets (gunrock's
benchmarks: verify compiles the project's default AMD build, and says so).
A generator expression counts when that build settles its condition (`$<$<BOOL:${VAR}>:...>` of a
variable set in such a block, `$<PLATFORM_ID:Linux>`); any other is dropped.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .buildvalues import FileConfig, plain_dir, read_options
from . import cmake_settle as settle
from .cmake_branches import CLOSE, OPEN, Branch, counts, opened, switched, values_of
from .cmake_unbuilt import OFF_WHY, Unbuilt
from ..buildfiles.cmake_lexer import Command, commands

_VAR = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
_FEATURE = re.compile(r"^(?:cxx|cuda|hip)_std_(\d+)$")
_STANDARD_VARS = {"CMAKE_CXX_STANDARD", "CMAKE_CUDA_STANDARD", "CMAKE_HIP_STANDARD"}
_STANDARD_PROPS = {"CXX_STANDARD", "CUDA_STANDARD", "HIP_STANDARD"}
_INCLUDE_KEYWORDS = {"SYSTEM", "BEFORE", "AFTER", "INTERFACE", "PUBLIC", "PRIVATE"}
_SCOPES = {"INTERFACE", "PUBLIC", "PRIVATE"}
_LINK_SCOPES = {"INTERFACE", "PUBLIC", "PRIVATE", "LINK_PUBLIC", "LINK_PRIVATE", "LINK_INTERFACE_LIBRARIES"}
_FALSE = {"", "0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND"}
_OPTION_COMMANDS = {"add_compile_options", "target_compile_options"}
_TARGET_COMMANDS = {"add_library", "add_executable", "target_sources", "cuda_add_library", "cuda_add_executable"}
_SOURCE_KEYWORDS = {"STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE", "PUBLIC", "PRIVATE", "EXCLUDE_FROM_ALL",
                    "WIN32", "MACOSX_BUNDLE", "ALIAS", "IMPORTED", "GLOBAL", "FILE_SET", "TYPE", "HEADERS"}
_FLAG_VARS = {"CMAKE_CXX_FLAGS", "CMAKE_CUDA_FLAGS", "CMAKE_HIP_FLAGS"}
_DEVICE_OPTION = re.compile(r"HIP|ROCM|AMD|CUDA|NVIDIA|NVCC|GPU", re.I)
_CALL_DEPTH = 8          # a function that calls itself is read this deep, no deeper


def read_cmake(text: str, directory: Path, top: Path, functions: dict[str, tuple[list[str], str]] | None = None,
               given: dict[str, str] | None = None, options: dict[str, bool | None] | None = None) -> FileConfig:
    """What one CMakeLists.txt (in `directory`, of the project whose top is `top`) asks for.
    `functions`: those the files above it define (a call here reads their bodies with its
    arguments: gunrock's examples are `add_essentials_example(bfs)`, defined one level up);
    `given`: the cache variables the HIP build's configure sets (CMAKE_HIP_ARCHITECTURES);
    `options`: the option() defaults the files above it leave (faiss's FAISS_ENABLE_CUVS)."""
    config = FileConfig()
    config.functions.update(functions or {})
    reader = _Reader(directory, top, given or {})
    reader.options.update(options or {})
    _walk(text, reader, config, [], None, 0)
    config.assumed, config.options = reader.known.assumed, reader.options
    config.unbuilt = reader.unbuilt.left_out(config.target_sources)
    return config


def _walk(text: str, reader: "_Reader", config: FileConfig, outer: list[Branch], call_line: int | None,
          depth: int, body_line: int | None = None) -> None:
    """Read the commands of `text` inside the blocks `outer` (a function's body: its call's;
    `body_line`: where that body starts, when this file defines it)."""
    cmds = commands(text)
    blocks: list[Branch] = []
    conds: list[Command | None] = []     # each block's if() while in its first branch, else None
    loops: list[bool] = []               # each block: a loop or block() (its body runs apart)
    i = 0
    while i < len(cmds):
        cmd, name = cmds[i], cmds[i].lower
        line = call_line or text.count("\n", 0, cmd.start) + 1
        if name in ("function", "macro"):
            if depth == 0 and values_of(cmd):     # where a template read in its body is (cmake_unbuilt.py)
                reader.defined_at[values_of(cmd)[0].lower()] = text.count("\n", 0, cmd.close) + 1
            i = _define(text, cmds, i, config)
            continue
        if name not in CLOSE:     # what a first configure gives the variables (cmake_settle.py)
            reader.known.command(name, values_of(cmd), line, settle.state(outer + blocks, sum(loops), depth))
        if name in OPEN:
            blocks.append(settle.settled(cmd, opened(cmds, i), None, reader.known, outer + blocks))
            conds.append(cmd if name == "if" else None)
            loops.append(name in ("foreach", "while", "block"))
        elif name in ("else", "elseif") and blocks:
            blocks[-1], conds[-1] = settle.settled(cmd, switched(cmds, i, blocks[-1]), blocks[-1], reader.known,
                                                   outer + blocks[:-1]), None
        elif name in CLOSE:
            blocks, conds, loops = blocks[:-1], conds[:-1], loops[:-1]
        elif name == "option":
            reader.option(cmd, outer + blocks)
        elif name in config.functions and depth < _CALL_DEPTH:
            _walk(_called(config.functions[name], values_of(cmd)), reader, config, outer + blocks, line, depth + 1,
                  reader.defined_at.get(name) if depth == 0 else None)
        elif name == "set" and depth == 0 and "PARENT_SCOPE" in values_of(cmd):
            pass     # the parent directory's variable: this one's stays as it was (tiny-cuda-nn's TCNN_DEFINITIONS)
        else:
            stack = outer + blocks
            counted = not stack or counts(stack)
            reader.read(cmd, config, not counted)
            here = body_line + text.count("\n", 0, cmd.start) if body_line else line
            reader.unbuilt.command(name, values_of(cmd), here, reader.off_by_default(conds), reader._variable)
            if name == "list" and counted and any(b.hip for b in stack):
                reader.left_out(cmd, line, config)
            elif name == "add_subdirectory" and any(b.out for b in stack):
                reader.subdirectory_out(cmd, line, config)
            elif name == "add_subdirectory" and reader.off_by_default(conds) is not None:
                reader.subdirectory_out(cmd, line, config, OFF_WHY.format(reader.off_by_default(conds)))
        i += 1


def _define(text: str, cmds: list[Command], at: int, config: FileConfig) -> int:
    """Remember a function's or macro's parameters and body; the index after its end."""
    depth, end = 0, len(cmds)
    for j in range(at + 1, len(cmds)):
        depth += cmds[j].lower in OPEN
        if cmds[j].lower in CLOSE:
            if depth == 0:
                end = j
                break
            depth -= 1
    values = values_of(cmds[at])
    if values:
        body_end = cmds[end].start if end < len(cmds) else len(text)
        config.functions[values[0].lower()] = (values[1:], text[cmds[at].close + 1:body_end])
    return end + 1


def _called(function: tuple[list[str], str], args: list[str]) -> str:
    """A function's body with its parameters replaced by a call's arguments, as CMake gives them."""
    params, body = function
    names = {p: a for p, a in zip(params, args)}
    names.update({f"ARGV{n}": a for n, a in enumerate(args)})
    names.update(ARGV=";".join(args), ARGN=";".join(args[len(params):]), ARGC=str(len(args)))
    return _VAR.sub(lambda m: names.get(m.group(1), m.group(0)), body)


class _Reader:
    """Reads command after command; remembers list variables (`set`, `list(APPEND ...)`) whose
    items are literal, each with whether it was set under a condition."""

    def __init__(self, directory: Path, top: Path, given: dict[str, str]):
        self.directory = directory
        self.top = top
        self.given = given
        self.variables: dict[str, list[tuple[str, bool]]] = {name: [(value, False)] for name, value in given.items()}
        self.options: dict[str, bool | None] = {}   # option() defaults in the HIP build; None: unknown
        where = os.path.relpath(directory / "CMakeLists.txt", top)
        self.known = settle.Known(where, given, top_level=Path(directory) == Path(top))
        self.unbuilt = Unbuilt(str(directory))
        self.defined_at: dict[str, int] = {}     # this file's functions -> the line their body starts on

    def read(self, cmd: Command, config: FileConfig, conditional: bool) -> None:
        name, values = cmd.lower, values_of(cmd)
        if name in ("set", "list") and len(values) >= 2:
            self._assign(name, values, config, conditional)
        elif name == "set_property" and "PROPERTY" in values:
            at = values.index("PROPERTY")
            if at + 2 < len(values) and values[at + 1] in _STANDARD_PROPS:
                self._standard(values[at + 2], config)
        elif name == "set_target_properties" and "PROPERTIES" in values:
            pairs = values[values.index("PROPERTIES") + 1:]
            for key, value in zip(pairs[::2], pairs[1::2]):
                if key in _STANDARD_PROPS:
                    self._standard(value, config)
        elif name == "target_compile_features":
            for item in values[1:]:
                match = _FEATURE.match(item)
                if match:
                    self._standard(match.group(1), config)
        elif name in _OPTION_COMMANDS:
            items = values[1:] if name.startswith("target_") else values
            read_options(self._plain(items), self.directory, config, defines=False)
        elif name in ("include_directories", "target_include_directories"):
            items = values[1:] if name.startswith("target_") else values
            for item, _ in self._items(items):
                if item not in _INCLUDE_KEYWORDS:
                    config.add_include(plain_dir(item, self.directory))
        elif name in ("add_definitions", "add_compile_definitions", "target_compile_definitions"):
            self._definitions(name, values, config, conditional)
        elif name in _TARGET_COMMANDS and values:
            self._sources(values, config)
        elif name == "target_link_libraries" and len(values) > 1:
            self._links(values, config, conditional)

    def _assign(self, name: str, values: list[str], config: FileConfig, conditional: bool) -> None:
        if name == "list":
            if values[0] != "APPEND" or len(values) < 2:
                return
            var, items = values[1], values[2:]
        else:
            var, items = values[0], values[1:]
            if var in _STANDARD_VARS and items:
                self._standard(items[0], config)
            elif var in _FLAG_VARS:
                read_options(self._plain(items), self.directory, config, defines=False)
        if var in self.options and not (items and items[0].upper() in _FALSE):
            self.options[var] = None        # set ON (or to anything) here: no longer OFF by default
        if conditional and var in self.given:
            return          # `if(NOT CMAKE_HIP_ARCHITECTURES) set(... gfx90a)`: the configure's value stands
        cut = [i for i, v in enumerate(items) if v in ("CACHE", "PARENT_SCOPE")]
        items = items[:cut[0]] if cut else items
        resolved = [(item, conditional or under) for item, under in self._items(items)]
        self.variables[var] = (self.variables.get(var, []) if name == "list" else []) + resolved

    def left_out(self, cmd: Command, line: int, config: FileConfig) -> None:
        """`list(REMOVE_ITEM SOURCES a.cu ...)` in the HIP build's branch: the project's AMD build
        does not compile those files (CTranslate2's `elseif(WITH_HIP)` removes its AWQ kernels,
        whose PTX it never ported), so verify does not either."""
        values = values_of(cmd)
        if len(values) < 3 or values[0] != "REMOVE_ITEM":
            return
        for item, _ in self._items(values[2:]):
            config.hip_left_out.setdefault(os.path.normpath(os.path.join(self.directory, item)), line)

    def subdirectory_out(self, cmd: Command, line: int, config: FileConfig,
                         why: str = "only in a branch it does not take") -> None:
        """`add_subdirectory(experiments)` only in a branch the HIP build never takes (gunrock's
        `if(${ESSENTIALS_NVIDIA_BACKEND})`), or only under an option that build has OFF by default
        (`if(ESSENTIALS_BUILD_BENCHMARKS)`): the files under it are not in the project's AMD build."""
        values = values_of(cmd)
        items = self._items(values[:1])
        if items:
            folder = os.path.normpath(os.path.join(self.directory, items[0][0]))
            config.left_out_dirs.setdefault(folder, (line, values[0], why))

    def option(self, cmd: Command, stack: list[Branch]) -> None:
        """`option(NAME "help" OFF)`: whether the HIP build has it OFF by default. A declaration OFF
        anywhere leaves it OFF (a branch not taken declares nothing, and an undeclared option is
        false too); one ON counts unless in a branch that build never takes (gunrock declares
        ESSENTIALS_BUILD_TESTS ON under its NVIDIA condition, OFF in the else()), and makes it
        unknown under a condition that build may take. A set() before it wins (CMP0077)."""
        values = values_of(cmd)
        if not values or any(b.out for b in stack):
            return
        name = values[0]
        if len(values) > 2 and values[2].upper() not in _FALSE:
            self.options[name] = True if not stack or counts(stack) else None
        elif name not in self.options:
            self.options[name] = None if name in self.variables else False

    def off_by_default(self, conds: list[Command | None]) -> str | None:
        """The option, OFF by default in the HIP build and never set ON in this file, that one of the
        enclosing if()s tests alone (`if(ESSENTIALS_BUILD_BENCHMARKS)`, `if(${OPT})`); None when none
        does. An option that names a GPU vendor or HIP is what a port turns on (faiss's
        FAISS_ENABLE_ROCM is OFF by default): never one."""
        for cmd in conds:
            values = values_of(cmd) if cmd is not None else []
            name = values[0].strip("${}") if len(values) == 1 else ""
            if self.options.get(name, True) is False and not _DEVICE_OPTION.search(name):
                return name
        return None

    def _sources(self, values: list[str], config: FileConfig) -> None:
        """The literal source files of a target (add_library, add_executable, target_sources)."""
        sources = config.target_sources.setdefault(values[0], [])
        for value in values[1:]:
            items = self._items([value])
            if not items and value not in _SOURCE_KEYWORDS:
                config.partial_sources.add(values[0])
            for item, _ in items:
                if item not in _SOURCE_KEYWORDS:
                    sources.append(os.path.normpath(os.path.join(self.directory, item)))

    def _links(self, values: list[str], config: FileConfig, conditional: bool) -> None:
        """target_link_libraries: what a target's users get from the libraries it links (the
        definitions of an INTERFACE library; HIP's imported hip::host) depends on these."""
        exported = True           # the plain signature passes everything on
        for item, under in self._items(values[1:]):
            if item in _LINK_SCOPES:
                exported = item not in ("PRIVATE", "LINK_PRIVATE")
            elif item in ("debug", "optimized", "general"):
                continue
            elif not (conditional or under):
                config.add_link(values[0], item, exported)

    def _definitions(self, name: str, values: list[str], config: FileConfig, conditional: bool) -> None:
        target = values[0] if name == "target_compile_definitions" and values else None
        scope = None
        for item, under in self._items(values[1:] if target else values):
            if item in _SCOPES:
                scope = item
            if conditional or under or item in _SCOPES:
                continue
            if item.startswith("-D") and len(item) > 2:
                item = item[2:]
            elif name == "add_definitions":
                continue        # add_definitions takes any flag; only -D is a definition
            config.add_define(item, target=target, exported=scope in ("INTERFACE", "PUBLIC"))

    def _standard(self, value: str, config: FileConfig) -> None:
        if value.isdigit():
            config.add_std(f"c++{value}")

    def _plain(self, values: list[str]) -> list[str]:
        return [item for item, _ in self._items(values)]

    def _items(self, values: list[str]) -> list[tuple[str, bool]]:
        """The arguments as CMake list items, each with whether a condition set it; a `${VAR}` of a
        remembered list expands to its items, directory variables are resolved, and an item with
        any other variable or a generator expression is left out."""
        out: list[tuple[str, bool]] = []
        for value in values:
            for item in value.split(";"):
                item = item.strip()
                match = _VAR.fullmatch(item)
                if match and match.group(1) in self.variables:
                    out += self.variables[match.group(1)]
                    continue
                resolved = self._resolve(item)
                if resolved:
                    out.append((resolved, False))
        return out

    def _resolve(self, item: str) -> str | None:
        if item.startswith("$<"):
            parts = _genex(item)
            if parts is None:
                return None
            head, item = parts
            if head != "BUILD_INTERFACE":
                holds = self._condition(head)
                if holds is not True:
                    return "" if holds is False else None
        for var in _VAR.findall(item):
            value = self._variable(var)
            if value is None:
                return None
            item = item.replace("${" + var + "}", value)
        return None if "$" in item or "<" in item or ">" in item else item

    def _condition(self, head: str) -> bool | None:
        """A generator expression's condition the Linux build settles: `1`, `0`, `$<NOT:...>`,
        `$<PLATFORM_ID:Linux>`, `$<BOOL:${VAR}>` of a variable this file sets unconditionally
        (nccl-tests' `$<$<BOOL:${NCCL_OS_LINUX}>:NCCL_OS_LINUX>`); None for any other."""
        if head in ("0", "1"):
            return head == "1"
        parts = _genex(head)
        if parts is None:
            return None
        name, arg = parts
        if name == "NOT":
            inner = self._condition(arg)
            return None if inner is None else not inner
        if name == "PLATFORM_ID":
            return "Linux" in arg.split(",")
        if name != "BOOL":
            return None
        for var in _VAR.findall(arg):
            items = self.variables.get(var)
            if items is None or any(under for _, under in items):
                return None
            arg = arg.replace("${" + var + "}", ";".join(item for item, _ in items))
        if "$" in arg:
            return None
        return not (arg.upper() in _FALSE or arg.upper().endswith("-NOTFOUND"))

    def _variable(self, name: str) -> str | None:
        if name in ("CMAKE_CURRENT_SOURCE_DIR", "CMAKE_CURRENT_LIST_DIR"):
            return str(self.directory)
        if name in ("PROJECT_SOURCE_DIR", "CMAKE_SOURCE_DIR") or name.endswith("_SOURCE_DIR"):
            return str(self.top)
        # a variable remembered with one literal value that no condition set: gunrock's
        # `SM_TARGET=${CMAKE_HIP_ARCHITECTURES}` (given: verify's --offload-arch), and
        # `ESSENTIALS_VERSION=${ESSENTIALS_VERSION}` of `set(ESSENTIALS_VERSION "${MAJOR}.${MINOR}...")`
        items = self.variables.get(name)
        if items is not None and len(items) == 1 and not items[0][1]:
            return items[0][0]
        return None


def _genex(text: str) -> tuple[str, str] | None:
    """`$<HEAD:BODY>` split at its first top-level colon; None when it is not one whole expression."""
    if not (text.startswith("$<") and text.endswith(">")):
        return None
    depth = 0
    for i in range(2, len(text) - 1):
        if text.startswith("$<", i):
            depth += 1
        elif text[i] == ">":
            depth -= 1
            if depth < 0:
                return None
        elif text[i] == ":" and depth == 0:
            return text[2:i], text[i + 1:-1]
    return None
