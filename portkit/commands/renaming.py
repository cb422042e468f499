"""--rename as written: a file not written under its new name keeps its old one, and so does every reference to it.

The plan (project/rename.py) is made from the list of files, before anything is read. What is
learned later takes files out of it, always before a file that names them is written:

- before the scan, what is known not to be written under a new name: a file left as it is (the
  configuration excludes it, the tree's AMD build compiles it, a symbolic link the walk did not
  follow) and, in place, a symbolic link named on the command line (refused, an error) and a
  read-only file without --force (a note);
- after the scan, a file that was skipped (binary, UTF-16, unreadable, too slow or too deeply
  nested to convert): the files that named it are converted again;
- while writing in place, a file whose write fails (changed on disk, a full disk, a backup that is
  in the way): the renamed files are written first, and those already written that name it are
  written again with its old name. The failure itself is an error (exit 2), as for any file.

Without this, `a.cu` was written as `a.hip` with `#include "b.hip.h"` while `b.cuh`, read-only or
binary, kept its name: a tree that no longer compiles, and exit 0.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from ..core.files import Entry, Skipped
from ..engine.rename_plan import RenamePlan, renamed
from .inplace import READ_ONLY, digest, read_only, replace_unchanged
from .scan.job import Job
from .results import FileOutcome

if TYPE_CHECKING:
    from ..project.pipeline import Project

ConvertJob = Job   # convert's job (commands/scan/job.py): the settings and the tree's facts, `facts.rename` among them

LINK = "a symbolic link is not renamed; rename its target instead"

ConvertMany = Callable[[list[Entry], ConvertJob], list[FileOutcome]]   # entries -> outcomes, in order
ConvertData = Callable[[Entry, bytes, ConvertJob], "bytes | None"]     # a file's bytes -> converted (None: same)
WriteOne = Callable[[FileOutcome, ConvertJob], "bytes | None"]           # in place, under that plan: the bytes replaced, or None


def with_plan(job: ConvertJob, plan: RenamePlan) -> ConvertJob:
    return replace(job, facts=replace(job.facts, rename=plan))


def before_scan(project: "Project", plan: RenamePlan, in_place: bool,
                force: bool) -> tuple[RenamePlan, dict[str, Skipped]]:
    """The plan without the files known, before any is read, to keep their names; and, in place,
    why each renamed one of those is not written (to report after the scan)."""
    left = {e.rel for e in project.entries if e.kind is None} | {s.rel for s in project.skipped if s.link}
    why: dict[str, Skipped] = {}
    if in_place:
        for entry in project.entries:
            reason = _refusal(entry, force) if entry.rel in plan.files else None
            if reason is not None:
                why[entry.rel] = reason
    return plan.keeping(left | set(why)), why


def _refusal(entry: Entry, force: bool) -> Skipped | None:
    if entry.path.is_symlink():   # named on the command line: the walk takes no link
        return Skipped(entry.rel, LINK, True)
    try:
        st = os.stat(entry.path)
    except OSError:
        return None   # reported when it is read
    return Skipped(entry.rel, READ_ONLY, False) if not force and read_only(entry.path, st) else None


def settle(outcomes: list[FileOutcome], job: ConvertJob, why: dict[str, Skipped], notes: list[Skipped],
           convert_many: ConvertMany) -> tuple[list[FileOutcome], ConvertJob]:
    """The outcomes once every renamed file the scan skipped keeps its name, with the files that
    named it converted again (which may skip another: until none does)."""
    outcomes = [_refused(o, why, notes) for o in outcomes]
    while True:
        plan = job.facts.rename
        failed = {o.entry.rel for o in outcomes if o.skipped is not None and o.entry.rel in plan.files}
        if not failed:
            return outcomes, job
        job = with_plan(job, plan.keeping(failed))
        outcomes = _reconvert(outcomes, job, failed, convert_many, set())


def _refused(outcome: FileOutcome, why: dict[str, Skipped], notes: list[Skipped]) -> FileOutcome:
    """A refused file is not written; a read-only one that would only have been renamed gets the
    note here (one that changes gets it when --in-place comes to it)."""
    reason = why.get(outcome.entry.rel)
    if reason is None or outcome.skipped is not None:
        return outcome
    if reason.error:
        return FileOutcome(outcome.entry, skipped=reason, plan=outcome.plan)
    if not outcome.changed:
        notes.append(reason)
    return outcome


def _reconvert(outcomes: list[FileOutcome], job: ConvertJob, kept: set[str], convert_many: ConvertMany,
               written: set[str]) -> list[FileOutcome]:
    """Every outcome under the new plan; converted again, those whose output can name a file that
    now keeps its name (its new file name, or a pattern rule's new suffix, is in it), except the
    ones already `written` (their bytes are gone from their old names)."""
    plan = job.facts.rename
    tokens = {os.fsencode(renamed(rel, plan.mapping).rsplit("/", 1)[-1]) for rel in kept}
    tokens |= {b"%" + new.encode() for _, new in plan.mapping}
    redo = [o.entry for o in outcomes if o.entry.rel not in written and o.output is not None
            and any(t in o.output for t in tokens)]
    again = {o.entry.rel: o for o in convert_many(redo, job)} if redo else {}
    settled = []
    for outcome in outcomes:
        outcome = again.get(outcome.entry.rel, outcome)
        outcome.plan = plan
        settled.append(outcome)
    return settled


def write_renamed(outcomes: list[FileOutcome], job: ConvertJob, write_one: WriteOne, convert_data: ConvertData,
                  convert_many: ConvertMany, errors: list[Skipped]
                  ) -> tuple[list[FileOutcome], ConvertJob, list[str], dict[str, bytes]]:
    """--in-place: write the renamed files first. One that fails keeps its name: the files not
    written yet are converted again, and those written already that named it are written again.
    Returns the outcomes, the job of the final plan, the files handled (written or not: not to be
    written again), and the bytes each one written had before (the old names are gone: a diff
    reads them here)."""
    index = {o.entry.rel: i for i, o in enumerate(outcomes)}
    before: dict[str, bytes] = {}
    written: dict[str, bytes] = {}   # rel -> the bytes now under its new name
    handled = [o.entry.rel for o in outcomes if o.renamed and o.skipped is None]
    for rel in handled:
        outcome = outcomes[index[rel]]
        original = write_one(outcome, job)   # the plan as it stands now (a failure above changed it)
        if original is not None:
            before[rel] = original
            written[rel] = outcome.output if outcome.changed else original
            continue
        job = with_plan(job, job.facts.rename.keeping({rel}))
        outcomes = _reconvert(outcomes, job, {rel}, convert_many, set(written))
        _write_back(outcomes, index, before, written, job, convert_data, errors, rel)
    return outcomes, job, handled, before


def _write_back(outcomes: list[FileOutcome], index: dict[str, int], before: dict[str, bytes],
                written: dict[str, bytes], job: ConvertJob, convert_data: ConvertData,
                errors: list[Skipped], failed: str) -> None:
    """The renamed files written already, converted again from the bytes they had, and written
    again where a reference changes (only over what this run wrote there)."""
    for rel, now in written.items():
        outcome = outcomes[index[rel]]
        converted = convert_data(outcome.entry, before[rel], job)
        data = converted if converted is not None else before[rel]
        if data == now:
            continue
        target = outcome.entry.path.with_name(outcome.target_rel.rsplit("/", 1)[-1])
        try:
            replace_unchanged(target, data, target, digest(now))
        except OSError as exc:
            errors.append(Skipped(rel, f"written as {outcome.target_rel}, which still names the new name of "
                                       f"{failed} (not written): {exc.strerror or exc}", True))
            continue
        written[rel] = data
        outcome.output = data if data != before[rel] else None
