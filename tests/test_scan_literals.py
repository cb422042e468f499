"""commands/scan/literals.py finds exactly the literals a query capture of every number_literal, filtered
by value, would: the rules run on the same nodes (issue 34 replaced the capture for speed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tree_sitter import Query, QueryCursor

from conftest import REPO
from portkit.core import parse
from portkit.engine import syntax
from portkit.commands.scan import literals

WARP = frozenset({1, 5, 16, 31, 32, 0xFFFFFFFF})   # what the rules read today (rules.literal_hooks)
SOURCE = b"""
int a[] = {32, 32u, 32U, 32ul, 32ULL, 0x20, 0X20, 0x0020, 0b100000, 3'2, 032, 320, 32.0f, 32e1, 1.5,
           0x01, 1, 01, 0xffffffff, 0xFFFFFFFFu, 4294967295, 0xFFFF'FFFF, 16, 0x10, 5, 31, 0x1f, 64};
const char* s = "32 and 16";   // 32 in a comment
/* 0xffffffff */
long long b = 0ui64 + 1ull - 17;
int c = x % 32 + (y >> 5) - -1;
"""


def _by_query(data: bytes, values: frozenset[int]) -> list[bytes]:
    tree = parse.parse(data)
    nodes = QueryCursor(Query(parse.language(), "(number_literal) @n")).captures(tree.root_node).get("n", [])
    return [n.text for n in sorted(nodes, key=lambda n: n.start_byte) if syntax.int_value(n) in values]


def _found(data: bytes, values: frozenset[int]) -> list[bytes]:
    return [n.text for n in literals.find(parse.parse(data).root_node, data, values)]


def test_every_spelling_of_the_wanted_values_and_nothing_else():
    assert _found(SOURCE, WARP) == [
        b"32", b"32u", b"32U", b"32ul", b"32ULL", b"0x20", b"0X20", b"0x0020", b"0b100000", b"3'2",
        b"0x01", b"1", b"0xffffffff", b"0xFFFFFFFFu", b"4294967295", b"0xFFFF'FFFF", b"16", b"0x10", b"5",
        b"31", b"0x1f", b"1ull", b"32", b"5"]   # `- -1`: the grammar's literal is -1
    assert _found(SOURCE, WARP) == _by_query(SOURCE, WARP)


@pytest.mark.parametrize("values", [frozenset({0}), frozenset({64, 255}), frozenset({-1, 17}), frozenset()])
def test_other_value_sets_match_the_query(values):
    assert _found(SOURCE, values) == _by_query(SOURCE, values)


def test_the_fixtures_real_code_matches_the_query():
    """Every CUDA input of the fixtures (real code: cuda-samples, llm.c, ggml forms)."""
    paths = sorted((REPO / "fixtures").rglob("*.cu")) + sorted((REPO / "fixtures").rglob("*.cuh"))
    assert len(paths) > 100
    for path in paths:
        data = path.read_bytes()
        assert _found(data, WARP) == _by_query(data, WARP), path
