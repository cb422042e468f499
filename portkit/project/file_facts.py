"""What each source teaches the project facts, learned once per file's bytes and kept between runs.

The project facts (pipeline.learn) are a merge over every source of what a pass finds in it alone:
the directive walk's AMD selectors and tested/defined macros, a shim's names, whether a header is a
candidate AMD-only header and what it includes, the polyfill names it defines, the macros that write
inline assembly. Those per-file parts depend on the file's bytes only, so they are computed once
per content (SHA-256) and kept in the user's cache folder, one slot per project (`filefacts-...`),
under a key of the code that computes them (pipeline._facts_code and the tables): a re-run after
one edit learns one file and merges. convert's prepare learns convert's view and the audit's from
one FactsStore, so a file in both is learned once per run. The merge itself (facts.py's order and
rules) is `platforms`, polyfills.defined_in and asm_macros.merge; a file's `where` record under the
tree's AMD selectors (regions.classify, needed only for a file that defines a macro another tests)
is kept per selector set, and optional.py's per-file parts (its `#define` and `#include` lines,
its optional branches per flag set: optional_cache.py) as optional.learn asks for them. A corrupt
or foreign slot reads as empty and is written afresh.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass, field, replace
from typing import Iterable

from ..core import datacache
from ..core.files import Entry, read
from ..core.source import include_matches
from ..engine.platform import amd_headers, facts as platform_facts
from ..engine.platform.regions import (AMD, CUDA_NAME, DEFINE_LINE, HIP_INCLUDE, NVIDIA, builtin_selectors, classify,
                                       is_shim, selectors)
from ..rewrite import polyfills
from . import asm_macros, gpu_reach, own_namespaces, warp_constants
from .lazy_sources import Kept, Sources

FORMAT = 4


@dataclass(frozen=True)
class FileFacts:
    """The per-file part of every fact pass, from the bytes alone (no path: the merge adds it)."""

    platform: bool = False                      # facts.py reads it: it has a '#' and portkit did not write it
    shim: bool = False                          # a vendor shim header (regions.is_shim)
    shim_names: frozenset[bytes] = frozenset()  # the CUDA names a shim maps
    hip_shim: bool = False                      # a shim to HIP: its #defines are AMD's
    amd_names: frozenset[bytes] = frozenset()   # facts.amd_shim_names, for a HIP shim or an AMD-only candidate
    defines: tuple[bytes, ...] = ()             # a HIP shim's #define names, in order
    learned: frozenset[str] = frozenset()       # the directive walk (facts.learn), for a file not a shim
    tested: frozenset[str] = frozenset()
    defined: frozenset[str] = frozenset()
    candidate: bool = False                     # HIP included, no CUDA header: maybe an AMD-only header
    includes: frozenset[str] = frozenset()      # the base names its #includes spell
    gpu: bool = False                           # it names CUDA or HIP (gpu_reach.uses_gpu): GPU code
    polyfill_generated: bool = False            # polyfills' own header
    own_definitions: tuple[tuple[str, bool], ...] = ()   # polyfills._own_definitions
    asm_defines: tuple = ()                     # asm_macros.file_definitions
    warp_primitive: bool = False                # it names a cub warp primitive (warp_constants.names_primitive)
    namespaces: frozenset[str] = frozenset()    # the last names of the namespaces it defines (own_namespaces.defined)
    bf16: bool = False                          # it names a bfloat16 type or function (names_bf16)
    where: dict = field(default_factory=dict, compare=False)   # selectors' key -> classify's record
    optional: dict = field(default_factory=dict, compare=False)   # optional_cache's part -> list of tuples


def of(data: bytes) -> FileFacts:
    """The per-file facts of `data`: each pass's own test, as the whole-tree passes apply it."""
    platform = b"#" in data and not amd_headers.generated(data)
    shim = platform and is_shim(data)
    hip_shim = shim and platform_facts.HIP_SHIM.search(data) is not None
    macros = platform_facts.learn(data) if platform and not shim else None
    candidate = HIP_INCLUDE.search(data) is not None and amd_headers._CUDA_INCLUDE.search(data) is None \
        and not is_shim(data) and not amd_headers.generated(data)
    includes = included_names(data)
    return FileFacts(
        platform=platform, shim=shim, shim_names=platform_facts.shim_names(data) if shim else frozenset(),
        hip_shim=hip_shim, amd_names=platform_facts.amd_shim_names(data) if hip_shim or candidate else frozenset(),
        defines=tuple(m.group(1) for m in DEFINE_LINE.finditer(data)) if hip_shim else (),
        learned=frozenset(macros.learned) if macros else frozenset(),
        tested=frozenset(macros.tested) if macros else frozenset(),
        defined=frozenset(macros.defined) if macros else frozenset(),
        candidate=candidate, includes=includes, gpu=gpu_reach.uses_gpu(data),
        polyfill_generated=polyfills.is_generated(data),
        own_definitions=polyfills.own_definitions(data), asm_defines=asm_macros.file_definitions(data),
        warp_primitive=warp_constants.names_primitive(data), namespaces=own_namespaces.defined(data),
        bf16=names_bf16(data))


