"""compile_commands.json: the preprocessor flags each translation unit is built with.

CMake (CMAKE_EXPORT_COMPILE_COMMANDS=ON), Bear and most build systems write one; hipify-clang
and SYCLomatic take it with `-p build/`. portkit reads only what decides how a file
preprocesses (include paths, macros, forced includes, the language standard) and whether it is
relocatable device code (nvcc -rdc=true / -dc, clang -fgpu-rdc). Everything
else on the line (nvcc's -gencode, -Xcompiler, host-compiler options) belongs to the CUDA
build and is left behind, and so are include paths into the CUDA toolkit itself, which would
put CUDA's headers in front of HIP's.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import PortkitError

NAME = "compile_commands.json"

# option -> canonical spelling; the value is joined (`-Ipath`) or the next argument (`-I path`)
_PATH_OPTIONS = {
    "-I": "-I", "--include-path": "-I", "-isystem": "-isystem", "-iquote": "-iquote",
    "-idirafter": "-idirafter", "-include": "-include", "--pre-include": "-include",
}
_VALUE_OPTIONS = {"-D": "-D", "--define-macro": "-D", "-U": "-U", "--undefine-macro": "-U"}
_OPTIONS = {**_PATH_OPTIONS, **_VALUE_OPTIONS}
_STD_OPTIONS = ("-std", "--std")
# relocatable device code changes what compiles (extern __device__ across files): nvcc's spellings
# and clang's all become clang's -fgpu-rdc
_RDC = {"-fgpu-rdc", "-rdc=true", "--relocatable-device-code=true", "-dc", "--device-c"}


@dataclass(frozen=True)
class CompileEntry:
    """One translation unit of the database: its file and the flags that preprocess it."""

    file: Path                      # absolute, as the database names it
    directory: Path                 # where the command ran (relative paths start there)
    flags: tuple[str, ...]          # canonical preprocessor flags, paths absolute


def find(path: Path) -> Path:
    """The database file, from `-p DIR` (a build directory) or `-p FILE`."""
    candidate = path / NAME if path.is_dir() else path
    if not candidate.is_file():
        raise PortkitError(f"{path}: no {NAME} there (generate one with cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON, "
                           f"or with bear -- make)")
    return candidate


def load(path: Path) -> list[CompileEntry]:
    """Every entry of the database at `path` (a directory or the file); bad files raise PortkitError."""
    db = find(path)
    try:
        raw = json.loads(db.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PortkitError(f"{db}: cannot read the compilation database: {exc}") from None
    except RecursionError:
        raise PortkitError(f"{db}: cannot read the compilation database: nested too deeply") from None
    if not isinstance(raw, list):
        raise PortkitError(f"{db}: not a compilation database (expected a JSON list of entries)")
    entries = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("file"), str) \
                or not isinstance(item.get("directory"), str):
            raise PortkitError(f"{db}: entry {index + 1} lacks 'file' or 'directory'")
        if isinstance(item.get("arguments"), list):
            args = [str(a) for a in item["arguments"]]
        elif isinstance(item.get("command"), str):
            try:
                args = shlex.split(item["command"])
            except ValueError as exc:
                raise PortkitError(f"{db}: entry {index + 1}: cannot split the command: {exc}") from None
        else:
            raise PortkitError(f"{db}: entry {index + 1} has neither 'arguments' nor 'command'")
        directory = Path(item["directory"])
        if not directory.is_absolute():
            directory = (db.parent / directory).absolute()
        file = Path(item["file"])
        entries.append(CompileEntry(file if file.is_absolute() else directory / file, directory,
                                    tuple(preprocessor_flags(args[1:], directory))))
    return entries


def preprocessor_flags(args: list[str], directory: Path) -> list[str]:
    """The include, macro and standard flags of one command line, in order, paths made absolute;
    and -fgpu-rdc when the unit is built as relocatable device code."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        option, value = _split(arg, _OPTIONS)
        if option is not None:
            if value is None:               # `-I dir`: the value is the next argument
                if i >= len(args):
                    break
                value, i = args[i], i + 1
            if option in _VALUE_OPTIONS.values():
                out.append(option + value)
                continue
            resolved = Path(value) if Path(value).is_absolute() else directory / value
            if option != "-include" and is_cuda_toolkit_dir(resolved):
                continue
            out += [option, str(resolved)] if option in ("-isystem", "-iquote", "-idirafter", "-include") \
                else [option + str(resolved)]
            continue
        if arg in _RDC:
            if "-fgpu-rdc" not in out:
                out.append("-fgpu-rdc")
            continue
        for std in _STD_OPTIONS:
            if arg.startswith(std + "="):
                out.append("-std=" + arg.split("=", 1)[1])
            elif arg == std and i < len(args):
                out.append("-std=" + args[i])
                i += 1
    return out


def _split(arg: str, options: dict[str, str]) -> tuple[str | None, str | None]:
    """(canonical option, value or None when it is the next argument) if `arg` is one of `options`."""
    for spelling, canonical in options.items():
        if arg == spelling:
            return canonical, None
        if spelling.startswith("--") and arg.startswith(spelling + "="):
            return canonical, arg[len(spelling) + 1:]
        if len(spelling) == 2 and arg.startswith(spelling) and len(arg) > 2:
            return canonical, arg[2:]
    return None, None


def is_cuda_toolkit_dir(path: Path) -> bool:
    """An include directory of the CUDA toolkit (it holds cuda_runtime.h or cuda.h)."""
    return (path / "cuda_runtime.h").is_file() or (path / "cuda_runtime_api.h").is_file()
