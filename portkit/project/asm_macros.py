"""The macros through which a tree writes inline assembly: learned once, so that every use is seen.

A library hides its PTX behind macros: `#define SYNC_WARP() asm volatile("bar.warp.sync -1;")`
in a header, `SYNC_WARP();` in fifty kernels, or an alias `#define ASM asm` before
`ASM volatile("mov.u32 %0, %%laneid;" ...)`. The compiler expands them; tree-sitter does not,
so without this fact a kernel full of PTX reads as clean and the commit gate lets it through
(issue 49). The pipeline reads each source's `#define` lines (continuations joined) and keeps
the names whose body writes `asm`, `__asm__` or `__asm`, or names such a macro (one alias
through another, to a fixpoint). A name the tree also defines WITHOUT assembly (the HIP
branch's `#define LANE_ID() __lane_id()` beside the PTX one) is left out: which definition a
use gets is the platform's business, and the definitions themselves are reported where they
are.
"""

from __future__ import annotations

import re

from ..core.files import Entry

# `#define NAME` or `#define NAME(params)` and its body up to the first line break not spliced.
_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)\n]*\))?((?:\\\r?\n|[^\n])*)", re.M)
_ASM = re.compile(rb"\b(?:asm|__asm__|__asm)\b")
_WORD = re.compile(rb"[A-Za-z_]\w*")
_ROUNDS = 8   # alias chains longer than this do not occur; the bound keeps a crafted tree cheap


def learn(sources: list[tuple[Entry, bytes]]) -> tuple[tuple[str, str, int], ...]:
    """(name, file, line) of each macro every definition of which writes inline assembly, by
    name, with its first definition in the sources' order."""
    return merge([(entry.rel, file_definitions(data)) for entry, data in sources])


Definition = tuple[bytes, int, bool, frozenset[bytes]]   # (name, line, writes asm, the body's words)


def file_definitions(data: bytes) -> tuple[Definition, ...]:
    """One file's #defines as `merge` reads them: a file's part, learned once per bytes (file_facts.py)."""
    if b"define" not in data:
        return ()
    found, line, at = [], 1, 0
    for m in _DEFINE.finditer(data):
        body = m.group(3)
        has_asm = _ASM.search(body) is not None
        words = frozenset() if has_asm else frozenset(_WORD.findall(body))
        line, at = line + data.count(b"\n", at, m.start()), m.start()   # counted once per file
        found.append((m.group(1), line, has_asm, words))
    return tuple(found)


def merge(per_file: list[tuple[str, tuple[Definition, ...]]]) -> tuple[tuple[str, str, int], ...]:
    """learn's answer from each file's definitions, (file, file_definitions), in the sources' order."""
    definitions: dict[bytes, list[tuple[str, int, bool, frozenset[bytes]]]] = {}
    for rel, found in per_file:
        for name, line, has_asm, words in found:
            definitions.setdefault(name, []).append((rel, line, has_asm, words))
    if not any(has_asm for defs in definitions.values() for _, _, has_asm, _ in defs):
        return ()
    kept: set[bytes] = set()
    for _ in range(_ROUNDS):   # an alias of an assembly macro writes assembly too
        grown = {name for name, defs in definitions.items()
                 if all(has_asm or words & kept for _, _, has_asm, words in defs)}
        if grown == kept:
            break
        kept = grown
    return tuple(sorted((name.decode("latin-1"), *definitions[name][0][:2]) for name in kept))
