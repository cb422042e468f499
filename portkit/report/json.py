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
    return _ESCAPED.sub(_escape, text)


def _escape(m: re.Match) -> str:
    return f"\\u{ord(m.group()):04x}"


CHUNK = 1 << 16   # characters written at once by dump()


def dump(value: object, stream: TextIO) -> None:
    """stream.write(dumps(value)), written as it is encoded: a 10M-line audit's document is 45 MB of
    text, and dumps() held it twice (the encoding, then the escaped copy) on top of the document's
    own objects. The encoder's pieces are whole tokens, and _ESCAPED matches one character, so
    escaping piece by piece is escaping the whole."""
    pieces: list[str] = []
    size = 0
    for piece in json.JSONEncoder(indent=2, ensure_ascii=False).iterencode(value):
        pieces.append(piece)
        size += len(piece)
        if size >= CHUNK:
            stream.write(_ESCAPED.sub(_escape, "".join(pieces)))
            pieces, size = [], 0
    stream.write(_ESCAPED.sub(_escape, "".join(pieces)))


def render(audit: Audit, stream: TextIO, statistics: bool = False) -> None:
    """The audit's JSON document: to_json() is the schema, field for field (docs/json-schema.md)."""
    dump(audit.to_json(), stream)
    stream.write("\n")
