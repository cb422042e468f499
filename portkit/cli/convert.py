"""`portkit convert` on the command line: its options, the run, --compat-header and --verify."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from . import deep as cli_deep, verify as cli_verify
from .common import (add_config, add_file_set, add_file_timeout, add_jobs, add_mappings, add_no_cache, add_platform_model,
    check_file_timeout, configuration, nothing_read, progress_factory, say_scope)
from ..core.errors import PortkitError
from ..report.safe_text import safe, safe_diff


def add_parser(sub: argparse._SubParsersAction) -> None:
    newest = "the newest release the tables know"
    p = sub.add_parser(
        "convert", help="convert CUDA sources to HIP",
        description="Convert CUDA C/C++ sources (one file or whole trees) to HIP, and their build files "
                    "(CMakeLists.txt and *.cmake to CMake's HIP language, Makefiles from nvcc to hipcc, "
                    "setup.py CUDAExtension flags; see docs/build.md). Only CUDA names and nvcc options "
                    "change; every other byte is kept. Exit 0 on success, 1 with --check when "
                    "something would change, 2 on errors.")
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or directories")
    _add_outputs(p)
    _add_spelling(p, newest)
    _add_layout(p)
    add_mappings(p)
    add_config(p)
    add_file_set(p)
    add_jobs(p)
    add_file_timeout(p)
    add_no_cache(p)
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="the summary as text (default) or as one JSON document on standard output: files changed, "
                        "unchanged and written, findings by code, what needs a person (docs/ci.md)")
    p.add_argument("--verify", action="store_true",
                   help="with -o OUT: then compile what was written with a ROCm compiler and explain every "
                        "failure, as `portkit verify OUT --source SRC` does (exit 1 when a unit fails)")
    cli_verify.add_options(p)
    cli_deep.add_options(p, with_flags=False)


def _add_outputs(p: argparse.ArgumentParser) -> None:
    """Where the result goes."""
    out = p.add_argument_group("where the result goes (choose one)")
    out.add_argument("-o", "--output", type=Path, metavar="OUT",
                     help="mirror the input tree into OUT (files without CUDA are copied unchanged); for one "
                          "input file, an OUT with a source suffix (out/main.hip) is the file written, its helper "
                          "header beside it; '-' writes one converted file to standard output")
    out.add_argument("--in-place", action="store_true", help="rewrite the files where they are (atomically)")
    out.add_argument("--backup", action="store_true",
                     help="with --in-place, keep each original as NAME.orig (an existing one is kept)")
    out.add_argument("--force", action="store_true",
                     help="with --in-place, also rewrite read-only files (without it they are left as they are, "
                          "with a note)")
    out.add_argument("--diff", action="store_true", help="print a unified diff, write nothing")
    out.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file would change")


def _add_spelling(p: argparse.ArgumentParser, newest: str) -> None:
    """What the converted code says: launches, builtins, the target release, the #if branches, fixes."""
    p.add_argument("--launch-syntax", choices=("cuda", "hip"), default="cuda",
                   help="keep <<<...>>> launches (cuda, default: HIP compiles them) or rewrite them to "
                        "hipLaunchKernelGGL (hip)")
    p.add_argument("--builtins", choices=("cuda", "hip"), default="cuda",
                   help="keep threadIdx.x, blockIdx.y, blockDim.z, gridDim.x (cuda, default: HIP accepts "
                        "them) or write the legacy HIP spellings hipThreadIdx_x, hipBlockIdx_y ... (hip; with "
                        "--launch-syntax hip this is the classic hipify output). ROCm: " + _builtins_help())
    p.add_argument("--rocm", metavar="X.Y",
                   help=f"target ROCm release: names HIP only has in later releases are left and "
                        f"reported (default: {newest})")
    add_platform_model(p)
    p.add_argument("--rewrite-guards", action="store_true",
                   help="rewrite CUDA version guards so the AMD build takes the branch a current nvcc build takes "
                        "(#if CUDA_VERSION >= X -> ... || defined(__HIP_PLATFORM_AMD__), #ifdef __CUDA_ARCH__ -> "
                        "... || defined(__HIP_DEVICE_COMPILE__)) when every CUDA name in that branch converts at "
                        "--rocm; off by default, since it changes what the AMD build compiles (PK103)")
    p.add_argument("--fix", metavar="FAMILY[,FAMILY]", action="append", default=[],
                   help="apply the fixes of a family's rules (docs/convert.md): warp rewrites 32-lane warp idioms "
                        "(shuffles from 16, lane & 31, tid >> 5, 32-bit ballots, shared arrays of 32, #define "
                        "WARP_SIZE 32) for 64-lane AMD wavefronts, which changes what the code computes "
                        "(docs/warp-fix.md); build writes the HIP names of CUDA-only CMake constructs the build "
                        "migration leaves (PK504). Off by default")
    p.add_argument("--active-only", action="store_true",
                   help="convert only the #if branches the configuration given with -D/-U compiles (hipify-clang's "
                        "--skip-excluded-preprocessor-conditional-blocks); the others stay byte for byte. With the "
                        "default engine a condition portkit cannot evaluate counts as compiled; with --engine clang "
                        "the preprocessor decides (docs/platforms.md)")
    p.add_argument("-U", dest="undefines", action="append", default=[], metavar="NAME",
                   help="with --active-only (or --engine clang): a macro the configuration leaves undefined")


