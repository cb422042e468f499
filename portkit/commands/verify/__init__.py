"""verify: compile a converted tree for an AMD GPU and explain every failure by a finding.

The data flows one way: converted tree -> units (which files, which flags: the compile database,
or the build's CMakeLists.txt / Makefile and the tree; portkit/project/units.py, buildconfig.py) ->
compiler runs (compiler.py) -> errors placed in the tree (diagnostics.py) -> the findings that
explain them (explain.py) -> VerifyResult -> report/verify.py. Nothing here prints.

A unit is explained when every error the compiler gave for it is explained; the others are
gaps in portkit's rules or tables, and the JSON output marks them so they can be collected.
A unit whose only errors are headers of libraries not installed here (PK701, PK702) is "not
reached": the compiler stopped before its code, so its porting errors were not seen.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from ...project import compdb
from ...project.buildconfig import STD, TreeConfig
from ...core.errors import PortkitError
from ...core.files import Skipped, read, read_regular
from ..deep import worker_includes
from ...core.tables.mappings import Version, default_db
from ...engine.platform import facts as platform_facts
from ...project import pipeline
from ...project.settings import resolve
from ..results import DEFAULT_VERIFY_TIMEOUT, ErrorReport, UnitReport, VerifyOptions, VerifyResult
from . import compiler as compilers
from . import build_hipify, hipify_scope, packs, precompiled, replaced, standins, torch_pack, unitcache
from .cascade import failed_declarations
from .own_selectors import OwnSelectors
from .diagnostics import Located, include_chain, locate, parse
from .explain import Facts, explain
from ...project.units import Unit, configured, database_config, database_units, tree_units
from ...engine.codes import Code
from ...core.tables import ecosystem
from ...estimate import decisions, effort

DEFAULT_TIMEOUT = DEFAULT_VERIFY_TIMEOUT


def _explained_release(opts: VerifyOptions, compiler) -> Version | None:
    """The release the errors are explained against: the one asked for (--rocm), else the
    compiler's; convert --verify's target only when it was compiled against (explain_as_compiled).
    None: neither is known, and the settings' target is the newest the tables know."""
    fell_back = opts.explain_as_compiled and compiler.note and compiler.rocm is not None
    return compiler.rocm if fell_back else opts.rocm or compiler.rocm


def _define_amd_selectors(commands: dict[str, list[str]], reached: dict[str, list[str]], selectors: tuple[str, ...],
                          own: OwnSelectors, result: VerifyResult) -> None:
    """Each unit gets -D for the project's AMD selectors that guard a HIP branch in a file it reads
    (platform facts' own reading of that file) and that none of its files defines: a selector
    learned in one corner of a tree never changes another's branches, and a macro the code defines
    for itself is not a switch of the build."""
    if not selectors:
        return
    used: set[str] = set()
    for rel, files in reached.items():
        names: set[str] = set()
        defined: set[str] = set()   # an X-macro the unit defines itself (`#define OP(...)`) is no switch
        for path in files:
            names |= own.of(path).learned
            defined |= own.of(path).defined
        mine = [name for name in selectors if name in names and name not in defined]
        if mine:   # after the compiler: a driver's options and the file keep their order
            commands[rel] = [commands[rel][0], *(f"-D{name}" for name in mine), *commands[rel][1:]]
        used.update(mine)
    result.amd_selectors = tuple(name for name in selectors if name in used)


def _add_torch(commands: dict[str, list[str]], reached: dict[str, list[str]], units: list[Unit],
               opts: VerifyOptions, result: VerifyResult) -> None:
    """A unit that includes torch's headers gets the torch pack's include paths and the definitions a
    HIP CUDAExtension's build gives (torch_pack.py), first: without them it stops at torch's first
    header, its code never reached. No pack, or no such unit: the commands stay as they are."""
    users = [unit for unit in units if torch_pack.uses_torch(reached[unit.rel])]
    if not users:
        return
    pack = torch_pack.locate(opts.torch_headers, opts.rocm_headers)
    if pack is None:
        return
    lifted: list[str] = []
    for unit in users:
        cmd = commands[unit.rel]
        commands[unit.rel], old = torch_pack.lift_std([cmd[0], *pack.flags(unit.path), *cmd[1:]])
        lifted += [old] if old else []
    result.torch, result.torch_units = pack.describe() + torch_pack.lifted_line(lifted, pack), len(users)


