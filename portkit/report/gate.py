"""The commit gate's result (`portkit check`) as text, JSON, SARIF or GitHub workflow commands.

Each format is `render(result, out, err, quiet)`. Text is what a developer reads at commit time;
json and sarif are documents for CI (the same findings; SARIF as `audit --format sarif` writes
it, paths from the repository root); github prints one `::error`/`::warning`/`::notice` workflow
command per finding, which GitHub Actions shows as an annotation on the line, then the summary.
`quiet` leaves text and github with nothing but the findings and the errors.

The formats show what blocks (new findings at or above --fail-on) and a change of the gate's
policy (PK902) even below it; JSON also lists the new findings below --fail-on.
"""

from __future__ import annotations

from typing import TextIO

from ..commands.check_result import CheckResult
from ..core.findings import Finding
from ..engine.codes import Code
from .audit_model import JsonObject
from .safe_text import safe

# the workflow command of a finding's severity (as the SARIF level: blocker and high are errors)
COMMAND = {"blocker": "error", "high": "error", "medium": "warning", "low": "notice", "info": "notice"}


def write(stream: TextIO, text: str) -> None:
    """Write gate output. Text from the tree in it has been through report.safe_text (control
    characters and undecodable bytes shown as \\xNN); what remains is encoded as UTF-8 whatever
    the stream's own encoding."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
        return
    stream.flush()
    buffer.write(text.encode("utf-8", "surrogateescape"))
    buffer.flush()


def shown(result: CheckResult) -> list[Finding]:
    """What the gate reports: the blocking findings, then a policy change below --fail-on."""
    return result.blocking + [f for f in result.below if f.code == Code.GATE_POLICY_CHANGED]


def _suppression_note(s) -> str:
    codes = ",".join(s.codes) or "every code"
    lacks = s.lacks()
    return (f"this change adds a suppression of {safe(codes)}"
            + (f" without {lacks}: it hides nothing (give the codes and the reason: "
               f"`portkit: ignore[PK301] why it is safe`)" if lacks else f" ({safe(s.reason)})"))


def _unchecked_note(why: str) -> str:
    return f"{why}; not checked, so the commit is blocked (exclude it in the configuration, or commit with --no-verify)"


def summary(result: CheckResult) -> str:
    """The closing line: nothing to compare, what blocks and what to do, or what passed."""
    fail_on = result.fail_on
    if result.not_compared and not result.blocking:
        n = result.not_compared
        return (f"portkit check: nothing to compare: {n} file{'s' if n != 1 else ''} not checked (none "
                f"differs from HEAD; in CI pass --diff-base REV, or run pre-commit with --from-ref and "
                f"--to-ref)")
    if result.blocking:
        n = len(result.blocking)
        return (f"portkit check: {n} new finding{'s' if n != 1 else ''} at or above {fail_on} "
                f"({result.mode}). Fix {'them' if n != 1 else 'it'}, or suppress one on its line with "
                f"`// portkit: ignore[CODE] reason` (`#` in build and Python files), or accept all "
                f"current findings with `portkit baseline`.")
    if result.unchecked:
        return ""
    known, below = result.accepted + result.untouched, len(result.below)
    files = len(result.files)
    counts = f"{f'; {known} known' if known else ''}{f', {below} below {fail_on}' if below else ''}"
    return (f"portkit check: {files} file{'s' if files != 1 else ''} checked ({result.mode}), no new findings "
            f"at or above {fail_on}{counts}")


def render_text(result: CheckResult, out: TextIO, err: TextIO, quiet: bool = False) -> None:
    for f in result.blocking:
        write(out, f"{safe(f.path)}:{f.line}:{f.column}: {f.code} {safe(f.message)}\n")
        if f.fix:
            write(out, f"    fix: {safe(f.fix)}\n")
    if not quiet:
        for f in result.below:
            if f.code == Code.GATE_POLICY_CHANGED:   # a change of policy is always shown, blocking or not
                write(out, f"{safe(f.path)}:{f.line}:{f.column}: note: {f.code} {safe(f.message)}\n")
        for rel, s in result.suppressions:
            write(out, f"{safe(rel)}:{s.line}: note: {_suppression_note(s)}\n")
    for rel, why in result.unchecked:   # unchecked is not clean: the commit waits for a decision
        write(err, f"portkit: error: {safe(rel)}: {_unchecked_note(why)}\n")
    line = summary(result)
    if line and not quiet:
        write(out, line + "\n")


def escape_data(text: str) -> str:
    """A workflow command's message: %, CR and LF percent-encoded (GitHub's toolkit does the same)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: also `:` and `,`, which would end it."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **properties: object) -> str:
    """`::kind key=value,...::message`, every part escaped."""
    props = ",".join(f"{k}={escape_property(str(v))}" for k, v in properties.items() if v is not None)
    return f"::{kind}{' ' + props if props else ''}::{escape_data(message)}"


