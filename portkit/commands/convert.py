"""convert: scan every file, apply the edits, and write the result the way the user asked.

Only this module writes sources. Writes are atomic (a temporary file in the same directory,
then rename; see output.py), keep the file's permissions, owner and group, never land outside the
output root, and never overwrite an input or a backup they did not make.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable

from ..rewrite import polyfill_header, polyfills
from ..core.edits import apply_edits
from ..core.errors import PortkitError
from ..core.files import SOURCE_SUFFIXES, Entry, Skipped, open_regular, read_regular
from .inplace import rewrite
from . import convert_audit, convert_cache, renaming, torch_sources
from .scan import resultcache
from ..core.output import (atomic_copy, atomic_write, confined, holds, refuse_unless_regular, sweep_stale,
                           write_generated)
from ..engine.rename_plan import RenamePlan
from ..project.rename import rename_in_build_file
from ..core.tables.mappings import format_version
from ..project import pipeline
from ..project.config import Config
from ..project.settings import resolve
from ..engine.facts import ProjectFacts
from .results import ConvertOptions, ConvertResult, FileOutcome, PolyfillHeader
from .scan.job import Job, scan_file
from .scan.walk import FileScan, Options
from ..core.source import SourceFile, split_lines
from .workers import PerFile, Wording, run_files


def convert_bytes(rel: str, data: bytes, options: Options, kind: str = "source",
                  facts: ProjectFacts = ProjectFacts()) -> tuple[FileScan, bytes | None]:
    """Scan one file's bytes (a source, or a build file of a kind in build.FORMATS); the converted
    bytes, or None when nothing changes."""
    scan = scan_file(SourceFile.from_bytes(rel, data), kind, Job(options, facts))
    return scan, _applied(data, scan)


def _applied(data: bytes, scan: FileScan) -> bytes | None:
    if not scan.edits:
        return None
    output = apply_edits(data, scan.edits)
    return output if output != data else None


def _convert_entry(entry: Entry, data: bytes, job: Job) -> FileOutcome:
    # every file of a kind the audit reads is scanned, a shell script or a requirements list too
    # (nothing to convert there: no edits), so that convert's count of files and lines is the audit's
    if entry.kind is None:   # read all the same: an unreadable file is not copied
        return FileOutcome(entry, plan=job.facts.rename)
    return torch_sources.outcome(entry, data, *_convert_data(entry, data, job), job.facts)


def _not_converted(entry: Entry, skipped: Skipped | None, job: Job) -> FileOutcome:
    return FileOutcome(entry, skipped=skipped, plan=job.facts.rename)


# how each file goes through the one driver (workers.run_files), and convert's words for a file it could not finish
PER_FILE = PerFile(_convert_entry, _not_converted, Wording(
    timeout="{exc} to scan: left as it is (--file-timeout)",
    too_deep="nested too deeply to convert: left as it is",
    internal="internal error while converting ({kind}: {exc}): left as it is; please report it"))


def _kept_outcome(entry: Entry, data: bytes, scan: FileScan, job: Job) -> FileOutcome:
    """The outcome of a file whose scan the cache kept (convert_cache.py: never with --rename)."""
    return torch_sources.outcome(entry, data, scan, _applied(data, scan), job.facts)


def _convert_data(entry: Entry, data: bytes, job: Job) -> tuple[FileScan, bytes | None]:
    scan, output = convert_bytes(entry.rel, data, job.scan, entry.kind or "source", job.facts)
    plan = job.facts.rename
    if plan is not None and job.scan.build_files and entry.kind in ("cmake", "make"):
        renamed = rename_in_build_file(output if output is not None else data, entry.rel, plan)
        output = renamed if renamed != data else None
    return scan, output


def _converter(job: Job) -> Callable[[Entry, bytes], bytes | None]:
    """What another version of a file converts to (inplace.py: is an old NAME.orig its original?)."""
    return lambda entry, data: torch_sources.outcome(entry, data, *_convert_data(entry, data, job), job.facts).output


def check_options(paths: list[Path], opts: ConvertOptions) -> None:
    """Reject contradictory or dangerous requests before touching anything."""
    if opts.output is not None and opts.in_place:
        raise PortkitError("-o/--output and --in-place cannot be used together")
    if opts.backup and not opts.in_place:
        raise PortkitError("--backup only applies with --in-place")
    if opts.force and not opts.in_place:
        raise PortkitError("--force only applies with --in-place")
    if opts.output is None and not (opts.in_place or opts.diff or opts.check):
        raise PortkitError("choose an output: -o OUT, --in-place, --diff or --check")
    if opts.jobs < 1:
        raise PortkitError(f"--jobs must be at least 1, not {opts.jobs}")
    if opts.output is not None and str(opts.output) == "-":
        if len(paths) != 1 or paths[0].is_dir():
            raise PortkitError("-o - (standard output) takes exactly one input file")
        if opts.rename is not None:
            raise PortkitError("--rename writes files under new names: use -o OUT or --in-place")
        return
    if opts.output is not None:
        out = opts.output.absolute().resolve()
        for given in paths:
            if not given.exists():
                continue
            src = given.absolute().resolve()
            if src.is_dir() and (out == src or src in out.parents):
                raise PortkitError(f"{opts.output}: the output directory is inside the input tree "
                                   f"{given}; choose a directory outside it")
            if src.is_file() and out == src:
                raise PortkitError(f"{opts.output}: the output is the input file; use --in-place")
        if out.exists() and not out.is_dir():
            raise PortkitError(f"{opts.output}: exists and is not a directory")


def configured(cfg: Config, *, rocm: str | None = None, mappings: tuple[Path, ...] = (), scan: dict | None = None,
               **fields) -> ConvertOptions:
    """The options `portkit convert` runs with, for the CLI and the API alike (audit.configured's
    pattern), so they never drift: the scan settings resolved once (project/settings.py: --rocm over
    the configuration's, its mapping files then --mappings; `scan`: further values), the configuration
    travels whole; `fields`: further ConvertOptions (output, jobs, rename ...)."""
    return ConvertOptions(scan=resolve(cfg, rocm=rocm, mappings=mappings, **(scan or {})), config=cfg, **fields)


def convert_paths(paths: list[Path], opts: ConvertOptions,
                  progress_factory: Callable[[int], Callable[[int], None] | None] | None = None,
                  stdout: "object | None" = None) -> ConvertResult:
    """Convert files and trees; write, diff or check according to `opts`."""
    paths = [Path(p) for p in paths]
    opts = _file_output(paths, opts)
    check_options(paths, opts)
    audit = convert_audit.audit_options(opts).scan if opts.needs_person else None   # its view, for needs_person
    project = pipeline.prepare(paths, opts.scan, opts.config, opts.rename, leave_amd_built=opts.leave_amd_built,
                               leave_carried=True, audit=audit, cache=resultcache.enabled(opts.cache), jobs=opts.jobs)
    root, entries = project.root, project.entries
    if opts.scan.polyfills:   # a file of the header's name that portkit did not write stops the run here
        _polyfill_guard(root, opts)
    torch_files, project.facts = project.facts.torch_sources, torch_sources.mode(project.facts, opts.extension_sources)
    result = ConvertResult(root=root, skipped=project.skipped, active_only=opts.scan.active_only,
                           amd_built=project.amd_built, carried=project.carried, left_out=project.left_out,
                           torch_sources=project.facts.torch_sources)
    if opts.deep is not None:   # libclang's facts, before the scan that they refine
        from .deep import engine
        result.deep = engine.collect(root, entries, opts.deep, progress_factory)
        if opts.scan.active_only:   # clang's preprocessor decides the files it saw
            pipeline.with_clang_lines(project, result.deep)
    job = Job(opts.scan, project.facts)
    why: dict[str, Skipped] = {}
    if job.facts.rename is not None:   # what is known not to be written keeps its name from the start
        plan, why = renaming.before_scan(project, job.facts.rename, opts.in_place, opts.force)
        job = renaming.with_plan(job, plan)
    if opts.output is not None and str(opts.output) != "-":
        _refuse_overwriting_inputs(entries, opts.output, job.facts.rename, opts.output_name)
    # what `portkit audit` would say needs a person (only when something shows it): its scan rides on convert's pass
    summary = convert_audit.Summary(project.audit, opts, entries) if project.audit is not None else None
    progress = progress_factory(len(entries)) if progress_factory else None
    ways = convert_audit.passes(summary, job, PER_FILE, _kept_outcome, opts.jobs, progress)
    outcomes: Iterable[FileOutcome] = convert_cache.outcomes(entries, job, root, ways.scan_many, ways.finish, progress,
                                                             opts.cache, project.stamps, ways.ahead)
    if job.facts.rename is not None:   # a renamed file the scan skipped keeps its name (never with -o -)
        outcomes, job = renaming.settle(list(outcomes), job, why, result.skipped, _many(opts.jobs))
    _write(outcomes, job, opts, result, stdout)
    result.needs_person = summary.findings() if summary is not None else []
    result.torch = torch_sources.settle(result, torch_files, opts.extension_sources)   # --extension-sources
    if opts.scan.polyfills:
        result.polyfills = _polyfill_header(result, opts)
        if result.polyfills is not None:
            _write_polyfills(result.polyfills, opts, result)
    if result.deep is not None:
        # Deep mode refines what convert reports; the edits are the tree-sitter ones, in every
        # #if branch, because the other configurations need them too.
        from .. import rules
        from .deep.refine import refine
        converter_codes = frozenset(r.code for r in rules.all_rules() if r.group == "conversion")
        refine({s.rel: s for s in result.scans}, result.deep, root, converter_codes, False, job.facts.host_only)
    return result


def _write(outcomes: Iterable[FileOutcome], job: Job, opts: ConvertOptions, result: ConvertResult,
           stdout: "object | None") -> None:
    """Each outcome where the user asked for it, as the outcomes come (in place with --rename, the
    renamed files first: renaming.py); a diff is taken before the write replaces the old bytes."""
    swept: set[Path] = set()
    handled: list[str] = []
    before: dict[str, bytes] = {}

    def write_one(outcome: FileOutcome, plan: Job) -> bytes | None:
        """In place, with `plan`'s converter (a backup that converts to the output is the file's)."""
        return rewrite(outcome, opts.backup, opts.force, result, _converter(plan), swept)
    if opts.in_place and job.facts.rename is not None:
        outcomes, job, handled, before = renaming.write_renamed(
            list(outcomes), job, write_one, lambda e, d, j: _convert_data(e, d, j)[1], _many(opts.jobs),
            result.skipped)
    to_stdout = opts.output is not None and str(opts.output) == "-"
    # the output root as the OS resolves it, once: each file's own path is resolved in _mirror
    base = opts.output.absolute().resolve() if opts.output is not None and not to_stdout else None
    for outcome in outcomes:
        result.outcomes.append(outcome)
        if opts.diff and (outcome.changed or outcome.renamed):
            result.diff_text.append(unified_diff(outcome, before.get(outcome.entry.rel)))
        if to_stdout:
            if outcome.skipped is None or not outcome.skipped.error:
                try:
                    stdout.write(_output_bytes(outcome))  # type: ignore[union-attr]
                except OSError as exc:
                    result.skipped.append(Skipped(outcome.entry.rel, f"cannot read: {exc.strerror or exc}", True))
        elif opts.output is not None:
            _mirror(outcome, opts.output, result, swept, opts.output_name, base)
        elif opts.in_place and (outcome.changed or outcome.renamed) and outcome.entry.rel not in handled:
            write_one(outcome, job)


def _many(jobs: int) -> "renaming.ConvertMany":
    return lambda entries, job: list(run_files(entries, job, PER_FILE, jobs, None))


_HEADER_HINT = "remove it, or convert with --no-polyfills"


def _polyfill_guard(root: Path, opts: ConvertOptions) -> None:
    """The generated header of an earlier run is written again (the pipeline leaves it out of the
    scan); a link or a file of that name that portkit did not write stops the run before any write."""
    target = _header_path(root, opts)
    if target is not None:   # a link or anything but a regular file there: never written through
        refuse_unless_regular(target, _HEADER_HINT)
    for where in (root, opts.output if opts.output is not None and str(opts.output) != "-" else None):
        if where is not None and (where / polyfills.HEADER).is_file():
            _own_polyfills(where / polyfills.HEADER)


def _own_polyfills(path: Path) -> bytes | None:
    """The header on disk, when there is one and portkit generated it; a file of the user's with
    that name is never overwritten."""
    try:
        data = read_regular(path)   # a link is never the header: refused where it would be written
    except OSError:
        return None
    if not polyfills.is_generated(data):
        raise PortkitError(f"{path}: exists and was not generated by portkit; not overwritten (move it away, "
                           f"or convert with --no-polyfills)")
    return data


def _polyfill_header(result: ConvertResult, opts: ConvertOptions) -> PolyfillHeader | None:
    """The header the converted files need, with where it goes and what is there now."""
    users: dict[str, list[str]] = {}
    for outcome in result.outcomes:
        if outcome.scan is not None:
            for name in outcome.scan.metrics.polyfills:
                users.setdefault(name, []).append(outcome.target_rel)
    if not users:
        return None
    rocm = format_version(opts.scan.target)
    command = f"portkit convert --rocm {rocm}"
    text = polyfill_header.header_text(sorted(users), rocm, command)
    path = _header_path(result.root, opts)
    old = _own_polyfills(path) if path is not None and path.is_file() else None
    return PolyfillHeader(polyfills.HEADER, path if (opts.output is not None or opts.in_place) else None,
                          text, old, {k: sorted(v) for k, v in sorted(users.items())}, rocm)


def _header_path(root: Path, opts: ConvertOptions) -> Path | None:
    """Where the generated header goes (-o: the output root; --in-place, --diff, --check: the
    input root); None when nowhere (-o -)."""
    if opts.output is not None and str(opts.output) != "-":
        return opts.output / polyfills.HEADER
    return root / polyfills.HEADER if opts.in_place or opts.diff or opts.check else None


def _write_polyfills(header: PolyfillHeader, opts: ConvertOptions, result: ConvertResult) -> None:
    if opts.diff and header.changed:
        result.diff_text.append(diff_bytes(header.old or b"", header.text, header.rel, header.rel))
    if header.path is not None and header.changed:
        write_generated(header.path, header.text, opts.in_place, _HEADER_HINT)


def _output_bytes(outcome: FileOutcome) -> bytes:
    """What the file becomes; an unchanged one is read again, never through a FIFO or a new link."""
    if outcome.changed:
        return outcome.output or b""
    return read_regular(outcome.entry.path, follow=outcome.entry.named)


def _file_output(paths: list[Path], opts: ConvertOptions) -> ConvertOptions:
    """`-o out/main.hip` for one input file names the file to write (a helper header goes beside
    it), never a directory `out/main.hip/` to create."""
    out = opts.output
    if out is None or str(out) == "-" or len(paths) != 1 or not paths[0].is_file() or out.is_dir() \
            or out.suffix.lower() not in SOURCE_SUFFIXES:
        return opts
    if out.absolute().resolve() == paths[0].absolute().resolve():
        raise PortkitError(f"{out}: the output is the input file; use --in-place")
    return replace(opts, output=out.parent, output_name=out.name)


def _refuse_overwriting_inputs(entries: list[Entry], out_root: Path, plan: "RenamePlan | None",
                               name: str | None = None) -> None:
    """-o: stop before writing anything when a file would land on an input (the output is the
    inputs' own directory, a directory among them, or a link or hard link to one)."""
    inputs: dict[tuple[int, int], str] = {}
    for entry in entries:
        try:
            st = entry.path.stat()
            inputs[(st.st_dev, st.st_ino)] = entry.rel
        except OSError:
            continue
    for entry in entries:
        rel = name or (plan.target(entry.rel) if plan is not None else entry.rel)
        try:
            st = (out_root / rel).stat()
        except OSError:
            continue
        hit = inputs.get((st.st_dev, st.st_ino))
        if hit is not None:
            raise PortkitError(f"{out_root}: writing {rel} there would overwrite the input {hit}; "
                               f"choose an output directory outside the inputs")


def _mirror(outcome: FileOutcome, out_root: Path, result: ConvertResult, swept: set[Path],
            name: str | None = None, base: Path | None = None) -> None:
    """Write one file's output under `out_root` (`base`: the root resolved, by the caller once per
    run), never outside it whatever links the tree or the output holds."""
    target = confined(out_root / (name or outcome.target_rel), out_root if base is None else base,
                      "stopped: choose an output directory without links out of it")
    try:   # an unchanged file is copied by the kernel, never through a FIFO or a new link
        source = None if outcome.changed else open_regular(outcome.entry.path, follow=outcome.entry.named)
    except OSError:
        return      # unreadable or gone: already reported (a file that failed to convert is copied as is)
    try:
        if _case_clash(target, outcome.target_rel, result):
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        sweep_stale(target.parent, swept)
        if holds(target, outcome.output or b"" if source is None else None, source, outcome.entry.path):
            pass   # a re-run: the bytes and mode are there already
        elif source is None:
            atomic_write(target, outcome.output or b"", mode_from=outcome.entry.path)
        else:
            atomic_copy(target, source, mode_from=outcome.entry.path)
        result.written_paths[str(target).lower()] = target
    except OSError as exc:
        result.skipped.append(Skipped(outcome.entry.rel, f"cannot write {target}: {exc.strerror or exc}", True))
        return
    finally:
        if source is not None:
            os.close(source)
    result.written += 1


def _case_clash(target: Path, rel: str, result: ConvertResult) -> bool:
    """On a case-insensitive file system (macOS, Windows), a.cu and A.cu are one file: the second
    would overwrite the first. Reported, never overwritten; on a case-sensitive one both are written."""
    earlier = result.written_paths.get(str(target).lower())
    if earlier is None or earlier == target:
        return False
    same = _same_file(earlier, target)
    if same:
        result.skipped.append(Skipped(rel, f"not written: it is the same file as {earlier.name} on this "
                                                   f"case-insensitive file system", True))
    return same


def _same_file(a: Path, b: Path) -> bool:
    try:
        return b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def unified_diff(outcome: FileOutcome, old: bytes | None = None) -> bytes:
    """A unified diff of one file (a rename without a change says so); `old`: its bytes before,
    when the file is no longer there to read them (renamed in place)."""
    old = read_regular(outcome.entry.path, follow=outcome.entry.named) if old is None else old
    new = outcome.output if outcome.changed else old
    if outcome.renamed and old == new:
        return f"rename from {outcome.entry.rel}\nrename to {outcome.target_rel}\n".encode("utf-8", "surrogateescape")
    return diff_bytes(old, new, outcome.entry.rel, outcome.target_rel)


def diff_bytes(old: bytes, new: bytes, old_rel: str, new_rel: str) -> bytes:
    """A unified diff of two versions of a file; bytes that are not UTF-8 pass through unchanged."""
    def lines(data: bytes) -> list[str]:
        # the lines findings count (source.split_lines), not str.splitlines's: it also breaks at
        # form feeds, \x1c-\x1e, NEL and U+2028, which would shift every hunk after them
        out = [line.decode("utf-8", "surrogateescape") for line in split_lines(data)]
        if out and not out[-1].endswith(("\n", "\r")):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    text = "".join(difflib.unified_diff(lines(old), lines(new), f"a/{old_rel}", f"b/{new_rel}"))
    return text.encode("utf-8", "surrogateescape")
