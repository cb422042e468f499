"""Keywords: what must appear in a file's bytes for a pass or a rule to find anything in it.

Most files of a real tree hold no CUDA at all (ggml: 600 of its 880 C/C++ sources, faiss: 540 of
790), yet parsing them is most of what a scan of them costs. Every consumer of the walk declares
what it needs to see first (a pass's `keywords`, a rule module's `KEYWORDS`), and a file none of
them would find anything in is counted, not parsed (commands/scan/prefilter.py). A declaration is a
tuple whose entries are of three kinds, chosen by type:

- `bytes`: a substring (`b"<<<"`, `b"__shared__"`, `b"CUDA"`); found anywhere, comments included;
- a compiled bytes pattern: searched (the warp rules' name patterns, in engine/syntax.py);
- a function of the bytes, for a test no one keyword says (PK201: a warp-size literal AND a
  thread-index name), run last;
- a set, frozenset or dict (its keys) of bytes: identifiers, matched whole (`min` is not `minimum`): the names a
  name pass or a rule reads. A file's identifiers are read with its backslash-newlines removed,
  as the preprocessor joins them, so `cuda\\<newline>Malloc` is `cudaMalloc` here too.

Over-approximation is the contract: a keyword may appear where the consumer finds nothing (the
file is then parsed, as before); a consumer must never find something in a file that holds none of
its keywords. tests/test_prefilter.py checks that over every fixture and a generated corpus.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable

from ..core.needles import Needles

IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_SPLICE = re.compile(rb"\\\r?\n")
Declared = Iterable["bytes | re.Pattern[bytes] | frozenset[bytes] | set[bytes]"]


@dataclass(frozen=True)
class Keywords:
    """The union of the declarations of one run's consumers, searched in one go per file."""

    substrings: tuple[bytes, ...] = ()
    patterns: tuple[re.Pattern[bytes], ...] = ()
    names: frozenset[bytes] = frozenset()
    tests: tuple[Callable[[bytes], bool], ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "_needles", Needles(self.substrings))

    def found_in(self, data: bytes) -> bool:
        """Whether any keyword occurs in `data`: cheapest test first (substrings, one pass per shared
        prefix), then the patterns, then the identifiers, read once."""
        if self._needles.any_in(data):
            return True
        if any(p.search(data) is not None for p in self.patterns):
            return True
        if self.names:
            joined = _SPLICE.sub(b"", data) if b"\\" in data else data
            if not self.names.isdisjoint(IDENTIFIER.findall(joined)):
                return True
        return any(test(data) for test in self.tests)


def gather(declarations: Iterable[Declared]) -> Keywords:
    """One Keywords of many declarations (each a tuple of entries, as the module docstring says);
    a TypeError names an entry of no known kind."""
    substrings: set[bytes] = set()
    patterns: dict[tuple[bytes, int], re.Pattern[bytes]] = {}
    names: set[bytes] = set()
    tests: dict[Callable[[bytes], bool], None] = {}
    for declared in declarations:
        for entry in declared:
            if isinstance(entry, bytes):
                substrings.add(entry)
            elif isinstance(entry, re.Pattern):
                patterns.setdefault((entry.pattern, entry.flags), entry)
            elif isinstance(entry, (set, frozenset, dict)):   # a table's names: its keys
                names.update(entry)
            elif callable(entry):
                tests[entry] = None
            else:
                raise TypeError(f"a keyword is bytes, a bytes pattern or a set of names, not {type(entry).__name__}")
    if b"" in substrings:
        raise TypeError("an empty keyword would match every file")
    return Keywords(tuple(sorted(substrings)), tuple(patterns.values()), frozenset(names), tuple(tests))


# GNU inline assembly's keyword, as tree-sitter's gnu_asm_expression reads it (`asm`, `__asm`,
# `__asm__`): not `wasm` or `plasma`
ASM = re.compile(rb"\b(?:__)?asm(?:__)?\b")

# The markers of device code: what a pass or rule that acts only inside __global__/__device__
# functions (engine/syntax.py's function_qualifiers reads exactly these tokens) needs to see.
DEVICE_CODE = (b"__global__", b"__device__")
