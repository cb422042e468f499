"""JSON output: the audit document as it is (docs/json-schema.md)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import TextIO

from .audit_model import Audit, as_json

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
    """The audit's JSON document: to_json() is the schema, field for field (docs/json-schema.md).
    Its two long lists, the files and the findings, are turned into JSON data a record at a time
    as they are written: a 10M-line audit's document was 2-3 times its 45 MB of text as objects."""
    document = as_json(replace(audit, files=(), findings=()))
    document["files"], document["findings"] = EachAsJson(audit.files), EachAsJson(audit.findings)
    dump(document, stream)
    stream.write("\n")


class EachAsJson(list):
    """Records that become JSON data one at a time, as json's encoder reaches them: it walks a
    list with `for` (its C encoder, which would not, is never used with an indent; were it used,
    a record is not JSON and it would fail, not write less). Holds the records themselves."""

    def __iter__(self):
        return (as_json(record) for record in list.__iter__(self))