def names_bf16(data: bytes) -> bool:
    """Whether `data` names a CUDA bfloat16 type or function (`__nv_bfloat16`, `__float2bfloat16`;
    a broad test, a comment counts: one extra guarded #include at most, rewrite/transitive.py)."""
    return b"bfloat16" in data


def included_names(data: bytes) -> frozenset[str]:
    """The base names the #include lines of `data` spell."""
    return frozenset(posixpath.basename(m.group(1).decode("utf-8", "replace")) for m in include_matches(data)) \
        if b"include" in data else frozenset()


Learned = list[tuple[Entry, FileFacts]]

# Below this many bytes to learn, the files are learned in this process. Measured at -j 2, best of
# 3 (store.facts of a whole tree, cold): ggml 18.3 MB 1.10 -> 0.66 s, faiss 6.9 MB 0.33 -> 0.24,
# CTranslate2 2.9 MB 0.18 -> 0.12, llm.c 1.0 MB 0.058 -> 0.046, gunrock 0.7 MB 0.041 -> 0.046,
# nccl-tests 0.3 MB 0.013 -> 0.029: the pool pays for itself from about 1 MB.
MIN_BYTES_APART = 2 << 20


def _of_file(entry: Entry, _: object) -> tuple[str, FileFacts] | None:
    """of() in a worker, of the file as it reads it now, with the SHA-256 of those bytes: one()
    takes the facts only for bytes of that hash (a file written meanwhile is learned there)."""
    data, skipped = read(entry)
    if data is None or skipped is not None:
        return None
    return hashlib.sha256(data).hexdigest(), of(data)