def _amd_selectors(selectors: tuple[str, ...], defines: tuple[str, ...]) -> tuple[str, ...]:
    """The project's own AMD selectors (configured `amd-macros`, and those the pipeline learned:
    ggml's GGML_USE_HIP around `#include "vendors/hip.h"`), which its AMD build defines: a tree
    that already builds for AMD is compiled as that build compiles it, its HIP branches taken,
    not its CUDA ones (which convert leaves to the project). A name the user defines is theirs."""
    given = {d.split("=", 1)[0] for d in defines}
    return tuple(name for name in selectors if name not in given and not _GUARD_NAME.search(name))


# An include guard's name (HIP_INCLUDE_HIP_HIP_RUNTIME_H, __HIPRAND_H__, FOO_HPP_INCLUDED): the
# platform facts read `#ifdef` of one as a selector when its branch uses HIP, but defining it
# would empty the header it guards; a build switch is never spelled so.
_GUARD_NAME = re.compile(r"(?:^HIP_INCLUDE_|_(?:H|HH|HPP|HXX|CUH|INL)_*$|_INCLUDED_*$)")


def verify_tree(out: Path, opts: VerifyOptions,
                progress_factory: Callable[[int], Callable[[int], None] | None] | None = None) -> VerifyResult:
    """Compile every unit of the converted tree `out` and explain each failure; a tree whose own AMD
    build translates its sources as it builds (faiss's hipify.sh, torch's CUDAExtension) is compiled
    as that build sees it, portkit's conversion standing in (build_hipify.py)."""
    _check_options(out, opts)
    where = build_hipify.step(out, opts)
    torch = hipify_scope.extension_units(out, opts) if where and build_hipify.standin(where) != build_hipify.PORTKIT \
        else None
    if torch is not None:       # a CMake build beside the extension: each build's units as it compiles them
        return _two_builds(out, opts, where, torch, progress_factory)
    return _translated_run(out, opts, where, progress_factory)


def _translated_run(out: Path, opts: VerifyOptions, where: str, progress_factory,
                    exclude: frozenset[str] | None = None) -> VerifyResult:
    """The units of `out` compiled after the stand-in for `where`; with `exclude` (another build's
    units, compiled apart), those of a build without hipify, after portkit's conversion."""
    copy = hipify_scope.converted(out, opts) if exclude is not None else \
        build_hipify.translated(out, opts, where) if where else None
    exclude = exclude or frozenset()
    if copy is None:
        return _verify_tree(out, opts, progress_factory, exclude)
    result = _verify_tree(copy, build_hipify.inner_options(out, opts), progress_factory, exclude)
    return build_hipify.placed_back(result, out, copy, where, keep=opts.cache)


def _two_builds(out: Path, opts: VerifyOptions, where: str, torch: frozenset[str], progress_factory) -> VerifyResult:
    """The extension's own units after torch's stand-in, every other unit after portkit's conversion
    (hipify_scope.py); a run with nothing to compile (--only) is left out."""
    asked = opts.only if opts.only is not None else None
    mine = torch if asked is None else torch & asked
    cmake = None if asked is not None and asked <= torch else _translated_run(out, opts, "", progress_factory, torch)
    hipified = _translated_run(out, replace(opts, only=mine), where, progress_factory) if mine else None
    compiler = (cmake or hipified).compiler
    return hipify_scope.merged(cmake, hipified, where, build_hipify.standin(where), compiler.pack is not None)


