"""CMake switches: the sources an option off by default adds, so the estimate prices them apart.

faiss declares `option(FAISS_ENABLE_CUVS "..." OFF)` and its faiss/gpu/CMakeLists.txt says
`if(FAISS_ENABLE_CUVS) list(APPEND FAISS_GPU_SRC GpuIndexCagra.cu ...) endif()`: a plain
`cmake` never compiles those files, so they are as optional as the sources' `#if USE_NVIDIA_CUVS`
branches, and the SAME feature: a -D an optional block adds (`target_compile_definitions(...
USE_NVIDIA_CUVS=1)`) is named by the block's switch, so both land in one "not included" line.

A switch is a name the tree declares off: `option(X "doc")` (no default is OFF), `option(X "doc"
OFF)`, `cmake_dependent_option(X "doc" OFF ...)`, `set(X OFF CACHE BOOL ...)`, and never set on
elsewhere (`set(X ON)` in some branch makes its default unknown). An option defaulting ON is the
default build. A branch of an if()/elseif()/else() chain is optional when the default world
(every switch off, every ON option on) does not take it and the switch turned on does; anything
else a condition names (WIN32, a _FOUND, a TARGET) is unknown and taken to hold, as on the
machine the port is built on. So `if(NOT X) ... else() a.cu endif()` makes a.cu X's, and
`if(NOT Y)` for an ON option Y decides nothing (turning a default feature off is not a feature).

A source belongs to the switches of every command that builds it: add_library, add_executable,
target_sources and any project macro (faiss_gpu_test(TestGpuIndexCagra.cu)), through the
variables set() / list(APPEND) / file(GLOB) fill, and through add_subdirectory(). A source any
default command builds is default, whatever else lists it; a variable no command uses counts
where it is filled. Commands that only describe files (set_source_files_properties, install)
build nothing. Text is read, never run; a file over MAX_BYTES says nothing.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from dataclasses import dataclass, field

from .cmake_lexer import Command, commands
from .tree_paths import TreePaths

MAX_BYTES = 1 << 20
_TRUE = frozenset({"1", "on", "yes", "true", "y"})
_FALSE = frozenset({"0", "off", "no", "false", "n", "ignore", "notfound", ""})
_VAR = re.compile(r"\$\{(\w+)\}")
_DEFINE = re.compile(r"^(?:-D)?([A-Za-z_]\w*)(?:=.*)?$")
# commands that describe or install files without building them
_NOT_BUILDING = frozenset({"set_source_files_properties", "set_property", "get_property", "install", "message",
                           "source_group", "get_filename_component", "configure_file", "string", "file",
                           "option", "cmake_dependent_option", "if", "elseif", "else", "endif", "include",
                           "add_subdirectory", "list", "set", "unset", "function", "macro", "endfunction",
                           "endmacro", "foreach", "endforeach", "while", "endwhile", "return"})
_DEFINES = frozenset({"add_definitions", "add_compile_definitions", "target_compile_definitions",
                      "add_compile_options", "target_compile_options"})
_TESTING = frozenset({"enable_testing", "add_test", "gtest_discover_tests", "gtest_add_tests",
                      "catch_discover_tests", "doctest_discover_tests"})
_BINARY = frozenset({"STREQUAL", "EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL", "MATCHES",
                     "STRLESS", "STRGREATER", "STRLESS_EQUAL", "STRGREATER_EQUAL", "VERSION_EQUAL", "VERSION_LESS",
                     "VERSION_GREATER", "VERSION_LESS_EQUAL", "VERSION_GREATER_EQUAL", "IN_LIST",
                     "IS_NEWER_THAN", "PATH_EQUAL"})
_DIRS = ("CMAKE_CURRENT_SOURCE_DIR", "CMAKE_CURRENT_LIST_DIR")
_ROOTS = ("CMAKE_SOURCE_DIR", "PROJECT_SOURCE_DIR")
TREE = "\0"   # marks a value already resolved to a tree path


@dataclass
class CMakeSwitches:
    """What a tree's CMake files say: {file: feature} of the sources and CMake files each switch
    adds ("" = a default build compiles it), every switch's optional line ranges per CMake file,
    {-D name: feature} of what optional blocks define, and the switches that build tests."""

    switches: frozenset[str] = frozenset()
    files: dict[str, str] = field(default_factory=dict)
    ranges: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)
    defines: dict[str, str] = field(default_factory=dict)
    added: dict[str, set[str]] = field(default_factory=dict)   # switch -> every file it adds
    testing: set[str] = field(default_factory=set)              # switches whose blocks register tests


Lexed = dict[str, list[Command]]   # text -> its commands: each CMake file lexed once per learning


def _commands(text: str, lexed: Lexed | None) -> list[Command]:
    if lexed is None:
        return commands(text)
    found = lexed.get(text)
    if found is None:
        found = lexed[text] = commands(text)
    return found


def declared(texts: dict[str, str], lexed: Lexed | None = None) -> tuple[frozenset[str], frozenset[str]]:
    """(the names the tree declares off by default and never sets on, the options it declares on)."""
    off, on, set_on = set(), set(), set()
    for text in texts.values():
        for cmd in _commands(text, lexed):
            values = cmd.values()
            if not values:
                continue
            name, rest = values[0], [v.lower() for v in values[1:]]
            if cmd.lower in ("option", "cmake_dependent_option"):
                default = rest[1] if len(rest) > 1 else "off"
                (off if default in _FALSE else on if default in _TRUE else set_on).add(name)
            elif cmd.lower == "set" and rest and "cache" in rest:
                (off if rest[0] in _FALSE else on if rest[0] in _TRUE else set_on).add(name)
            elif cmd.lower == "set" and rest and rest[0] not in _FALSE:
                set_on.add(name)   # set on (or to a value) somewhere: its default is not known to be off
    return frozenset(off - on - set_on), frozenset(on - off - set_on)


def evaluate(args: list[str], world: dict[str, str]) -> bool | None:
    """An if() condition's truth in `world` (switch -> value); None when it names anything else."""
    value, end = _or(args, 0, world)
    return value if end == len(args) else None


