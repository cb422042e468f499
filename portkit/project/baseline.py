"""The baseline: fingerprints of the findings a team has accepted, so `check` reports only new ones.

`.portkit-baseline.json` is written sorted and indented so that accepting a finding is a
reviewable one-entry diff. Fingerprints hold no line numbers (findings.fingerprint): legacy
code that moves or is re-indented stays accepted. Each entry counts how many findings share
its fingerprint, so a copy of an accepted hazard in the same file is still new.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

from ..core.errors import PortkitError
from ..core.findings import Finding

VERSION = 1
# An entry is a few hundred bytes: 64 MiB is well over 100,000 accepted findings, more than any
# tree portkit has audited, and parses in about a second. A larger file is no baseline portkit
# wrote, and reading one whole (a pull request can commit gigabytes) could take the memory.
MAX_BYTES = 64 << 20
# What `document` writes, full-matched: findings.fingerprint's 16 hex digits, a rule code.
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_CODE = re.compile(r"PK[0-9]{3}")
_TOP_KEYS = {"tool", "version", "findings"}
_ENTRY_KEYS = {"path", "code", "fingerprint", "count", "snippet"}


def document(findings: list[Finding]) -> dict:
    counts = Counter(f.fingerprint for f in findings)
    first: dict[str, Finding] = {}
    for f in findings:
        first.setdefault(f.fingerprint, f)
    entries = [{"path": f.path, "code": f.code, "fingerprint": fp, "count": counts[fp], "snippet": f.snippet}
               for fp, f in first.items()]
    entries.sort(key=lambda e: (e["path"], e["code"], e["fingerprint"]))
    return {"tool": "portkit", "version": VERSION, "findings": entries}


def dumps(findings: list[Finding]) -> str:
    return json.dumps(document(findings), indent=2, ensure_ascii=False) + "\n"


def load(path: Path) -> Counter:
    """Fingerprint -> accepted count; an absent file is an empty baseline. The file itself is
    opened without following a symbolic link (gate_policy.safe_path checks the folders)."""
    if not path.is_file() and not path.is_symlink():
        return Counter()
    try:
        from ..core.files import open_regular  # never blocks on a FIFO swapped in for the file
        with os.fdopen(open_regular(path), "rb") as handle:
            data = handle.read(MAX_BYTES + 1)   # enough to tell that it is too large
    except OSError as exc:
        raise PortkitError(f"{path}: not a portkit baseline ({exc.strerror or exc}); write one with "
                           f"`portkit baseline`") from None
    return loads(data, str(path))


def loads(data: bytes, shown: str) -> Counter:
    """Fingerprint -> accepted count of a baseline's bytes; `shown` names it in the error."""
    if len(data) > MAX_BYTES:
        raise PortkitError(f"{shown}: not a portkit baseline (larger than {MAX_BYTES >> 20} MiB); write one with "
                           f"`portkit baseline`")
    try:
        return _counts(json.loads(data.decode("utf-8")))
    except RecursionError:
        reason = "nested too deeply"
    except ValueError as exc:
        reason = str(exc)
    raise PortkitError(f"{shown}: not a portkit baseline ({reason}); write one with `portkit baseline`")


def _counts(data: object) -> Counter:
    """Fingerprint -> count from a parsed baseline; ValueError naming what is wrong. Every field
    `document` writes is checked, and no other is taken: a typo (`cont`) is not a silent 1."""
    if not isinstance(data, dict):
        raise ValueError(f"expected an object, got {type(data).__name__}")
    if type(data.get("version")) is not int or data["version"] != VERSION:   # JSON's true and 1.0 equal 1
        raise ValueError(f"version {data.get('version')!r:.20}, expected {VERSION}")
    if data.get("tool", "portkit") != "portkit" or set(data) - _TOP_KEYS:
        raise ValueError(f"expected the keys {', '.join(sorted(_TOP_KEYS))}, with `tool` \"portkit\"")
    entries = data.get("findings")
    if not isinstance(entries, list):
        raise ValueError("`findings` must be a list")
    counts: Counter = Counter()
    for k, e in enumerate(entries):
        count = e.get("count", 1) if isinstance(e, dict) else None
        if not isinstance(e, dict) or not isinstance(e.get("fingerprint"), str):
            raise ValueError(f"findings[{k}]: expected an object with a string `fingerprint`")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ValueError(f"findings[{k}].count: expected a positive integer, got {count!r:.20}")
        _check_entry(k, e)
        counts[e["fingerprint"]] = count
    return counts


def _check_entry(k: int, entry: dict) -> None:
    """The fields of one entry besides its count: each of its type, and of its form where it has one."""
    unknown = sorted(set(entry) - _ENTRY_KEYS)
    if unknown:
        raise ValueError(f"findings[{k}]: unknown key {unknown[0]!r:.40}")
    if not _FINGERPRINT.fullmatch(entry["fingerprint"]):
        raise ValueError(f"findings[{k}].fingerprint: expected 16 hexadecimal digits, got {entry['fingerprint']!r:.40}")
    for key in ("path", "snippet", "code"):
        if key in entry and not isinstance(entry[key], str):
            raise ValueError(f"findings[{k}].{key}: expected a string, got {entry[key]!r:.20}")
    if "code" in entry and not _CODE.fullmatch(entry["code"]):
        raise ValueError(f"findings[{k}].code: expected a rule code (PK301), got {entry['code']!r:.20}")