def _verify_tree(out: Path, opts: VerifyOptions,
                 progress_factory: Callable[[int], Callable[[int], None] | None] | None = None,
                 exclude: frozenset[str] = frozenset()) -> VerifyResult:
    start = time.perf_counter()
    compiler = compilers.select(opts.compiler, opts.rocm_path, opts.rocm, opts.rocm_headers, opts.download)
    scan = resolve(rocm=_explained_release(opts, compiler), audit=True)
    target = scan.target
    project = pipeline.prepare([out], scan, opts.config)
    root, entries, skipped = project.root, project.entries, project.skipped
    sources: dict[str, bytes] = {}
    for entry in entries:
        if entry.is_source or entry.path.suffix.lower() == ".hip":   # .hip: a converted name (--rename)
            data, problem = read(entry)
            if problem is not None:
                skipped.append(problem)
            elif data is not None:
                sources[entry.rel] = data
    _refuse_cuda_source(root, sources)
    result = VerifyResult(root, compiler, target, opts.offload_arch, skipped=skipped)
    units = _units(root, entries, sources, opts, result, exclude)
    extra = tuple(f"-I{Path(i).absolute()}" for i in opts.includes) + tuple(f"-D{d}" for d in opts.defines)
    if opts.std is not None:
        extra += (f"-std={opts.std}",)
    result.std = opts.std
    result.default_std = next((f[5:] for f in compiler.hip_before if f.startswith("-std=")), None)
    commands = {unit.rel: _command(compiler, unit, opts, extra) for unit in units}
    reached = {unit.rel: _refuse_non_regular(root, unit, commands[unit.rel]) for unit in units}
    own = OwnSelectors(root, opts.source)
    project = replace(project, facts=replace(project.facts, amd_macros=own.keep(project.facts.amd_macros, sources)))
    _define_amd_selectors(commands, reached, _amd_selectors(project.facts.amd_macros, opts.defines), own, result)
    _add_torch(commands, reached, units, opts, result)
    progress = progress_factory(len(units)) if progress_factory else None
    cache = unitcache.UnitCache(root, compiler, opts.cache)
    prefixes = precompiled.Prefixes(compiler.pack and compiler.pack.root / "include", list(commands.values()), root)

    def run(unit: Unit) -> tuple[Unit, compilers.CompileRun, list[str]]:
        outcome, missing = _compile(commands[unit.rel], reached[unit.rel], root, opts.timeout, cache, prefixes)
        if progress:
            progress(1)
        return unit, outcome, missing

    facts = Facts(root, scan, opts.source.absolute() if opts.source else None, default_db(), project.facts,
                  pack=compiler.pack is not None, installed=compiler.rocm)
    pool = ThreadPoolExecutor(max_workers=opts.jobs)
    try:
        for unit, outcome, missing in pool.map(run, units):
            report = _report(unit, outcome, root, facts, opts.timeout)
            report.missing_headers = missing
            result.units.append(report)
    except BaseException:       # Ctrl-C, or an error: no compiler may outlive the run
        pool.shutdown(wait=False, cancel_futures=True)
        compilers.stop_all()
        raise
    pool.shutdown()
    cache.save()
    result.missing_libraries = packs.missing_libraries({u.rel: u.missing_headers for u in result.units},
                                                       compiler.pack is not None)
    result.seconds = time.perf_counter() - start
    return result


def _compile(cmd: list[str], reached: list[str], root: Path, timeout: float, cache: unitcache.UnitCache,
             prefixes: precompiled.Prefixes) -> tuple[compilers.CompileRun, list[str]]:
    """One unit's compile (through its prefix's PCH where that checks the same: precompiled.py) and
    the headers it cannot find, or what was kept for the same inputs."""
    key = unitcache.unit_key(cmd, reached, cache.identity) if cache.on else ""
    kept = cache.get(key) if cache.on else None
    if kept is not None:
        return kept
    outcome = prefixes.compile(cmd, root, timeout)
    missing: list[str] = []
    if outcome.returncode != 0:   # every header it cannot find, in one run (standins.py)
        missing = standins.missing_headers(outcome, cmd, root, timeout)
    cache.put(key, outcome, missing)
    return outcome, missing


def _not_a_folder(path: Path) -> str:
    return "not a directory" if path.exists() or path.is_symlink() else "no such file or directory"


def _check_options(out: Path, opts: VerifyOptions) -> None:
    """Bad usage, in one line, before anything runs."""
    if opts.jobs < 1:
        raise PortkitError(f"--jobs must be at least 1, not {opts.jobs}")
    if not out.is_dir():
        raise PortkitError(f"{out}: {_not_a_folder(out)} (verify takes the converted tree, e.g. the -o of convert)")
    if opts.source is not None and not opts.source.is_dir():
        raise PortkitError(f"{opts.source}: --source: {_not_a_folder(opts.source)}")
    if opts.std is not None and not STD.match(opts.std):
        raise PortkitError(f"--std: {opts.std!r} is not a C++ standard (c++17, gnu++20, ...)")


