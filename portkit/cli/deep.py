"""The deep-mode options of `audit` and `convert` (--engine clang), and their checks."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.errors import PortkitError

ENGINES = ("tree-sitter", "clang")


def add_options(p: argparse.ArgumentParser, with_flags: bool) -> None:
    """--engine and the toolchain options; -p/-I/-D too unless the command has them already."""
    g = p.add_argument_group("deep mode (--engine clang)")
    g.add_argument("--engine", choices=ENGINES, default="tree-sitter",
                   help="tree-sitter (default: no CUDA install needed) or clang: libclang preprocesses "
                        "each unit for one configuration and adds what macros, #if branches and types "
                        "hide (pip install 'portkit[deep]')")
    if with_flags:
        g.add_argument("-p", "--compile-commands", type=Path, metavar="BUILD",
                       help="a build directory with compile_commands.json (or the file): the configuration "
                            "to preprocess; otherwise include directories are inferred from the tree")
        g.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR",
                       help="an include directory for every unit")
        g.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                       help="a macro for every unit; with the default engine too: #if branches false under "
                            "the -D/-U given are left out (docs/platforms.md)")
        g.add_argument("-U", dest="undefines", action="append", default=[], metavar="NAME",
                       help="a macro undefined for every unit (like -D, with either engine)")
    g.add_argument("--cuda-path", type=Path, metavar="DIR",
                   help="the CUDA toolkit whose headers declare the API (default $CUDA_PATH or /usr/local/cuda)")
    g.add_argument("--clang-resource-dir", type=Path, metavar="DIR",
                   help="clang's resource headers (default: from the newest clang on PATH, -print-resource-dir)")
    g.add_argument("--cuda-arch", metavar="SM",
                   help="the GPU of the device pass, which decides __CUDA_ARCH__ branches (default sm_80)")


def options(args: argparse.Namespace, jobs: int, timeout: float):
    """DeepOptions for --engine clang, None for tree-sitter; PortkitError for flags that need clang."""
    if args.engine != "clang":
        asked = [name for name, value in (("--cuda-path", args.cuda_path),
                                          ("--clang-resource-dir", args.clang_resource_dir),
                                          ("--cuda-arch", args.cuda_arch))
                 if value is not None]
        if hasattr(args, "active_only"):   # convert: -p/-I/-D are verify's; -D/-U also --active-only's
            if not args.verify and (args.compile_commands or args.includes or (args.defines and not args.active_only)):
                asked.append("-p/-I" if args.active_only else "-p/-I/-D")
        elif getattr(args, "undefines", None) is not None:   # audit: -D/-U configure the platform model
            if args.compile_commands or args.includes:
                asked.append("-p/-I")
        if asked:
            raise PortkitError(f"{', '.join(asked)}: only with --engine clang")
        return None
    from ..commands.deep import toolchain
    from ..commands.deep.engine import DEFAULT_ARCH, DeepOptions
    arch = args.cuda_arch or DEFAULT_ARCH
    if not arch.startswith("sm_") or not arch[3:].rstrip("af").isdigit():
        raise PortkitError(f"--cuda-arch {arch}: expected an sm_NN name, e.g. sm_80")
    flags = (tuple(f"-I{Path(d).absolute()}" for d in args.includes) + tuple(f"-D{d}" for d in args.defines)
             + tuple(f"-U{u}" for u in getattr(args, "undefines", None) or ()))
    return DeepOptions(toolchain=toolchain.find(args.cuda_path, args.clang_resource_dir),
                       database=args.compile_commands, flags=flags, arch=arch,
                       timeout=timeout, jobs=jobs)


def notes(deep) -> list[str]:
    """The lines the user reads about the deep pass (stderr, one each)."""
    if deep is None:
        return []
    head = (f"deep mode: {deep.units} unit(s) through clang in {deep.seconds:.1f} s; "
            f"{deep.added} finding(s) added, {deep.dropped_inactive} left out in #if branches "
            f"this configuration does not compile, {deep.settled_partial} partial-parse note(s) settled")
    return [head] + deep.notes()
