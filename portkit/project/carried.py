"""Copies of vendor-neutral libraries a tree carries as source: left as they are, never priced.

nccl and rccl keep NVTX3's headers in `src/include/nvtx3`. NVTX3 is header-only C and C++ that
finds its tool at run time; hipcc compiles the copy as it is. Read as CUDA, the copy's 430
findings and the project's 440 uses of NVTX priced an already-ported rccl at 464 hours of
"adopt the ROCm counterpart of NVTX", and convert rewrote the copy's internals to roctx names
that do not exist. A library whose record in mappings/ecosystem.toml has a `copy` is carried
when a file of the tree ends with its marker (`nvtx3/nvToolsExt.h`); the copy is the marker's
directory (`src/include/nvtx3`). Where it is carried:

- convert leaves the copy's files byte for byte, like the files of the tree's own AMD build;
- the scan reads the library's names and includes as the project's own, except the headers
  and names that still need CUDA (`nvToolsExtCudaRt.h`, `nvtxNameCudaStreamA`);
- audit and check still scan the copy (the gate leaves no file of a change unread), and the
  estimate prices none of its sites: its port is its vendor's.

Read from file names only, never from contents.
"""

from __future__ import annotations

from ..core.files import Entry
from ..core.tables import ecosystem


def learn(entries: list[Entry], eco: ecosystem.Ecosystem | None = None) -> tuple[tuple[str, str], ...]:
    """(library id, the copy's directory) of every copy in the file set, sorted."""
    eco = eco or ecosystem.default()
    found = set()
    for library in eco.libraries:
        if library.copy is None:
            continue
        marker = library.copy.marker
        for entry in entries:
            rel = entry.rel
            if rel == marker or rel.endswith("/" + marker):
                found.add((library.id, rel[:len(rel) - len(marker)] + marker.rsplit("/", 1)[0]))
    return tuple(sorted(found))


def library_of(rel: str, carried: tuple[tuple[str, str], ...]) -> str:
    """The id of the carried library whose copy holds the file `rel`, or ""."""
    for library, directory in carried:
        if rel.startswith(directory + "/"):
            return library
    return ""
