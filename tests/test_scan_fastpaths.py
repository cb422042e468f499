"""The scan's fast paths (benchmarks/README.md, 2026-11-24) give exactly what the slow ways gave.

- SourceFile.line_count counts line breaks without building the line index;
- preproc_names._split_names finds SPLIT_NAME's matches only in runs around splices;
- strictness skips brace-initialiser elements that cannot narrow before reading their type.
"""

from __future__ import annotations

import random

import pytest

from portkit.api import convert_text
from portkit.rewrite.preproc_names import SPLIT_NAME, _split_names
from portkit.core.source import SourceFile


@pytest.mark.parametrize("data, lines", [
    (b"", 0), (b"a", 1), (b"a\n", 1), (b"a\nb", 2), (b"\n\n", 2), (b"a\r\nb\r\n", 2), (b"a\rb", 2),
    (b"a\r", 1), (b"a\n\rb", 3),
])
def test_line_count_with_and_without_the_line_index(data, lines):
    assert SourceFile.from_bytes("f.cu", data).line_count == lines
    indexed = SourceFile.from_bytes("f.cu", data)
    indexed.line_starts()
    assert indexed.line_count == lines


SPLIT = b"x = cuda\\\nMalloc(p); y_\\\r\ncuda\\\nFree(q); \\\ncudaFree; ab\\\n\\\ncd; 1a\\\nb; z\\\n"


def spans(matches):
    return [(m.start(), m.end()) for m in matches]


def test_split_names_exact_spans():
    # cuda\<LF>Malloc; y_\<CR LF>cuda\<LF>Free (one name, two splices); not: a splice after a space,
    # two splices in a row, a name starting with a digit, a splice at the end
    assert spans(_split_names(SPLIT)) == [(4, 16), (21, 36)]
    assert spans(_split_names(SPLIT)) == spans(SPLIT_NAME.finditer(SPLIT))


def test_split_names_match_the_expression_on_random_bytes():
    rng = random.Random(23)
    pieces = [b"a", b"_", b"7", b"\\", b"\n", b"\r", b" ", b"#", b"\\\n", b"\\\r\n", b"\\\r"]
    for _ in range(20000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert spans(_split_names(data)) == spans(SPLIT_NAME.finditer(data)), data


def test_narrowing_found_among_literals_and_sizeof():
    source = "__global__ void k(int n) {\n  float table[] = {1.0f, sizeof(int), n, (n), 2};\n}\n"
    converted = convert_text(source)
    assert b"float table[] = {1.0f, sizeof(int), static_cast<float>(n), static_cast<float>((n)), 2};" \
        in converted.output
    assert [(f.code, f.line, f.column) for f in converted.findings if f.code == "PK013"] == \
        [("PK013", 2, 39), ("PK013", 2, 42)]
