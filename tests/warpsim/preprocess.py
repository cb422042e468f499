"""A small C preprocessor: enough for warp-size macros, so a kernel parses as its target compiler sees it.

tree-sitter does not expand macros, and the point of the oracle is what `WARP_SIZE`,
`__AMDGCN_WAVEFRONT_SIZE` and `#if defined(__HIP_PLATFORM_AMD__)` become on each target. So the
source is preprocessed first: conditionals, object- and function-like macros (no `#`/`##`),
`#include` and `#pragma` dropped. Lines keep their numbers (directives become blank lines) so
errors point at the source. `#if` expressions are evaluated by the interpreter's constant
evaluator, never by Python's eval.
"""

from __future__ import annotations

import re
from typing import Callable

from .cvalues import SimError

TOKEN = re.compile(
    r'(?P<ws>\s+)|(?P<str>"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\')|(?P<id>[A-Za-z_]\w*)'
    r"|(?P<num>\.?\d(?:[\w.']|[eEpP][+-])*)|(?P<punct>.)",
    re.S,
)
COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
DIRECTIVE = re.compile(r"\s*#\s*(\w*)\s*(.*)", re.S)
DEFINED = re.compile(r"\bdefined\s*(?:\(\s*(\w+)\s*\)|(\w+))")
# Attributes and qualifiers the grammar does not know; they change nothing the oracle checks.
# (`static_assert` is not one: a kernel's `static_assert(kBlockSize == 32)` failing for the
# instantiation a launch makes is the compile error that launch is; stmt.py evaluates it.)
BUILTIN_MACROS = {
    "__forceinline__": (None, ""), "__inline__": (None, "inline"), "__noinline__": (None, ""),
    "__launch_bounds__": (["..."], ""), "__align__": (["..."], ""),
}

Macros = dict[str, tuple[list[str] | None, str]]


def strip_comments(text: str) -> str:
    """Comments become spaces (newlines kept); strings stay as they are."""
    def blank(match: re.Match) -> str:
        found = match.group(0)
        if found[0] in "\"'":
            return found
        return " " if found.startswith("//") else re.sub(r"[^\n]", " ", found)
    return COMMENT.sub(blank, text)


def join_continuations(text: str) -> list[str]:
    """Logical lines; a continued line keeps its physical line count as trailing blank lines."""
    lines, pending, extra = [], "", 0
    for line in text.split("\n"):
        if line.endswith("\\"):
            pending += line[:-1] + " "
            extra += 1
            continue
        lines.append(pending + line)
        lines.extend([""] * extra)
        pending, extra = "", 0
    if pending:
        lines.append(pending)
    return lines


def tokens(text: str) -> list[str]:
    return [m.group(0) for m in TOKEN.finditer(text)]


def expand(text: str, macros: Macros, disabled: frozenset = frozenset()) -> str:
    return "".join(_expand(tokens(text), macros, disabled))


def _expand(toks: list[str], macros: Macros, disabled: frozenset) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(toks):
        tok = toks[i]
        if tok not in macros or tok in disabled:
            out.append(tok)
            i += 1
            continue
        params, body = macros[tok]
        if params is None:
            out.extend(_expand(tokens(body), macros, disabled | {tok}))
            i += 1
            continue
        call = _arguments(toks, i + 1)
        if call is None:  # a function-like macro's name without arguments is not a call
            out.append(tok)
            i += 1
            continue
        args, i = call
        out.extend(_expand(_substitute(params, body, args, macros, disabled), macros, disabled | {tok}))
    return out


def _arguments(toks: list[str], i: int):
    while i < len(toks) and toks[i].isspace():
        i += 1
    if i >= len(toks) or toks[i] != "(":
        return None
    depth, args, current = 0, [], []
    for j in range(i, len(toks)):
        tok = toks[j]
        if tok == "(":
            depth += 1
            if depth == 1:
                continue
        elif tok == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(current).strip())
                return args, j + 1
        elif tok == "," and depth == 1:
            args.append("".join(current).strip())
            current = []
            continue
        current.append(tok)
    raise SimError("unterminated macro call")


def _substitute(params: list[str], body: str, args: list[str], macros: Macros, disabled) -> list[str]:
    if params == ["..."]:
        values = {"__VA_ARGS__": ", ".join(args)}
    else:
        if len(args) != len(params) and not (params == [] and args == [""]):
            raise SimError(f"macro called with {len(args)} arguments, takes {len(params)}")
        values = {p: expand(a, macros, disabled) for p, a in zip(params, args)}
    return [values.get(tok, tok) for tok in tokens(body)]


def define(macros: Macros, rest: str) -> None:
    match = re.match(r"(\w+)(\(([^)]*)\))?\s*(.*)", rest, re.S)
    if not match:
        raise SimError(f"bad #define {rest!r}")
    name, has_params, params, body = match.groups()
    names = [p.strip() for p in params.split(",") if p.strip()] if has_params else None
    macros[name] = (names, body.strip())


def preprocess(text: str, predefined: dict[str, str], const_eval: Callable[[str], int]) -> str:
    """The text as the compiler sees it; `const_eval` evaluates an expanded `#if` expression."""
    macros: Macros = dict(BUILTIN_MACROS)
    for name, value in predefined.items():   # `NAME` or `NAME(params)`, as on a compiler's command line
        define(macros, f"{name} {value}")
    out: list[str] = []
    chunk: list[str] = []
    stack: list[list[bool]] = []  # per open #if: [this branch active, some branch was taken]

    def active() -> bool:
        return all(level[0] for level in stack)

    def flush() -> None:
        if chunk:
            out.append(expand("\n".join(chunk), macros))
            chunk.clear()

    for line in join_continuations(strip_comments(text)):
        directive = DIRECTIVE.match(line)
        if not directive:
            (chunk.append(line) if active() else (flush(), out.append("")))
            continue
        flush()
        out.append("")
        _directive(directive.group(1), directive.group(2).strip(), macros, stack, active, const_eval)
    flush()
    if stack:
        raise SimError("unterminated #if")
    return "\n".join(out)


def _directive(name: str, rest: str, macros: Macros, stack, active, const_eval) -> None:
    if name in ("if", "ifdef", "ifndef"):
        outer = active()
        if name == "if":
            taken = outer and bool(_condition(rest, macros, const_eval))
        else:
            taken = outer and ((rest.split()[0] in macros) == (name == "ifdef"))
        stack.append([taken, taken or not outer])
    elif name in ("elif", "else"):
        if not stack:
            raise SimError(f"#{name} without #if")
        level = stack[-1]
        stack.pop()
        outer = active()
        stack.append(level)
        taken = not level[1] and outer and (name == "else" or bool(_condition(rest, macros, const_eval)))
        level[0], level[1] = taken, level[1] or taken
    elif name == "endif":
        if not stack:
            raise SimError("#endif without #if")
        stack.pop()
    elif not active():
        return
    elif name == "define":
        define(macros, rest)
    elif name == "undef":
        macros.pop(rest.split()[0], None)
    elif name == "error":
        raise SimError(f"#error {rest}")


def _condition(rest: str, macros: Macros, const_eval) -> int:
    text = DEFINED.sub(lambda m: "1" if (m.group(1) or m.group(2)) in macros else "0", rest)
    text = expand(text, macros)
    text = re.sub(r"\b(?!\d)\w+\b", lambda m: m.group(0) if m.group(0) in ("true", "false") else "0", text)
    return const_eval(text)