def _or(args, i, world):
    value, i = _and(args, i, world)
    while i < len(args) and args[i] == "OR":
        right, i = _and(args, i + 1, world)
        value = True if True in (value, right) else None if None in (value, right) else False
    return value, i


def _and(args, i, world):
    value, i = _not(args, i, world)
    while i < len(args) and args[i] == "AND":
        right, i = _not(args, i + 1, world)
        value = False if False in (value, right) else None if None in (value, right) else True
    return value, i


def _not(args, i, world):
    if i < len(args) and args[i] == "NOT":
        value, i = _not(args, i + 1, world)
        return (None if value is None else not value), i
    return _primary(args, i, world)


def _primary(args, i, world):
    if i >= len(args):
        return None, i
    if args[i] == "(":
        value, i = _or(args, i + 1, world)
        return value, i + 1 if i < len(args) and args[i] == ")" else i
    if args[i] in ("DEFINED", "TARGET", "EXISTS", "COMMAND", "POLICY", "TEST", "IS_DIRECTORY", "IS_ABSOLUTE"):
        return None, i + 2
    if i + 2 < len(args) and args[i + 1] in _BINARY:
        left, right = _value(args[i], world), _value(args[i + 2], world)
        if args[i + 1] in ("STREQUAL", "EQUAL") and left is not None and right is not None:
            return left.lower() == right.lower(), i + 3
        return None, i + 3
    return _truth(args[i], world), i + 1


def _value(arg: str, world: dict[str, str]) -> str | None:
    """An operand's string: a switch's value, a literal, or None for another variable."""
    if "${" in arg:
        names = _VAR.findall(arg)
        return None if any(n not in world for n in names) else _VAR.sub(lambda m: world[m.group(1)], arg)
    return world.get(arg, arg)


def _truth(arg: str, world: dict[str, str]) -> bool | None:
    text = _value(arg, world)
    if text is None:
        return None
    if text.lower() in _TRUE or text.lower() in _FALSE or text.endswith("-NOTFOUND"):
        return text.lower() in _TRUE
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        return float(text) != 0
    return None   # a variable the tree does not declare a switch


def branch(conditions: list[list[str]], switches: frozenset[str], on: frozenset[str]) -> str:
    """The switch the last branch of a chain needs (taken when it is on, not by default), or "".
    `conditions`: the chain's earlier tests, then this branch's (None for else())."""
    named = [n for c in conditions if c for a in c for n in [a, *_VAR.findall(a)] if n in switches]
    default = {s: "OFF" for s in switches} | {s: "ON" for s in on}
    for name in dict.fromkeys(named):
        if _taken(conditions, default) is False and _taken(conditions, {**default, name: "ON"}) is not False:
            return name
    return ""


def _taken(conditions: list[list[str] | None], world: dict[str, str]) -> bool | None:
    """Whether the last branch runs: every earlier test false and its own true."""
    earlier = [evaluate(c, world) for c in conditions[:-1]]
    own = True if conditions[-1] is None else evaluate(conditions[-1], world)
    values = [None if e is None else not e for e in earlier] + [own]
    return False if False in values else None if None in values else True


