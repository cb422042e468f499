"""Errors that follow from a declaration an explained error stopped (issue 53).

causal-conv1d's kernel traits declare `using BlockLoadT = cub::BlockLoad<...>;` and four more
aliases from `cub::`. Compiled as torch's hipify leaves it (it does not rename CUB), the first one
stops at `use of undeclared identifier 'cub'` (explained: PK506 asks for `namespace cub = hipcub;`),
and clang says so once. The other aliases are never declared either, so clang then reports
`use of undeclared identifier 'BlockLoadT'`, `no matching function for call to 'max'` on
`std::max({sizeof(typename BlockLoadT::TempStorage), ...})`, `no member named 'BlockLoadT' in
'Causal_conv1d_fwd_kernel_traits<...>'`: none quotes `cub`, so consequences() (same line, same
quoted name) left them unexplained, 2 units of 4 "unexplained" for one finding.

Here a type alias or typedef of the error's file whose line names what an explained error is about
(the name it quotes, its findings' subjects), and the alias or constexpr the explained error's own
line declares (mamba's `static constexpr int kNElts = ... std::min(8, kNItems)`, PK312), are
declarations that failed with it; an unexplained error that quotes one, or whose statement (its
line to the `;` or `{` that ends it, a few lines at most) names one, is that error's consequence,
and so is `no type named 'scan_t' in 'Traits<...>'` where an explained error lies inside the
definition of Traits (the instantiation stopped there; its later members went with it).
"""

from __future__ import annotations

import re
from typing import Callable

from ..results import ErrorReport

_QUOTED = re.compile(r"'([A-Za-z_][A-Za-z0-9_:]*)")
_ALIAS = re.compile(r"^\s*(?:template\s*<[^>]*>\s*)?using\s+([A-Za-z_]\w*)\s*=(.*)$|^\s*typedef\b(.*?)\b([A-Za-z_]\w*)\s*;")
_CONSTANT = re.compile(r"^\s*(?:static\s+)?(?:inline\s+)?constexpr\s+[\w:<>, ]+?\b([A-Za-z_]\w*)\s*=")
_MEMBER = re.compile(r"no (?:type|member) named '\w+' in '(?:\w+::)*(\w+)<")
_STATEMENT_LINES = 4


def failed_declarations(errors: list[ErrorReport], lines_of: Callable[[str], list[bytes]]) -> None:
    """Mark the unexplained errors that follow from an alias an explained error's subject stopped."""
    causes: list[tuple[ErrorReport, set[str]]] = []
    for error in errors:
        if error.rel is None:
            continue
        lines = lines_of(error.rel)
        if error.explained:
            about = set(_QUOTED.findall(error.message)) | {f.subject for f in error.findings if f.subject}
            aliases = _aliases_naming(lines, about) | _declared_at(lines, error.line)
            causes.append((error, aliases))
            continue
        if not causes:
            continue
        quoted = {q.rsplit("::", 1)[-1] for q in _QUOTED.findall(error.message)}
        statement = _statement(lines, error.line)
        for cause, aliases in causes:
            if cause.rel == error.rel and (quoted & aliases or any(_names(statement, a) for a in aliases)
                                           or _inside_failed_class(error.message, lines, cause.line)):
                error.consequence_of = cause.consequence_of or f"{cause.rel}:{cause.line}"
                break


def _aliases_naming(lines: list[bytes], about: set[str]) -> set[str]:
    """The aliases of the file whose declaring line names one of `about`."""
    names = [a for a in about if a and re.fullmatch(r"[A-Za-z_]\w*", a)]
    if not names:
        return set()
    out = set()
    for raw in lines:
        line = raw.decode("utf-8", "replace")
        m = _ALIAS.match(line)
        if m is None:
            continue
        alias, body = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        if any(_names(body, n) for n in names):
            out.add(alias)
    return out


def _declared_at(lines: list[bytes], line: int) -> set[str]:
    """The alias or constant the error's own line declares (`static constexpr int kNElts = ...`,
    `using T = ...`): it failed with the error."""
    if not 0 < line <= len(lines):
        return set()
    text = lines[line - 1].decode("utf-8", "replace")
    alias = _ALIAS.match(text)
    if alias is not None:
        return {alias.group(1) or alias.group(4)}
    constant = _CONSTANT.match(text)
    return {constant.group(1)} if constant else set()


def _inside_failed_class(message: str, lines: list[bytes], cause_line: int) -> bool:
    """`no type named 'scan_t' in 'Traits<32, 4, ...>'` where an explained error lies inside the
    definition of Traits: the instantiation stopped there, and its later members went with it."""
    member = _MEMBER.match(message)
    if member is None:
        return False
    opening = re.compile(rf"^\s*(?:struct|class)\s+{re.escape(member.group(1))}\b")
    for start, raw in enumerate(lines):
        if opening.match(raw.decode("utf-8", "replace")):
            depth, end = 0, start
            for end in range(start, len(lines)):
                depth += lines[end].count(b"{") - lines[end].count(b"}")
                if depth <= 0 and b"}" in lines[end]:
                    break
            if start < cause_line <= end + 1:
                return True
    return False


def _names(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(name)}(?!\w)", text) is not None


def _statement(lines: list[bytes], line: int) -> str:
    """The error's line and the next ones up to the end of its statement."""
    out = []
    for raw in lines[max(line - 1, 0):line - 1 + _STATEMENT_LINES]:
        text = raw.decode("utf-8", "replace")
        out.append(text)
        if ";" in text or "{" in text:
            break
    return "".join(out)
