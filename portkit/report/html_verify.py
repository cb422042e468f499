"""`audit --verify-result FILE`: what `portkit verify --format json` found, as the HTML report's card.

The file comes from elsewhere (a CI artifact, a colleague's run), so it is read as untrusted
input: every field the card shows is checked for its type and range before it is used, and
anything wrong is one line naming the file and the field (exit 2), never a traceback or a card
with a made-up figure. The card says only what verify measured: N of M units compiled at the
ROCm release it compiled against.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import PortkitError

MAX_BYTES = 64 * 1024 * 1024   # a verify document of 10,000 units with their errors is a few MB
ROCM = re.compile(r"[0-9]{1,3}\.[0-9]{1,3}(\.[0-9]{1,4})?")
COUNTS = ("units", "compiled", "failed", "unexplained", "not_reached")


@dataclass(frozen=True)
class Compiles:
    """The card: how many of verify's units compiled, at which ROCm release."""

    units: int
    compiled: int
    failed: int
    unexplained: int
    not_reached: int
    rocm: str


def read(path: Path) -> Compiles:
    """The card's figures from a saved `portkit verify --format json`, checked field by field."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise PortkitError(f"{path}: not a portkit verify result: larger than {MAX_BYTES // 2**20} MB")
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PortkitError(f"{path}: cannot read the verify result: {exc}") from None
    except RecursionError:
        raise PortkitError(f"{path}: cannot read the verify result: nested too deeply") from None
    problem = _problem(doc)
    if problem:
        raise PortkitError(f"{path}: not a portkit verify result (write one with `portkit verify --format json`): "
                           f"{problem}")
    s = doc["summary"]
    return Compiles(*(s[k] for k in COUNTS), doc["target_rocm"])


def _problem(doc: object) -> str:
    """What is wrong with the document, or "" (the fields the card reads, and how they relate)."""
    if not isinstance(doc, dict):
        return "not a JSON object"
    if doc.get("tool") != "portkit verify" or doc.get("version") != 1:
        return "`tool` is not \"portkit verify\" or `version` is not 1"
    rocm = doc.get("target_rocm")
    if not isinstance(rocm, str) or not ROCM.fullmatch(rocm):
        return "`target_rocm` is not a release such as \"6.2\""
    s = doc.get("summary")
    if not isinstance(s, dict):
        return "`summary` is not an object"
    for key in COUNTS:
        value = s.get(key)
        if type(value) is not int or value < 0:   # bool is an int to isinstance
            return f"`summary.{key}` is not a whole number of 0 or more"
    if s["compiled"] + s["failed"] != s["units"]:
        return "`summary.compiled` and `summary.failed` do not add up to `summary.units`"
    if s["unexplained"] + s["not_reached"] > s["failed"]:
        return "`summary.unexplained` and `summary.not_reached` add up to more than `summary.failed`"
    return ""
