"""Makefile switches: the blocks a plain `make` leaves out, so their flags and links are optional.

llm.c's Makefile says `USE_CUDNN ?= 0`, then `ifeq ($(USE_CUDNN), 1)` adds `-DENABLE_CUDNN` and
`-lcudnn`. A plain `make` builds without cuDNN, so the link is as optional as the sources'
`#ifdef ENABLE_CUDNN` branches, and it is the SAME feature: a block is named by the first -D name
it adds (the name the sources test), else by its variable, so the cuDNN link and the cuDNN code
land in one "not included" line.

A switch is a variable whose default is off: set at the top level (outside any conditional) to
0, off, no, false or nothing (`X ?= 0`, `X := 0`, `X = 0`, `X ?=`), or never set at all (then
`ifdef X` and `ifeq ($(X),1)` are off too: `make` reads it from the command line). A branch of an
`ifeq`/`ifneq`/`ifdef`/`ifndef` chain is optional when a plain `make` does not take it and `X=1`
does; a condition naming anything else (`$(shell ...)`, a second variable) decides nothing.
The compile units a block names are the feature's too: a source or object (`cudnn_att.o`) named
inside the block, directly or through a variable that is empty by default and set only there
(`NVCC_CUDNN = cudnn_att.o`), and named nowhere else but in that variable's own rule
(`$(NVCC_CUDNN): cudnn_att.cpp` and its recipe). llm.c before cudnn_att.h existed: a plain `make`
never compiles cudnn_att.cpp, so its cuDNN frontend code is the ENABLE_CUDNN feature's.
The text is read, never run; `include`d Makefiles are not followed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_BYTES = 1 << 20   # a Makefile larger than this is read for nothing
OFF = frozenset({"", "0", "off", "no", "false", "n"})
ON_VALUES = ("1", "ON", "yes", "true")
_ASSIGN = re.compile(r"^(?:(?:override|export)\s+)*([A-Za-z_][\w.-]*)\s*(\?=|:::=|::=|:=|\+=|!=|=)\s*(.*)$")
_DIRECTIVE = re.compile(r"^(?:else\s+)?(ifeq|ifneq|ifdef|ifndef)\b\s*(.*)$|^(else|endif)\b")
_VAR = re.compile(r"\$[({]([A-Za-z_][\w.-]*)[)}]")
_DEFINE = re.compile(r"(?<![\w-])-D\s*([A-Za-z_]\w*)")
_LINK = re.compile(r"(?<![\w-])-l([A-Za-z_][\w+-]*)")
_UNIT = re.compile(r"(?<![\w$(./-])((?:[\w.-]+/)*[\w-]+)\.(?:o|obj|c|cc|cpp|cxx|cu)(?![\w.])")
_RULE = re.compile(r"^([^:=\t#][^:=]*?)::?(?!=)(.*)$")


@dataclass
class MakeSwitches:
    """What one Makefile says: its optional line ranges (first, last, feature), every `-l` link as
    (line, name), and the -D names its optional blocks add -> the block's feature."""

    ranges: list[tuple[int, int, str]] = field(default_factory=list)
    links: list[tuple[int, str]] = field(default_factory=list)
    defines: dict[str, str] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)   # compile unit (path without suffix) -> feature


