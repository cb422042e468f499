"""The cooperative-groups tables against ROCm 6.2's own header, name by name.

mappings/coop_members.toml says which release first has each member of thread_block,
grid_group, thread_block_tile and coalesced_group; mappings/coop_groups.toml the same for the
namespace's free functions and types. The pinned 6.2 pack's amd_hip_cooperative_groups.h must
declare exactly those the tables put at 6.2 or before, and none of the others, so a table that
claims too much (`warp.any()` at 6.2) or too little fails here. The audit at --rocm 6.2 then
reports, with its replacement, every member a real extension kernel calls that 6.2 lacks.
"""

from __future__ import annotations

import re
import tarfile

import pytest

from conftest import PACK62_ARCHIVE, REPO
from portkit.api import audit_paths
from portkit.core.tables import coop_members
from portkit.core.tables.mappings import default_db

HEADER = "rocm-6.2.0-headers/include/hip/amd_detail/amd_hip_cooperative_groups.h"
SIX_TWO = (6, 2, 0)
_QUALIFIED = re.compile(r"(?<!friend )(?:__CG_QUALIFIER__|__CG_STATIC_QUALIFIER__|_CG_STATIC_CONST_DECL_)"
                        r"[^;{()]*?\b(\w+)\s*\(")
_CLASS = re.compile(r"\b(?:class|struct)\s+(\w+)\s*(?:<[^>{;]*>)?\s*(?::([^{;]*))?\{")
# CUDA's generic free functions (std::reduce-like names, left out of the name tables on purpose):
# polyfilled by portkit_polyfills.h where the 6.2 header lacks them (mappings/polyfills.toml).
GENERIC = ("reduce", "inclusive_scan", "exclusive_scan")


def _header() -> str:
    with tarfile.open(PACK62_ARCHIVE) as tar:
        text = tar.extractfile(HEADER).read().decode()
    return re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)


def _body(text: str, open_brace: int) -> int:
    """The index just past the brace that closes the one at `open_brace`."""
    depth = 0
    for i in range(open_brace, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    raise AssertionError("unbalanced header")


def _classes(text: str) -> tuple[dict[str, set[str]], dict[str, set[str]], str]:
    """Each class's own members and bases (every body of a partial specialization joined), and the
    text outside every class body (the namespace scope)."""
    members: dict[str, set[str]] = {}
    bases: dict[str, set[str]] = {}
    outside, last = [], 0
    for match in _CLASS.finditer(text):
        if match.start() < last:
            continue      # a class inside a class body already taken
        end = _body(text, match.end() - 1)
        name = match.group(1)
        members.setdefault(name, set()).update(_QUALIFIED.findall(text[match.end():end]))
        bases.setdefault(name, set()).update(
            b.rsplit("::", 1)[-1] for b in re.findall(r"(?:public|protected|private)\s+([\w:]+)", match.group(2) or ""))
        outside.append(text[last:match.start()])
        last = end
    outside.append(text[last:])
    return members, bases, " ".join(outside)


def _all_members(name: str, members: dict[str, set[str]], bases: dict[str, set[str]]) -> set[str]:
    found = set(members.get(name, ()))
    for base in bases.get(name, ()):
        if base != name:
            found |= _all_members(base, members, bases)
    return found


@pytest.fixture(scope="module")
def header():
    return _classes(_header())


@pytest.mark.parametrize("record", coop_members.members(), ids=lambda m: f"{m.name}[{','.join(m.groups)}]")
def test_each_member_is_in_the_62_header_exactly_when_the_table_says(record, header):
    members, bases, _ = header
    in_62 = record.since is not None and record.since <= SIX_TWO
    for group in record.groups:
        assert group in members, f"no class {group} in the 6.2 header"
        declared = record.name in _all_members(group, members, bases)
        assert declared == in_62, f"{group}::{record.name}: the 6.2 header {'has' if declared else 'lacks'} it, " \
                                  f"the table says hip_since {record.hip_since or 'none'}"


def _namespace_entries():
    return sorted((m for m in default_db().names.values() if m.family == "coop_groups" and m.kind != "namespace"),
                  key=lambda m: m.cuda)


@pytest.mark.parametrize("entry", _namespace_entries(), ids=lambda m: m.cuda)
def test_each_free_function_and_type_is_in_the_62_header_exactly_when_the_table_says(entry, header):
    members, _, scope = header
    in_62 = entry.status != "unsupported" and entry.hip_since is not None and entry.hip_since <= SIX_TWO
    if entry.kind == "type":
        declared = entry.cuda in members
    else:
        declared = entry.cuda in _QUALIFIED.findall(scope)
    assert declared == in_62, f"{entry.cuda}: the 6.2 header {'has' if declared else 'lacks'} it, " \
                              f"the table says {entry.status} since {entry.hip_since}"


def test_generic_free_functions_are_missing_at_62_and_polyfilled(header):
    _, _, scope = header
    polyfills = (REPO / "mappings" / "polyfills.toml").read_text(encoding="utf-8")
    for name in GENERIC:
        assert name not in _QUALIFIED.findall(scope), f"{name}: the 6.2 header has it now"
        assert re.search(rf"\b{name}\(const (?:Group|coalesced_group)&", polyfills), f"{name}: no polyfill in mappings/polyfills.toml"


def test_group_members_the_target_lacks_are_reported_with_what_to_write():
    """fixtures/rules/PK002/cg_members.cu (reduced from cuCollections' static_set retrieve kernel):
    at 6.2 each member call 6.2 lacks is a PK002 on its line; at 6.3 only num_threads() is left."""
    case = REPO / "fixtures" / "rules" / "PK002" / "cg_members.cu"
    lines = case.read_text(encoding="utf-8").splitlines()

    def found(rocm):
        return [(f["line"], re.match(r"\w+", lines[f["line"] - 1][f["column"] - 1:]).group(), f["message"])
                for f in audit_paths([case], rocm=rocm)["findings"] if f["code"] == "PK002"]
    at_62 = found("6.2")
    assert [(line, name) for line, name, _ in at_62] == [
        (25, "any"), (27, "binary_partition"), (30, "ballot"), (34, "num_threads")]
    assert at_62[0][2] == "thread_block_tile::any() needs ROCm 6.3 (HIP's cooperative groups have it from there), " \
                          "the target is 6.2: raise --rocm, or test __ballot(p) masked to the group's lanes, != 0 " \
                          "(__any(p) when the group is the whole wavefront)"
    assert at_62[2][2].startswith("coalesced_group::ballot() needs ROCm 6.3")
    assert at_62[3][2] == "coalesced_group::num_threads() is in no ROCm release portkit knows, the target is 6.2: " \
                          "use size()"
    assert [(line, name) for line, name, _ in found("6.3")] == [(34, "num_threads")]
