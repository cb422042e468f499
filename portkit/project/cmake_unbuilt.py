"""Files a CMakeLists.txt names that its default build never compiles as they are.

Two kinds, each skipped by verify with the CMake line that says so (buildconfig.left_out_why):

- a template: a file the build reads as text (`file(READ FILE VAR)`, configure_file's input) and no
  target lists as a source. faiss reads impl/scan/IVFInterleavedScanKernelTemplate.cu, replaces
  SUB_CODEC_TYPE and the other placeholders with string(REPLACE), and compiles the copies
  file(WRITE) puts in the build folder; the template alone stops at its first placeholder. A
  variable of the path that cannot be resolved (faiss's `${GPU_EXT_PREFIX}`, set in the top file
  under its ROCm switch) matches any name in that place, as the file on disk settles it.
- a source only an option OFF by default adds: a list(APPEND)/set()/target_sources()/add_library()
  naming it only under `if(OPT)` of such an option (faiss's cuVS units under
  `if(FAISS_ENABLE_CUVS)`), and no such command outside one. The same rule as for
  add_subdirectory (buildconfig_cmake.py: `off_by_default`): verify compiles the default build,
  and an option that names a GPU vendor or HIP is what a port turns on, never one of these.
"""

from __future__ import annotations

import glob
import os
import re
from typing import Callable

_VAR = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
_SOURCE_COMMANDS = {"list", "set", "target_sources", "add_library", "add_executable", "cuda_add_library",
                    "cuda_add_executable"}
_CUT = {"CACHE", "PARENT_SCOPE"}
OFF_WHY = "only under {}, OFF by default (verify compiles the default build)"


class Unbuilt:
    """What one CMakeLists.txt's commands say about the files no default build compiles."""

    def __init__(self, directory: str):
        self.directory = directory
        self.templates: dict[str, tuple[int, str]] = {}    # absolute file -> (line, why)
        self.optional: dict[str, tuple[int, str]] = {}     # absolute file -> (line, why)
        self.named: set[str] = set()    # files a source command names outside an OFF option

    def command(self, name: str, values: list[str], line: int, option: str | None,
                resolve: Callable[[str], str | None]) -> None:
        """Read one command; `option`: the OFF-by-default option it is only under, if any;
        `resolve`: the reader's value of a variable (None when it has none)."""
        if name == "file" and len(values) >= 3 and values[0] == "READ":
            self._template(values[1], line, f"file(READ {values[1]}) reads it as a template", resolve)
        elif name == "configure_file" and values:
            self._template(values[0], line, f"configure_file({values[0]}) reads it as a template", resolve)
        elif name in _SOURCE_COMMANDS:
            files = self._literal(name, values, resolve)
            if option is None:
                self.named.update(files)
                return
            written = f"{name}({' '.join(values[:2] if name == 'list' else values[:1])} ...)"
            for file in files:
                self.optional.setdefault(file, (line, f"{written} {OFF_WHY.format(option)}"))

    def left_out(self, target_sources: dict[str, list[str]]) -> dict[str, tuple[int, str]]:
        """The files no default build compiles: templates no target lists, and sources only an
        OFF option adds."""
        listed = {f for sources in target_sources.values() for f in sources}
        out = {f: (line, f"{why}, and no target lists it") for f, (line, why) in self.templates.items()
               if f not in listed}
        out.update((f, where) for f, where in self.optional.items() if f not in self.named and f not in out)
        return out

    def _template(self, path: str, line: int, why: str, resolve: Callable[[str], str | None]) -> None:
        pattern = _pattern(path, resolve)
        if pattern is None:
            return
        if not os.path.isabs(pattern):
            pattern = os.path.join(glob.escape(self.directory), pattern)
        for file in sorted(glob.glob(pattern)):
            self.templates.setdefault(os.path.normpath(file), (line, why))

    def _literal(self, name: str, values: list[str], resolve: Callable[[str], str | None]) -> set[str]:
        """The files a source command writes out (not those of a `${LIST}` it expands)."""
        if name == "list":
            items = values[2:] if len(values) > 2 and values[0] == "APPEND" else []
        else:
            items = values[1:]
        cut = [i for i, v in enumerate(items) if v in _CUT]
        out = set()
        for item in items[:cut[0]] if cut else items:
            if _VAR.fullmatch(item) or "$<" in item:
                continue
            text = _pattern(item, resolve, wild=False)
            if text:
                out.add(os.path.normpath(os.path.join(self.directory, text)))
        return out


def _pattern(path: str, resolve: Callable[[str], str | None], wild: bool = True) -> str | None:
    """`path` with its variables' values; one with none is `*` (a glob, the rest escaped) when
    `wild`, else the path is None."""
    parts, end = [], 0
    for match in _VAR.finditer(path):
        value = resolve(match.group(1))
        if value is None and not wild:
            return None
        parts.append(glob.escape(path[end:match.start()]) if wild else path[end:match.start()])
        parts.append("*" if value is None else (glob.escape(value) if wild else value))
        end = match.end()
    rest = path[end:]
    parts.append(glob.escape(rest) if wild else rest)
    text = "".join(parts)
    stem = os.path.basename(text).replace("*", "")
    if "$" in text or len(stem) < 3 or stem.startswith("."):
        return None     # `${NAME}.cu` alone would take every .cu of the folder for a template
    return text
