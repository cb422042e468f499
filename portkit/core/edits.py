"""Byte-range edits on the original text, and applying them without touching other bytes."""

from __future__ import annotations

import bisect
from typing import NamedTuple


class EditKind:
    """What an edit does, for the code that treats edits differently (ordering here, the
    --compat-header translation, the polyfill header): the one list of kinds. `Edit.what` is
    display text; nothing branches on it."""

    NAME = "name"                              # a CUDA name renamed (identifiers, names in strings)
    INCLUDE = "include"                        # an #include path rewritten (a CUDA header, a renamed file)
    HIP_RUNTIME_HEADER = "hip runtime header"  # the HIP runtime include the converter adds
    DUPLICATE_INCLUDE = "duplicate include"    # an include whose HIP header already comes (deleted)
    REMOVED_INCLUDE = "removed include"        # a CUDA include HIP needs nothing for (deleted)
    POLYFILL_DIRECTIVE = "polyfill directive"  # a CUDA include replaced by the polyfill header's
    POLYFILL_HEADER = "polyfill header"        # the polyfill header's include, added
    SYMBOL = "symbol"                          # HIP_SYMBOL( ... ) around a symbol argument
    CAST = "cast"                              # a cast around an argument or initialiser
    DROPPED_ARGUMENT = "dropped argument"      # an argument HIP's function does not take (deleted)
    ARGUMENTS = "arguments"                    # arguments replaced, moved or inserted for HIP's signature
    DEFAULT_ARGUMENTS = "default arguments"    # CUDA's default arguments written out
    ARGUMENT = "argument"                      # one argument converted for HIP's overloads
    LAUNCH = "launch"                          # a <<<...>>> launch rewritten
    GUARD = "guard"                            # a preprocessor guard added or rewritten
    REGISTER = "register"                      # a `register` storage class deleted
    BUILTIN = "builtin"                        # a legacy built-in (hipThreadIdx_x ...)
    WARP = "warp"                              # --fix warp (ScanContext.edit's default, see there)
    TORCH_ALIAS = "torch_alias"                # `namespace cub = hipcub;` under #ifdef USE_ROCM (scan/torch_person.py)
    BUILD = "build"                            # a build file migrated (buildfiles/)
    NVIDIA_VOTES = "nvidia votes"              # the mask-less votes' NVIDIA helper (rewrite/nvidia_votes.py)
    NVIDIA_THRUST = "nvidia thrust"            # thrust::hip through HIP's NVIDIA backend (rewrite/nvidia_thrust.py)
    PLATFORM_INCLUDE = "platform include"      # an include written for both platforms (rewrite/nvidia_thrust.py)
    TRANSITIVE_INCLUDE = "transitive include"  # a header CUDA's headers included (rewrite/transitive.py)
    INLINE_PTX = "inline ptx"                  # a piece of an inline PTX block's HIP form (rewrite/inline_ptx.py)
    OTHER = "other"                            # an edit nothing treats apart (Edit's default)


KINDS = frozenset(v for k, v in vars(EditKind).items() if k.isupper())


class Edit(NamedTuple):
    """Replace data[start:end] with `text`; start == end is an insertion.

    A NamedTuple rather than a dataclass: files with thousands of CUDA names make thousands
    of edits, and a tuple is several times cheaper to create.
    """

    start: int
    end: int
    text: bytes
    # the CUDA name or construct this edit converts (for metrics and reports)
    what: str = ""
    # a deletion that swallows whatever other edits fall inside it (a dropped argument)
    covers: bool = False
    # when set, the text written: literal bytes and (start, end) ranges of the original, each
    # range written with the other edits inside it applied (a moved or copied argument keeps
    # the conversion of the names inside it); `text` is the same with the ranges as spelled
    parts: tuple = ()
    # what the edit does (one of EditKind's): what code may branch on, never `what`
    kind: str = EditKind.OTHER


# Insertions that open a wrapper around a whole argument (`reinterpret_cast<const void*>(`,
# `HIP_SYMBOL(`): at the same byte as another insertion (a launch inside that argument), the
# wrapper goes first, outside.
WRAPPERS = frozenset({EditKind.CAST, EditKind.SYMBOL})
# Whole lines several rewriters may insert at the same place (the top of a file): written one
# after the other in this order instead of being rejected as overlapping (one edit of them all; a
# guard's stays an edit of its own). A guard's lines last: the headers go above the `#if` that opens
# a guarded definition at the top of a header, and where one guarded definition follows another,
# the first's `#endif` and the next's `#if` (by their text, `#endif` before `#if`) share the line
# between them.
BLOCKS = {EditKind.HIP_RUNTIME_HEADER: 0, EditKind.POLYFILL_HEADER: 1, EditKind.WARP: 2, EditKind.NVIDIA_VOTES: 3,
          EditKind.NVIDIA_THRUST: 4, EditKind.TRANSITIVE_INCLUDE: 5, EditKind.PLATFORM_INCLUDE: 6, EditKind.GUARD: 7}


