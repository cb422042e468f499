"""CSV output: one row per finding; with --statistics, counts like hipify's --print-stats-csv.

The statistics are a second table after one empty line (`statistic,value` rows: files, lines,
CUDA references found/converted/left, findings per severity and per rule), so a spreadsheet
shows both and `csv` readers can stop at the empty line.

Text from the scanned tree (paths, messages, snippets, fixes) that begins with `=`, `+`, `-`,
`@`, a tab or a carriage return gets a leading `'`, as spreadsheet exports do: a spreadsheet
would otherwise run such a cell as a formula (CSV injection). Numbers are written as numbers.
"""

from __future__ import annotations

import csv
from typing import TextIO

from .audit_model import Audit

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
COLUMNS = ("code", "name", "severity", "category", "path", "line", "column", "end_line", "end_column",
           "message", "snippet", "fix", "effort_low", "effort_likely", "effort_high", "fingerprint")


def render(doc: Audit, stream: TextIO, statistics: bool = False) -> None:
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(COLUMNS)
    for f in doc.findings:
        hours = f.effort_hours
        writer.writerow([neutralise(v) for v in (
            f.code, f.name, f.severity, f.category, f.path, f.line, f.column, f.end_line, f.end_column,
            f.message, f.snippet, f.fix, hours.low, hours.likely, hours.high, f.fingerprint)])
    if statistics:
        stream.write("\n")
        writer.writerow(("statistic", "value"))
        for row in statistics_rows(doc):
            writer.writerow([neutralise(v) for v in row])


def neutralise(value: object) -> object:
    """A text cell a spreadsheet would take for a formula, with a leading `'`; anything else as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def statistics_rows(doc: Audit) -> list[tuple[str, object]]:
    s = doc.summary
    rows: list[tuple[str, object]] = [
        ("files", s.files), ("lines", s.lines), ("kernels", s.kernels),
        ("kernel launches", s.launches), ("CUDA references", s.cuda_refs),
        ("converted", s.refs_converted), ("not converted", s.refs_left),
        ("converted share", s.converted_share), ("findings", s.findings),
    ]
    rows += [(f"severity {k}", v) for k, v in s.by_severity.items()]
    rows += [(f"rule {k}", v) for k, v in s.by_code.items()]
    return rows