def render_github(result: CheckResult, out: TextIO, err: TextIO, quiet: bool = False) -> None:
    from .sarif import message_text, source_root
    prefix = source_root(result.root).prefix   # the annotations name files from the repository root
    for f in result.blocking if quiet else shown(result):
        text = message_text(safe(f.message), safe(f.fix))
        write(out, command(COMMAND[f.severity], text, file=prefix + safe(f.path), line=f.line, col=f.column,
                           title=f.code) + "\n")
    for rel, why in result.unchecked:
        write(out, command("error", _unchecked_note(why), file=prefix + safe(rel), title="portkit") + "\n")
    if not quiet:
        for rel, s in result.suppressions:
            write(out, command("notice", _suppression_note(s), file=prefix + safe(rel), line=s.line,
                               title="portkit") + "\n")
        line = summary(result)
        if line:
            write(out, line + "\n")


def records(findings: list[Finding]) -> list[JsonObject]:
    """Findings as the audit's JSON writes them, less the hours: the gate prices nothing."""
    from .audit_model import as_json
    from .model import finding_record
    return [{k: v for k, v in as_json(finding_record(f)).items() if k != "effort_hours"} for f in findings]


def document(result: CheckResult) -> JsonObject:
    """The JSON document of a check (docs/ci.md)."""
    from ..core.version import __version__
    return {
        "tool": {"name": "portkit", "version": __version__},
        "version": 1,
        "root": result.root.as_posix(),
        "mode": result.mode,
        "fail_on": result.fail_on,
        "blocked": bool(result.blocking or result.unchecked),
        "files": list(result.files),
        "findings": records(result.blocking),
        "below": records(result.below),
        "known": {"accepted": result.accepted, "untouched": result.untouched},
        "suppressions": [{"path": rel, "line": s.line, "codes": list(s.codes), "reason": s.reason,
                          "lacks": s.lacks()} for rel, s in result.suppressions],
        "unchecked": [{"path": rel, "reason": why} for rel, why in result.unchecked],
        "not_compared": result.not_compared,
        "summary": summary(result),
    }


def render_json(result: CheckResult, out: TextIO, err: TextIO, quiet: bool = False) -> None:
    from .json import dumps
    write(out, dumps(document(result)) + "\n")
    for rel, why in result.unchecked:
        write(err, f"portkit: error: {safe(rel)}: {_unchecked_note(why)}\n")


def render_sarif(result: CheckResult, out: TextIO, err: TextIO, quiet: bool = False) -> None:
    from ..core.version import __version__
    from .json import dumps
    from . import sarif
    notes = [("error", f"{rel}: {_unchecked_note(why)}") for rel, why in result.unchecked]
    from .model import finding_record
    log = sarif.log([finding_record(f) for f in shown(result)], result.root, __version__,
                    {"mode": result.mode, "failOn": result.fail_on}, notes, hours=False)
    write(out, dumps(log) + "\n")
    for rel, why in result.unchecked:
        write(err, f"portkit: error: {safe(rel)}: {_unchecked_note(why)}\n")

