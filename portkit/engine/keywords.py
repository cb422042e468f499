"""Keywords: what must appear in a file's bytes for a pass or a rule to find anything in it.

Most files of a real tree hold no CUDA at all (faiss: 460 of its 650 C/C++ sources that are not
.cu/.cuh), yet parsing them is most of what a scan of them costs. Every consumer of the walk
declares what it needs to see first (a pass's `keywords`, a rule module's `KEYWORDS`), and a file
none of them would find anything in is counted, not parsed (commands/scan/prefilter.py). A
declaration is a tuple whose entries are of these kinds, chosen by type:

- `bytes`: a substring (`b"<<<"`, `b"__shared__"`); found anywhere, comments included;
- a compiled bytes pattern, searched; or `(anchor, pattern)`, searched only where the substring
  `anchor` occurs (`(b"CUDA", GUARD)`): a pattern costs a pass over the file, an anchor almost none;
- a set, frozenset or dict (its keys) of bytes: identifiers, matched whole (`min` is not `minimum`);
- `Headers`: the names of #include directives (exactly, or by a folder's prefix);
- a function of a `FileText`, for a test no one keyword says (PK201: a warp-size literal AND a
  thread-index name); it may read the file's bytes, its tokens or its includes. One that searches
  the bytes with a pattern sets `cost = 3` (tests run cheapest first; the default is 1).

A file's tokens and includes are read with its backslash-newlines removed, as the preprocessor
joins them, so `cuda\\<newline>Malloc` is `cudaMalloc` here too. The tests run cheapest first, and
the tokens are read once, only if a test needs them. The filter is not free: over ggml's 880
sources it costs about 0.6 s of the 0.8 s the scans of the 556 files it skips would (faiss: 0.4 of
0.9 s; benchmarks/results/perf_corpus.txt); a keyword that needs a pattern tried at every byte
costs as much as a fifth of a parse.

Over-approximation is the contract: a keyword may appear where the consumer finds nothing (the
file is then parsed, as before); a consumer must never find something in a file that holds none of
its keywords. tests/test_prefilter.py checks that over every fixture and a generated corpus.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterable

from ..core.needles import Needles

# every byte that is no word character (ASCII letters, digits, _) made a space: a split then gives
# what re.findall(rb"\w+") would, at twice its speed
_SPACED = bytes(c if chr(c).isascii() and (chr(c).isalnum() or c == ord("_")) else ord(" ") for c in range(256))
_SPLICE = re.compile(rb"\\\r?\n")
# an #include's name between its delimiters, as include_directives reads it (`# include`, spaces)
_INCLUDE = re.compile(rb"#\s*include\s*[<\"]([^>\"\n]*)[>\"]")


class FileText:
    """One file's bytes and what the tests read of them, each made once, when first asked for."""

    def __init__(self, data: bytes):
        self.data = data

    @cached_property
    def joined(self) -> bytes:
        return _SPLICE.sub(b"", self.data) if b"\\" in self.data else self.data

    @cached_property
    def tokens(self) -> frozenset[bytes]:
        """Every run of word characters: identifiers, keywords and numbers (`32`, `0x1f`, `5u`)."""
        return frozenset(self.joined.translate(_SPACED).split())

    @cached_property
    def words(self) -> bytes:
        """The tokens, one per line: a pattern over names reads this, not the whole file."""
        return b"\n".join(self.tokens)

    @cached_property
    def includes(self) -> tuple[bytes, ...]:
        return tuple(_INCLUDE.findall(self.joined)) if b"include" in self.joined else ()


@dataclass(frozen=True)
class Headers:
    """Include names a consumer acts on: exact names, and folders' prefixes (`cutlass/`)."""

    exact: frozenset[bytes] = frozenset()
    prefixes: tuple[bytes, ...] = ()

    def found_in(self, text: FileText) -> bool:
        exact, prefixes = self.exact, self.prefixes
        return any(name in exact or name.strip() in exact or name.strip().startswith(prefixes)
                   for name in text.includes)


@dataclass(frozen=True)
class Keywords:
    """The union of the declarations of one run's consumers, searched in one go per file."""

    substrings: tuple[bytes, ...] = ()
    patterns: tuple[tuple[bytes, re.Pattern[bytes]], ...] = ()   # (anchor, pattern); anchor b"": none
    names: frozenset[bytes] = frozenset()
    headers: Headers = Headers()
    tests: tuple[Callable[[FileText], bool], ...] = ()
    _needles: Needles = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "_needles", Needles(self.substrings))

    def found_in(self, data: bytes) -> bool:
        """Whether any keyword occurs in `data`: the substrings first (one pass per shared prefix),
        then the anchored patterns, the includes, the tokens, and the tests."""
        if self._needles.any_in(data):
            return True
        if any((not anchor or anchor in data) and p.search(data) is not None for anchor, p in self.patterns):
            return True
        text = FileText(data)
        if (self.headers.exact or self.headers.prefixes) and self.headers.found_in(text):
            return True
        if self.names and not self.names.isdisjoint(text.tokens):
            return True
        return any(test(text) for test in self.tests)


def gather(declarations: Iterable[tuple]) -> Keywords:
    """One Keywords of many declarations (each a tuple of entries, as the module docstring says);
    a TypeError names an entry of no known kind."""
    substrings: set[bytes] = set()
    patterns: dict[tuple, tuple[bytes, re.Pattern[bytes]]] = {}
    names: set[bytes] = set()
    exact: set[bytes] = set()
    prefixes: set[bytes] = set()
    tests: dict[Callable[[FileText], bool], None] = {}
    for declared in declarations:
        for entry in declared:
            if isinstance(entry, bytes):
                substrings.add(entry)
            elif isinstance(entry, re.Pattern):
                patterns.setdefault((b"", entry.pattern, entry.flags), (b"", entry))
            elif isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], bytes) and entry[0] \
                    and isinstance(entry[1], re.Pattern):
                patterns.setdefault((entry[0], entry[1].pattern, entry[1].flags), entry)
            elif isinstance(entry, (set, frozenset, dict)):   # a table's names: its keys
                names.update(entry)
            elif isinstance(entry, Headers):
                exact.update(entry.exact)
                prefixes.update(entry.prefixes)
            elif callable(entry):
                tests[entry] = None
            else:
                raise TypeError(f"a keyword is bytes, a bytes pattern, (anchor, pattern), a set of names, Headers "
                                f"or a test, not {type(entry).__name__}")
    if b"" in substrings or b"" in prefixes:
        raise TypeError("an empty keyword would match every file")
    ordered = tuple(sorted(tests, key=lambda test: getattr(test, "cost", 1)))   # stable: declaration order within a cost
    return Keywords(tuple(sorted(substrings)), tuple(patterns.values()), frozenset(names),
                    Headers(frozenset(exact), tuple(sorted(prefixes))), ordered)


# GNU inline assembly's keyword, as tree-sitter's gnu_asm_expression reads it (`asm`, `__asm`,
# `__asm__`): not `wasm` or `plasma`
ASM = (b"asm", re.compile(rb"\b(?:__)?asm(?:__)?\b"))

# The markers of device code: what a pass or rule that acts only inside __global__/__device__
# functions (engine/syntax.py's function_qualifiers reads exactly these tokens) needs to see.
DEVICE_CODE = (b"__global__", b"__device__")
