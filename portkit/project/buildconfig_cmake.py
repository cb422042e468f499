"""The build configuration a CMakeLists.txt asks for, read with the CMake lexer, never evaluated.

Read: `CMAKE_CXX_STANDARD` / `CMAKE_CUDA_STANDARD` / `CMAKE_HIP_STANDARD`, the `CXX_STANDARD`-
style target properties, `cxx_std_NN` / `cuda_std_NN` compile features and `-std=` options;
`include_directories` / `target_include_directories`; `add_compile_definitions`,
`add_definitions(-D...)`, `target_compile_definitions` (per target, and what it passes on:
INTERFACE, PUBLIC); `target_link_libraries` (which libraries pass their definitions on to whom).

Only the variables that name directories are resolved (`CMAKE_CURRENT_SOURCE_DIR`,
`CMAKE_CURRENT_LIST_DIR`: this file's directory; `PROJECT_SOURCE_DIR`, `CMAKE_SOURCE_DIR`,
`<name>_SOURCE_DIR`: the top CMakeLists.txt's); a value with any other variable is dropped.
A block counts when the HIP build on Linux takes it: its condition names HIP, or it is the Linux
branch of an OS test (`if(UNIX)`, `CMAKE_SYSTEM_NAME STREQUAL "Linux"`, the else() of `if(WIN32)`).
A generator expression counts when that build settles its condition (`$<$<BOOL:${VAR}>:...>` of a
variable set in such a block, `$<PLATFORM_ID:Linux>`); any other is dropped.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .buildvalues import HIP_CONDITION, FileConfig, plain_dir, read_options
from ..buildfiles.cmake_lexer import Command, commands

_VAR = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
_FEATURE = re.compile(r"^(?:cxx|cuda|hip)_std_(\d+)$")
_STANDARD_VARS = {"CMAKE_CXX_STANDARD", "CMAKE_CUDA_STANDARD", "CMAKE_HIP_STANDARD"}
_STANDARD_PROPS = {"CXX_STANDARD", "CUDA_STANDARD", "HIP_STANDARD"}
_INCLUDE_KEYWORDS = {"SYSTEM", "BEFORE", "AFTER", "INTERFACE", "PUBLIC", "PRIVATE"}
_SCOPES = {"INTERFACE", "PUBLIC", "PRIVATE"}
_OPEN = {"if", "foreach", "while", "function", "macro", "block"}
_CLOSE = {"endif", "endforeach", "endwhile", "endfunction", "endmacro", "endblock"}
_RUN = {"foreach", "block"}      # blocks whose body runs where the code around them does
_LINUX = {"UNIX", "LINUX", "CMAKE_HOST_UNIX", "CMAKE_HOST_LINUX"}
_NOT_LINUX = {"WIN32", "MSVC", "APPLE", "MINGW", "CYGWIN", "MSYS", "IOS", "ANDROID", "CMAKE_HOST_WIN32",
              "CMAKE_HOST_APPLE"}
_SYSTEM_NAMES = {"CMAKE_SYSTEM_NAME", "CMAKE_HOST_SYSTEM_NAME"}
_LINK_SCOPES = {"INTERFACE", "PUBLIC", "PRIVATE", "LINK_PUBLIC", "LINK_PRIVATE", "LINK_INTERFACE_LIBRARIES"}
_FALSE = {"", "0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND"}
_OPTION_COMMANDS = {"add_compile_options", "target_compile_options"}
_TARGET_COMMANDS = {"add_library", "add_executable", "target_sources", "cuda_add_library", "cuda_add_executable"}
_SOURCE_KEYWORDS = {"STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE", "PUBLIC", "PRIVATE", "EXCLUDE_FROM_ALL",
                    "WIN32", "MACOSX_BUNDLE", "ALIAS", "IMPORTED", "GLOBAL", "FILE_SET", "TYPE", "HEADERS"}
_FLAG_VARS = {"CMAKE_CXX_FLAGS", "CMAKE_CUDA_FLAGS", "CMAKE_HIP_FLAGS"}


def read_cmake(text: str, directory: Path, top: Path) -> FileConfig:
    """What one CMakeLists.txt (in `directory`, of the project whose top is `top`) asks for."""
    config = FileConfig()
    reader = _Reader(directory, top)
    # per open block: (the HIP build takes it, no branch so far runs on Linux, it names HIP)
    blocks: list[tuple[bool, bool, bool]] = []
    for cmd in commands(text):
        name = cmd.lower
        if name in _OPEN:
            blocks.append(_branch(cmd, True) if name == "if" else (name in _RUN, False, False))
        elif name in ("else", "elseif") and blocks:
            blocks[-1] = _branch(cmd, blocks[-1][1]) if name == "elseif" else (blocks[-1][1], False, False)
        elif name in _CLOSE:
            blocks = blocks[:-1]
        else:
            conditional = not all(taken for taken, _, _ in blocks)
            reader.read(cmd, config, conditional)
            if name == "list" and not conditional and any(hip for _, _, hip in blocks):
                reader.left_out(cmd, text.count("\n", 0, cmd.start) + 1, config)
    return config


def _branch(cmd: Command, others_ruled_out: bool) -> tuple[bool, bool, bool]:
    """An if()/elseif() branch: is it the HIP build's, are it and those before it never taken on
    Linux, and does it name HIP. ROCm builds on Linux, so `if(UNIX)`, `if(CMAKE_SYSTEM_NAME
    STREQUAL "Linux")` and the else() of `if(WIN32)` are taken (nccl-tests defines NCCL_OS_LINUX
    there, and its os.h needs it)."""
    linux, hip = _on_linux(cmd), _names_hip(cmd)
    return hip or (others_ruled_out and linux is True), others_ruled_out and linux is False, hip


def _on_linux(cmd: Command) -> bool | None:
    """Whether a condition holds on Linux: True, False, or None when it asks about anything else."""
    values, negate = _values(cmd), False
    while values and values[0].upper() == "NOT":
        values, negate = values[1:], not negate
    if len(values) == 1 and values[0] in _LINUX | _NOT_LINUX:
        known = values[0] in _LINUX
    elif len(values) == 3 and values[0].strip("${}") in _SYSTEM_NAMES and values[1] in ("STREQUAL", "MATCHES"):
        try:
            known = values[2] == "Linux" or (values[1] == "MATCHES" and re.search(values[2], "Linux") is not None)
        except re.error:
            return None
    else:
        return None
    return known != negate


def _names_hip(cmd: Command) -> bool:
    """A condition that holds in the HIP build: `if(GGML_HIP)`, `if(FAISS_ENABLE_ROCM)`; not `if(NOT ...)`."""
    values = _values(cmd)
    return any(HIP_CONDITION.search(v) for v in values) and not any(v.upper() == "NOT" for v in values)


def _values(cmd: Command) -> list[str]:
    """The arguments, an unquoted one and a quoted one that touch (`A="${B}"`) joined as CMake does."""
    out: list[str] = []
    end = -1
    for arg in cmd.args:
        if arg.kind == "paren":
            end = -1
            continue
        if arg.start == end and out:
            out[-1] += arg.text
        else:
            out.append(arg.value)
        end = arg.end
    return out


class _Reader:
    """Reads command after command; remembers list variables (`set`, `list(APPEND ...)`) whose
    items are literal, each with whether it was set under a condition."""

    def __init__(self, directory: Path, top: Path):
        self.directory = directory
        self.top = top
        self.variables: dict[str, list[tuple[str, bool]]] = {}

    def read(self, cmd: Command, config: FileConfig, conditional: bool) -> None:
        name, values = cmd.lower, _values(cmd)
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
        cut = [i for i, v in enumerate(items) if v in ("CACHE", "PARENT_SCOPE")]
        items = items[:cut[0]] if cut else items
        resolved = [(item, conditional or under) for item, under in self._items(items)]
        self.variables[var] = (self.variables.get(var, []) if name == "list" else []) + resolved

    def left_out(self, cmd: Command, line: int, config: FileConfig) -> None:
        """`list(REMOVE_ITEM SOURCES a.cu ...)` in the HIP build's branch: the project's AMD build
        does not compile those files (CTranslate2's `elseif(WITH_HIP)` removes its AWQ kernels,
        whose PTX it never ported), so verify does not either."""
        values = _values(cmd)
        if len(values) < 3 or values[0] != "REMOVE_ITEM":
            return
        for item, _ in self._items(values[2:]):
            config.hip_left_out.setdefault(os.path.normpath(os.path.join(self.directory, item)), line)

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
