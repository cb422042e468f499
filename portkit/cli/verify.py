"""Command line of `portkit verify`, and the verify options `portkit convert --verify` shares."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .common import add_file_set, add_jobs, file_set, seconds
from ..core.errors import PortkitError

if TYPE_CHECKING:
    from ..commands.verify import VerifyOptions


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify", help="compile a converted tree with a ROCm compiler and explain every failure",
        description="Compile every translation unit of a converted tree for an AMD GPU "
                    "(HIP_PLATFORM=amd hipcc -x hip --offload-arch=... -c FILE -o /dev/null). Each failure is "
                    "shown with the compiler's errors, the CUDA line they come from (with --source) and the "
                    "portkit finding that explains them; a failure no finding explains is marked as a gap in "
                    "portkit's rules or tables. Exit 0 when everything compiles, 1 when a unit fails, 2 on "
                    "errors (no compiler, bad options).")
    p.add_argument("out", type=Path, metavar="OUT", help="the converted tree (the -o of portkit convert)")
    p.add_argument("--source", type=Path, metavar="SRC",
                   help="the CUDA tree OUT was converted from: errors also show the CUDA line")
    p.add_argument("--rocm", metavar="X.Y",
                   help="the ROCm release to explain errors against (default: the compiler's)")
    p.add_argument("--offload-arch", action="append", metavar="GFX",
                   help="AMD GPU targets, comma-separated or repeated (default gfx90a)")
    add_options(p)
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the report to FILE")
    add_jobs(p, "compilers run at once")
    add_file_set(p)   # the files under OUT, chosen as convert and audit choose theirs
    p.add_argument("--no-cache", action="store_false", dest="cache",
                   help="compile every unit, neither reusing nor keeping results of units whose files did not "
                        "change (PORTKIT_NO_CACHE=1 does the same)")
    p.add_argument("-q", "--quiet", action="store_true", help="text format: print only the summary line")
    g = p.add_argument_group("configuring (verify --configure)")
    g.add_argument("--configure", action="store_true",
                   help="instead of compiling units, configure OUT's top-level CMakeLists.txt for the HIP build in a "
                        "temporary folder and say in one line whether it configured, or its first error and what it "
                        "wants (a ROCm package, a newer CMake, a submodule, the network); --timeout limits the whole "
                        "configure, --offline blocks its downloads (docs/verify.md)")
    g.add_argument("--cmake", metavar="CMAKE", help="the CMake to configure with (default: the newest 3.21+ on PATH "
                                                    "or beside this Python)")
    g.add_argument("--cmake-define", action="append", default=[], metavar="NAME=VALUE",
                   help="a cache entry for the configure, as cmake -D (the project's HIP option: GGML_HIP=ON)")


def add_options(p: argparse.ArgumentParser) -> None:
    """The compiler and flag options, shared with `convert --verify`."""
    g = p.add_argument_group("compiling (verify)")
    g.add_argument("--compiler", default="hipcc", metavar="CC",
                   help="hipcc (default) or a clang++ that targets AMD GPUs")
    g.add_argument("--rocm-path", metavar="DIR", help="the ROCm installation, for a clang++ compiler")
    g.add_argument("--rocm-headers", metavar="DIR",
                   help="a ROCm header pack (or a folder of packs by release) for --rocm X.Y when that release is "
                        "not installed: clang checks the code against it, syntax only (docs/verify.md; also "
                        "$PORTKIT_ROCM_HEADERS)")
    g.add_argument("--torch-headers", metavar="DIR|FILE",
                   help="the torch header pack (folder or .tar.xz) for units that include torch's headers "
                        "(torch/extension.h, ATen/, c10/); also $PORTKIT_TORCH_HEADERS, or one in the "
                        "--rocm-headers folder (docs/verify.md)")
    g.add_argument("--offline", dest="download", action="store_false",
                   help="never download a release's header pack on first use (also PORTKIT_OFFLINE=1)")
    g.add_argument("-p", "--compile-commands", type=Path, metavar="BUILD",
                   help="a build directory with compile_commands.json (or the file): include paths and "
                        "macros per file; otherwise include directories are inferred from the tree")
    g.add_argument("--std", metavar="STD",
                   help="the language standard of every unit (c++17 ...), over the build's own")
    g.add_argument("--no-build-config", dest="build_config", action="store_false",
                   help="do not read the standard, -I and -D from the tree's CMakeLists.txt or Makefile")
    g.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR",
                   help="an include directory for every unit")
    g.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="a macro for every unit")
    g.add_argument("--timeout", type=seconds("--timeout"), default=300.0, metavar="SECONDS",
                   help="time limit per unit (default 300)")


def options(args: argparse.Namespace, source: Path | None = None, only: frozenset[str] | None = None,
            jobs: int | None = None) -> "VerifyOptions":
    from ..project.settings import offload_archs, rocm_release
    from ..commands.verify import VerifyOptions
    if args.timeout <= 0:
        raise PortkitError(f"--timeout must be positive, not {args.timeout:g}")
    return VerifyOptions(
        compiler=args.compiler, rocm_path=args.rocm_path, offload_arch=offload_archs(args.offload_arch),
        compile_commands=args.compile_commands, includes=tuple(args.includes), defines=tuple(args.defines),
        source=source, rocm=rocm_release(args.rocm), jobs=jobs or args.jobs, timeout=args.timeout,
        only=only, std=args.std, build_config=args.build_config, rocm_headers=args.rocm_headers,
        torch_headers=args.torch_headers, download=args.download, config=_file_set(args), cache=getattr(args, "cache", True))


def _file_set(args: argparse.Namespace):
    """verify's --exclude and --no-respect-gitignore (not convert --verify's: it compiles what it wrote)."""
    from ..project.config import Config
    return file_set(Config(), args) if hasattr(args, "respect_gitignore") and hasattr(args, "out") else Config()


def run(args: argparse.Namespace, progress_factory) -> int:
    from rich.console import Console

    from ..report import verify as report
    from ..commands.verify import verify_tree

    if args.configure:
        return _configure(args)
    opts = options(args, source=args.source)
    result = verify_tree(args.out, opts, progress_factory=progress_factory)
    if args.format == "json":
        import io
        buffer = io.StringIO()
        report.render_json(result, buffer)
        _write(buffer.getvalue(), args.output)
    elif args.output is not None:
        import io
        buffer = io.StringIO()
        report.render_text(result, Console(file=buffer, width=120, highlight=False, soft_wrap=True))
        _write(buffer.getvalue(), args.output)
    elif args.quiet:
        print(report.quiet_line(result))
    else:
        report.render_text(result, Console(highlight=False, soft_wrap=True))
    return 0 if result.ok else 1


def _configure(args: argparse.Namespace) -> int:
    """verify --configure: one line (or the JSON document); exit 0 configured, 1 not."""
    from ..project.settings import offload_archs
    from ..commands.results import ConfigureOptions
    from ..commands.verify.configure import configure_tree
    from ..report import configure as report

    opts = ConfigureOptions(cmake=args.cmake, rocm_path=args.rocm_path, offload_arch=offload_archs(args.offload_arch),
                            source=args.source, defines=tuple(args.cmake_define), download=args.download,
                            timeout=args.timeout)
    result = configure_tree(args.out, opts)
    if args.format == "json":
        import io
        buffer = io.StringIO()
        report.render_json(result, buffer)
        _write(buffer.getvalue(), args.output)
    else:
        _write(report.line(result) + "\n", args.output)
    return 0 if result.ok else 1


def _write(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from ..core.named_output import write_output
    write_output(output, text.encode("utf-8"))
