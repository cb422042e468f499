"""JSON output: the audit document as it is (docs/json-schema.md)."""

from __future__ import annotations

import json
from typing import TextIO


def render(document: dict, stream: TextIO, statistics: bool = False) -> None:
    json.dump(document, stream, indent=2, ensure_ascii=False)
    stream.write("\n")
