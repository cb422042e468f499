"""Decisions counted once per family, as the text report and the HTML report both show them.

The estimate prices a blocker family once per part of the project its sites are in (the headline,
the optional ENABLE_CUDNN code, the benchmarks ...), so one choice of library can be several
entries of estimate.decisions with the same id: llm.c's cuDNN frontend was two, and the text
said "Decisions (4)" where the HTML said "1 decision" for the same tree. A team makes the choice
once: a family is one decision, in the estimate when any of its parts is in the headline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .audit_model import Decision


@dataclass(frozen=True)
class Family:
    """One decision to make: the family's entries, the headline's first, then each part priced apart."""

    parts: tuple[Decision, ...]

    @property
    def first(self) -> Decision:
        return self.parts[0]

    @property
    def in_estimate(self) -> bool:
        return any(not d.optional for d in self.parts)

    @property
    def apart(self) -> tuple[Decision, ...]:
        """The entries for code the estimate leaves out."""
        return tuple(d for d in self.parts if d.optional)


def families(decisions: Sequence[Decision]) -> tuple[Family, ...]:
    """The decisions by family (their id; the label for a document without one), in the order the
    estimate lists them, each family's headline entry first."""
    by_id: dict[str, list[Decision]] = {}
    for d in decisions:
        by_id.setdefault(d.id or d.label, []).append(d)
    return tuple(Family(tuple(sorted(ds, key=lambda d: d.optional != ""))) for ds in by_id.values())


def counts(decisions: Sequence[Decision]) -> tuple[int, int]:
    """(decisions for the code in the estimate, more for code it leaves out), one per family."""
    fams = families(decisions)
    inside = sum(f.in_estimate for f in fams)
    return inside, len(fams) - inside
