"""The baseline: fingerprints of the findings a team has accepted, so `check` reports only new ones.

`.portkit-baseline.json` is written sorted and indented so that accepting a finding is a
reviewable one-entry diff. Fingerprints hold no line numbers (findings.fingerprint): legacy
code that moves or is re-indented stays accepted. Each entry counts how many findings share
its fingerprint, so a copy of an accepted hazard in the same file is still new.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ..core.errors import PortkitError
from ..core.findings import Finding

VERSION = 1


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
        from ..core.files import read_regular  # never blocks on a FIFO swapped in for the file
        data = read_regular(path)
    except OSError as exc:
        raise PortkitError(f"{path}: not a portkit baseline ({exc.strerror or exc}); write one with "
                           f"`portkit baseline`") from None
    return loads(data, str(path))


def loads(data: bytes, shown: str) -> Counter:
    """Fingerprint -> accepted count of a baseline's bytes; `shown` names it in the error."""
    try:
        return _counts(json.loads(data.decode("utf-8")))
    except RecursionError:
        reason = "nested too deeply"
    except ValueError as exc:
        reason = str(exc)
    raise PortkitError(f"{shown}: not a portkit baseline ({reason}); write one with `portkit baseline`")


def _counts(data: object) -> Counter:
    """Fingerprint -> count from a parsed baseline; ValueError naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"expected an object, got {type(data).__name__}")
    if data.get("version") != VERSION:
        raise ValueError(f"version {data.get('version')!r:.20}, expected {VERSION}")
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
        counts[e["fingerprint"]] = count
    return counts
