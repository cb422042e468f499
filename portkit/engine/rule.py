"""Rule: the metadata of one audit rule, read from its module's docstring.

A rule module names its code, name, severity and category explicitly and documents itself in
a docstring with fixed sections; `portkit rules` and `portkit explain` print from it, and the
SARIF output takes its descriptions from it, so the documentation cannot drift from the code.
The type sits in the engine, below rules/, rewrite/ and buildfiles/, which all report rules'
findings and import it from here, never from one another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

SECTIONS = ("What it finds", "Why it matters on AMD GPUs", "Example", "Instead", "Effort")
GROUPS = {
    "0": "conversion", "1": "api", "2": "warp", "3": "kernel", "4": "library",
    "5": "build", "6": "python", "7": "verify", "9": "meta",
}
# convert's summary places each finding under one heading (report/terminal.py)
OUTCOMES = ("caveat", "left", "partially-parsed")
_CODE = re.compile(r"PK\d{3}\Z")
_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*\Z")


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    category: str
    summary: str                       # the docstring's first line
    breaks_build: bool = False         # what it finds can stop the HIP build (verify explains errors by it)
    deep_only: bool = False            # needs types: only `--engine clang` reports it (portkit/commands/deep/)
    # what the estimate and the reports read instead of testing codes:
    build_file: bool = False           # found in a build file: the project has build files to port (a signal)
    build_left: bool = False           # a build file convert leaves for a person (the fact build_files_left)
    package: bool = False              # its subject is a Python package (`pkg`; `pkg:detail` is a use of one)
    rewrite: bool = False              # priced per entry of mappings/rewrites.toml, not by effort.toml's range
    outcome: str = "caveat"            # convert's summary: a caveat, a reference "left" as it is, or
                                       # "partially-parsed" (OUTCOMES)
    sections: dict[str, str] = field(default_factory=dict, compare=False)
    # what it finds is only there where a GPU compiler reads the code (a warp, hip-clang's strictness,
    # PTX): never reported in a file no GPU compiler reads (project/gpu_reach.py)
    gpu_only: bool = False

    @cached_property
    def fix(self) -> str:
        """The "Instead" section in one line: what a finding's `fix` says (read at every finding:
        made once)."""
        return " ".join(self.sections.get("Instead", "").split())

    @property
    def group(self) -> str:
        return GROUPS.get(self.code[2], "other")

    @property
    def full_description(self) -> str:
        return " ".join(self.sections.get("What it finds", self.summary).split())


def define(doc: str | None, code: str, name: str, severity: str, category: str,
           breaks_build: bool = False, deep_only: bool = False, build_file: bool = False,
           build_left: bool = False, package: bool = False, rewrite: bool = False, outcome: str = "caveat",
           gpu_only: bool = False) -> Rule:
    """A Rule from explicit metadata plus the module docstring; malformed docs fail at import."""
    from ..core.findings import SEVERITIES

    if not _CODE.match(code) or not _NAME.match(name) or severity not in SEVERITIES or outcome not in OUTCOMES:
        raise ValueError(f"rule {code} {name}: bad code, name or severity {severity!r}")
    if not doc:
        raise ValueError(f"rule {code}: no docstring")
    summary, _, body = doc.strip().partition("\n")
    sections = _sections(body)
    missing = [s for s in SECTIONS if s not in sections]
    if missing:
        raise ValueError(f"rule {code}: docstring lacks sections {missing}")
    return Rule(code, name, severity, category, summary.strip(), breaks_build, deep_only, build_file, build_left,
                package, rewrite, outcome, sections, gpu_only)


def _sections(body: str) -> dict[str, str]:
    """Split "Heading:\\n text..." blocks; headings are the fixed SECTIONS names."""
    pattern = re.compile(r"^(%s):[ \t]*\n?" % "|".join(re.escape(s) for s in SECTIONS), re.M)
    parts = pattern.split(body)
    out: dict[str, str] = {}
    for heading, text in zip(parts[1::2], parts[2::2]):
        out[heading] = _dedent(text)
    return out


def _dedent(text: str) -> str:
    lines = text.strip("\n").splitlines()
    indents = [len(l) - len(l.lstrip()) for l in lines if l.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(l[cut:] for l in lines).strip()
