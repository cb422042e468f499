"""SARIF 2.1.0 output for GitHub code scanning and other SARIF viewers.

Written to what GitHub's code scanning documents it reads ("SARIF support for code scanning"):
- files by paths relative to the repository root, since GitHub places a relative URI there:
  inside a git work tree relative to its root, elsewhere relative to the audited folder, with
  `uriBaseId` %SRCROOT% and that root in `originalUriBaseIds`;
- `partialFingerprints.primaryLocationLineHash` (the only key GitHub reads), from the rule, the
  path and the line's text, never its number, so an alert survives lines moving above it;
- rules with short and full descriptions, help as text and markdown, a help URI, a default level
  and `problem.severity` with `precision` (GitHub sorts non-security alerts by these). Portability
  findings are not vulnerabilities: no `security-severity`, which would file them as security alerts;
- at most 25,000 results per run (GitHub rejects more): the most severe are kept, with a note;
- columns in the unit the run declares (`columnKind` unicodeCodePoints): a finding's column counts
  bytes, so each is counted again in code points on its line (Columns), or a line with `é€` before
  the finding puts the annotation 3 columns off;
- each rule's `helpUri` is its own section of docs/rules.md (its heading's anchor, help_uri).
Message texts are sentences: the finding, then its fix, each closed by a full stop.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence, TextIO
from urllib.parse import quote_from_bytes

from .. import rules
from ..core.findings import SEVERITIES
from .audit_model import Audit, AutofixEdit, FindingRecord, JsonObject, as_json
from .json import dump

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"blocker": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
# GitHub's severity of a non-security rule (error, warning, recommendation)
PROBLEM_SEVERITY = {"blocker": "error", "high": "error", "medium": "warning", "low": "recommendation",
                    "info": "recommendation"}
INFO_URI = "https://github.com/portkit/portkit"
HELP_URI = f"{INFO_URI}/blob/main/docs/rules.md"
BASE_ID = "%SRCROOT%"
MAX_RESULTS = 25_000   # results per run GitHub code scanning accepts


class Columns:
    """Byte columns as code points, from each file's line, read once per file. A line that is not
    the finding's (the file changed since, or the gate read a staged version) keeps its byte column:
    a wrong count is worse than the one that was meant."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.files: dict[str, list[bytes] | None] = {}

    def line(self, path: str, number: int) -> bytes | None:
        if path not in self.files:
            from ..core.files import read_regular
            from ..core.source import split_lines
            try:
                self.files[path] = split_lines(read_regular(self.root / path))
            except (OSError, ValueError):
                self.files[path] = None
        lines = self.files[path]
        return lines[number - 1] if lines is not None and 0 < number <= len(lines) else None

    def code_points(self, path: str, number: int, column: int, snippet: str | None = None) -> int:
        """`column` (1-based, in bytes) counted in code points; unchanged where the line is ASCII
        up to it, unknown, or (with `snippet`) not the finding's line."""
        text = self.line(path, number)
        if text is None or column <= 1 or text[:column - 1].isascii():
            return column
        if snippet is not None and snippet.rstrip("…") not in text.decode("utf-8", "surrogateescape"):
            return column
        return len(text[:column - 1].decode("utf-8", "surrogateescape")) + 1


def help_uri(rule) -> str:
    """The rule's section of docs/rules.md: GitHub's anchor of its heading `PKnnn name`."""
    return f"{HELP_URI}#{rule.code.lower()}-{rule.name}"


@dataclass(frozen=True)
class SourceRoot:
    """Where the artifact URIs are relative to: `uri` (file:///.../) and the audited folder's
    place under it (`prefix`, "" or ending in "/")."""

    uri: str
    prefix: str = ""
    in_git: bool = False


def source_root(root: str | Path) -> SourceRoot:
    """The git work tree's root when `root` lies in one (project/worktree.py), else `root` itself."""
    from ..project import worktree
    folder = Path(root)
    work, rel = worktree.relative_to_root(folder)
    base = work if work is not None else folder.absolute()
    return SourceRoot(_file_uri(base), f"{rel}/" if rel else "", work is not None)


def _file_uri(path: Path) -> str:
    uri = "file://" + quote_from_bytes(path.as_posix().encode("utf-8", "surrogateescape"), safe="/")
    return uri if uri.endswith("/") else uri + "/"


def artifact_uri(path: str, base: SourceRoot) -> str:
    """A finding's path as a relative URI reference under `base`: percent-encoded (a space is
    %20), a name that is not UTF-8 by its bytes."""
    return quote_from_bytes((base.prefix + path).encode("utf-8", "surrogateescape"), safe="/")


def sentence(text: str) -> str:
    """`text` closed by a full stop (unless it ends a sentence already)."""
    text = " ".join(text.split())
    return text if not text or text[-1] in ".!?" else text + "."


def message_text(message: str, fix: str) -> str:
    """The finding and its fix as sentences: "… its own language. Fix: write …"."""
    return sentence(message) + (f" Fix: {sentence(fix)}" if fix else "")


def _rule_descriptor(rule) -> JsonObject:
    sections = rule.sections
    help_text = "\n\n".join(f"{name}:\n{sections[name]}" for name in sections)
    help_markdown = "\n\n".join(f"**{name}**\n\n{_markdown_body(name, sections[name])}" for name in sections)
    more = f"`portkit explain {rule.code}` prints this help."
    return {
        "id": rule.code,
        "name": "".join(part.capitalize() for part in rule.name.split("-")),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.full_description},
        "help": {"text": f"{help_text}\n\n{more}", "markdown": f"{help_markdown}\n\n{more}"},
        "helpUri": help_uri(rule),
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"tags": ["portability", rule.category], "precision": "high",
                       "problem.severity": PROBLEM_SEVERITY[rule.severity], "severity": rule.severity},
    }


