"""The one project pipeline: how convert, audit, check and verify see a project.

config -> the file set (found under the paths, less what git ignores (ignored.py), the
configuration's `exclude` applied, the files a source includes joined to the sources) -> the
project facts (the AMD selectors and shim names
of the tree, the polyfill names it defines itself, the files --rename moves) -> the per-file scan,
with the same `Options` and `ProjectFacts` for every file. No command prepares a project its own
way: `check` asks `tree_facts` for the facts the baseline's audit learned through `prepare`, so
the gate and its baseline classify every region alike.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from ..core import datacache, filestamps, memory, needles, source
from ..core.files import Entry, LeftOut, Skipped, discover, walk_stamp
from ..engine.context import Options
from ..engine.facts import ProjectFacts
from ..engine.platform import amd_headers, compilers, directives, ppexpr, regions, facts as platform_facts
from ..rewrite import polyfills, qualified_names
from ..core.tables.mappings import tables_dir
from ..core.tables.project_tables import db_for
from . import (asm_macros, carried, file_facts, gpu_reach, includes, optional_cache, own_headers, own_namespaces, packages,
               torch_extension, warp_constants)
from .config import Config
from .lazy_sources import Contents, Sources, as_sources
from .packages import own_packages, requirements

if TYPE_CHECKING:
    from .amd_paths import AmdPaths
    from .ignored import Kept
    from .optional import OptionalCode
    from .product import OwnBuild


@dataclass
class Project:
    """A project as every command sees it."""

    root: Path
    entries: list[Entry]      # the files to work on, sorted; an excluded file has no kind (left as it is)
    skipped: list[Skipped]
    facts: ProjectFacts
    excluded: int = 0         # files the configuration's `exclude` leaves as they are
    # the code the default build leaves out (optional.py): what the estimate keeps out of its
    # headline; learned for the commands that ask for it (prepare(..., optional=True))
    optional: "OptionalCode | None" = None
    # learned with the optional code: the AMD implementations and builds the tree already has
    # (amd_paths.py) and its second distributions (product.py)
    amd: "AmdPaths | None" = None
    components: tuple[str, ...] = ()
    own_build: "OwnBuild | None" = None   # the root's build file and the tests done runs (product.py)
    amd_built: dict[str, str] = field(default_factory=dict)   # left as they are: their AMD build's evidence
    carried: dict[str, str] = field(default_factory=dict)     # left as they are: a carried library's copy (carried.py)
    ignored: tuple[str, ...] = ()   # what git ignores under the paths, not read (discover names them)
    # prepare(..., audit=OPTIONS): the same paths as `portkit audit` prepares them (its file set and
    # facts: AMD-built files and carried copies in), from this run's one discovery and reading
    audit: "Project | None" = None
    # what this run knows of each file's bytes without reading them (core/filestamps.py): the
    # result caches' keys of the files a re-run finds as the last run left them
    stamps: filestamps.Stamps = field(default_factory=lambda: filestamps.Stamps(None, None), compare=False, repr=False)

    @property
    def left_out(self) -> LeftOut:
        """What the paths hold that no command reads, and why: what the summaries say."""
        return LeftOut(self.ignored, self.excluded)

    @property
    def scanned(self) -> list[Entry]:
        """The files a scan reads: sources, build, dependency and Python files."""
        return [e for e in self.entries if e.kind is not None]


def prepare(paths: list[Path], options: Options, config: Config = Config(),
            rename: tuple[tuple[str, str], ...] | None = None, optional: bool = False,
            leave_amd_built: bool = False, leave_carried: bool = False, audit: Options | None = None,
            cache: bool = True, jobs: int = 1) -> Project:
    """The project under `paths`: its file set and the facts learned from it (with `optional`, also
    the code its default build leaves out; with `leave_amd_built`, convert's default, the files the
    tree's own AMD build compiles are left as they are, like excluded ones: amd_paths.covered; with
    `leave_carried`, convert's too, the copies of vendor-neutral libraries the tree carries). With
    `audit`, also `Project.audit`: the audit's file set and facts under those settings, for convert's
    needs_person, so that one run walks and reads the tree once. `cache`: each file's part of the
    facts is kept between runs (file_facts.py; --no-cache and PORTKIT_NO_CACHE=1 turn it off);
    `jobs`: the processes that learn the files it does not hold (the command's -j)."""
    project = _prepare(paths, options, config, rename, optional, leave_amd_built, leave_carried, audit, cache, jobs)
    memory.give_back_freed()   # the sources' bytes its passes read and dropped (core/memory.py)
    return project


def _prepare(paths: list[Path], options: Options, config: Config, rename: tuple[tuple[str, str], ...] | None,
             optional: bool, leave_amd_built: bool, leave_carried: bool, audit: Options | None, cache: bool,
             jobs: int) -> Project:
    """prepare's work; what it read is dropped when it returns."""
    ignored: list[str] = []
    root, entries, skipped = discover([Path(p) for p in paths], git_ignored([Path(p) for p in paths], config), ignored)
    store = facts_store(root, cache, jobs)   # one per run: a file both views read is learned once
    stamps = filestamps.stamps_for(root, cache)   # what the last run read, by stamp: not read again
    stamps.present = frozenset(e.rel for e in entries)
    entries, left = _split_excluded(entries, config)
    entries, skipped = includes.follow(entries, skipped, stamps)
    # what an audit of the same paths reads: the AMD-built files and carried copies too
    found, excluded, found_skipped = entries, list(left), list(skipped)
    amd_built: dict[str, str] = {}
    if leave_amd_built:
        from . import amd_paths
        amd_built = amd_paths.covered(entries, amd_paths.learn(entries))
        left += [replace(e, kind=None) for e in entries if e.rel in amd_built]
        entries = [e for e in entries if e.rel not in amd_built]
    if options.polyfills:   # an earlier run's generated header is not the project's: written again
        entries = [e for e in entries if e.rel != polyfills.HEADER]
        found = [e for e in found if e.rel != polyfills.HEADER]
    # the sources of every project-level pass (the facts, and with `optional` the defaults), read as they ask
    read_all, sources = _read(found if audit is not None else None, entries,
                              options.platform_model or options.polyfills or optional, stamps, store)
    facts = learn(entries, options, config, sources, store)
    kept_copies: dict[str, str] = {}
    if leave_carried and facts.carried:   # after the facts: the copy's marker is what says it is one
        kept_copies = {e.rel: lib for e in entries if (lib := carried.library_of(e.rel, facts.carried))}
        left += [replace(e, kind=None) for e in entries if e.rel in kept_copies]
        entries = [e for e in entries if e.rel not in kept_copies]
    if rename is not None:
        from .rename import plan
        renamed, clashes = plan(entries, rename)
        skipped += clashes
        facts = replace(facts, rename=renamed)
    left_out, amd, components, own_build = None, None, (), None
    if optional:
        from . import amd_paths, optional as optional_code, product
        left_out = optional_code.learn(optional_inputs(entries, sources), options.defines, store)
        amd, components = amd_paths.learn(entries), product.distributions(entries)
        own_build = product.own_build(entries)
    if left:   # mirrored byte for byte by convert, read by nothing else
        entries = sorted(entries + left, key=lambda e: e.rel)
    seen = None if audit is None else \
        Project(root, sorted(found + excluded, key=lambda e: e.rel), found_skipped, learn(found, audit, config, read_all, store),
                excluded=len(excluded), ignored=tuple(ignored), stamps=stamps)
    store.save()
    stamps.save()
    return Project(root, entries, skipped, facts, excluded=len(left) - len(amd_built) - len(kept_copies),
                   optional=left_out, amd=amd, components=components, own_build=own_build, amd_built=amd_built, carried=kept_copies,
                   ignored=tuple(ignored), audit=seen, stamps=stamps)


def _read(found: list[Entry] | None, entries: list[Entry], wanted: bool, stamps: filestamps.Stamps,
          store: file_facts.FactsStore) -> tuple[Sources | None, Sources]:
    """The sources of the audit's view (`found`, when convert asks for one) and of this one, read as
    the passes ask (lazy_sources.py: none are held past its budget), each read recorded with its
    SHA-256 (filestamps) and that SHA-256 given to the facts store; none of this view unless `wanted`."""
    def seed(entry: Entry, data: bytes) -> None:
        known = stamps.known(entry)
        if known is not None:
            store.seed(entry.rel, data, known.sha256)
    read_all = Sources([e for e in found if e.kind == "source"], stamps.read, seed) if found is not None else None
    mine = [e for e in entries if e.kind == "source"] if read_all is not None or wanted else []
    return read_all, read_all.only(mine) if read_all is not None else Sources(mine, stamps.read, seed)


def git_ignored(paths: list[Path], config: Config) -> "Kept | None":
    """What git ignores under the folders among `paths` (none with `respect-gitignore = false`)."""
    if not config.respect_gitignore:
        return None
    from .ignored import ignored_under
    return ignored_under([p.absolute() for p in paths if p.is_dir()])


def learn(entries: list[Entry], options: Options, config: Config = Config(),
          sources: Iterable[tuple[Entry, bytes]] | None = None, store: file_facts.FactsStore | None = None) -> ProjectFacts:
    """The facts of a file set: the platform model's (unless --no-platform-model) and the polyfill
    names the project defines (with polyfills on). `sources`: lazy_sources.Sources of the entries
    (prepare's, read as the passes ask), or (entry, bytes) pairs a caller has read; none: read
    here as the passes ask; `store`: each file's part of the facts (file_facts.py), kept
    between runs and shared by the run's views (none: learned here, kept nowhere)."""
    required, extras = requirements(entries)
    facts = ProjectFacts(amd_macros=tuple(config.amd_macros), own_packages=own_packages(entries),
                         requirements=required, extras=extras, carried=carried.learn(entries),
                         generated_headers=generated_headers(entries),
                         torch_sources=frozenset(torch_extension.learn(entries)),
                         own_headers=own_headers.learn(entries))
    # read as each pass asks (lazy_sources.py); bytes a caller holds already are taken as they are
    sources = Sources([e for e in entries if e.kind == "source"]) if sources is None else as_sources(sources)
    per_file = (store or file_facts.FactsStore(None, None)).facts(sources) \
        if options.platform_model or options.polyfills or options.audit else []
    if options.platform_model:   # the tree's AMD selectors, learned before the scan (regions.py)
        facts = file_facts.platforms(per_file, facts, sources)
    if options.polyfills:   # its own definitions win over a polyfill
        facts = replace(facts, project_defined=polyfills.defined_in(
            (entry.rel, ff.polyfill_generated, ff.own_definitions) for entry, ff in per_file))
    if options.audit:   # the macros that write inline assembly: their uses are PTX too (PK301)
        facts = replace(facts, asm_macros=asm_macros.merge([(entry.rel, ff.asm_defines) for entry, ff in per_file]))
    if options.audit or "warp" in options.fixes:   # a header's one-warp block size: reported and fixed there (PK208)
        primitive = not per_file or any(ff.warp_primitive for _, ff in per_file)   # else none: nothing to read
        facts = replace(facts, warp_constants=warp_constants.learn(sources) if primitive else ())
    # the files no GPU compiler reads: the GPU rules and passes leave them out (gpu_reach.py)
    reads = [(entry.rel, ff.gpu, ff.includes) for entry, ff in per_file] if per_file else \
        [(entry.rel, gpu_reach.uses_gpu(data), file_facts.included_names(data)) for entry, data in sources]
    facts = replace(facts, host_only=gpu_reach.host_only(reads))
    # ctranslate2::cuda: its `cuda::` uses are the project's, not libcu++'s (parsed: the files that
    # define a namespace of a CUDA library's name, as their facts say)
    names_by_bytes = db_for(options).names_by_bytes
    library = qualified_names.namespace_names(names_by_bytes)
    defining = sources.only(entry for entry, ff in per_file if ff.namespaces & library) if per_file else sources
    return replace(facts, own_namespaces=own_namespaces.learn(defining, names_by_bytes),
                   bf16_tree=any(ff.bf16 for _, ff in per_file) if per_file else names_bf16(sources))


def names_bf16(sources: Iterable[tuple[Entry, bytes]]) -> bool:
    """Whether a source names a CUDA bfloat16 type or function (file_facts.names_bf16)."""
    return any(file_facts.names_bf16(data) for _, data in sources)


def facts_store(root: Path, cache: bool = True, jobs: int = 1) -> file_facts.FactsStore:
    """This run's per-file facts of the tree at `root`: kept in the user's cache folder under a key
    of the code that learns them, unless `cache` is off or PORTKIT_NO_CACHE=1; the files it does
    not hold learned in `jobs` processes."""
    if not cache or os.environ.get("PORTKIT_NO_CACHE", "") not in ("", "0"):
        return file_facts.FactsStore(None, None, jobs)
    try:
        code = _facts_code() + [Path(file_facts.__file__), tables_dir() / "polyfills.toml", tables_dir() / "platforms.toml",
                                *optional_cache.code()]
        key = datacache.digest([f"filefacts {file_facts.FORMAT}"], code)
    except OSError:   # the code is unreadable: learn without the cache
        return file_facts.FactsStore(None, None, jobs)
    return file_facts.FactsStore(str(root.absolute()), key, jobs)


def generated_headers(entries: list[Entry]) -> frozenset[str]:
    """The headers the tree makes from templates (`src/nccl.h.in` -> `src/nccl.h`, as CMake's
    configure_file or a Makefile's sed writes them): the project's own, whatever their names."""
    return frozenset(e.rel[:-3] for e in entries if e.rel.endswith(includes.HEADER_TEMPLATES))


def tree_facts(root: Path, options: Options, config: Config) -> ProjectFacts:
    """The facts of the whole tree at `root` (what `check` scans its few files with). A commit
    gate runs at every commit: the facts are kept in the user's cache for the tree as it is (every
    file's name, size and modification time, and the settings), so an unchanged tree is not read."""
    _, entries, skipped = discover([root], git_ignored([root], config))
    entries, _ = _split_excluded(entries, config)

    def build() -> ProjectFacts:
        followed, _ = includes.follow(entries, skipped)
        store = facts_store(root)
        facts = learn(followed, options, config, store=store)
        store.save()
        return facts

    try:
        key = _tree_key(root, entries, options, config)
    except OSError:   # a file vanished while we looked: learn without the cache
        return build()
    slot = "facts-" + datacache.digest([str(root.absolute())])[:24]
    return datacache.cached_slot(slot, key, build, _facts_to_plain, _facts_from_plain)


def _tree_key(root: Path, entries: list[Entry], options: Options, config: Config) -> str:
    parts = [f"platform_model={options.platform_model} polyfills={options.polyfills}", *config.amd_macros, "\0"]
    # the project's mapping files, by content: the facts read no table today, but a key over all
    # the settings a gate runs with cannot go stale the day one of them does
    parts += [f"{table.shown}\0{table.text}" for table in options.mappings] + ["\0"]
    parts += walk_stamp(entries)
    return datacache.digest(parts, _facts_code())


def _facts_code() -> list[Path]:
    """The modules whose code decides the facts (named by module, so that a move keeps the key
    whole: a path that no longer exists would silently turn the gate's cache off)."""
    modules = (sys.modules[__name__], includes, asm_macros, gpu_reach, warp_constants, warp_constants.model(), own_namespaces, own_headers,
               qualified_names, platform_facts, regions,
               compilers, directives, ppexpr, amd_headers, polyfills, needles, source, packages, carried, torch_extension)
    return [Path(m.__file__) for m in modules] + [tables_dir() / "ecosystem.toml"]


def _facts_to_plain(facts: ProjectFacts) -> dict:
    return {"amd_macros": list(facts.amd_macros), "shim_names": sorted(n.decode("latin-1") for n in facts.shim_names),
            "one_world": [list(p) for p in facts.one_world], "amd_shim": facts.amd_shim,
            "amd_files": sorted(facts.amd_files),
            "project_defined": sorted(facts.project_defined), "own_packages": sorted(facts.own_packages),
            "requirements": None if facts.requirements is None else sorted(facts.requirements),
            "extras": [[extra, sorted(names)] for extra, names in facts.extras],
            "carried": [list(pair) for pair in facts.carried], "generated_headers": sorted(facts.generated_headers),
            "asm_macros": [list(m) for m in facts.asm_macros], "own_namespaces": list(facts.own_namespaces),
            "own_headers": sorted(facts.own_headers), "host_only": sorted(facts.host_only),
            "torch_sources": sorted(facts.torch_sources), "bf16_tree": facts.bf16_tree,
            "warp_constants": [[n, h, line, literal, [list(u) for u in uses]]
                               for n, h, line, literal, uses in facts.warp_constants]}


def _facts_from_plain(plain: dict) -> ProjectFacts:
    return ProjectFacts(amd_macros=tuple(plain["amd_macros"]),
                        shim_names=frozenset(n.encode("latin-1") for n in plain["shim_names"]),
                        one_world=tuple((a, b) for a, b in plain["one_world"]), amd_shim=bool(plain["amd_shim"]),
                        amd_files=frozenset(plain.get("amd_files", ())),
                        project_defined=frozenset(plain["project_defined"]),
                        own_packages=frozenset(plain["own_packages"]),
                        requirements=None if plain.get("requirements") is None else frozenset(plain["requirements"]),
                        extras=tuple((extra, frozenset(names)) for extra, names in plain.get("extras", ())),
                        carried=tuple((library, directory) for library, directory in plain.get("carried", ())),
                        generated_headers=frozenset(plain.get("generated_headers", ())),
                        asm_macros=tuple((str(name), str(rel), int(line)) for name, rel, line in plain.get("asm_macros", ())),
                        own_namespaces=tuple(str(name) for name in plain.get("own_namespaces", ())),
                        own_headers=frozenset(plain.get("own_headers", ())),
                        host_only=frozenset(str(rel) for rel in plain.get("host_only", ())),
                        torch_sources=frozenset(str(rel) for rel in plain.get("torch_sources", ())),
                        bf16_tree=bool(plain.get("bf16_tree", False)),
                        warp_constants=tuple((str(n), str(h), int(line), bool(literal),
                                              tuple((str(f), int(ln), str(w)) for f, ln, w in uses))
                                             for n, h, line, literal, uses in plain.get("warp_constants", ())))


def with_clang_lines(project: Project, deep) -> None:
    """--active-only --engine clang: the lines clang's preprocessor skipped decide the files it saw."""
    skipped_lines = tuple((rel, tuple((a, b) for a, b in deep.inactive.get(rel, ())))
                          for rel in sorted(deep.parsed))
    project.facts = replace(project.facts, clang_inactive=skipped_lines)


def optional_inputs(entries: list[Entry], sources: Sources | None = None) -> Contents:
    """(path, kind, bytes) of the sources, CMake files, Makefiles and setup.py files: what optional.py
    reads its defaults and switches from (the sources through `sources`, this run's, when given)."""
    return Contents(entries, sources if sources is not None else Sources([e for e in entries if e.kind == "source"]),
                    _setup_or_build)


def _setup_or_build(entry: Entry) -> bool:
    return entry.kind in ("cmake", "make") or entry.kind == "python" and entry.rel.rsplit("/", 1)[-1] == "setup.py"


def _split_excluded(entries: list[Entry], config: Config) -> tuple[list[Entry], list[Entry]]:
    """(kept, excluded): an excluded file keeps its place in the tree but is never scanned."""
    if not config.exclude:
        return entries, []
    kept, left = [], []
    for entry in entries:
        (left if config.excluded(entry.rel) else kept).append(entry)
    return kept, [replace(e, kind=None) for e in left]
