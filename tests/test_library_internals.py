"""Issue 48, items 2, 5 and 6: library internals (cub::Dispatch*, Thrust's CUDA backend), a
project's own `namespace cuda`, and names that exist at the target release.

The release check reads the pinned ROCm 6.2 header pack (fixtures/rocm-headers) and the tables,
and needs no tool: every CUDA name the tables leave without a HIP name at 6.2 whose HIP spelling
the 6.2 headers declare is a mismatch, unless ALLOWED says why the declaration does not serve.
"""

from __future__ import annotations

import re
import tarfile
from functools import lru_cache
from pathlib import Path

import pytest

from portkit.core.tables.mappings import default_db

ROOT = Path(__file__).resolve().parent.parent
PACK = ROOT / "fixtures" / "rocm-headers" / "rocm-6.2.0-headers.tar.xz"
ROCM = (6, 2, 0)
# the families whose HIP names HIP's own headers declare (the pack holds HIP only)
FAMILIES = ("runtime", "driver", "device")
_COMMENT = re.compile(rb"/\*.*?\*/|//[^\n]*|^[ \t]*#[ \t]*undef[^\n]*", re.S | re.M)

# Declared in the 6.2 headers, yet no conversion: each says why.
ALLOWED = {
    # amd_warp_sync_functions.h: only with HIP_ENABLE_WARP_SYNC_BUILTINS and a 64-bit mask (the notes);
    # __activemask converts from 7.0, which declares it by default
    "__activemask": "HIP_ENABLE_WARP_SYNC_BUILTINS only (dated 7.0, its default)",
    "__match_all_sync": "HIP_ENABLE_WARP_SYNC_BUILTINS only",
    "__match_any_sync": "HIP_ENABLE_WARP_SYNC_BUILTINS only",
    # HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS / _P2P_TOKENS are enumerators of hipPointer_attribute
    # (CUDA's CU_POINTER_ATTRIBUTE_*); these CUDA names are a struct and an enum type
    "CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS": "HIP's name is an enumerator, CUDA's a type",
    "CUDA_POINTER_ATTRIBUTE_P2P_TOKENS": "HIP's name is an enumerator, CUDA's a struct",
    # hipFuncSetAttribute & co. are the runtime API's, taking a kernel pointer (const void*);
    # the driver's take a CUfunction (HIP's driver-style hipFunction_t has no setter)
    "cuFuncSetAttribute": "HIP's is the runtime function (a kernel pointer, not a CUfunction)",
    "cuFuncSetCacheConfig": "HIP's is the runtime function (a kernel pointer, not a CUfunction)",
    "cuFuncSetSharedMemConfig": "HIP's is the runtime function (a kernel pointer, not a CUfunction)",
    # hipMemcpy* take a direction, hipMemcpyPeer* devices; the driver's take neither, and contexts
    "cuMemcpy": "hipMemcpy takes a hipMemcpyKind (the record's note: hipMemcpyDefault)",
    "cuMemcpyAsync": "hipMemcpyAsync takes a hipMemcpyKind",
    "cuMemcpyPeer": "hipMemcpyPeer takes device ordinals, cuMemcpyPeer contexts",
    "cuMemcpyPeerAsync": "hipMemcpyPeerAsync takes device ordinals, cuMemcpyPeerAsync contexts",
    # only a parameter name (amd_hip_fp8.h's cast_to_f8_from_f32(float v, bool saturate, ...))
    "saturate": "a parameter name in amd_hip_fp8.h, no function",
}


@lru_cache(maxsize=1)
def pack_words() -> frozenset[str]:
    """Every identifier of the pack's headers outside comments and #undef lines (a set: one
    search of the whole text per name took minutes for the tables' 3,000 unconverted names)."""
    words: set[bytes] = set()
    with tarfile.open(PACK) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith((".h", ".hpp")) and "nvidia_detail" not in member.name:
                words.update(re.findall(rb"\w+", _COMMENT.sub(b" ", tar.extractfile(member).read())))
    return frozenset(w.decode("ascii", "replace") for w in words)


def spellings(cuda: str) -> list[str]:
    """HIP's usual spellings of a CUDA name: cudaX/cuX -> hipX, CUDA_X/CU_X -> HIP_X, the same name."""
    out = [cuda]
    for old, new in (("cuda", "hip"), ("CUDA_", "HIP_"), ("CU_", "HIP_")):
        if cuda.startswith(old):
            out.append(new + cuda[len(old):])
    if re.match(r"cu[A-Z]", cuda):
        out.append("hip" + cuda[2:])
    return out


def declared(name: str) -> bool:
    return name in pack_words()


