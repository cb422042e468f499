"""JSON output: the audit document as it is (docs/json-schema.md)."""

from __future__ import annotations

import json
import re
from typing import TextIO

from .audit_model import Audit

# Written as \u escapes: DEL and the C1 controls (raw, a terminal showing the JSON acts on them) and
# lone surrogates (a file name's bytes that are not UTF-8: raw, they are not UTF-8 either, and
# writing them failed). json.loads gives the same strings back.
_ESCAPED = re.compile("[\x7f-\x9f\ud800-\udfff]")


def dumps(value: object) -> str:
    """`value` as indented JSON, non-ASCII text as it is except what _ESCAPED lists."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return _ESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def render(audit: Audit, stream: TextIO, statistics: bool = False) -> None:
    """The audit's JSON document: to_json() is the schema, field for field (docs/json-schema.md)."""
    stream.write(dumps(audit.to_json()))
    stream.write("\n")
