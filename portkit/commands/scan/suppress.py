"""Suppression comments: `portkit: ignore[PK301] reason` and `portkit: file-ignore[PK4]`.

`ignore` applies to its own line, or to the next line when the comment stands alone on its
line; `file-ignore` to the whole file. Codes are prefixes (PK3 = every PK3xx); no brackets
means every code. C-family files write `//` or `/* */` comments, the others `#`. A
suppression that matched nothing is itself reported (PK901).

Only a real comment suppresses: the text inside a string literal (`"// portkit: ignore"`) or a
`//` in a build or Python file is code, found by lexing the file's comments (comments.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...core.comments import comment_spans, inside
from ...core.files import kind_of
from ...core.findings import Finding, fingerprint
from ...core.source import SourceFile
from ...engine.codes import Code

_DIRECTIVE = re.compile(rb"(//|/\*|#)[ \t]*portkit:[ \t]*(file-ignore|ignore)\b(?:\[([^\]]*)\])?")


@dataclass
class Suppression:
    line: int           # where the comment is
    target: int | None  # the line it covers (None: the whole file)
    codes: tuple[str, ...]
    start: int
    end: int
    reason: str = ""        # the text after the codes: why the finding is acceptable
    used: bool = field(default=False)

    def covers(self, finding: Finding, changed: set[int] | None = None) -> bool:
        """Whether it hides `finding`. With `changed` (the lines a commit adds), a line suppression
        the change does not add stops covering a finding any line of whose span the change
        touches (an old `ignore[PK301] reviewed` above a multi-line asm whose body became a
        `wgmma`), and one the change adds must name codes and give a reason (`lacks`)."""
        if self.target is not None and finding.line != self.target:
            return False
        if changed is not None:
            if self.line in changed:
                if self.lacks():
                    return False
            elif self.target is not None and any(line in changed for line in range(finding.line, finding.end_line + 1)):
                return False
        return not self.codes or finding.code.startswith(self.codes)

    def lacks(self) -> str:
        """What a new suppression must have and this one lacks ("" when it has codes and a reason)."""
        missing = [what for what, have in (("codes", self.codes), ("a reason", self.reason)) if not have]
        return " and ".join(missing)


def find(source: SourceFile, kind: str | None = None) -> list[Suppression]:
    """The suppression comments of a file; `kind` as files.kind_of says (default: from its name)."""
    data = source.data
    if b"portkit:" not in data:
        return []
    if kind is None:
        kind = kind_of(source.rel.rsplit("/", 1)[-1]) or "source"
    spans = comment_spans(data, c_family=kind == "source")
    found = []
    for match in _DIRECTIVE.finditer(data):
        if not inside(spans, match.start(1)):
            continue
        line, _ = source.position(match.start())
        before = data[source.line_starts()[line - 1]:match.start()]
        codes = tuple(c.strip().upper() for c in (match.group(3) or b"").decode("ascii", "replace").split(",")
                      if c.strip())
        if match.group(2) == b"file-ignore":
            target = None
        else:
            target = line + 1 if not before.strip() else line
        found.append(Suppression(line, target, codes, match.start(), match.end(), _reason(data, match.end())))
    return found


def _reason(data: bytes, end: int) -> str:
    """The rest of the comment after `ignore[...]`: up to the line's end or a `*/`."""
    stop = data.find(b"\n", end)
    text = data[end:len(data) if stop < 0 else stop].split(b"*/", 1)[0]
    return text.decode("utf-8", "replace").strip(" \t\r:-")


def added(source: SourceFile, changed: set[int], kind: str | None = None) -> list[Suppression]:
    """The suppressions a change adds (their comment is on a changed line): check lists them, so
    a reviewer sees every finding the change chose to hide."""
    return [s for s in find(source, kind) if s.line in changed]


def apply(source: SourceFile, findings: list[Finding], enabled: frozenset[str], kind: str | None = None,
          changed: set[int] | None = None, host_only: bool = False) -> list[Finding]:
    """Findings minus the suppressed ones, plus PK901 for suppressions that matched nothing.
    `changed`: the lines a commit adds (see Suppression.covers). `host_only`: no GPU compiler reads
    the file (project/gpu_reach.py), so a suppression of GPU-only rules there says why it is unused."""
    from ...rules import get

    suppressions = find(source, kind)
    if not suppressions:
        return findings
    kept = []
    for f in findings:
        hits = [s for s in suppressions if s.covers(f, changed)]
        for s in hits:
            s.used = True
        if not hits:
            kept.append(f)
    rule = get(Code.UNUSED_SUPPRESSION)
    if rule.code not in enabled:
        return kept
    for s in suppressions:
        if changed is not None and s.line in changed and s.lacks():
            continue   # a new suppression that may not hide anything: check lists it instead
        if s.used or (s.codes and not any(c.startswith(s.codes) for c in enabled if c != rule.code)):
            continue
        line, col = source.position(s.start)
        end_line, end_col = source.position(s.end)
        snippet = source.line_text(line).strip()
        subject = ",".join(s.codes) or "all"
        kept.append(Finding(
            rule.code, rule.name, rule.severity, rule.category, source.rel, line, col, end_line, end_col,
            f"suppression of {subject} matched no finding" + (_host_only(s.codes) if host_only else ""),
            snippet, rule.fix, subject,
            fingerprint=fingerprint(rule.code, source.rel, subject, snippet)))
    return sorted(kept, key=Finding.sort_key)


def _host_only(codes: tuple[str, ...]) -> str:
    """Why a suppression of GPU-only rules matches nothing in a host-only file: the rules do not
    report there (a CPU file's warp false positive, once suppressed, needs the comment no more)."""
    from ...rules import all_rules
    named = [r for r in all_rules() if codes and r.code.startswith(codes)]
    if not named or not all(r.gpu_only for r in named):
        return ""
    return ": GPU-code-only rules do not report in a file no GPU compiler reads (the comment can go)"
