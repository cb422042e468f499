"""convert's side of a PyTorch extension's sources: the facts its scan runs with, each file's account
and the run's.

Which edits are written there, which torch's build-time hipify makes and which lines are left for a
person is decided in the scan (commands/scan/torch_gaps.py), once for convert and the audit alike:
the scan of such a source carries only the edits to write, a PK506 finding per line left for a
person, and its counts in the metrics (`torch_split`), which the result cache keeps with it.
`--extension-sources hip` names no file in the facts, so the scan converts them as any other.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.files import Entry
from ..engine.codes import Code
from ..engine.facts import ProjectFacts
from .inplace import digest
from .scan.walk import FileScan
from .results import ConvertResult, FileOutcome
from .scan.torch_gaps import table, torch_spans   # noqa: F401  (torch_spans: the words torch renames)
from .torch_split import TorchAccount, TorchSplit


def mode(facts: ProjectFacts, extension_sources: str) -> ProjectFacts:
    """The facts the scan runs with: `--extension-sources hip` converts the sources as any other."""
    return facts if extension_sources == "cuda" else replace(facts, torch_sources=frozenset())


def outcome(entry: Entry, data: bytes, scan: FileScan, output: bytes | None, facts: ProjectFacts) -> FileOutcome:
    """A converted file's outcome, with its account when the scan decided it for torch (the facts name
    no file with --extension-sources hip)."""
    account = None
    if entry.rel in facts.torch_sources and scan.metrics.torch_split:
        written, renamed, person = scan.metrics.torch_split
        left = tuple(f for f in scan.findings if f.code == Code.TORCH_CUDA_EXTENSION)
        account = TorchSplit(written, renamed, person, left)
    return FileOutcome(entry, scan=scan, output=output, plan=facts.rename, input_digest=digest(data), torch=account)


def settle(result: ConvertResult, files: frozenset[str], extension_sources: str) -> TorchAccount | None:
    """The run's account (None: not a PyTorch extension); its lines left for a person join the
    summary's "needs a person", as the audit's findings of high severity do."""
    if not files:
        return None
    if extension_sources == "hip":   # converted as any other source: the references line counts them
        return TorchAccount("hip", len(files), table()[0], None, None, None, ())
    splits = [o.torch for o in result.outcomes if o.torch is not None]
    left = tuple(sorted((f for s in splits for f in s.left), key=lambda f: f.sort_key()))
    account = TorchAccount("cuda", len(files), table()[0], sum(s.written for s in splits),
                           sum(s.torch for s in splits), sum(s.person for s in splits), left)
    # the audit's scan of the same files made the same findings (needs_person's): each line once
    shown = {(f.code, f.path, f.line) for f in result.needs_person}
    result.needs_person = sorted([*result.needs_person, *(f for f in left if (f.code, f.path, f.line) not in shown)],
                                 key=lambda f: f.sort_key())
    return account