class OverlappingEdits(Exception):
    """Two edits touch the same bytes: a bug in a rewriter, never a user error."""


def _swallowed(edit: Edit, cover: Edit) -> bool:
    """Inside a covering deletion; an insertion right at its start still applies before it."""
    if edit.start == edit.end == cover.start:
        return False
    return cover.start <= edit.start and edit.end <= cover.end


def _drop_covered(edits: list[Edit]) -> list[Edit]:
    covers: list[Edit] = []
    # a deletion inside another one (an argument dropped from a call that is itself a dropped
    # argument) goes with it
    for cover in sorted((e for e in edits if e.covers), key=lambda e: (e.start, -e.end)):
        if covers and covers[-1].start <= cover.start and cover.end <= covers[-1].end:
            continue
        covers.append(cover)
    if not covers:
        return edits
    starts = [c.start for c in covers]
    kept = list(covers)
    for edit in edits:
        if not edit.covers:
            i = bisect.bisect_right(starts, edit.start) - 1
            if i >= 0 and _swallowed(edit, covers[i]):
                continue
            kept.append(edit)
    return kept


def normalize(edits: list[Edit]) -> list[Edit]:
    """Sort edits, drop exact duplicates (the same rewrite reached twice) and edits inside a
    covering deletion (a dropped argument), and reject overlaps."""
    out: list[Edit] = []
    order = lambda e: (e.start, e.end, e.kind not in WRAPPERS, BLOCKS.get(e.kind, len(BLOCKS)), e.text)  # noqa: E731
    for edit in sorted(set(_drop_covered(edits)), key=order):
        if out:
            prev = out[-1]
            if edit.start < prev.end or (edit.start == prev.start == prev.end == edit.end):
                if (edit.start, edit.end, edit.text) == (prev.start, prev.end, prev.text):
                    continue
                if edit.start == edit.end == prev.start == prev.end and edit.kind in BLOCKS and prev.kind in BLOCKS:
                    if EditKind.GUARD in (edit.kind, prev.kind):   # kept apart: compat lists a guard as a line to edit
                        out.append(edit)
                        continue
                    out[-1] = prev._replace(text=prev.text + edit.text)   # both go in, in BLOCKS order
                    continue
                if not (edit.start == edit.end == prev.start == prev.end and prev.kind in WRAPPERS
                        and edit.kind not in WRAPPERS):
                    raise OverlappingEdits(f"edits overlap: {prev} and {edit}")
        out.append(edit)
    return out


def _inside(edit: Edit, start: int, end: int) -> bool:
    """Whether `edit` converts text of data[start:end]: insertions on its edges only when they
    wrap it (a cast), not text placed before or after it (another argument)."""
    if edit.parts or not (start <= edit.start and edit.end <= end) or (edit.covers and
                                                                    (edit.start, edit.end) == (start, end)):
        return False
    return edit.start != edit.end or start < edit.start < end or edit.kind in WRAPPERS


def _converted(data: bytes, start: int, end: int, edits: list[Edit]) -> bytes:
    inner = [e._replace(start=e.start - start, end=e.end - start) for e in edits if _inside(e, start, end)]
    return apply_edits(data[start:end], inner)


def resolve(data: bytes, edits: list[Edit]) -> list[Edit]:
    """Edits whose text copies ranges of the original get the converted text of those ranges."""
    if not any(e.parts for e in edits):
        return edits
    return [e._replace(text=b"".join(p if isinstance(p, bytes) else _converted(data, p[0], p[1], edits)
                                     for p in e.parts), parts=()) if e.parts else e for e in edits]


def apply_edits(data: bytes, edits: list[Edit]) -> bytes:
    """The original bytes with the edits applied; every byte outside an edit is copied as is."""
    if not edits:
        return data
    edits = resolve(data, edits)
    parts: list[bytes] = []
    pos = 0
    for edit in normalize(edits):
        parts.append(data[pos:edit.start])
        parts.append(edit.text)
        pos = edit.end
    parts.append(data[pos:])
    return b"".join(parts)