class FactsStore:
    """The per-file facts of one project for one run: from this run's memory, else the slot kept
    for bytes of the same SHA-256, else learned. `save()` writes back the files this run saw."""

    def __init__(self, slot_of: str | None, key: str | None, jobs: int = 1):
        self.jobs = jobs   # processes that learn the files no slot holds (learn_new)
        self.project = None if slot_of is None or key is None else datacache.digest([slot_of])[:24]
        self.slot = None if self.project is None else "filefacts-" + self.project
        self.key = key
        self._old: dict = {}
        self._new: dict[str, tuple[str, FileFacts]] = {}
        # rel -> (the very bytes object last asked about, its SHA-256, its facts or None), while
        # they fit lazy_sources.BUDGET: the passes ask of the same bytes again without a hash
        self._memo = Kept()
        self._learned_apart: dict[str, FileFacts] = {}   # digest -> facts learn_new computed in workers
        self.learned = 0   # files whose facts this run computed (a test reads it)
        self.grown = False   # a part was added to a file's kept facts (optional_cache.Memo)
        if self.slot is not None:
            stored = datacache.load_slot(self.slot)
            if isinstance(stored, dict) and stored.get("key") == key and isinstance(stored.get("files"), dict):
                self._old = stored["files"]

    def facts(self, sources: Iterable[tuple[Entry, bytes]]) -> Learned:
        self.learn_new(sources)
        return [(entry, self.one(entry.rel, data)) for entry, data in sources]

    def learn_new(self, sources: Iterable[tuple[Entry, bytes]]) -> None:
        """The facts of the files neither this run nor the slot knows, learned in `jobs` worker
        processes when they are worth a pool (MIN_BYTES_APART): in a cold run of a large tree,
        of() is most of the project's facts and the one part of them done file by file. A worker
        reads its files itself (this process holds no tree's bytes: lazy_sources.py); one() then
        takes each from here; the facts are the same whatever `jobs` is (of() is pure)."""
        if self.jobs <= 1:
            return
        new: dict[str, Entry] = {}
        size = 0
        for entry, data in sources:
            seen = self._memo.get(entry.rel)
            if seen is not None and seen[0] is data and seen[2] is not None:
                continue
            digest = self._digest(entry.rel, data)
            if not self._holds(entry.rel, digest) and digest not in new:
                new[digest] = entry
                size += len(data)
        jobs = min(self.jobs, len(new) // 8)
        if size < MIN_BYTES_APART or jobs < 2:
            return
        from ..core.pool import forked_map
        for found in list(forked_map(_of_file, list(new.values()), None, jobs)):   # whole: the pool then ends
            if found is not None:
                self._learned_apart[found[0]] = found[1]

    def seed(self, rel: str, data: bytes, sha256: bytes) -> None:
        """Take `data`'s SHA-256 as known (core/filestamps.py computed it as it read the file)."""
        self._memo.put(rel, data, sha256.hex(), None)

    def _digest(self, rel: str, data: bytes) -> str:
        """The SHA-256 of `data`, computed once per bytes object while the memo holds it (learn_new, then one())."""
        known = self._memo.get(rel)
        if known is not None and known[0] is data:
            return known[1]
        digest = hashlib.sha256(data).hexdigest()
        self._memo.put(rel, data, digest, None)
        return digest

    def _kept(self, rel: str, digest: str) -> bool:
        """Whether the slot holds facts for these bytes of `rel` (a hand-altered entry then fails to read)."""
        kept = self._old.get(rel)
        return isinstance(kept, list) and len(kept) == 2 and kept[0] == digest

    def _holds(self, rel: str, digest: str) -> bool:
        """Whether one() would answer from this run's memory or the slot rather than learn."""
        mine = self._new.get(rel)
        return mine is not None and mine[0] == digest or self._kept(rel, digest)

    def one(self, rel: str, data: bytes) -> FileFacts:
        seen = self._memo.get(rel)
        if seen is not None and seen[0] is data and seen[2] is not None:   # asked again of the same bytes
            return seen[2]
        digest = self._digest(rel, data)
        mine = self._new.get(rel)
        if mine is not None and mine[0] == digest:
            return mine[1]
        found = None
        if self._kept(rel, digest):
            try:
                found = _from_plain(self._old[rel][1])
            except (TypeError, ValueError, KeyError, IndexError, AttributeError):   # altered by hand: learn again
                found = None
        if found is None:
            found = self._learned_apart.get(digest) or of(data)
            self.learned += 1
        self._new[rel] = (digest, found)
        self._memo.put(rel, data, digest, found)
        return found

    def save(self) -> None:
        """Write the slot back, unless this run learned nothing new (a re-run of an unchanged tree
        writes nothing): the same files, no file learned, no selector set's record added."""
        if self.slot is None or not self._new:
            return
        if not self.learned and not self.grown and self._new.keys() == self._old.keys() and \
                all(len(ff.where) == len(self._old[rel][1].get("w", ())) for rel, (_, ff) in self._new.items()):
            return
        files = {rel: [digest, _to_plain(facts)] for rel, (digest, facts) in self._new.items()}
        datacache.store_slot(self.slot, {"format": FORMAT, "key": self.key, "files": files})


def platforms(learned: Learned, facts, sources: Sources):
    """facts.project_platforms over per-file facts: the same selectors, one-world macros, shim
    names and AMD-only headers (tests/test_file_facts.py compares the two on real layouts).
    `sources`: the bytes of the few files whose facts are not enough (read again when not kept)."""
    taught, mapped, where, amd_shim = [], set(), {}, False
    for entry, ff in learned:
        if not ff.platform:
            continue
        if ff.shim:
            mapped |= ff.shim_names
            if ff.hip_shim:
                amd_shim = True
                mapped |= ff.amd_names
                for name in ff.defines:
                    where.setdefault(name.decode("latin-1"), set()).add(AMD)
        else:
            taught.append((entry.rel, set(ff.learned)))
    related = sources.pairs(_amd_only_inputs(learned))
    amd_macros, amd_files = platform_facts._selectors(related, taught, tuple(facts.amd_macros))
    _one_world_records(learned, amd_macros, where, sources)
    builtin = builtin_selectors().names()
    one_world = tuple(sorted((name, kinds.pop()) for name, kinds in where.items()
                             if len(kinds) == 1 and next(iter(kinds)) in (AMD, NVIDIA) and name not in builtin
                             and name not in amd_macros and not name.startswith("__")
                             and not CUDA_NAME.match(name.encode())))
    provided = frozenset().union(*(ff.amd_names for entry, ff in learned if entry.rel in amd_files))
    maps_cuda = any(CUDA_NAME.match(name) for name in provided)
    return replace(facts, amd_macros=amd_macros, shim_names=frozenset(mapped | provided), one_world=one_world,
                   amd_shim=amd_shim or maps_cuda, amd_files=amd_files)


def _amd_only_inputs(learned: Learned) -> list[Entry]:
    """The sources amd_headers.amd_only can learn anything from: the candidates and the files that
    include a name one of them has (the others add no candidate and no include site)."""
    names = {posixpath.basename(entry.rel) for entry, ff in learned if ff.candidate}
    return [entry for entry, ff in learned if ff.candidate or (names and ff.includes & names)]


def _one_world_records(learned: Learned, amd_macros: tuple[str, ...], where: dict, sources: Sources) -> None:
    """classify's `where` records of the files that define a macro another file tests (facts.py:
    only those can tell the tree anything), each kept per selector set with its file's facts."""
    defining = [(entry, ff) for entry, ff in learned if ff.platform and not ff.shim and ff.defined]
    tested: dict[str, int] = {}
    for _, ff in defining:
        for name in ff.tested:
            tested[name] = tested.get(name, 0) + 1
    worlds_key = "\0".join(amd_macros)
    worlds = None
    for entry, ff in defining:
        if not any(tested.get(name, 0) > (name in ff.tested) for name in ff.defined):
            continue
        record = ff.where.get(worlds_key)
        if record is None:
            data = sources.data(entry)
            if data is None:   # unreadable since its facts were learned: it tells the tree nothing now
                continue
            worlds = worlds or selectors(amd_macros)
            found: dict = {}
            classify(data, worlds, found)
            record = ff.where[worlds_key] = {name: frozenset(kinds) for name, kinds in found.items()}
        for name, kinds in record.items():
            where.setdefault(name, set()).update(kinds)


def _to_plain(ff: FileFacts) -> dict:
    text = lambda names: sorted(n.decode("latin-1") for n in names)   # noqa: E731
    return {"p": ff.platform, "s": ff.shim, "sn": text(ff.shim_names), "h": ff.hip_shim, "an": text(ff.amd_names),
            "d": [n.decode("latin-1") for n in ff.defines], "l": sorted(ff.learned), "t": sorted(ff.tested),
            "df": sorted(ff.defined), "c": ff.candidate, "i": sorted(ff.includes), "u": ff.gpu, "g": ff.polyfill_generated,
            "o": [list(d) for d in ff.own_definitions],
            "a": [[n.decode("latin-1"), line, asm, text(words)] for n, line, asm, words in ff.asm_defines],
            "wp": ff.warp_primitive, "ns": sorted(ff.namespaces), "bf": ff.bf16,
            "w": {key: {n: sorted(k) for n, k in record.items()} for key, record in ff.where.items()},
            "op": {part: [list(row) for row in rows] for part, rows in ff.optional.items()}}


def _from_plain(plain: dict) -> FileFacts:
    raw = lambda names: frozenset(str(n).encode("latin-1") for n in names)   # noqa: E731
    words = lambda names: frozenset(str(n) for n in names)   # noqa: E731
    return FileFacts(
        platform=bool(plain["p"]), shim=bool(plain["s"]), shim_names=raw(plain["sn"]), hip_shim=bool(plain["h"]),
        amd_names=raw(plain["an"]), defines=tuple(str(n).encode("latin-1") for n in plain["d"]),
        learned=words(plain["l"]), tested=words(plain["t"]), defined=words(plain["df"]), candidate=bool(plain["c"]),
        includes=words(plain["i"]), gpu=bool(plain["u"]), polyfill_generated=bool(plain["g"]),
        own_definitions=tuple((str(n), bool(s)) for n, s in plain["o"]),
        asm_defines=tuple((str(n).encode("latin-1"), int(line), bool(asm), raw(w)) for n, line, asm, w in plain["a"]),
        warp_primitive=bool(plain["wp"]), namespaces=words(plain["ns"]), bf16=bool(plain["bf"]),
        where={str(key): {str(n): frozenset(str(k) for k in kinds) for n, kinds in record.items()}
               for key, record in plain["w"].items()},
        optional={str(part): _rows(rows) for part, rows in plain["op"].items()})


def _rows(plain: object) -> list[tuple]:
    """A kept list of tuples of ints and strings (optional_cache's parts); anything else raises."""
    if not isinstance(plain, list):
        raise TypeError("not a list")
    rows = [tuple(row) for row in plain]
    if not all(isinstance(v, (int, str)) and not isinstance(v, bool) for row in rows for v in row):
        raise TypeError("not a row of ints and strings")
    return rows
