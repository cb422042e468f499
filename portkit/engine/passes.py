"""The scan's passes, declared: what each rewriter handles, when it runs, what must run before it.

The walk once imported every rewriter by name and ran its post-passes in an order nobody wrote
down (a new one had to find its line in scan_source). Here a rewrite module declares its passes
(`PASSES`), `rewrite/__init__.py` lists the modules (as `rules/__init__.py` lists the rules), and
`build` turns the declarations into one `Registry`: the walk runs it and names no rewriter. As in
LibCST's codemod command, which runs a post-transform only when a transform asked for it, a pass
says when it is wanted (`when`) and what it needs first (`after`); the run order is computed from
those dependencies, never from where a line sits.

Phases, in the order the walk runs them:
- walk: during the one walk, on the captures the scan query makes. `capture` says which: `node`
  (one pass per node kind, `kinds`; core/parse.py's CAPTURE_KINDS), `strict` (`register`, brace
  initialisers), `device` (the file's __global__/__device__ markers, handed over as one list) or
  `name` (identifiers: `names(ctx)` gives the name sets the pass reads in this run, None when it is
  off);
- post-walk: after the walk and the rules' fixes, before the rules' masked-attribute hooks and the
  partial-parse note: checks over what the walk wrote;
- finish: last: the passes that add what the converted file needs (headers, helpers) or rewrite
  what the others left.
"""

from __future__ import annotations

import functools
import heapq
from dataclasses import dataclass, field
from typing import Callable, Collection, Iterable, Mapping

from ..core.errors import PortkitError
from .context import ScanContext, View

PHASES = ("walk", "post-walk", "finish")
CAPTURES = ("device", "name", "node", "strict")   # the scan query's captures a walk pass may read


class PassError(PortkitError):
    """A registry that cannot be ordered or run: a bug in a rewrite module's declarations."""


@dataclass(frozen=True)
class Pass:
    """One rewriter or post-pass, as it declares itself.

    `run` takes (ctx, view, node) for a `node` or `strict` pass, (ctx, view, nodes) for a `device`
    pass, (ctx, view, node) for a `name` pass and (ctx, view, root) for a post-walk or finish pass.
    `after` names the passes that must have run before it (a pass of an earlier phase always has).
    `when(ctx, view)`, if given, is asked before a post-walk or finish pass runs on a file (`view.data`:
    the bytes the parser read).
    `guards_every_name`: while this name pass is on, every name the walk reads in protected or
    inactive code is left alone (--builtins hip's legacy rewrite), not only the tables' names.
    `gpu_only`: what it rewrites is only there where a GPU compiler reads the code (hip-clang's
    strictness, inline PTX): it never runs on a file no GPU compiler reads (project/gpu_reach.py).
    `keywords`: what a file must hold for this pass to do anything in it (engine/keywords.py): a
    tuple, or `keywords(ctx)` giving one for the run. `()`: nothing of its own, the pass only reads
    what other passes wrote. None: a name pass's `names`; any other pass, undeclared, which keeps
    every file parsed (commands/scan/prefilter.py).
    """
    name: str
    phase: str
    run: Callable[..., None]
    capture: str = ""
    kinds: tuple[str, ...] = ()
    names: Callable[[ScanContext], tuple[Collection[bytes], ...] | None] | None = None
    after: tuple[str, ...] = ()
    when: Callable[[ScanContext, View], bool] | None = None
    guards_every_name: bool = False
    keywords: tuple | Callable[[ScanContext], tuple] | None = None
    gpu_only: bool = False

    @property
    def scoped_run(self) -> Callable[..., None]:
        """What the registry calls: `run`, or for a gpu_only pass `run` where a GPU compiler reads the file."""
        if not self.gpu_only:
            return self.run
        run = self.run

        @functools.wraps(run)
        def in_gpu_code(ctx: ScanContext, *args) -> None:
            if ctx.gpu:
                run(ctx, *args)
        return in_gpu_code

    def keywords_in(self, ctx: ScanContext) -> tuple | None:
        """This pass's keywords in the run `ctx` belongs to; None where it declares none."""
        if callable(self.keywords):
            return self.keywords(ctx)
        if self.keywords is None and self.capture == "name" and self.names is not None:
            sets = self.names(ctx)
            return tuple(sets) if sets is not None else ()
        return self.keywords