def _add_layout(p: argparse.ArgumentParser) -> None:
    """Which libraries and GPUs, file names, headers and build files."""
    p.add_argument("--roc", action="store_true", dest="prefer_roc",
                   help="port cuBLAS, cuSPARSE, cuRAND, cuSOLVER and cuDNN to rocBLAS, rocSPARSE, rocRAND, "
                        "rocSOLVER and MIOpen as hipify-clang --roc does; a name the roc library lacks is "
                        "left and reported, never sent to the hip* library (docs/mapping-format.md)")
    p.add_argument("--offload-arch", action="append", metavar="GFX",
                   help="AMD GPU targets for the build files, comma-separated or repeated (default gfx90a = "
                        "MI200; gfx942 = MI300, gfx950 = MI350/MI355). CUDA's sm_XX are never mapped to a chip")
    p.add_argument("--rename", action="store_true",
                   help="write .cu files as .hip and .cuh as .hip.h (the ROCm projects' layout), with the "
                        "project's own #include lines and the sources CMake files and Makefiles list renamed to "
                        "match; a new name that is taken (a.cu beside a.hip) is reported and never overwritten. "
                        "Without it names are kept: hipcc compiles .cu with -x hip")
    p.add_argument("--rename-map", metavar="OLD=NEW[,...]",
                   help="the suffixes --rename uses (default .cu=.hip,.cuh=.hip.h), e.g. .cu=.hip,.cuh=.hpp")
    p.add_argument("--compat-header", type=Path, metavar="FILE",
                   help="single-source mode: keep the CUDA sources and generate FILE (inside the tree), a header "
                        "of #defines mapping exactly the CUDA names they use to HIP, for AMD builds only "
                        "(__HIP_PLATFORM_AMD__ or __HIP__ defined); each CUDA #include is guarded to take FILE on AMD. "
                        "With --in-place, --diff or --check")
    p.add_argument("--convert-amd-built", action="store_true",
                   help="convert the files the tree's own AMD build already compiles (a CMake enable_language(HIP), "
                        "a setup.py IS_HIP_EXTENSION branch, an AMD directory building the CUDA one: docs/platforms.md); "
                        "by default they stay byte for byte, so the NVIDIA build keeps working")
    p.add_argument("--extension-sources", choices=("cuda", "hip"), default="cuda",
                   help="the sources a PyTorch CUDAExtension compiles: keep them CUDA, writing only the edits torch's "
                        "build-time hipify cannot make (default: PyTorch for ROCm hipifies them as it builds), or "
                        "convert them to HIP like any other source (docs/build.md)")
    p.add_argument("--no-polyfills", action="store_false", dest="polyfills",
                   help="leave the CUDA names the --rocm release lacks as they are (reported) instead of defining "
                        "the small ones in a generated portkit_polyfills.h at the root of the output (docs/polyfills.md)")
    p.add_argument("--no-build-files", action="store_false", dest="build_files",
                   help="leave CMake files, Makefiles and setup.py as they are (they are still copied with -o)")


