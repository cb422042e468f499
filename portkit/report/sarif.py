"""SARIF 2.1.0 output for GitHub code scanning and other SARIF viewers.

Every rule is listed with its short and full description and help (from the rule's
docstring); results carry a `partialFingerprints` entry so code scanning keeps tracking a
finding when lines move.
"""

from __future__ import annotations

from typing import TextIO

from .. import rules
from .json import dumps

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"blocker": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
# GitHub orders alerts by this number (0.0-10.0).
SECURITY_SEVERITY = {"blocker": "9.0", "high": "7.0", "medium": "5.0", "low": "3.0", "info": "1.0"}
INFO_URI = "https://github.com/portkit/portkit"


def _rule_descriptor(rule) -> dict:
    help_text = "\n\n".join(f"{name}:\n{rule.sections[name]}" for name in rule.sections)
    help_markdown = "\n\n".join(f"**{name}**\n\n{_markdown_body(name, rule.sections[name])}"
                                for name in rule.sections)
    return {
        "id": rule.code,
        "name": "".join(part.capitalize() for part in rule.name.split("-")),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.full_description},
        "help": {"text": help_text, "markdown": help_markdown},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"tags": ["portability", rule.category], "severity": rule.severity,
                       "precision": "high"},
    }


def _markdown_body(section: str, text: str) -> str:
    return f"```\n{text}\n```" if section == "Example" else text


def _result(f: dict, index: dict[str, int]) -> dict:
    region = {"startLine": f["line"], "startColumn": f["column"], "endLine": f["end_line"],
              "endColumn": max(f["end_column"], 1)}
    if f["snippet"]:
        region["snippet"] = {"text": f["snippet"]}
    message = f["message"] + (f" Fix: {f['fix']}" if f["fix"] else "")
    result = {
        "ruleId": f["code"],
        "ruleIndex": index[f["code"]],
        "level": LEVEL[f["severity"]],
        "message": {"text": message},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": f["path"], "uriBaseId": "SRCROOT"},
            "region": region}}],
        "partialFingerprints": {"portkitFingerprint/v1": f["fingerprint"]},
        "properties": {"severity": f["severity"], "category": f["category"],
                       "security-severity": SECURITY_SEVERITY[f["severity"]],
                       "effortHours": f["effort_hours"]},
    }
    if f.get("autofix"):
        result["fixes"] = [_fix(f)]
    return result


def _fix(f: dict) -> dict:
    """The `convert --fix warp` edits of a finding, as a SARIF fix an editor can apply."""
    return {"description": {"text": "portkit convert --fix warp"},
            "artifactChanges": [{
                "artifactLocation": {"uri": f["path"], "uriBaseId": "SRCROOT"},
                "replacements": [{"deletedRegion": {"startLine": e["line"], "startColumn": e["column"],
                                                    "endLine": e["end_line"], "endColumn": e["end_column"]},
                                  "insertedContent": {"text": e["text"]}} for e in f["autofix"]]}]}


def document(doc: dict) -> dict:
    all_rules = rules.all_rules()
    index = {r.code: i for i, r in enumerate(all_rules)}
    root = doc["root"].rstrip("/") + "/"
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "portkit", "version": doc["tool"]["version"], "semanticVersion": doc["tool"]["version"],
                "informationUri": INFO_URI, "rules": [_rule_descriptor(r) for r in all_rules]}},
            "originalUriBaseIds": {"SRCROOT": {"uri": "file://" + root if root.startswith("/") else root}},
            "columnKind": "unicodeCodePoints",
            "results": [_result(f, index) for f in doc["findings"]],
            "properties": {"estimate": doc["estimate"]["person_weeks"] if doc.get("estimate") else None,
                           # the blocker families, before the per-site results: what a reviewer decides
                           "decisions": [{k: d[k] for k in ("id", "label", "kernels", "files", "sites", "optional")}
                                         | {"p50_hours": d["hours"]["p50"]}
                                         for d in (doc.get("estimate") or {}).get("decisions", [])]},
        }],
    }


def render(doc: dict, stream: TextIO, statistics: bool = False) -> None:
    stream.write(dumps(document(doc)))   # as report/json.py writes JSON: C1 and surrogates escaped
    stream.write("\n")
