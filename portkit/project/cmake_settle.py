"""The if() conditions of a CMakeLists.txt that a default configure settles, from values verify knows.

tiny-cuda-nn's headers stop at `#error "TCNN_HALF_PRECISION is undefined"` unless the build
defines it, and its CMake does so only through a condition and an option whose default is a
variable (CMakeLists.txt:205-218):

    if (MIN_GPU_ARCH EQUAL 61 OR MIN_GPU_ARCH LESS_EQUAL 52) set(TCNN_HALF_PRECISION_DEFAULT OFF)
    else() set(TCNN_HALF_PRECISION_DEFAULT ON) endif()
    option(TCNN_HALF_PRECISION "..." ${TCNN_HALF_PRECISION_DEFAULT})
    if (TCNN_HALF_PRECISION) list(APPEND TCNN_DEFINITIONS -DTCNN_HALF_PRECISION=1) else() ... =0

The branch model (cmake_branches.py) knows HIP, vendor and OS tests only, so every definition there
was left out. `Known` follows the file as CMake runs it on a first configure with no -D but the
HIP build's own (CMAKE_HIP_ARCHITECTURES: verify's --offload-arch, whose value stands as
buildconfig_cmake.py says): a variable is known when every command that may write it is one read
here (`set`, `list(APPEND|GET)`, `string(REPLACE)`, `option`) and runs for sure, with known values;
any other write, or one in a branch that may or may not run, makes it unknown. A variable no
command has written is empty, in the project's top CMakeLists.txt only, before any include() or
find_package() (which may set any name), and never a CMAKE_, PROJECT_ or project-named one.

A condition is settled the way CMake's if() evaluates it (constants, variables but a GPU build's
switch, which a port turns on whatever its default, NOT, AND, OR,
DEFINED, EQUAL / LESS / LESS_EQUAL / GREATER / GREATER_EQUAL: false unless both sides are numbers,
STREQUAL) when every value it reads is known; anything else (parentheses, an unknown value, an
environment variable, an operator not listed) leaves it unsettled, as before: never a guess. Each
value a settled condition read is recorded (`assumed`), so the report says what verify took.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .cmake_branches import Branch
from ..buildfiles.cmake_lexer import Command

_TRUE = {"1", "ON", "YES", "TRUE", "Y"}
_FALSE = {"", "0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND"}
_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_VAR = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
_NAME = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")
_COMPARE = {"EQUAL": lambda a, b: a == b, "LESS": lambda a, b: a < b, "LESS_EQUAL": lambda a, b: a <= b,
            "GREATER": lambda a, b: a > b, "GREATER_EQUAL": lambda a, b: a >= b}
# commands that write no variable of the directory: their arguments never make a value unknown
_READ_ONLY = {"message", "add_library", "add_executable", "add_subdirectory", "add_compile_options",
              "add_compile_definitions", "add_definitions", "include_directories", "link_directories",
              "link_libraries", "install", "set_target_properties", "set_source_files_properties",
              "set_property", "cmake_minimum_required", "enable_language", "add_custom_target",
              "add_custom_command", "add_dependencies", "add_test", "source_group", "cmake_policy"}
_OPAQUE = {"include", "find_package", "fetchcontent_makeavailable", "fetchcontent_populate",
           "externalproject_add", "cpmaddpackage", "load_cache"}
_IDENTITY = {"SORT", "REVERSE", "REMOVE_DUPLICATES"}   # the same one-item list after
# a switch of the GPU build (`if(WITH_CUDA)`, `if(FAISS_ENABLE_GPU)`, `if(NOT USE_HIP)`): what a port turns
# on or off, whatever its default, is left to the branch model (cmake_branches.py); a value of such a
# name compared (`MIN_GPU_ARCH EQUAL 61`) is no switch
_SWITCH = re.compile(r"HIP|ROCM|AMD|CUDA|NVIDIA|NVCC|GPU", re.I)


class Known:
    """The values of a directory's variables a first configure gives, as far as verify knows them."""

    def __init__(self, where: str, given: dict[str, str], top_level: bool):
        self.where = where                                   # the file, relative to the tree
        self.given = set(given)
        self.values = {name: (value, "the HIP build's configure") for name, value in given.items()}
        self.unknown: set[str] = set()
        self.written: set[str] = set()
        self.prefixes = ["CMAKE_", "PROJECT_"]
        self.opaque = not top_level                          # a parent's variables are not seen here
        self.assumed: list[str] = []
        self._read: list[str] = []                           # what the condition being settled read

    def command(self, name: str, values: list[str], line: int, state: str) -> None:
        """Follow one command; `state`: "sure" (it runs), "maybe", or "never"."""
        if state == "never":
            return
        if name in ("if", "elseif", "else", "endif", "while", "block", "endblock", "endforeach", "endwhile"):
            return
        if name == "foreach" and values:
            self._write(values[0], None, line, "maybe")
        elif name in _OPAQUE:
            self.opaque = True
        elif name == "project" and values:
            self.prefixes.append(values[0].upper() + "_")
        elif name == "set" and values:
            self._set(values, line, state)
        elif name == "option" and values:
            self._option(values, line, state)
        elif name == "list" and len(values) >= 2:
            self._list(values, line, state)
        elif name == "string" and len(values) >= 5 and values[0] == "REPLACE":
            old, new, out = values[1], values[2], values[3]
            text = self._expand(";".join(values[4:]))
            self._write(out, None if text is None or not old else text.replace(old, new), line, state)
        elif name not in _READ_ONLY and not name.startswith("target_"):
            for value in values:             # anything else may write any name it is given
                if _NAME.match(value):
                    self._write(value, None, line, state)

    def _set(self, values: list[str], line: int, state: str) -> None:
        var, items = values[0], values[1:]
        if "PARENT_SCOPE" in items:
            return                          # not this directory's (a function's: its body is "maybe")
        if "CACHE" in items:
            items = items[:items.index("CACHE")]
            if var in self.values or var in self.unknown:
                return                      # a normal variable, or the configure's value, stands
        value = self._expand(";".join(items))
        self._write(var, value, line, state)

    def _option(self, values: list[str], line: int, state: str) -> None:
        var = values[0]
        if var in self.values or var in self.unknown or var in self.written:
            return                          # CMP0077: a variable set before the option wins
        default = self._expand(values[2]) if len(values) > 2 else "OFF"
        if default is not None:
            default = "ON" if _truth(default) else "OFF"
        self._write(var, default, line, state, "'s default")

    def _list(self, values: list[str], line: int, state: str) -> None:
        sub, var = values[0], values[1]
        if sub == "APPEND":
            have = self.values.get(var, ("", ""))[0] if var not in self.unknown else None
            more = self._expand(";".join(values[2:]))
            joined = None if have is None or more is None else ";".join(x for x in (have, more) if x)
            self._write(var, joined, line, state)
        elif sub == "GET" and len(values) >= 4:
            items = self.value(var)
            index = values[2]
            got = None
            if items is not None and index.lstrip("-").isdigit() and len(values) == 4:
                parts = items.split(";") if items else []
                got = parts[int(index)] if -len(parts) <= int(index) < len(parts) else None
            source = self.values.get(var, ("", ""))[1]
            how = f": item {index} of {var}" + (f", from {source}" if not source.startswith(self.where) else "")
            self._write(values[3], got, line, state, how)
        elif sub in _IDENTITY and (self.value(var) or ";").count(";") == 0 and len(values) >= 2:
            return                          # sorting one item changes nothing
        else:
            for name in values[1:]:
                if _NAME.match(name):
                    self._write(name, None, line, state)

    def _write(self, var: str, value: str | None, line: int, state: str, how: str = "") -> None:
        self.written.add(var)
        if var in self.given and state != "sure":
            return                          # the configure's value stands (buildconfig_cmake.py)
        if value is None or state != "sure":
            self.values.pop(var, None)
            self.unknown.add(var)
            return
        self.unknown.discard(var)
        if self.values.get(var, (None,))[0] != value:      # rewritten to the same value: where it came from stays
            self.values[var] = (value, f"{self.where}:{line}{how}")

    def value(self, name: str) -> str | None:
        """The variable's value; "" when no command wrote it and nothing unseen could; None: unknown."""
        if name in self.values:
            return self.values[name][0]
        return "" if self._unset(name) else None

    def _unset(self, name: str) -> bool:
        return not (self.opaque or name in self.unknown or name in self.written
                    or any(name.upper().startswith(p) for p in self.prefixes))

    def _expand(self, text: str) -> str | None:
        for var in sorted(set(_VAR.findall(text))):
            value = self._use(var)
            if value is None:
                return None
            text = text.replace("${" + var + "}", value)
        return None if "$" in text else text

    def settle(self, args: list[tuple[str, bool]]) -> bool | None:
        """What the condition `args` ((value, quoted) each) holds on the first configure; None when
        it reads anything not known. A settled one records the values it read in `assumed`."""
        self._read = []
        result = self._or(args)
        if result is not None:
            for item in self._read:
                if item not in self.assumed:
                    self.assumed.append(item)
        return result

    def _or(self, args):
        parts = _split(args, "OR")
        if len(parts) > 1:
            values = [self._and(p) for p in parts]
            return True if True in values else None if None in values else False
        return self._and(args)

    def _and(self, args):
        parts = _split(args, "AND")
        if len(parts) > 1:
            values = [self._not(p) for p in parts]
            return False if False in values else None if None in values else True
        return self._not(args)

    def _not(self, args):
        if args and args[0] == ("NOT", False):
            inner = self._not(args[1:])
            return None if inner is None else not inner
        return self._term(args)

    def _term(self, args):
        if len(args) == 1:
            text, quoted = args[0]
            if text.upper() in _TRUE | _FALSE or _NUMBER.fullmatch(text) or text.upper().endswith("-NOTFOUND"):
                return _truth(text, constant=True)
            if quoted or not _NAME.match(text) or _SWITCH.search(text):
                return None
            value = self._use(text)
            return None if value is None else _truth(value)
        if len(args) == 2 and args[0] == ("DEFINED", False) and _NAME.match(args[1][0]) \
                and not _SWITCH.search(args[1][0]):
            value = self._use(args[1][0])
            return None if value is None else args[1][0] in self.values
        if len(args) == 3 and not args[1][1] and args[1][0] in (*_COMPARE, "STREQUAL"):
            left, right = self._operand(args[0]), self._operand(args[2])
            if left is None or right is None:
                return None
            if args[1][0] == "STREQUAL":
                return left == right
            a, b = _number(left), _number(right)
            return None if a is None or b is None else _COMPARE[args[1][0]](a, b)
        return None

    def _operand(self, arg: tuple[str, bool]) -> str | None:
        """A binary operator's side: an unquoted name of a variable is its value, and a name no
        command set stands for itself, as in CMake; `${X}` is expanded; anything else is literal."""
        text, quoted = arg
        if "${" in text:
            return self._expand(text)
        if quoted or not _NAME.match(text):
            return text
        if text in self.values:
            return self._use(text)
        return text if self._use(text) is not None else None

    def _use(self, name: str) -> str | None:
        """The variable's value (value()), noted for `assumed` when known."""
        value = self.value(name)
        if value is not None:
            self._note(name)
        return value

    def _note(self, name: str) -> None:
        if name in self.values:
            value, where = self.values[name]
            self._read.append(f"{name}={value or '(empty)'} ({where})")
        else:
            self._read.append(f"{name} unset ({self.where})")


