"""optional.py's learning kept between runs: per file where it is per file, per tree for CMake.

A re-run of `portkit audit` after one edit spent most of its project preparation in optional.learn
(ggml: 2.8 of 4.9 s of CPU at 7ed0e85, with every file's scan answered by the result cache): the
CMake files interpreted again (1.6 s) and every source's `#if` structure, `#define` and
`#include` lines read again (0.9 s), though none of them had changed. Here:

- a source's `#define` and `#include` lines (with their line numbers) depend on its bytes alone,
  and its optional branches on its bytes and the flags they are read under (the feature names and
  the ENABLE_/USE_/WITH_ names some source defines, the only part of `defined` file_ranges reads):
  kept with the file's other per-file facts (file_facts.FileFacts.optional, in the `filefacts-`
  slot, by SHA-256 of the bytes), the branches under at most RANGE_KEYS flag sets;
- what the CMake files say (optional._cmake) depends on their texts, the tree's paths and the -D
  names given: kept in one slot per project (`cmake-...`), under a key of all three.

Both keys cover the code that computes them (pipeline.facts_store, CODE); anything wrong with a
kept value means "learn it again" (datacache.py's rules: JSON, a digest, this user's own file).
Without a store (the cache off, or a caller with none) everything is computed, as before.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..core import datacache
from .file_facts import FactsStore

if TYPE_CHECKING:   # imported where a kept value is read: the key names the files without importing them
    from ..buildfiles.cmake_switches import CMakeSwitches

FORMAT = 1
RANGE_KEYS = 2   # flag sets kept per file and part: learn reads under two (without and with the derived names)
Rows = list[tuple]


def code() -> list[Path]:
    """The modules whose code decides what is kept here (the facts store's key adds them)."""
    here = Path(__file__)
    build = here.parent.parent / "buildfiles"
    return [here, here.with_name("optional.py"), here.with_name("product.py"), build / "cmake_switches.py",
            build / "cmake_lexer.py"]


class Memo:
    """One run's access to what optional.learn kept: through `store`'s per-file facts, or none."""

    def __init__(self, store: FactsStore | None):
        self.store = store if store is not None and store.slot is not None else None

    def per_file(self, rel: str, data: bytes, part: str, compute: Callable[[], Rows]) -> Rows:
        """compute(), a list of tuples of the file's bytes, or the value kept under `part`."""
        if self.store is None:
            return compute()
        kept = self.store.one(rel, data).optional
        found = kept.get(part)
        if found is None:
            keyed = [k for k in kept if k[0] == part[0] and k[1] == " "] if part[1] == " " else []
            if len(keyed) >= RANGE_KEYS:
                del kept[keyed[0]]   # the oldest flag set of this part goes
            found = kept[part] = compute()
            self.store.grown = True
        return found

    def cmake(self, texts: dict[str, str], paths: frozenset[str], given: frozenset[str],
              build: Callable[[], tuple[CMakeSwitches, frozenset[str]]]):
        """build() (optional._cmake's answer), or the one kept for these texts, paths and names."""
        if self.store is None or self.store.project is None:
            return build()
        parts = [f"cmake {FORMAT}", *sorted(f"{p}\0{t}" for p, t in texts.items()), "\0", *sorted(paths), "\0",
                 *sorted(given)]
        try:
            key = datacache.digest(parts, code())
        except OSError:   # the code is unreadable: learn without the cache
            return build()
        return datacache.cached_slot(f"cmake-{self.store.project}", key, build, _cmake_plain, _cmake_from_plain)


def ranges_key(flags, defined: frozenset[str], flag: Callable[[str], object]) -> str:
    """The part name of a file's optional branches under `flags` (a dict of labels or a set) and
    the names `defined` that `flag` (optional.FLAG.fullmatch) accepts: all file_ranges reads."""
    labels = sorted(flags.items()) if isinstance(flags, dict) else sorted(flags)
    text = json.dumps([isinstance(flags, dict), labels, sorted(n for n in defined if flag(n))])
    return "r " + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _cmake_plain(value: tuple[CMakeSwitches, frozenset[str]]) -> dict:
    found, ported = value
    return {"switches": sorted(found.switches), "files": found.files,
            "ranges": {p: [list(r) for r in rows] for p, rows in found.ranges.items()},
            "defines": found.defines, "added": {k: sorted(v) for k, v in found.added.items()},
            "testing": sorted(found.testing), "ported": sorted(ported)}


def _cmake_from_plain(plain: dict) -> tuple[CMakeSwitches, frozenset[str]]:
    from ..buildfiles.cmake_switches import CMakeSwitches
    words = lambda values: [str(v) for v in values]   # noqa: E731
    found = CMakeSwitches(
        switches=frozenset(words(plain["switches"])), files={str(p): str(f) for p, f in plain["files"].items()},
        ranges={str(p): [(int(a), int(b), str(f)) for a, b, f in rows] for p, rows in plain["ranges"].items()},
        defines={str(n): str(f) for n, f in plain["defines"].items()},
        added={str(k): set(words(v)) for k, v in plain["added"].items()}, testing=set(words(plain["testing"])))
    return found, frozenset(words(plain["ported"]))