class _Walk:
    """One CMake file read in order: what each command builds, under which switch."""

    def __init__(self, path: str, text: str, paths: TreePaths, root: str, switches, on, lexed: Lexed | None = None):
        self.dir, self.lexed = posixpath.dirname(path), lexed
        self.text, self.paths, self.root, self.switches, self.on = text, paths, root, switches, on
        self.vars: dict[str, list[tuple[str, str]]] = {}
        self.consumed: set[str] = set()
        self.uses: list[tuple[str, str]] = []        # (tree path, feature)
        self.subdirs: list[tuple[str, str]] = []     # (directory, feature)
        self.ranges: list[tuple[int, int, str]] = []
        self.defines: list[tuple[str, str]] = []
        self.testing: set[str] = set()
        self.stack: list[dict] = []                  # per open if(): outer feature, tests, feature, start

    @property
    def feature(self) -> str:
        return self.stack[-1]["feature"] if self.stack else ""

    def line(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def run(self) -> "_Walk":
        for cmd in _commands(self.text, self.lexed):
            name = cmd.lower
            if name in ("if", "elseif", "else", "endif"):
                self.chain(cmd, name)
            elif name in ("set", "list", "file"):
                self.fill(cmd, name)
            elif name == "add_subdirectory" and cmd.values():
                self.subdirs += [(self.resolve(v), f) for v, f in self.expand(cmd.values()[:1])]
            elif name in _DEFINES:
                self.define(cmd, name)
            elif name in _TESTING or name == "include" and cmd.values()[:1] == ["CTest"]:
                self.testing.add(self.feature)
            elif name not in _NOT_BUILDING:
                self.uses += [(self.resolve(v), f) for v, f in self.expand(cmd.values(), consume=True)]
        for name, items in self.vars.items():   # filled and never used here: counted where filled
            if name not in self.consumed:
                self.uses += [(self.resolve(v), f) for v, f in items]
        return self

    def chain(self, cmd: Command, name: str) -> None:
        args = [a.value for a in cmd.args]
        if name == "if":
            outer = self.feature
            self.stack.append({"outer": outer, "tests": [], "feature": outer, "start": 0})
        elif not self.stack:
            return
        group = self.stack[-1]
        if group["feature"] and not group["outer"] and group["start"]:
            self.ranges.append((group["start"], self.line(cmd.start) - 1, group["feature"]))
        if name == "endif":
            self.stack.pop()
            return
        group["tests"].append(None if name == "else" else args)
        label = branch(group["tests"], self.switches, self.on)
        group["feature"], group["start"] = group["outer"] or label, self.line(cmd.close) + 1

    def fill(self, cmd: Command, name: str) -> None:
        values = cmd.values()
        if name == "set" and values and "CACHE" not in values:
            replace = not self.stack and not self.feature
            # set(V ${V} x): replacing keeps V's own items; adding to V (in a branch) has them already
            items = self.expand([v for v in values[1:] if v != "PARENT_SCOPE"], skip=values[0], own=replace)
            self.vars[values[0]] = items if replace else self.vars.get(values[0], []) + items
        elif name == "list" and len(values) > 2 and values[0] in ("APPEND", "PREPEND", "INSERT"):
            rest = values[3:] if values[0] == "INSERT" else values[2:]
            self.vars[values[1]] = self.vars.get(values[1], []) + self.expand(rest, skip=values[1])
        elif name == "file" and len(values) > 2 and values[0] in ("GLOB", "GLOB_RECURSE"):
            patterns = [p for p in values[2:] if p not in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS")]
            found = sorted({p for pattern, _ in self.expand(patterns) for p in self.glob(pattern, values[0])})
            self.vars[values[1]] = self.vars.get(values[1], []) + [(TREE + p, self.feature) for p in found]

    def define(self, cmd: Command, name: str) -> None:
        """The -D names an optional block adds (the sources' #if tests them: the same feature)."""
        values = cmd.values()[1:] if name.startswith("target_") else cmd.values()
        for value in values:
            m = _DEFINE.match(value)
            if m and (value.startswith("-D") or name.endswith("definitions")) \
                    and m.group(1) not in ("PUBLIC", "PRIVATE", "INTERFACE", "BEFORE"):
                self.defines.append((m.group(1), self.feature))

    def expand(self, values: list[str], consume: bool = False, skip: str = "",
               own: bool = False) -> list[tuple[str, str]]:
        """(value, feature) of the arguments, variables expanded (an item keeps the feature it was
        filled under when the block has none); what names an unknown variable is dropped."""
        out = []
        for value in values:
            whole = re.fullmatch(r"\$\{(\w+)\}", value)
            if whole and whole.group(1) in self.vars:
                if consume or whole.group(1) != skip:   # used by a target, or moved into another list
                    self.consumed.add(whole.group(1))
                if whole.group(1) != skip or own:
                    out += [(v, self.feature or f) for v, f in self.vars[whole.group(1)]]
                continue
            for name in _DIRS:
                value = value.replace("${%s}" % name, TREE + (self.dir or "."))
            for name in _ROOTS:
                value = value.replace("${%s}" % name, TREE + (self.root or "."))
            value = _VAR.sub(lambda m: self._single(m.group(1)), value)
            if "${" not in value and "$<" not in value:
                out += [(part, self.feature) for part in value.split(";") if part]
        return out

    def _single(self, name: str) -> str:
        items = self.vars.get(name, [])
        return items[0][0] if len(items) == 1 else "${%s}" % name

    def resolve(self, value: str) -> str:
        if TREE in value:
            return posixpath.normpath(value.rsplit(TREE, 1)[1])
        return "" if value.startswith("/") else posixpath.normpath(posixpath.join(self.dir, value))

    def glob(self, pattern: str, kind: str) -> list[str]:
        pattern = self.resolve(pattern)
        candidates = self.paths.matching_start(pattern)
        if kind == "GLOB_RECURSE":
            return [p for p in candidates if fnmatch.fnmatchcase(p, pattern)]
        parts = pattern.split("/")
        return [p for p in candidates if len(p.split("/")) == len(parts)
                and all(fnmatch.fnmatchcase(a, b) for a, b in zip(p.split("/"), parts))]


def learn(texts: dict[str, str], paths: frozenset[str], given: frozenset[str] = frozenset(),
          lexed: Lexed | None = None) -> CMakeSwitches:
    """The switches of a tree's CMake files (`texts`: path -> text; `paths`: every tree file;
    `given`: names -D turns on, which are the default build then; `lexed`: the texts' commands
    from an earlier learning of the same files, filled here: each file lexed once, not four times)."""
    texts = {p: t for p, t in texts.items() if len(t) <= MAX_BYTES}
    lexed = {} if lexed is None else lexed
    off, on = declared(texts, lexed)
    off -= given
    found = CMakeSwitches(switches=off)
    if not off:
        return found
    index = TreePaths(paths)
    walks = {p: _Walk(p, t, index, _root(p, texts), off, on | given, lexed).run() for p, t in sorted(texts.items())}
    base = _bases(walks)
    features: dict[str, set[str]] = {}
    for path, walk in walks.items():
        outer = base.get(posixpath.dirname(path), "")
        if outer:
            features.setdefault(path, set()).add(outer)
        for used, feature in walk.uses:
            if used in paths:
                features.setdefault(used, set()).add(outer or feature)
        for first, last, feature in walk.ranges:
            if not outer:
                found.ranges.setdefault(path, []).append((first, last, feature))
        for name, feature in walk.defines:
            found.defines.setdefault(name, set()).add(outer or feature)
        found.testing |= {outer or f for f in walk.testing if outer or f}
    for used, labels in features.items():
        for label in labels - {""}:
            found.added.setdefault(label, set()).add(used)
    found.files = {p: "" if "" in f else sorted(f)[0] for p, f in features.items()}
    found.defines = {n: sorted(f)[0] for n, f in found.defines.items() if "" not in f}
    return found


def _root(path: str, texts: dict[str, str]) -> str:
    """The directory ${PROJECT_SOURCE_DIR} names: the nearest one above with a project() call."""
    here = posixpath.dirname(path)
    while True:
        listed = posixpath.join(here, "CMakeLists.txt") if here else "CMakeLists.txt"
        if re.search(r"(?im)^\s*project\s*\(", texts.get(listed, "")) or not here:
            return here
        here = posixpath.dirname(here)


def _bases(walks: dict[str, _Walk]) -> dict[str, str]:
    """{directory: the switch every add_subdirectory() of it needs} ("" or absent: default)."""
    calls: dict[str, list[tuple[str, str]]] = {}   # directory -> (the calling file's directory, feature)
    for path, walk in walks.items():
        for directory, feature in walk.subdirs:
            calls.setdefault(directory, []).append((posixpath.dirname(path), feature))
    base: dict[str, str] = {}
    for directory in sorted(calls, key=lambda d: d.count("/")):   # parents first
        labels = {base.get(caller, "") or feature for caller, feature in calls[directory]}
        base[directory] = "" if "" in labels else sorted(labels)[0]
    return base
