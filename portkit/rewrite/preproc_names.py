"""CUDA names the preprocessor assembles: split by a backslash-newline, or pasted with `##`.

tree-sitter reads `cuda\\<newline>Malloc` as two names and a `#define` body as text, so the
identifier rewriter never sees `cudaMalloc` whole. Converting such names would mean moving
lines or guessing a macro's arguments; they are reported instead (PK007) and counted as CUDA
references left, so the summary never claims a file is fully converted while they remain.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache

from tree_sitter import Node

from ..engine.context import ScanContext, View
from ..engine.passes import Pass
from ..core.tables.mappings import MappingDB
from . import codes, identifiers

SPLICE = re.compile(rb"\\(?:\r\n?|\n)")
# A name with at least one backslash-newline inside it (the lookbehind keeps matches whole).
SPLIT_NAME = re.compile(rb"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*(?:\\(?:\r\n?|\n)[A-Za-z0-9_]+)+")
# `piece ##` in a macro body: the literal left of a paste.
PASTE = re.compile(rb"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)\s*##")
# Pieces that can start a CUDA name (precision: `make_##t` builds make_float4, not CUDA API).
CUDA_MARKS = (b"cu", b"nv", b"nccl")
_PIECE_BEFORE = re.compile(rb"([A-Za-z0-9_]*)\s*\Z")


def may_paste_cuda(text) -> bool:
    """What check_pastes needs in a file (engine/keywords.FileText): a `piece ##` whose piece
    starts with a CUDA_MARK. Each `##` is looked back from, not the pattern tried at every byte."""
    data = text.data
    at = data.find(b"##")
    while at >= 0:
        piece = _PIECE_BEFORE.search(data, max(0, at - 256), at).group(1)
        if piece.lower().startswith(CUDA_MARKS):
            return True
        at = data.find(b"##", at + 2)
    return False
NOT_CODE = frozenset({"comment", "string_literal", "char_literal", "raw_string_literal", "system_lib_string"})


def check_splices(ctx: ScanContext, root: Node) -> None:
    """PK007 for each CUDA name split by a backslash-newline outside comments and strings."""
    data = ctx.source.data
    if b"\\" not in data:
        return
    for match in _split_names(data):
        name = SPLICE.sub(b"", match.group())
        mapping = ctx.db.names_by_bytes.get(name)
        if mapping is None or _in_text(root, match.start()):
            continue
        hip, _, _ = mapping.resolve(ctx.target, ctx.options.prefer_roc)
        if hip == mapping.cuda:
            continue   # the same name in HIP: nothing to convert
        _left(ctx, match.start(), match.end(),
              f"{mapping.cuda} is split across lines by a backslash-newline; the converter rewrites "
              "only names it sees whole: join the lines and convert again", mapping.cuda)


def _split_names(data: bytes):
    """SPLIT_NAME's matches in `data`, found only around splices with a name character on both
    sides: the expression tried at every offset of a large file cost more than the rest of the
    pass. A match is made of name characters and splices only, so it lies inside one such run,
    and the run is preceded by no name character: matching within each run finds the same names."""
    end = 0
    for splice in SPLICE.finditer(data):
        before, after = splice.start(), splice.end()
        if before < end or before == 0 or after >= len(data) or \
                not (_NAME_BYTE[data[before - 1]] and _NAME_BYTE[data[after]]):
            continue
        start = before
        while start > 0 and _NAME_BYTE[data[start - 1]]:
            start -= 1
        end = after
        while True:
            while end < len(data) and _NAME_BYTE[data[end]]:
                end += 1
            more = SPLICE.match(data, end)
            if more is None or more.end() >= len(data) or not _NAME_BYTE[data[more.end()]]:
                break
            end = more.end()
        yield from SPLIT_NAME.finditer(data, start, end)


_NAME_BYTE = [chr(b).isascii() and (chr(b).isalnum() or b == ord("_")) for b in range(256)]


def check_pastes(ctx: ScanContext, view: View, node: Node, params: frozenset[bytes]) -> None:
    """PK007 for each `piece##` in a macro body (`node`, a preproc_arg) that starts CUDA names."""
    body = view.text(node)
    if b"##" not in body:
        return
    for match in PASTE.finditer(body):
        piece = match.group(1)
        if piece in params or not piece.lower().startswith(CUDA_MARKS) or not _starts_cuda_name(ctx.db, piece):
            continue
        start = view.start(node) + match.start()
        text = piece.decode("ascii")
        _left(ctx, start, view.start(node) + match.end(),
              f"{text}##... builds CUDA names by token pasting; the converter cannot see or rewrite the "
              "names it makes", f"{text}##")


# `CAT(cuda, Malloc)`: a macro's arguments that a pasting macro (defined here or in another
# header) joins into a CUDA name; searched from the `(`, a literal the regex engine finds fast.
PASTED_ARGUMENTS = re.compile(rb"\(\s*((?:cu|nv|nccl|CU|NV|NCCL)[A-Za-z0-9_]*)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)")
_MACRO_NAME = re.compile(rb"([A-Za-z_][A-Za-z0-9_]*)\s*$")


def check_pasted_arguments(ctx: ScanContext, root: Node) -> None:
    """PK007 for `M(cuda, Malloc)`: two arguments that, pasted, are a CUDA name that changes, such
    as `#define CAT(a, b) a##b` makes them (issue 31: left unconverted with no finding). The
    pasting macro itself may live in another header; the arguments alone say what it builds."""
    data = ctx.source.data
    for match in PASTED_ARGUMENTS.finditer(data):
        name = match.group(1) + match.group(2)
        mapping = ctx.db.names_by_bytes.get(name)
        macro = _MACRO_NAME.search(data, max(0, match.start() - 64), match.start())
        if mapping is None or macro is None or _in_text(root, match.start()):
            continue
        hip, _, _ = mapping.resolve(ctx.target, ctx.options.prefer_roc)
        if hip == mapping.cuda:
            continue
        call = data[macro.start():match.end()].decode("ascii", "replace")
        _left(ctx, macro.start(), match.end(),
              f"{call} pastes {mapping.cuda} from its arguments; the converter cannot see or rewrite the "
              f"name it makes: write {hip or 'the HIP name'} for the AMD build", mapping.cuda)


def _left(ctx: ScanContext, start: int, end: int, message: str, subject: str) -> None:
    ctx.metrics.refs_found += 1
    ctx.metrics.refs_left += 1
    ctx.flag(codes.NAME_NOT_SEEN_WHOLE, start, end, message, subject)


def _in_text(root: Node, offset: int) -> bool:
    """Whether `offset` is in a comment or a literal (a splice there is no name)."""
    node: Node | None = root.descendant_for_byte_range(offset, offset + 1)
    while node is not None:
        if node.type in NOT_CODE:
            return True
        node = node.parent
    return False


def _starts_cuda_name(db: MappingDB, piece: bytes) -> bool:
    """Whether some CUDA name that needs converting begins with `piece` (and is longer)."""
    names = _changing_names(db)
    i = bisect.bisect_right(names, piece)
    return i < len(names) and names[i].startswith(piece)


@lru_cache(maxsize=2)
def _changing_names(db: MappingDB) -> list[bytes]:
    return sorted(name for name, m in db.names_by_bytes.items() if m.hip != m.cuda)


def _splices(ctx: ScanContext, view: View, root: Node) -> None:
    check_splices(ctx, root)


def _pasted_arguments(ctx: ScanContext, view: View, root: Node) -> None:
    check_pasted_arguments(ctx, root)   # CAT(cuda, Malloc)


def _pastes(ctx: ScanContext):
    """The pass's keyword: a pair of arguments that pastes a table's name (`(cuda, Malloc)`), not
    every `(cum_sums, n)` the pattern's prefix starts."""
    names = ctx.db.names_by_bytes

    def pastes_a_table_name(text) -> bool:
        return b"(" in text.data and any(m.group(1) + m.group(2) in names for m in PASTED_ARGUMENTS.finditer(text.data))
    return pastes_a_table_name


# in this order since they were written: their findings (PK007) reach the finding cap in it
PASSES = (
    # a table's name joined across a splice: engine/keywords.py reads identifiers with splices removed
    Pass("splices", "post-walk", _splices, keywords=lambda ctx: (identifiers.acting_names(ctx),)),
    Pass("pasted_arguments", "post-walk", _pasted_arguments, after=("splices",), keywords=lambda ctx: (_pastes(ctx),)),
)