@dataclass(frozen=True)
class Registry:
    """Every pass in run order, and the walk's lookups built from them once (the walk asks them
    for every file and every macro body)."""
    passes: tuple[Pass, ...]
    by_kind: Mapping[str, Callable[..., None]] = field(default_factory=dict)   # node kind -> its pass's run
    _phases: Mapping[str, tuple[Pass, ...]] = field(default_factory=dict)
    _captures: Mapping[str, tuple[Pass, ...]] = field(default_factory=dict)
    _runs: Mapping[str, tuple[Callable[..., None], ...]] = field(default_factory=dict)

    def phase(self, phase: str) -> tuple[Pass, ...]:
        """A phase's passes, in run order."""
        return self._phases.get(phase, ())

    def walk(self, capture: str) -> tuple[Pass, ...]:
        """The walk passes that read one of the query's captures, in run order."""
        return self._captures.get(capture, ())

    def runs(self, capture: str) -> tuple[Callable[..., None], ...]:
        return self._runs.get(capture, ())

    def order(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.passes)


def build(declared: Iterable[Pass]) -> Registry:
    """The registry of `declared`, in the order their dependencies give; a PassError names a
    duplicate, an unknown phase or dependency, a dependency on a later phase, or a cycle."""
    passes = tuple(declared)
    for p in passes:
        _check(p)
    ordered = order(passes)
    by_kind: dict[str, Callable[..., None]] = {}
    for p in ordered:
        for kind in p.kinds:
            if kind in by_kind:
                raise PassError(f"pass {p.name}: node kind {kind} already has a pass")
            by_kind[kind] = p.scoped_run
    phases = {phase: tuple(p for p in ordered if p.phase == phase) for phase in PHASES}
    captures = {capture: tuple(p for p in phases["walk"] if p.capture == capture) for capture in CAPTURES}
    runs = {capture: tuple(p.scoped_run for p in found) for capture, found in captures.items()}
    return Registry(ordered, by_kind, phases, captures, runs)


def _check(p: Pass) -> None:
    """One declaration's own consistency."""
    if p.phase not in PHASES:
        raise PassError(f"pass {p.name}: unknown phase {p.phase!r} (one of {', '.join(PHASES)})")
    if (p.phase == "walk") != bool(p.capture) or (p.capture and p.capture not in CAPTURES):
        raise PassError(f"pass {p.name}: a walk pass names one capture of {', '.join(CAPTURES)}, no other pass does")
    if bool(p.kinds) != (p.capture == "node") or (p.names is not None) != (p.capture == "name"):
        raise PassError(f"pass {p.name}: kinds go with the node capture, names with the name capture")


def order(passes: tuple[Pass, ...]) -> tuple[Pass, ...]:
    """A stable topological sort: every pass after those it names in `after`, earlier phases
    first, and among passes free to run, the one declared first."""
    index = {}
    for i, p in enumerate(passes):
        if p.name in index:
            raise PassError(f"pass {p.name} is declared twice")
        index[p.name] = i
    waiting = [0] * len(passes)
    then: list[list[int]] = [[] for _ in passes]
    for i, p in enumerate(passes):
        for name in p.after:
            if name not in index:
                raise PassError(f"pass {p.name} runs after {name}, which no module declares")
            before = index[name]
            if PHASES.index(passes[before].phase) > PHASES.index(p.phase):
                raise PassError(f"pass {p.name} ({p.phase}) runs after {name}, a later phase's")
            waiting[i] += 1
            then[before].append(i)
    ready = [(PHASES.index(p.phase), i) for i, p in enumerate(passes) if not waiting[i]]
    heapq.heapify(ready)
    ordered: list[Pass] = []
    while ready:
        _, i = heapq.heappop(ready)
        ordered.append(passes[i])
        for j in then[i]:
            waiting[j] -= 1
            if not waiting[j]:
                heapq.heappush(ready, (PHASES.index(passes[j].phase), j))
    if len(ordered) < len(passes):
        stuck = sorted(p.name for i, p in enumerate(passes) if waiting[i])
        raise PassError(f"passes depend on each other in a cycle: {', '.join(stuck)}")
    return tuple(ordered)
