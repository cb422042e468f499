"""The state of one CMake file's migration, and the edit helpers every command handler uses.

`CMakeFile` holds what the handlers learn as they go (sources held in variables, ROCm packages
to find, arguments already rewritten) and the lines to insert; the helpers below turn "replace
this argument / remove this command / add a line after it" into byte edits on the ScanContext.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.context import ScanContext
from .cmake_lexer import Arg, Command
from .table import BuildTable
from ..core.edits import EditKind


@dataclass
class CMakeFile:
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
    found: set[str] = field(default_factory=set)                  # ROCm packages a find_package finds now

    @property
    def targets(self) -> tuple[str, ...]:
        return self.ctx.options.offload_arch


def edit(f: CMakeFile, arg: Arg, text: str) -> None:
    f.ctx.edit(arg.start, arg.end, text.encode("latin-1"), "build", covers=True, kind=EditKind.BUILD)
    f.done.add(arg.start)


def value_end(args: list[Arg], start: int) -> int:
    for k in range(start, len(args)):
        if args[k].value in ("CACHE", "PARENT_SCOPE"):
            return k
    return len(args)


def is_on(values: list[str]) -> bool:
    return bool(values) and values[0].upper() in ("ON", "TRUE", "YES", "1", "Y")


def delete_arg(f: CMakeFile, cmd: Command, k: int) -> None:
    arg = cmd.args[k]
    f.ctx.edit(cmd.args[k - 1].end, arg.end, b"", "build", covers=True, kind=EditKind.BUILD)
    f.done.add(arg.start)


def delete_pair(f: CMakeFile, name: Arg, values: list[Arg]) -> None:
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
    f.ctx.edit(start, end, b"", "build", covers=True, kind=EditKind.BUILD)
    f.done.add(name.start)
    f.done.update(v.start for v in values)


def _line_bounds(f: CMakeFile, cmd: Command) -> tuple[int, int, str]:
    """Start of the command's line, the end of its last line (after any comment), its indentation."""
    text = f.text
    line_start = text.rfind("\n", 0, cmd.start) + 1
    indent = text[line_start:cmd.start]
    if indent.strip():
        indent = ""
    line_end = text.find("\n", cmd.close)
    return line_start, (len(text) if line_end == -1 else line_end), indent


def insert_after(f: CMakeFile, cmd: Command, line: str) -> None:
    _, line_end, indent = _line_bounds(f, cmd)
    f.inserts.setdefault(line_end, []).append(f"\n{indent}{line}")


def insert_before(f: CMakeFile, cmd: Command, line: str) -> None:
    line_start, _, indent = _line_bounds(f, cmd)
    if f.text[line_start:cmd.start].strip():
        line_start = cmd.start
    f.inserts.setdefault(line_start, []).append(f"{indent}{line}\n")


def replace_command(f: CMakeFile, cmd: Command, lines: list[str]) -> None:
    """Replace the command by `lines` (same indentation); none removes its whole line."""
    line_start, line_end, indent = _line_bounds(f, cmd)
    alone = not f.text[line_start:cmd.start].strip() and not f.text[cmd.close + 1:line_end].strip()
    if lines:
        f.ctx.edit(cmd.start, cmd.close + 1, f"\n{indent}".join(lines).encode("latin-1"), "build", covers=True, kind=EditKind.BUILD)
    elif alone:
        end = min(line_end + 1, len(f.text))
        f.ctx.edit(line_start, end, b"", "build", covers=True, kind=EditKind.BUILD)
    else:
        f.ctx.edit(cmd.start, cmd.close + 1, b"", "build", covers=True, kind=EditKind.BUILD)
    f.done.update(a.start for a in cmd.args)


def need(f: CMakeFile, package: str, at: int) -> None:
    if package and package not in f.packages:
        f.packages[package] = at