_CUDA_USE = re.compile(rb"#\s*include\s*[<\"](?:cuda_runtime(?:_api)?|cuda|cublas_v2|cublasLt|cufft|curand|cusparse)\.h[>\"]"
                       rb"|\bcuda(?:Malloc|Memcpy|Free|DeviceSynchronize|GetLastError|Stream\w*|Event\w*)\s*\(")
_HIP_USE = re.compile(rb"#\s*include\s*[<\"]hip/|\bhip[A-Z]\w*\s*\(")


def _refuse_cuda_source(root: Path, sources: dict[str, bytes]) -> None:
    """A tree that was never converted (CUDA calls and includes, no HIP anywhere) is refused with
    one line: compiling it as HIP gives a page of errors that say nothing of the port (issue 32)."""
    cuda = sorted(rel for rel, data in sources.items() if _CUDA_USE.search(data))
    if cuda and not any(_HIP_USE.search(data) for data in sources.values()):
        raise PortkitError(f"{root}: this is CUDA source ({len(cuda)} of {len(sources)} files use CUDA, e.g. {cuda[0]}, "
                           f"and none HIP): run `portkit convert {root} -o OUT` first, then verify OUT")


def _units(root: Path, entries, sources: dict[str, bytes], opts: VerifyOptions, result: VerifyResult,
           exclude: frozenset[str] = frozenset()) -> list[Unit]:
    """The units to compile with their flags (but `exclude`: another build's, compiled apart);
    `result` learns the configurations they come from."""
    if opts.compile_commands is not None:
        units, result.unmatched = database_units(root, entries, compdb.load(opts.compile_commands), opts.source)
        if not units:
            raise PortkitError(f"{opts.compile_commands}: none of its {len(result.unmatched)} files is in {root} "
                               f"(give the CUDA tree it was written for with --source)")
    else:
        tree = TreeConfig(root, opts.offload_arch) if opts.build_config else None
        unbuilt = (lambda rel: tree.left_out_why(rel) is not None) if tree is not None else None
        units = replaced.not_replaced(tree_units(root, entries, sources, unbuilt=unbuilt), entries, result.skipped)
    if opts.only is not None or exclude:
        units = [u for u in units if (opts.only is None or u.rel in opts.only) and u.rel not in exclude]
    if not units:
        raise PortkitError(f"{root}: nothing to compile (no .cu or .hip files, and no C++ files that use HIP)")
    if opts.compile_commands is not None:
        result.configurations = database_config(units, opts.compile_commands)
    elif opts.build_config:
        units, result.configurations = configured(_in_amd_build(units, tree, result), tree)
    if opts.std is not None:        # --std wins over every standard of the build
        units = [replace(u, flags=tuple(f for f in u.flags if not f.startswith("-std="))) for u in units]
    return units


def _in_amd_build(units: list[Unit], tree: TreeConfig, result: VerifyResult) -> list[Unit]:
    """The units the project's own HIP build compiles: one its CMake removes from the sources in
    the HIP branch, or one in a folder only its NVIDIA branch adds, is skipped and said so, never
    compiled into errors no AMD build would meet."""
    kept = []
    for unit in units:
        why = tree.left_out_why(unit.rel)
        if why is None:
            kept.append(unit)
        else:
            result.skipped.append(Skipped(unit.rel, f"not compiled: the project's AMD build leaves it out "
                                                    f"({why[0]}: {why[1]})", False))
    return kept


def _command(compiler: compilers.Compiler, unit: Unit, opts: VerifyOptions, extra: tuple[str, ...]) -> list[str]:
    """The unit's compile command; refused, before anything runs, when a wrapper would hand one of
    its arguments (from the tree or the database) to a shell."""
    cmd = compilers.command(compiler, unit.path, unit.flags, opts.offload_arch, extra)
    bad = compilers.unsafe(compiler, cmd)
    if bad is not None:
        raise PortkitError(f"{unit.path}: not compiled: {compiler.path} would pass the argument {bad!r} to a shell, "
                           f"which could run part of it as a command; use Debian's or ROCm's hipcc, or "
                           f"--compiler clang++ --rocm-path DIR")
    return cmd


