"""Files a scanned source reaches by `#include`: scanned as source, whatever their names say.

files.kind_of decides by name, but an X-macro `.def`, a `.cuinc`, a `.cuh.in` template or an
extension-less header is code all the same once a source includes it; left out, its CUDA would
pass convert, audit and check unseen while the summary said "100% converted".

One pass over the file set: each source's include lines are read once and resolved against an
index of the discovered files (never the file system), so an include is never followed outside
the root, into a directory the walk refused, or through a symbolic link; a link that an include
reaches is reported with the file that includes it. A reached file is read once, for its own
includes (so a cycle ends); a binary or UTF-16 one is not code and stays as it is.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..core import datacache
from ..core.filestamps import IncludeLine, Stamps
from ..core.files import Entry, Skipped, discover, kind_of, read, walk_stamp
from ..core.source import include_lines   # the include walk's reading, shared with core/filestamps.py

HEADER_TEMPLATES = (".h.in", ".hpp.in", ".hxx.in", ".cuh.in")   # what CMake's configure_file makes headers of


def nearest(found: list[str], near: str) -> str:
    """Of the tree files an include may name, the one closest to the file `near` (longest shared
    directory, then the shortest name): how an include directory of the project is guessed."""
    here = near.split("/")[:-1]

    def shared(rel: str) -> int:
        n = 0
        for a, b in zip(here, rel.split("/")[:-1]):
            if a != b:
                break
            n += 1
        return n
    return max(found, key=lambda rel: (shared(rel), -len(rel), rel))


class _Index:
    """The file set by name and by path suffix, for the names an include could newly reach:
    files kind_of does not know and links the walk refused (plus any source of the same name,
    which an include may mean instead)."""

    def __init__(self, entries: list[Entry], links: set[str]):
        self.files = {e.rel for e in entries}
        self.links = links
        self.names = {rel.rsplit("/", 1)[-1] for rel in links}
        self.names |= {e.rel.rsplit("/", 1)[-1] for e in entries if e.kind is None}
        # a header template (`src/nccl.h.in`) is what `#include "nccl.h"` reaches: the build
        # writes the header from it (NCCL's own API header), so the template is the code to read
        templates = {e.rel[:-3]: e.rel for e in entries if e.kind is None and e.rel.endswith(HEADER_TEMPLATES)}
        self.names |= {made.rsplit("/", 1)[-1] for made in templates}
        self.by_suffix: dict[str, list[str]] = {}
        for rel in sorted(self.files | links):
            if rel.rsplit("/", 1)[-1] in self.names:
                self._index(rel, rel)
        for made, template in sorted(templates.items()):
            if made not in self.files:   # a header of that name beside its template is the one reached
                self._index(made, template)

    def _index(self, path: str, rel: str) -> None:
        parts = path.split("/")
        for i in range(len(parts)):
            self.by_suffix.setdefault("/".join(parts[i:]), []).append(rel)

    def resolve(self, quoted: bool, spelled: str, includer: str) -> str | None:
        """The file set's (or a refused link's) name for an include: next to the including file
        for the quoted form, else the nearest file whose path ends with the spelled one. A bare
        `<name>` with no suffix is the standard library's (<vector>), never a file of the tree."""
        if os.path.isabs(spelled):
            return None
        if quoted:
            here = includer.rsplit("/", 1)[0] if "/" in includer else ""
            local = os.path.normpath(os.path.join(here, spelled)).replace(os.sep, "/")
            if local in self.files or local in self.links:
                return local
            through = self._through_link(local)
            if through is not None:
                return through
        elif "/" not in spelled and "." not in spelled:
            return None
        found = self.by_suffix.get(os.path.normpath(spelled).replace(os.sep, "/"))
        return nearest(found, includer) if found else None

    def _through_link(self, local: str) -> str | None:
        """The refused link to a directory that a path inside the root goes through, if any."""
        parts = local.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[:i]) in self.links:
                return "/".join(parts[:i])
        return None


