"""The namespaces a tree declares inside its own under a CUDA library's name (`ctranslate2::cuda`).

CTranslate2 declares `namespace ctranslate2 { namespace cuda { ... } }` in src/cuda/utils.h and
calls `cuda::get_device_properties(...)` from src/types.cc, inside `namespace ctranslate2` but in
a file that declares no `cuda` itself. C++ finds that `cuda` in ctranslate2 before the global
namespace, so it is the project's, not libcu++'s; the audit reported 216 such uses as libcu++
(PK001, high). The pipeline reads, once, the sources that define a namespace of such a name and
keeps the full paths of the nested ones; the walk then knows every file's `cuda::` in a scope that
sees one (rewrite/qualified_names.owned). A top-level `namespace cuda` (cuCollections reopens
libcu++'s `cuda::std`) is libcu++'s, and so is a nested one inside a CUDA library's own namespace
(`thrust::cuda`: Thrust's, with its own table record), which are not learned.
"""

from __future__ import annotations

import re

from ..core.files import Entry
from ..core.parse import parse
from ..core.source import SourceFile
from ..rewrite.qualified_names import declarations, namespace_names


# a namespace definition (`namespace a::b {`), group 1 its own, last name
DEFINED = re.compile(rb"\bnamespace\s+(?:\w+\s*::\s*)*(\w+)\s*\{")


def defined(data: bytes) -> frozenset[str]:
    """The last names of the namespaces `data` defines: a file none of whose names is a CUDA
    library's namespace is one learn() would not parse (file_facts.FileFacts.namespaces keeps them)."""
    return frozenset(m.decode("latin-1") for m in DEFINED.findall(data)) if b"namespace" in data else frozenset()


def learn(sources: list[tuple[Entry, bytes]], names_by_bytes: dict) -> tuple[str, ...]:
    """The full paths ("ctranslate2::cuda") of the nested namespaces named like one of the tables'
    (`names_by_bytes`: the scan's records) that the sources define, outside the CUDA libraries'
    own namespaces and std."""
    names = namespace_names(names_by_bytes)
    if not names:
        return ()
    mention = re.compile(rb"\bnamespace\s+(?:\w+\s*::\s*)*(?:" + b"|".join(
        re.escape(n.encode("latin-1")) for n in sorted(names)) + rb")\s*\{")
    found: set[tuple[str, ...]] = set()
    for entry, data in sources:
        if b"namespace" not in data or mention.search(data) is None:
            continue   # a parse only for the few files that define one
        source = SourceFile.from_bytes(entry.rel, data)
        found |= declarations(parse(source.parse_bytes).root_node, data, names)
    # the outermost names of the tables' namespace records (cuda, cub, thrust of `thrust::cuda`):
    # a namespace nested in one of them is the library's, not the project's
    outside = {m.cuda.split("::", 1)[0] for m in names_by_bytes.values() if m.kind == "namespace"} | {"std"}
    return tuple(sorted("::".join(path) for path in found if path[0] not in outside))
