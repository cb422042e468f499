"""The record `--fix warp` produces (one fix = the edits resolving one audit finding) and the
per-target wavefront-size constant it defines."""

from __future__ import annotations

from dataclasses import dataclass

from ..edits import Edit

CONSTANT = b"PORTKIT_WAVEFRONT_SIZE"
LARGEST_WAVEFRONT = b"64"


@dataclass(frozen=True)
class WarpFix:
    code: str                  # the audit rule whose finding this resolves ("" for none)
    anchor: int                # the byte that rule reports at
    edits: tuple[Edit, ...]
    constant: bool = False     # needs PORTKIT_WAVEFRONT_SIZE defined before it
    note: str = ""             # a deliberate choice or change of meaning: reported as PK008
    supersedes: bool = False   # replaces the converter's edits it overlaps (a call renamed whole)
    suggest_only: bool = False  # the edits belong to another fix: shown on this finding, applied once


def newline_of(data: bytes) -> bytes:
    return b"\r\n" if data[:data.find(b"\n") + 1].endswith(b"\r\n") else b"\n"
