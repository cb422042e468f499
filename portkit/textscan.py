"""The audit of build, dependency and Python files: line by line, comments removed.

CMake, Makefiles, setup.py, requirements and environment files are where CUDA hides outside
the sources. They are not C, so they get no tree: each text rule reads the file's lines with
`#` comments blanked out (keeping every column where it was) and reports byte positions like
the tree rules do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from .mappings import MappingDB, default_db
from .scan import FileScan, Options, ScanContext, finish_findings
from .source import SourceFile


@dataclass(frozen=True)
class Line:
    number: int        # 1-based
    start: int         # byte offset of the line in the file
    code: str          # the line with any `#` comment blanked out (same length)
    raw: bytes

    def offset(self, index: int) -> int:
        """Byte offset in the file of character `index` of `code`."""
        return self.start + len(self.code[:index].encode("utf-8", "surrogateescape"))


def lines(ctx: ScanContext) -> Iterator[Line]:
    """The file's lines (cached per file), with `#` comments blanked except inside quotes."""
    cached = ctx.memo.get("lines")
    if cached is None:
        cached = []
        data = ctx.source.data
        for number, start in enumerate(ctx.source.line_starts(), 1):
            end = data.find(b"\n", start)
            raw = data[start:end if end != -1 else len(data)].rstrip(b"\r")
            text = raw.decode("utf-8", "surrogateescape")
            cached.append(Line(number, start, _blank_comment(text), raw))
        ctx.memo["lines"] = cached
    return iter(cached)


def _blank_comment(text: str) -> str:
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return text[:i] + " " * (len(text) - i)
    return text


def scan_text(source: SourceFile, kind: str, options: Options, db: MappingDB | None = None) -> FileScan:
    """Migrate one build file (CMake, Make, setup.py: portkit/build/) and, in audit mode, run the
    text rules for `kind` over it. The audit keeps the migration's findings: PK508 says what
    `convert` will leave for a person."""
    from . import build, rules

    ctx = ScanContext(source=source, db=db or default_db(), options=options,
                      target=options.rocm or (db or default_db()).newest)
    ctx.metrics.kind = kind
    ctx.metrics.lines = source.line_count
    if kind in build.FORMATS and options.build_files:
        build.migrate(ctx, kind)
    if options.audit:
        for check in rules.text_hooks().get(kind, ()):
            check(ctx)
    return FileScan(source.rel, ctx.edits, finish_findings(ctx.findings), ctx.metrics)