def follow(entries: list[Entry], skipped: list[Skipped],
           stamps: "Stamps | None" = None) -> tuple[list[Entry], list[Skipped]]:
    """The file set with every file a source includes, transitively, marked as source, and the
    refused links that an include reaches reported as such. `entries` is the set after excludes:
    an excluded file neither includes nor is included. `stamps`: the run's records of the files'
    bytes (core/filestamps.py): a file whose stamp is as the last run left it is not read."""
    links = {s.rel for s in skipped if s.link}
    if not links and all(e.kind is not None for e in entries):
        return entries, skipped           # nothing an include could add: no file read
    index = _Index(entries, links)
    by_rel = {e.rel: e for e in entries}
    todo = deque(e for e in entries if e.kind == "source")
    seen = {e.rel for e in todo}
    promoted: set[str] = set()
    reached: dict[str, str] = {}          # link -> the first file that includes something through it
    while todo:
        entry = todo.popleft()
        lines = _lines(entry, stamps)
        if lines is None:
            continue                      # unreadable, binary or UTF-16: not code to follow
        if by_rel[entry.rel].kind is None:
            promoted.add(entry.rel)
        for quoted, spelled in lines:
            if spelled.rsplit("/", 1)[-1] not in index.names and not (links and quoted):
                continue                  # no newly reachable file has that name: the common case
            target = index.resolve(quoted, spelled, entry.rel)
            if target in links:
                reached.setdefault(target, entry.rel)
            elif target is not None and target not in seen:
                seen.add(target)
                if by_rel[target].kind is None:
                    todo.append(replace(by_rel[target], kind="source"))
    entries = [replace(e, kind="source") if e.rel in promoted else e for e in entries]
    return entries, [_link_note(s, reached[s.rel]) if s.rel in reached else s for s in skipped]


def _lines(entry: Entry, stamps: "Stamps | None") -> Sequence[IncludeLine] | None:
    """The #include lines of a file that reads as text (None for one that does not), from the
    run's records when they know its bytes."""
    known = stamps.known(entry) if stamps is not None else None
    if known is not None:
        return known.includes
    data, note = stamps.read(entry) if stamps is not None else read(entry)
    if data is None or note is not None:
        return None
    return include_lines(data) if b"include" in data else ()


def _link_note(link: Skipped, includer: str) -> Skipped:
    """The walk's note on a link, saying that code is behind it: what a user must act on."""
    return replace(link, reason=f"{link.reason}, though {includer} includes a file through it: that code is "
                                f"not converted or audited (put the file itself there to have it read)")


class TreeSources:
    """Whether check scans a file: by its name, or, for a name kind_of does not know, when a source
    of the tree at `root` includes it, as audit would. The tree is walked once, and only when such
    a file is asked about: a commit of .cu files reads nothing more. A commit of a README is asked
    about at every commit: which such names the sources include is kept in the user's cache for
    the tree as it is (every file's name, size and time, as pipeline.tree_facts keeps the facts),
    so an unchanged tree is walked, not read (NVIDIA/cccl: its 8,500 sources' include lines took
    0.84 s of a README commit's 1.3 s)."""

    def __init__(self, root: Path):
        self.root = root
        self._included: frozenset[str] | None = None   # files a source includes, kind_of not knowing their names

    def scans(self, path: Path) -> bool:
        if kind_of(path.name) is not None:
            return True
        try:
            rel = path.absolute().relative_to(self.root).as_posix()
        except ValueError:
            return False                  # outside the tree: never a file of it
        if self._included is None:
            self._included = _included(self.root)
        return rel in self._included


def _included(root: Path) -> frozenset[str]:
    """The files of the tree at `root` that follow() makes sources though kind_of does not know
    their names, from the cache when the tree is as it was."""
    _, entries, skipped = discover([root])

    def build() -> frozenset[str]:
        followed, _ = follow(entries, skipped)
        return frozenset(e.rel for e in followed if e.kind == "source" and kind_of(e.rel.rsplit("/", 1)[-1]) is None)
    try:
        key = datacache.digest(walk_stamp(entries) + [f"{s.rel}\0{s.link}" for s in skipped], _CODE)
    except OSError:   # a file vanished while we looked: follow the tree as it is now
        return build()
    slot = "included-" + datacache.digest([str(root.absolute())])[:24]
    return datacache.cached_slot(slot, key, build, sorted, _names)


def _names(plain: object) -> frozenset[str]:
    """The cached list back, or an error (which rebuilds it) when it is not a list of names."""
    if not isinstance(plain, list) or not all(isinstance(name, str) for name in plain):
        raise ValueError("not a list of names")
    return frozenset(plain)


# the code whose reading of the tree the cached answer is (its key covers their bytes)
_HERE = Path(__file__).resolve().parent.parent
_CODE = (_HERE / "project" / "includes.py", _HERE / "core" / "files.py", _HERE / "core" / "source.py")