def release_mismatches() -> list[str]:
    """CUDA names left at ROCm 6.2 (no HIP name, or one dated after 6.2) that the pack declares."""
    out = []
    for mapping in default_db().names.values():
        if mapping.family not in FAMILIES or mapping.cuda in ALLOWED:
            continue
        if mapping.hip is None:
            hits = [h for h in spellings(mapping.cuda)[1:] or [mapping.cuda] if declared(h)]
            if mapping.cuda.startswith("__") and declared(mapping.cuda):
                hits.append(mapping.cuda)
            out += [f"{mapping.cuda}: no HIP name, but 6.2 declares {hit}" for hit in hits]
        elif mapping.hip_since and mapping.hip_since > ROCM and declared(mapping.hip):
            out.append(f"{mapping.cuda}: {mapping.hip} dated {mapping.hip_since}, but 6.2 declares it")
    return sorted(set(out))


def test_the_tables_convert_what_the_62_headers_declare():
    """cudaMemoryTypeUnregistered was "no HIP equivalent" though 6.2 declares hipMemoryTypeUnregistered."""
    assert release_mismatches() == []


def test_the_allowlist_names_only_declared_unconverted_names():
    """An allowlisted name the tables now convert at 6.2, or that 6.2 does not declare, is a stale entry."""
    names = default_db().names
    stale = [n for n in ALLOWED if n not in names or names[n].resolve(ROCM, False)[0] is not None
             or not any(declared(h) for h in spellings(n))]
    assert stale == []


@pytest.mark.parametrize("cuda, hip, since", [
    ("cudaMemoryTypeUnregistered", "hipMemoryTypeUnregistered", (6, 0, 0)),
    ("cudaExternalMemoryGetMappedMipmappedArray", "hipExternalMemoryGetMappedMipmappedArray", (6, 0, 0)),
    ("CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_NVSCISYNC", "hipExternalSemaphoreHandleTypeNvSciSync", (6, 0, 0)),
])
def test_a_name_converts_from_the_release_that_declares_it(cuda, hip, since):
    mapping = default_db().names[cuda]
    assert (mapping.hip, mapping.hip_since) == (hip, since)
    assert mapping.resolve((6, 2, 0), False)[0] == hip
    assert mapping.resolve((5, 7, 0), False)[0] is None   # PK002 there: needs a newer ROCm


# --- item 2: library internals -------------------------------------------------------------

from portkit.commands.convert import convert_bytes  # noqa: E402
from portkit.engine.options import Options  # noqa: E402

FIXTURES = ROOT / "fixtures" / "convert"


def _convert(text: str):
    """The converted text at ROCm 6.2 and the findings as (code, line, subject)."""
    scan, out = convert_bytes("case.cu", text.encode(), Options(rocm=(6, 2, 0)))
    return (text if out is None else out.decode()), sorted((f.code, f.line, f.subject) for f in scan.findings)


def test_cub_dispatch_stays_and_names_the_public_algorithm():
    """hipcub::DispatchRadixSort does not exist (ROCm/hipCUB rocm-6.2.2 declares no Dispatch*)."""
    text, findings = _convert((FIXTURES / "cub_dispatch_internals" / "input.cu").read_text())
    assert "cub::DispatchRadixSort<hipcub::SortOrder::Ascending" in text
    assert "hipcub::Dispatch" not in text and "hipcub::DeviceReduce::Sum" in text
    assert findings == [("PK001", 4, "cub/device/dispatch/dispatch_radix_sort.cuh"),
                        ("PK001", 15, "cub::DispatchRadixSort"), ("PK001", 24, "cub::DispatchRadixSort")]
    note = default_db().names["cub::DispatchRadixSort"].note
    assert "hipcub::DeviceRadixSort" in note


def test_every_unconverted_cub_member_is_the_dispatch_layer():
    """The qualified cub:: records are CUB's dispatch structs, each naming a hipcub::Device* algorithm."""
    members = {m.cuda: m for m in default_db().names.values() if m.cuda.startswith("cub::")}
    assert len(members) == 17
    for name, mapping in members.items():
        assert mapping.hip is None and "Dispatch" in name and "hipcub::Device" in mapping.note, name


def test_thrust_backend_names_become_rocthrusts():
    text, findings = _convert("thrust::system_error e(c, thrust::cuda_category());\n"
                              "bool b = cat == thrust::system::cuda_category();\n"
                              "thrust::system::cuda::allocator<int> a;\n"
                              "thrust::system::cuda::detail::bad_alloc x;\n")
    # after the block that names rocThrust's names on HIP's NVIDIA platform (rewrite/nvidia_thrust.py)
    from portkit.rewrite.nvidia_thrust import helper
    block = helper(b"\n", include=True, system=True, category=True).decode()
    assert text == block + ("thrust::system_error e(c, thrust::hip_category());\n"
                    "bool b = cat == thrust::system::hip_category();\n"
                    "thrust::system::hip::allocator<int> a;\n"
                    "thrust::system::cuda::detail::bad_alloc x;\n")
    assert findings == [("PK001", 4, "thrust::system::cuda::detail")]


def test_a_projects_own_cuda_category_is_not_thrusts():
    """Only the qualified spelling is Thrust's: a project's own error category keeps its name."""
    source = "const std::error_category &cuda_category();\nauto &c = my::cuda_category();\n"
    assert _convert(source) == (source, [])
