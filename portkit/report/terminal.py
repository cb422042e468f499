"""The convert summary for people at a terminal (rich; plain text when not a terminal)."""

from __future__ import annotations

from rich.console import Console

from ..rewrite import polyfills
from .. import rules
from ..commands.results import ConvertResult
from .plain import say

SEVERITY_STYLE = {"blocker": "bold red", "high": "red", "medium": "yellow", "low": "cyan", "info": "dim"}


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _amd_built(amd_built: dict[str, str], console: Console) -> None:
    """A tree that already builds for AMD: what says so, and what convert left alone."""
    evidence = sorted(set(amd_built.values()))
    shown = "; ".join(evidence[:3]) + (f"; {len(evidence) - 3} more" if len(evidence) > 3 else "")
    say(console, f"Already builds for AMD ({shown}): {_plural(len(amd_built), 'file')} its AMD build compiles left "
                 f"as they are, so its NVIDIA build keeps working. For the rest, `--compat-header FILE --in-place` "
                 f"keeps one source for both vendors; `portkit audit` prices what is left; `portkit check` keeps "
                 f"new code portable; --convert-amd-built converts them anyway.")


def _carried(carried: dict[str, str], console: Console) -> None:
    """Library copies left as they are (project/carried.py): which, and why."""
    from ..core.tables import ecosystem
    names = sorted({ecosystem.default().by_id[library].name for library in carried.values()})
    say(console, f"{_plural(len(carried), 'file')} of the tree's own copy of {', '.join(names)} left as "
                 f"they are: vendor-neutral source that builds for AMD as it is.")


def render_convert(result: ConvertResult, console: Console, mode: str) -> None:
    """Summary: counts first, then every reference left unconverted with file:line and reason."""
    scans = result.scans
    lines = result.total("lines")
    partial = sum(1 for s in scans if s.metrics.partially_parsed)
    notes = [s for s in result.all_skipped if not s.error]
    if result.amd_built:   # first: it changes how everything below reads
        _amd_built(result.amd_built, console)
    if result.carried:
        _carried(result.carried, console)
    if result.torch is not None:   # first too: most of the tree's CUDA is left to torch on purpose
        say(console, result.torch.line())
    console.print(
        f"[bold]portkit convert[/]: {_plural(len(scans), 'file')} scanned ({lines:,} lines), "
        f"{len(result.changed):,} {'would change' if mode in ('check', 'diff') else 'changed'}, "
        f"{partial:,} partially parsed, {len(notes):,} skipped"
        + (f", {len(result.errors):,} failed" if result.errors else ""))
    left = _references(result, console)
    if result.total("warp_fixes"):
        console.print(f"Warp fixes (--fix warp): {result.total('warp_fixes'):,}")
    _already_ported(scans, console)
    _polyfills(result, console, mode)
    if result.active_only:
        _active_only(result, console)
    findings = sorted(result.findings, key=lambda f: f.sort_key())
    groups = (
        ("Left unconverted", [f for f in findings if rules.of(f.code).outcome == "left"]),
        ("Converted with a caveat", [f for f in findings if rules.of(f.code).outcome == "caveat"]),
        ("Partially parsed", [f for f in findings if rules.of(f.code).outcome == "partially-parsed"]),
        ("Left for a person", list(result.torch.left if result.torch is not None else ())),
    )
    for title, items in groups:
        if not items:
            continue
        console.print(f"\n[bold]{title}[/] ({_left_count(len(items), left) if title == groups[0][0] else f'{len(items):,}'}):")
        for f in items:
            style = SEVERITY_STYLE.get(f.severity, "")
            say(console, f"  {f.path}:{f.line}:{f.column}: ", (f.code, style), f" {f.message}")
    if notes:
        console.print(f"\n[bold]Skipped[/] ({len(notes):,}):")
        for s in notes:
            say(console, f"  {s.rel}: {s.reason}")
    for s in result.notes:
        say(console, f"note: {s.rel}: {s.reason}")
    for s in result.errors:
        say(console, ("error", "red"), f": {s.rel}: {s.reason}")
    if mode == "output":
        console.print(f"\nWrote {_plural(result.written, 'file')}.")
    elif mode == "in-place":
        console.print(f"\nRewrote {_plural(result.written, 'file')} in place.")
    elif mode == "check":
        _would_change(result, console)


def _references(result: ConvertResult, console: Console) -> int:
    """The CUDA references line and what needs a person; the references left unconverted.
    A PyTorch extension's sources (commands/torch_sources.py): what convert did not write is counted
    as torch's or a person's, never as converted."""
    found, converted, left = (result.total("refs_found"), result.total("refs_converted"),
                              result.total("refs_left"))
    torch = result.torch if result.torch is not None and result.torch.mode == "cuda" else None
    counts = f"{found:,} found, {converted:,} converted, {left:,} left"
    if torch is not None:
        converted = torch.converted(converted)
        counts = (f"{found:,} found, {converted:,} converted, {torch.renamed:,} left to torch's hipify at build "
                  f"time, {torch.person:,} left for a person, {left:,} left unconverted")
    share = f" ({100.0 * converted / found:.1f}% converted)" if found else ""
    if torch is not None and found:
        share = f" ({100.0 * (converted + torch.renamed) / found:.1f}% converted or left to torch's hipify)"
    console.print(f"CUDA references: {counts}{share}")
    need = len(result.needs_person)
    if need:   # what the audit's headline counts, so that "100.0% converted" never reads as done
        where = "see `portkit audit`" if torch is None or not torch.left else (
            "\"Left for a person\" below" + (", and `portkit audit`" if need > len(torch.left) else ""))
        say(console, f"{_plural(need, 'site')} need{'s' if need == 1 else ''} a person (high severity or worse): "
                     f"{where}")
    return left


