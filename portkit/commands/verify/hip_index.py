"""The mapping tables read backwards, HIP name -> CUDA record, for verify's explanations.

A compile error quotes the converted (HIP) name; explain.py needs the CUDA record it came from, the
CUDA headers the tables know, and the names an older release takes instead. Built once per table.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ...core.tables.mappings import Mapping, MappingDB


@dataclass(frozen=True)
class HipIndex:
    names: dict[str, Mapping]
    headers: dict[str, Mapping]
    cuda_headers: frozenset[str]
    legacy: dict[str, Mapping]      # the names earlier releases take instead (hipblasGemmEx: cublasGemmEx's)


@lru_cache(maxsize=4)
def hip_index(db: MappingDB) -> HipIndex:
    """The tables read backwards: HIP (and roc*) names and headers to their records."""
    names: dict[str, Mapping] = {}
    # a HIP name can stand for several CUDA names (runtime and driver API): name the runtime one
    for m in sorted(db.names.values(), key=lambda m: (m.family != "runtime", m.cuda)):
        for name in (m.hip, m.roc):
            if name:
                names.setdefault(name, m)
    headers = {name: m for m in db.headers.values() for name in (m.hip, m.roc) if name}
    legacy = {m.legacy: m for m in sorted(db.names.values(), key=lambda m: m.cuda, reverse=True) if m.legacy}
    return HipIndex(names, headers, frozenset(db.headers), legacy)