def _split(args: list[tuple[str, bool]], word: str) -> list[list[tuple[str, bool]]]:
    parts: list[list[tuple[str, bool]]] = [[]]
    for arg in args:
        if arg == (word, False):
            parts.append([])
        else:
            parts[-1].append(arg)
    return parts if all(parts) else [args]


def _truth(value: str, constant: bool = False) -> bool:
    """if(<constant>) and if(<variable>): a false constant is false; a number constant is true
    when not zero; any other value of a variable is true."""
    upper = value.upper()
    if upper in _FALSE or upper.endswith("-NOTFOUND"):
        return False
    number = _number(value) if constant and upper not in _TRUE else None
    return True if number is None or number != number else number != 0


def _number(text: str) -> float | None:
    """The number CMake reads off the front of a string (`%lg`); NaN for none, so that a numeric
    test is false; None where CMake's reading differs from this one's (inf, nan, hexadecimal)."""
    if text.strip().lower().startswith(("inf", "nan", "0x", "-inf", "+inf", "-0x", "+0x")):
        return None
    match = _NUMBER.match(text)
    return float(match.group(0)) if match else float("nan")


def args_of(cmd: Command) -> list[tuple[str, bool]] | None:
    """A condition's arguments, each with whether it was quoted; None with parentheses or arguments
    that touch (`A"b"`): not read here."""
    out, end = [], -1
    for arg in cmd.args:
        if arg.kind == "paren" or arg.start == end:
            return None
        out.append((arg.value, arg.kind != "unquoted"))
        end = arg.end
    return out