def _builtins_help() -> str:
    try:
        from ..core.tables.builtins import help_text
        return help_text()
    except PortkitError as exc:   # a broken table must not break --help
        return str(exc)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ..commands.convert import configured, convert_paths
    from ..report.terminal import render_convert
    from ..project.rename import parse_map
    from ..rules import fix_names   # --fix FAMILY[,FAMILY]: each a family some rule declares
    if args.compat_header is not None:
        return _run_compat(args)
    if args.rename_map is not None and not args.rename:
        raise PortkitError("--rename-map needs --rename")
    defines, undefines = _configuration(args)
    cfg = _project_configuration(args)
    scan = dict(launch_syntax=args.launch_syntax, prefer_roc=args.prefer_roc, offload_arch=args.offload_arch,
                build_files=args.build_files, builtins=args.builtins, file_timeout=check_file_timeout(args.file_timeout),
                platform_model=args.platform_model, rewrite_guards=args.rewrite_guards, polyfills=args.polyfills,
                fixes=fix_names(args.fix), active_only=args.active_only, defines=defines, undefines=undefines)
    opts = configured(cfg, rocm=args.rocm, mappings=args.mappings, scan=scan, output=args.output,
                      in_place=args.in_place, backup=args.backup, force=args.force, diff=args.diff, check=args.check,
                      jobs=args.jobs, rename=parse_map(args.rename_map) if args.rename else None,
                      deep=cli_deep.options(args, args.jobs, check_file_timeout(args.file_timeout)),
                      leave_amd_built=not args.convert_amd_built, cache=args.cache, extension_sources=args.extension_sources,
                      needs_person=not (args.quiet and args.format == "text"))   # -q text shows no summary
    data_on_stdout = args.diff or (args.output is not None and str(args.output) == "-")
    if args.verify and (args.output is None or data_on_stdout):
        raise PortkitError("--verify needs -o OUT (a directory): it compiles the converted tree")
    if args.format == "json" and (data_on_stdout or args.verify):
        raise PortkitError("--format json writes the summary to standard output: not with --diff, -o - or --verify")
    # bad verify options fail before writing; the release asked for is the conversion's (--rocm, else the configuration's)
    verify_opts = replace(cli_verify.options(args), rocm=opts.scan.rocm) if args.verify else None
    # the summary goes to stderr whenever stdout carries data (a diff, a converted file)
    console = Console(stderr=data_on_stdout, highlight=False, soft_wrap=True)
    result = convert_paths(args.paths, opts, progress_factory=progress_factory(Console(stderr=True)),
                           stdout=sys.stdout.buffer)
    for chunk in result.diff_text:   # names and lines from the tree: no control character reaches a terminal
        sys.stdout.buffer.write(safe_diff(chunk))
    sys.stdout.flush()
    mode = ("check" if args.check else "diff" if args.diff else
            "in-place" if args.in_place else "stdout" if data_on_stdout else "output")
    if args.format == "json":
        from ..report import convert_json
        convert_json.render(result, sys.stdout, mode)
        sys.stdout.flush()
        for s in result.errors:
            print(f"portkit: {safe(s.rel)}: {safe(s.reason)}", file=sys.stderr)
    elif not args.quiet:
        render_convert(result, console, mode)
        say_scope(cfg, result.left_out)
        for line in cli_deep.notes(result.deep):
            print(f"portkit: {safe(line)}", file=sys.stderr)
    else:
        for s in result.errors:
            print(f"portkit: {safe(s.rel)}: {safe(s.reason)}", file=sys.stderr)
    if _empty(args, result) or result.errors:
        return 2
    if args.check and (result.changed or (result.polyfills is not None and result.polyfills.changed)):
        return 1
    if verify_opts is not None:
        return _verify_converted(result, args, verify_opts, console)
    return 0


def _project_configuration(args: argparse.Namespace):
    """The configuration of the paths (--config, else the nearest above them: a run from elsewhere
    applies the project's mapping files all the same), with the command line's file-set flags (its
    `rocm` is the target where --rocm is not given, as for audit and check, --verify's too)."""
    return configuration(args)