def _left_count(sites: int, references: int) -> str:
    """The sites left unconverted, and why they are more than the references left: a name HIP has
    (atomicAdd) used with a type it has no overload for is a site, not a reference left."""
    if sites <= references:
        return f"{sites:,}"
    more = sites - references
    uses = f"{more:,} use{'' if more == 1 else 's'} of a converted name HIP has no form for"
    return f"{sites:,}: the {_plural(references, 'reference')} left, and {uses}" if references else f"{sites:,}: {uses}"


def would_change(result: ConvertResult) -> list[str]:
    """convert --check: the files that would change, relative to the input root (with the name
    --rename writes each under), the generated polyfill header last."""
    names = [o.entry.rel + (f" (written as {o.target_rel})" if o.renamed else "") for o in result.changed]
    if result.polyfills is not None and result.polyfills.changed:
        names.append(result.polyfills.rel)
    return names


def _would_change(result: ConvertResult, console: Console) -> None:
    """Each file convert --check would change, one per line, then their count: what CI shows."""
    names = would_change(result)
    if not names:
        return
    console.print()
    for name in names:
        say(console, f"would change: {name}")
    say(console, f"{_plural(len(names), 'file')} would change.")


def _active_only(result: ConvertResult, console: Console) -> None:
    """What --active-only left out, and what it could not decide (converted as compiled)."""
    branches, names, undecided = (result.total("branches_inactive"), result.total("refs_inactive"),
                                  result.total("branches_undecided"))
    console.print(f"--active-only: {branches:,} #if branch{'' if branches == 1 else 'es'} this configuration does "
                  f"not compile, left byte for byte ({_plural(names, 'CUDA name')} in them)")
    if undecided:
        console.print(f"--active-only: {_plural(undecided, '#if condition')} portkit cannot evaluate under -D/-U "
                      "converted as compiled" + ("" if result.deep is not None else
                                                 " (--engine clang decides them exactly)"))


def _already_ported(scans, console: Console) -> None:
    """What the platform model kept convert from (docs/platforms.md), and why."""
    shims = sorted(s.rel for s in scans if s.metrics.shim)
    names = sum(s.metrics.refs_already_ported for s in scans)
    if not shims and not names:
        return
    parts = [f"{_plural(names, 'CUDA name')} in AMD-only code, in NVIDIA branches beside an AMD one or mapped "
             "by the project's shim"] if names else []
    if shims:
        parts.append(f"{_plural(len(shims), 'vendor shim header')} ({', '.join(shims)})")
    say(console, "Left as already ported: ", "; ".join(parts), " (docs/platforms.md; --no-platform-model converts them)")


def _polyfills(result: ConvertResult, console: Console, mode: str) -> None:
    """The generated header (docs/polyfills.md): whether it was written, and each polyfill in it."""
    header = result.polyfills
    if header is None:
        return
    if header.path is None:
        state = ("would change" if header.changed else "unchanged") if mode in ("check", "diff") else \
            "not written (-o - writes one file: convert with -o OUT or --in-place to get it)"
    else:
        state = "written" if header.changed else "unchanged"
    say(console, f"Polyfills for ROCm {header.rocm}: {_plural(len(header.users), 'name')} defined in "
                 f"{header.rel}, {state}:")
    notes = {p.name: p.note for p in polyfills.table().values()}
    for name, users in header.users.items():
        say(console, f"  {name} ({_plural(len(users), 'file')}): {notes.get(name, '')}")


def render_compat(result, console: Console, in_place: bool) -> None:
    """convert --compat-header: what the header maps, which sources get guards, and what a
    macro cannot do or HIP lacks, with file:line."""
    headers = {h for f in result.files for h in f.headers}
    header = "unchanged" if not result.header_changed else "written" if in_place else "would change"
    sources = result.written if in_place and result.written is not None else len(result.changed) - len(result.builds)
    got = "got" if in_place else "would get"
    builds = f"; {_plural(len(result.builds), 'CMake file')} {got} the HIP build as an option" if result.builds else ""
    console.print(f"[bold]portkit convert --compat-header[/]: {len(result.names):,} CUDA names and "
                  f"{len(headers):,} headers mapped for ROCm {result.rocm}; {sources:,} sources {got} guarded "
                  f"includes; header {header}{builds}")
    manual = [f"{f.entry.rel}:{line}: {what}" if line else f"{f.entry.rel}: {what}"
              for f in result.files for line, what in f.manual]
    left = [f"{x.path}:{x.line}: {x.code} {x.message}" for x in result.findings
            if rules.of(x.code).outcome == "left"]
    for title, items in (("Needs a source edit (a macro cannot do it)", manual),
                         ("No HIP counterpart (the audit reports these)", left)):
        if items:
            console.print(f"\n[bold]{title}[/] ({len(items):,}):")
            for item in items:
                say(console, f"  {item}")
    for s in result.notes:   # --in-place: read-only files left as they are, other hard links
        say(console, f"note: {s.rel}: {s.reason}")