def _refuse_non_regular(root: Path, unit: Unit, cmd: list[str]) -> list[str]:
    """The project files the unit's directives reach (the cache's key), unless they name a device,
    FIFO or /proc file, or a file past 64 MiB: the compiler would read `/dev/zero` until memory runs
    out and wait on a FIFO forever, so the run stops before any compile starts, as for an argument a
    shell would see (worker_includes.py)."""
    blocked = worker_includes.scan(str(unit.path), cmd, str(root))
    if blocked.notes:
        raise PortkitError(f"{unit.path}: not compiled: {blocked.notes[0]}; a compiler reads such a file to its "
                           f"end, or waits on a FIFO forever")
    return blocked.files


def _report(unit: Unit, outcome: compilers.CompileRun, root: Path, facts: Facts, timeout: float) -> UnitReport:
    report = UnitReport(unit.rel, "compiled", outcome.seconds, outcome.command, unit.flags_from)
    if outcome.timed_out:
        report.status = "timeout"
        report.output = f"the compiler did not finish in {timeout:g} s"
        return report
    if outcome.returncode == 0:
        return report
    report.status = "failed"
    for diagnostic in parse(outcome.output):
        error = _error(locate(diagnostic, root, root), unit.rel, facts)
        error.include_chain = include_chain(diagnostic, root, root)
        report.errors.append(error)
    consequences(report.errors)
    failed_declarations(report.errors, lambda rel: facts.of(rel).lines)
    name_decisions(report.errors)
    if not report.errors:
        report.output = outcome.output.strip()[-2000:]
    elif all(_missing_library(e) for e in report.errors):
        report.status = "not_reached"
    return report


_QUOTED = re.compile(r"'([A-Za-z_][A-Za-z0-9_:]*)")


def consequences(errors: list[ErrorReport]) -> None:
    """An unexplained error that follows from an explained one is its consequence, not a gap: on
    the same line (a call whose argument failed), or quoting a name an earlier explained error
    quotes or is about (a type that failed to declare, a macro an #error asked for). Issue 32:
    4 of train_gpt2.cu's 12 errors were such cascades, marked "unexplained, please report"."""
    causes: list[tuple[ErrorReport, set[str]]] = []
    for error in errors:
        names = set(_QUOTED.findall(error.message))
        if error.findings:   # what it quotes, and what its findings are about (the macro an #error names)
            causes.append((error, names | {f.subject for f in error.findings}))
            continue
        for cause, cause_names in causes:
            if (cause.rel, cause.line) == (error.rel, error.line) or names & cause_names:
                error.consequence_of = f"{cause.rel}:{cause.line}"
                break


def name_decisions(errors: list[ErrorReport]) -> None:
    """Each error's decision: the first of its findings that the estimate prices as a site of one
    (estimate/decisions.decision_of, the estimate's own test), so that a unit failing only on them
    is counted apart from one failing on a gap or on a site to fix (UnitReport.failed_on_decision)."""
    eco, model = ecosystem.default(), effort.default_model()
    for error in errors:
        error.decision = next(filter(None, (decisions.decision_of(f, eco, model) for f in error.findings)), "")


# a header of a ROCm library or of another dependency that is not installed here: the environment's
# gap, not the port's (a CUDA header left in the code is the port's, and stays a failure)
_LIBRARY_HEADER_CODES = {Code.ROCM_LIBRARY_NOT_INSTALLED, Code.INCLUDE_NOT_FOUND}


def _missing_library(error: ErrorReport) -> bool:
    return "file not found" in error.message and bool(error.findings) \
        and all(f.code in _LIBRARY_HEADER_CODES for f in error.findings)


def _error(located: Located, unit_rel: str, facts: Facts) -> ErrorReport:
    d = located.diagnostic
    error = ErrorReport(located.rel, located.line, located.column, d.severity, d.message)
    if located.rel is not None:
        error.source_line, error.source_text = facts.of(located.rel).source_line(located.line)
    error.findings = explain(located, unit_rel, facts)
    return error


__all__ = ["VerifyOptions", "VerifyResult", "UnitReport", "ErrorReport", "verify_tree"]
