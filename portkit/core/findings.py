"""Finding: one thing a user must know about, with a stable code and a line-free fingerprint."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

SEVERITIES = ("blocker", "high", "medium", "low", "info")
_NAME = re.compile(r"[A-Za-z_][\w:.]*")


@dataclass(frozen=True)
class Finding:
    code: str                 # PKnnn, stable forever
    name: str                 # kebab-case name of the pattern
    severity: str             # one of SEVERITIES
    category: str
    path: str                 # relative to the scanned root, forward slashes
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    snippet: str = ""
    fix: str = ""
    subject: str = ""         # the CUDA name or construct (part of the fingerprint)
    effort_hours: tuple[float, float, float] = (0.0, 0.0, 0.0)
    platform: str = ""        # "" shared, "ported"/"fallback" (AMD has another branch), "nvidia" (no AMD path)
    # its rule's fix: the edits that resolve it, ((line, column, end_line, end_column, text), ...) with
    # 1-based byte columns (engine/fix.py, suggest); audit shows them as suggestions and prices it as review
    autofix: tuple[tuple[int, int, int, int, str], ...] = ()
    fingerprint: str = field(default="", compare=False)
    # the fix its rule attached (engine/fix.py's Fix: its edits, their applicability, a title),
    # which `autofix` shows; not part of equality, nor of any output
    fixed_by: object = field(default=None, compare=False, repr=False)

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, self.subject)


def fingerprint(code: str, path: str, subject: str, snippet: str, platform: str = "") -> str:
    """Hash of what the finding is about, never where: moved or re-indented code keeps it. The
    platform region is part of it (shared code hashes as before): a hazard accepted inside
    `#ifndef __HIP_PLATFORM_AMD__` is a new one once the guard is gone."""
    norm = " ".join(snippet.split())
    region = f"\0{platform}" if platform else ""
    digest = hashlib.sha256(f"{code}\0{path}\0{subject}\0{norm}{region}".encode("utf-8", "replace"))
    return digest.hexdigest()[:16]


def pattern(subject: str) -> str:
    """What a finding is about, for grouping (the estimate's items): its CUDA name, or "" for a
    construct (`x & 31`)."""
    return subject if _NAME.fullmatch(subject) else ""