def settled(cmd: Command, block: Branch, before: Branch | None, known: Known, around: list[Branch]) -> Branch:
    """The block `cmd` (if, elseif, else) opens inside `around`, with what a first configure decides
    of it where the branch model leaves it open (neither taken nor left out): an if() settled true
    runs for sure and the rest of its chain never does; settled false, never, and the next branch is
    settled in turn. Inside a branch that never runs nothing is settled (nor said)."""
    chain = before.chain if before is not None else False
    if cmd.lower not in ("if", "elseif", "else") or block.taken or state(around, 0, 0) == "never":
        return replace(block, chain=None)
    if chain is True:
        return replace(block, settled=False, chain=True)
    if block.out or chain is None:
        return replace(block, chain=chain)
    holds = True if cmd.lower == "else" else (lambda a: None if a is None else known.settle(a))(args_of(cmd))
    return replace(block, settled=holds, chain=holds)


def state(stack: list[Branch], loops: int, depth: int) -> str:
    """Whether a command inside `stack` runs on a first configure: "never" (a branch left out or
    settled false), "sure" (every branch taken or settled true, outside loops and function bodies,
    which run any number of times and have their own scope), else "maybe". A branch the model takes
    because it names HIP is "maybe": that says which build it is for, not what a configure sets."""
    if any(b.out or b.settled is False for b in stack):
        return "never"
    if depth == 0 and loops == 0 and all((b.taken and not b.hip) or b.settled is True for b in stack):
        return "sure"
    return "maybe"