def _empty(args: argparse.Namespace, result) -> bool:
    """A run that read no file says so; with --check it is an error (exit 2): a check of nothing
    must not pass as "nothing would change". Files left as they are on purpose (the tree's AMD
    build compiles them, a carried library's copy) were found, and so were files that failed (an
    internal error, a time limit, unreadable): that run is not empty. True: exit 2."""
    if result.scans or result.errors or result.amd_built or result.carried:
        return False
    if args.check or not args.quiet:
        print(f"portkit: {'error' if args.check else 'warning'}: {nothing_read('convert', args.paths)}",
              file=sys.stderr)
    return args.check


def _configuration(args: argparse.Namespace) -> tuple[tuple, tuple]:
    """--active-only's -D/-U (the configured world of the platform model); without it -D only
    reaches --verify's compiler and --engine clang, and -U only the latter."""
    from ..engine.platform import facts as platform_facts
    if not args.active_only:
        if args.undefines and args.engine != "clang":
            raise PortkitError("-U: only with --active-only or --engine clang")
        return (), ()
    if not (args.defines or args.undefines or args.engine == "clang"):
        raise PortkitError("--active-only needs the configuration: -D/-U, or --engine clang (with -p for the "
                           "build's own)")
    return platform_facts.parse_defines(args.defines, args.undefines)


def _run_compat(args: argparse.Namespace) -> int:
    """convert --compat-header: the generated header and the guarded includes (portkit/commands/compat.py)."""
    from rich.console import Console

    from ..commands.compat import compat_paths, write_compat
    from ..project.settings import resolve
    from ..commands.convert import diff_bytes
    from ..core.files import read_regular
    from ..report.terminal import render_compat
    if args.output is not None or not (args.in_place or args.diff or args.check):
        raise PortkitError("--compat-header keeps the sources where they are: use it with --in-place, --diff "
                           "or --check (not -o)")
    if args.format != "text":
        raise PortkitError("--compat-header writes its summary as text: --format json does not apply")
    if args.rename or args.builtins != "cuda" or args.launch_syntax != "cuda" or args.verify or args.active_only:
        raise PortkitError("--compat-header leaves the CUDA code as it is: --rename, --builtins, --launch-syntax, "
                           "--active-only and --verify do not apply")
    if args.jobs < 1:
        raise PortkitError(f"--jobs must be at least 1, not {args.jobs}")
    if args.force and not args.in_place:
        raise PortkitError("--force only applies with --in-place")
    cfg = _project_configuration(args)
    options = resolve(cfg, rocm=args.rocm, prefer_roc=args.prefer_roc, mappings=args.mappings,
                      offload_arch=args.offload_arch, build_files=args.build_files)
    result = compat_paths(args.paths, args.compat_header, options, args.jobs, config=cfg)
    if args.diff:
        for f in result.changed:
            sys.stdout.buffer.write(safe_diff(diff_bytes(read_regular(f.entry.path, f.entry.named), f.output or b"",
                                                         f.entry.rel, f.entry.rel)))
        if result.header_changed:
            sys.stdout.buffer.write(safe_diff(diff_bytes(result.old_header or b"", result.header_text,
                                                         result.header_rel, result.header_rel)))
        sys.stdout.flush()
    if args.in_place:
        write_compat(result, args.force)
    if not args.quiet:
        render_compat(result, Console(stderr=args.diff, highlight=False, soft_wrap=True), args.in_place)
    for s in result.skipped:
        if s.error:
            print(f"portkit: {safe(s.rel)}: {safe(s.reason)}", file=sys.stderr)
    if any(s.error for s in result.skipped):
        return 2
    if args.check and (result.changed or result.header_changed):
        return 1
    return 0


def _verify_converted(result, args: argparse.Namespace, verify_opts, console) -> int:
    """convert --verify: compile the units this run wrote, their CUDA lines from the input tree."""

    from rich.console import Console

    from ..report import verify as report
    from ..commands.verify import verify_tree
    only = frozenset(o.entry.rel for o in result.outcomes if o.skipped is None)
    # compiled against the conversion's target release where its headers are here (installed, a
    # header pack); else with the installed compiler, explained against its own release
    opts = replace(verify_opts, source=result.root, only=only, explain_as_compiled=True)
    verified = verify_tree(args.output, opts, progress_factory=progress_factory(Console(stderr=True), "compiling"))
    if args.quiet:
        print(report.quiet_line(verified))
    else:
        console.print()
        report.render_text(verified, console)
    return 0 if verified.ok else 1