def _markdown_body(section: str, text: str) -> str:
    return f"```\n{text}\n```" if section == "Example" else text


def line_hash(f: FindingRecord, uri: str) -> str:
    """What identifies a finding across runs: its rule, file and line text (whitespace folded),
    never its line number; the platform region too, as the finding's own fingerprint has it."""
    norm = " ".join(f.snippet.split())
    key = f"{f.code}\0{uri}\0{norm}\0{f.platform}"
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _result(f: FindingRecord, index: dict[str, int], base: SourceRoot, seen: dict[str, int],
            hours: bool, columns: Columns) -> JsonObject:
    region: JsonObject = {"startLine": f.line, "startColumn": columns.code_points(f.path, f.line, f.column, f.snippet),
                          "endLine": f.end_line,
                          "endColumn": max(columns.code_points(f.path, f.end_line, f.end_column), 1)}
    if f.snippet:
        region["snippet"] = {"text": f.snippet}
    uri = artifact_uri(f.path, base)
    digest = line_hash(f, uri)
    seen[digest] = seen.get(digest, 0) + 1   # the n-th finding of its rule on this text in this file
    result = {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": LEVEL[f.severity],
        "message": {"text": message_text(f.message, f.fix)},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": uri, "uriBaseId": BASE_ID},
            "region": region}}],
        "partialFingerprints": {"primaryLocationLineHash": f"{digest}:{seen[digest]}",
                                "portkitFingerprint/v1": f.fingerprint},
        "properties": {"severity": f.severity, "category": f.category,
                       **({"effortHours": as_json(f.effort_hours)} if hours else {})},
    }
    if f.autofix:
        result["fixes"] = [_fix(f.autofix, uri, lambda line, column: columns.code_points(f.path, line, column))]
    return result


def _fix(autofix: tuple[AutofixEdit, ...], uri: str,
         cp: Callable[[int, int], int] = lambda line, column: column) -> JsonObject:
    """The `convert --fix warp` edits of a finding, as a SARIF fix an editor can apply (`cp`: a
    byte column in code points)."""
    return {"description": {"text": "portkit convert --fix warp"},
            "artifactChanges": [{
                "artifactLocation": {"uri": uri, "uriBaseId": BASE_ID},
                "replacements": [{"deletedRegion": {"startLine": e.line, "startColumn": cp(e.line, e.column),
                                                    "endLine": e.end_line,
                                                    "endColumn": cp(e.end_line, e.end_column)},
                                  "insertedContent": {"text": e.text}} for e in autofix]}]}


def capped(findings: Sequence[FindingRecord], limit: int = MAX_RESULTS) -> Sequence[FindingRecord]:
    """The `limit` most severe findings (blockers first; in their order within a severity),
    back in the order they came."""
    if len(findings) <= limit:
        return findings
    order = sorted(range(len(findings)), key=lambda i: (SEVERITIES.index(findings[i].severity), i))
    return [findings[i] for i in sorted(order[:limit])]


def log(findings: Sequence[FindingRecord], root: str | Path, version: str, properties: JsonObject | None = None,
        notes: tuple | list = (), base: SourceRoot | None = None, limit: int = MAX_RESULTS,
        hours: bool = True) -> JsonObject:
    """A SARIF log of one run: `findings` (report/model.finding_record), paths relative to `root`;
    `notes` are (level, text) for the run's invocation; `hours`: each result's effort hours (the
    gate prices nothing)."""
    all_rules = rules.all_rules()
    index = {r.code: i for i, r in enumerate(all_rules)}
    base = base or source_root(root)
    kept = capped(findings, limit)
    notes = list(notes)
    if len(kept) < len(findings):
        notes.append(("warning", f"{len(findings):,} findings; this log carries the {len(kept):,} most severe "
                                 f"(GitHub code scanning accepts at most {MAX_RESULTS:,} results per run); "
                                 f"`--format json` lists them all."))
    seen: dict[str, int] = {}
    columns = Columns(root)
    where = "the git work tree's root" if base.in_git else "the audited folder"
    run = {
        "tool": {"driver": {
            "name": "portkit", "version": version, "semanticVersion": version,
            "informationUri": INFO_URI, "rules": [_rule_descriptor(r) for r in all_rules]}},
        "invocations": [{"executionSuccessful": not any(level == "error" for level, _ in notes),
                         **({"toolExecutionNotifications": [{"level": level, "message": {"text": text}}
                                                            for level, text in notes]} if notes else {})}],
        "originalUriBaseIds": {BASE_ID: {"uri": base.uri, "description": {"text": where}}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index, base, seen, hours, columns) for f in kept],
        "properties": {**(properties or {}), "resultsOmitted": len(findings) - len(kept)},
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def document(doc: Audit, base: SourceRoot | None = None) -> JsonObject:
    """The typed audit (report/audit_model.py) as a SARIF log."""
    estimate = doc.estimate
    properties: JsonObject = {
        "estimate": as_json(estimate.person_weeks) if estimate else None,
        # the blocker families, before the per-site results: what a reviewer decides
        "decisions": [{"id": d.id, "label": d.label, "kernels": d.kernels, "files": d.files, "sites": d.sites,
                       "optional": d.optional, "p50_hours": d.hours.p50} for d in (estimate.decisions if estimate else ())]}
    notes = [("error", f"{s.path}: {s.reason}") for s in doc.summary.skipped if s.error]
    return log(doc.findings, doc.root, doc.tool.version, properties, notes, base)


def render(doc: Audit, stream: TextIO, statistics: bool = False) -> None:
    dump(document(doc), stream)   # as report/json.py writes JSON: C1 and surrogates escaped
    stream.write("\n")
