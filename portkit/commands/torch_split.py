"""One PyTorch-extension source's edits by who makes them (commands/torch_sources.py decides)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TorchSplit:
    """One file's edits by who makes them: written here, torch's at build time, a person's."""

    written: int
    torch: int
    left: tuple[tuple[int, str], ...]   # (line, what) of each edit neither convert nor torch makes
