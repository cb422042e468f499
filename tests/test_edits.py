"""Edits are byte ranges on the original: applied exactly, overlaps caught."""

import pytest

from portkit.core.edits import Edit, EditKind, OverlappingEdits, apply_edits, normalize


def test_apply_replaces_only_the_ranges():
    data = b"cudaMalloc(&p); // caf\xe9\r\ncudaFree(p);"
    edits = [Edit(0, 10, b"hipMalloc"), Edit(25, 33, b"hipFree")]
    assert apply_edits(data, edits) == b"hipMalloc(&p); // caf\xe9\r\nhipFree(p);"


def test_insertion_and_order_independence():
    data = b"abc"
    edits = [Edit(3, 3, b"!"), Edit(0, 0, b"<"), Edit(1, 2, b"B")]
    assert apply_edits(data, edits) == b"<aBc!"


def test_identical_duplicates_collapse():
    assert apply_edits(b"abc", [Edit(0, 1, b"x"), Edit(0, 1, b"x")]) == b"xbc"


@pytest.mark.parametrize("edits", [
    [Edit(0, 2, b"x"), Edit(1, 3, b"y")],
    [Edit(0, 2, b"x"), Edit(0, 2, b"y")],
    [Edit(1, 1, b"x"), Edit(1, 1, b"y")],
])
def test_overlaps_are_bugs(edits):
    with pytest.raises(OverlappingEdits):
        normalize(edits)


def test_covering_deletion_swallows_inner_edits():
    data = b"f(mask(), v)"
    edits = [Edit(2, 10, b"", covers=True), Edit(2, 6, b"hipMask")]
    assert apply_edits(data, edits) == b"f(v)"


def test_a_deletion_inside_another_goes_with_it():
    """__ballot_sync(__ballot_sync(m, p), q) at ROCm 5.2: the outer call drops its first argument,
    which holds the inner call and the inner call's own dropped argument (found by the fuzzer)."""
    from portkit.api import convert_text
    source = b"__device__ unsigned f(unsigned m, int p, int q) { return __ballot_sync(__ballot_sync(m, p), q); }\n"
    out = convert_text(source, rocm="5.2").output
    assert out.endswith(b"{ return __ballot(q); }\n")


def test_a_wrapper_and_a_launch_at_one_byte_nest_wrapper_outside():
    """Two insertions at one byte, a wrapper's and another's (found by the fuzzer with a launch as
    the argument HIP wants cast): the wrapper opens first, outside."""
    edits = [Edit(2, 2, b"L(", "launch"), Edit(2, 2, b"cast(", "cast", kind=EditKind.CAST), Edit(3, 3, b"))")]
    assert apply_edits(b"f(k)", edits) == b"f(cast(L(k)))"


def test_a_launch_the_cast_wraps_is_kept():
    """hipLaunchKernelGGL is a statement: a launch in an argument stays <<<...>>> inside the cast."""
    from portkit.api import convert_text
    source = b"__global__ void k() {}\nvoid f() { cudaFuncAttributes a; cudaFuncGetAttributes(&a, k<<<1, 1>>>()); }\n"
    out = convert_text(source, launch_syntax="hip", rocm="5.2")
    assert b"hipFuncGetAttributes(&a, reinterpret_cast<const void*>(k<<<1, 1>>>()));" in out.output
    assert [(f.code, f.line, f.column) for f in out.findings] == [("PK006", 2, 61)]


@pytest.mark.slow
def test_every_edit_the_converter_makes_on_the_fixtures_has_a_kind_from_edit_kind(monkeypatch, tmp_path):
    """Code branches on Edit.kind (compat, polyfills, ordering): each edit names one of EditKind's."""
    from cases import all_cases
    from portkit.core import edits
    from portkit.cli.app import main
    from portkit.core.edits import KINDS

    seen: list[Edit] = []
    real = edits.normalize
    monkeypatch.setattr(edits, "normalize", lambda made: (seen.extend(made), real(made))[1])
    for i, case in enumerate(all_cases()):
        assert main(["convert", str(case.input), "-o", str(tmp_path / str(i)), "-q", "-j", "1",
                     *case.convert_args()]) == 0
    unknown = sorted({(e.kind, e.what) for e in seen if e.kind not in KINDS})
    assert unknown == []
    kinds = {e.kind for e in seen}
    assert {EditKind.NAME, EditKind.INCLUDE, EditKind.HIP_RUNTIME_HEADER, EditKind.CAST,
            EditKind.LAUNCH} <= kinds
    assert EditKind.OTHER not in kinds   # every rewriter says what its edits do


def test_edit_kinds_are_named_once_and_distinct():
    from portkit.core.edits import KINDS
    names = [k for k in vars(EditKind) if k.isupper()]
    assert len(KINDS) == len(names)
    assert Edit(0, 0, b"").kind == EditKind.OTHER


def test_ordering_reads_the_kind_not_the_display_text():
    # display text that once meant a wrapper or a block means nothing without the kind
    with pytest.raises(OverlappingEdits):
        normalize([Edit(1, 1, b"x", "hip runtime header"), Edit(1, 1, b"y", "warp")])
    both = normalize([Edit(1, 1, b"y", "", kind=EditKind.WARP), Edit(1, 1, b"x", "", kind=EditKind.HIP_RUNTIME_HEADER)])
    assert [e.text for e in both] == [b"xy"]