def _logical(data: bytes) -> list[tuple[int, str]]:
    """(line number, text without its comment) of each line; a continued line is one text."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        text = raw if raw.startswith("\t") else re.sub(r"(?<!\\)#.*", "", raw)
        if pending is not None:
            text = pending[1] + " " + text
            number = pending[0]
        if text.endswith("\\"):
            pending = (number, text[:-1])
            continue
        pending = None
        out.append((number, text))
    if pending is not None:
        out.append(pending)
    return out


def _defaults(lines: list[tuple[int, str]]) -> tuple[dict[str, str], set[str]]:
    """(variable -> its top-level default, every variable set anywhere)."""
    defaults: dict[str, str] = {}
    assigned: set[str] = set()
    depth = 0
    for _, text in lines:
        stripped = text.strip()
        m = _DIRECTIVE.match(stripped)
        if m and (m.group(1) or m.group(3) == "endif"):
            if not stripped.startswith("else"):
                depth += 1 if m.group(1) else -1
            continue
        a = _ASSIGN.match(stripped)
        if a and not text.startswith("\t"):
            assigned.add(a.group(1))
            if depth == 0 and a.group(2) != "+=" and a.group(1) not in defaults:
                defaults[a.group(1)] = a.group(3).strip()
    return defaults, assigned


def _args(rest: str) -> tuple[str, str] | None:
    """The two arguments of ifeq/ifneq: `(a,b)` or `"a" "b"`."""
    rest = rest.strip()
    if rest.startswith("(") and rest.endswith(")"):
        inner, level = rest[1:-1], 0
        for i, ch in enumerate(inner):
            level += ch in "({"
            level -= ch in ")}"
            if ch == "," and level == 0:
                return inner[:i].strip(), inner[i + 1:].strip()
        return None
    m = re.fullmatch(r"""(["'])(.*?)\1\s+(["'])(.*?)\3""", rest)
    return (m.group(2), m.group(4)) if m else None


def _test(kind: str, rest: str, world: dict[str, str]) -> bool | None:
    """The condition's truth with the variables `world` gives; None when it names anything else."""
    if kind in ("ifdef", "ifndef"):
        name = rest.strip()
        if name not in world:
            return None
        return (world[name] != "") == (kind == "ifdef")
    args = _args(rest)
    if args is None:
        return None
    values = []
    for arg in args:
        names = _VAR.findall(arg)
        if any(n not in world for n in names):
            return None
        value = _VAR.sub(lambda m: world[m.group(1)], arg)
        if "$" in value:
            return None
        values.append(value.strip())
    return (values[0] == values[1]) == (kind == "ifeq")


def _switch_of(kind: str, rest: str, switches: dict[str, str]) -> str | None:
    """The one switch variable a condition names."""
    names = [rest.strip()] if kind in ("ifdef", "ifndef") else _VAR.findall(rest)
    found = {n for n in names if n in switches}
    return found.pop() if len(found) == 1 and len(set(names)) == 1 else None


def _branches(lines: list[tuple[int, str]], switches: dict[str, str]) -> list[tuple[int, int, str]]:
    """(first, last, variable) of every branch that `X=1` takes and a plain make does not."""
    out: list[tuple[int, int, str]] = []
    stack: list[dict] = []   # per open chain: var, taken by default / on, open branch start and switch
    for number, text in lines:
        m = _DIRECTIVE.match(text.strip())
        if not m or text.startswith("\t"):
            continue
        if m.group(1) and not text.strip().startswith("else"):
            outer = bool(stack) and (stack[-1]["open"] is not None or stack[-1]["outer"])
            stack.append({"var": None, "default": False, "on": False, "start": number + 1, "open": None,
                          "outer": outer, "undecided": False})
        elif not stack:
            continue
        group = stack[-1]
        if group["open"] is not None and not group["outer"]:
            out.append((group["start"], number - 1, group["open"]))
        group["open"], group["start"] = None, number + 1
        if m.group(3) == "endif":
            stack.pop()
            continue
        _branch(group, m.group(1) or "else", m.group(2) or "", switches)
    return out


def _branch(group: dict, kind: str, rest: str, switches: dict[str, str]) -> None:
    """Decide one branch of a chain: is it taken by `X=1` and not by default?"""
    if kind != "else":
        var = _switch_of(kind, rest, switches)
        if var is None or group["var"] not in (None, var):
            group["undecided"] = True
            return
        group["var"] = var
    var = group["var"]
    if group["undecided"] or var is None:
        return
    default = True if kind == "else" else _test(kind, rest, {var: switches[var]})
    on = True if kind == "else" else _on(kind, rest, var)
    if default is None or on is None:
        group["undecided"] = True
        return
    taken_default, taken_on = default and not group["default"], on and not group["on"]
    group["default"] |= default
    group["on"] |= on
    if taken_on and not taken_default:
        group["open"] = var


def _on(kind: str, rest: str, var: str) -> bool | None:
    """The condition with the switch turned on (any of the usual spellings of "on")."""
    results = [_test(kind, rest, {var: value}) for value in ON_VALUES]
    return None if None in results else any(results)


def read(data: bytes) -> MakeSwitches:
    """The switches of one Makefile (nothing for one over MAX_BYTES)."""
    found = MakeSwitches()
    if len(data) > MAX_BYTES:
        return found
    lines = _logical(data)
    defaults, assigned = _defaults(lines)
    switches = {n: v for n, v in defaults.items() if v.lower() in OFF}
    for _, text in lines:   # never set: off unless given on the command line
        m = _DIRECTIVE.match(text.strip())
        if m and m.group(1):
            for name in ([m.group(2).strip()] if m.group(1) in ("ifdef", "ifndef") else _VAR.findall(m.group(2))):
                if name not in assigned and re.fullmatch(r"[A-Za-z_][\w.-]*", name):
                    switches.setdefault(name, "")
    for first, last, var in _branches(lines, switches):
        defines = [d for number, text in lines if first <= number <= last for d in _DEFINE.findall(text)]
        label = defines[0] if defines else var
        found.ranges.append((first, last, label))
        for name in defines:
            found.defines.setdefault(name, label)
    found.links = [(number, name) for number, text in lines for name in _LINK.findall(text)]
    found.units = _units(lines, found.ranges, defaults)
    return found


def _units(lines: list[tuple[int, str]], ranges: list[tuple[int, int, str]],
           defaults: dict[str, str]) -> dict[str, str]:
    """The compile units only optional blocks name (module docstring), as paths without suffix."""
    def block(number: int) -> str:
        return next((name for first, last, name in ranges if first <= number <= last), "")
    carriers: dict[str, str] = {}   # a variable empty by default, set in one feature's blocks only
    for number, text in lines:
        a = _ASSIGN.match(text.strip())
        if a and not text.startswith("\t") and block(number) and defaults.get(a.group(1), "") == "":
            carriers[a.group(1)] = block(number) if carriers.get(a.group(1), block(number)) == block(number) else ""
    named: dict[str, set[str]] = {}
    rule = ""   # the feature of the rule whose recipe is being read ("" for any other rule)
    for number, text in lines:
        feature = block(number)
        if not text.startswith("\t"):
            r = _RULE.match(text.strip()) if not _ASSIGN.match(text.strip()) else None
            targets = set(_VAR.findall(r.group(1))) if r else set()
            rule = carriers.get(targets.pop(), "") if r and len(targets) == 1 and not _VAR.sub("", r.group(1)).strip() else ""
        for unit in _UNIT.findall(text):
            named.setdefault(unit, set()).add(feature or rule)
    return {unit: features.pop() for unit, features in sorted(named.items()) if len(features) == 1 and "" not in features}
