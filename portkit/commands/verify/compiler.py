"""The ROCm compiler verify runs: finding it, its ROCm release, and one compile of one unit.

hipcc is the default (it knows the ROCm installation); a clang++ works too, given
`--rocm-path` when ROCm is not where clang looks. HIP_PLATFORM=amd is always set: hipcc
otherwise picks the NVIDIA path whenever it sees nvcc, and would verify nothing.

No argument ever goes through a shell. hipcc (a Perl script in Debian and in ROCm 5) joins its
arguments into one string for system() and leaves some unescaped (those ending in .a or .lo,
response files), so a directory or a compile_commands.json flag named `x$(cmd).a` would run
`cmd`. verify therefore asks hipcc once, with fixed arguments, which clang it runs and which
options it adds, and runs that clang itself with an argument list: the same command hipcc would
run, without the shell. A hipcc that does not say (another wrapper) is still run, but only with
arguments in which no shell would see anything (`unsafe` names the first that is not).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ...core.errors import PortkitError
from ...core.tables.mappings import Version, format_version
from . import packs
from .packs import Pack

INSTALL_HINT = ("install one: apt-get install hipcc libamdhip64-dev rocm-device-libs (Debian/Ubuntu), "
                "or a ROCm release from https://rocm.docs.amd.com")
_HIP_VERSION = re.compile(r"HIP version:\s*(\d+)\.(\d+)")
_HEADER_VERSION = re.compile(r"#define\s+HIP_VERSION_(MAJOR|MINOR)\s+(\d+)")


@dataclass(frozen=True)
class Compiler:
    path: str
    kind: str                        # "hipcc" or "clang"
    rocm: Version | None             # the ROCm release its HIP headers belong to, when known
    rocm_path: str | None = None     # --rocm-path for clang
    # hipcc only: the clang it runs, and the options it puts before and after the targets
    driver: str | None = None
    hip_before: tuple[str, ...] = ()
    hip_after: tuple[str, ...] = ()
    pack: "Pack | None" = None       # a ROCm header pack clang compiles against (syntax only)
    note: str = ""                   # why this compiler, when not the one asked for

    def describe(self) -> str:
        if self.pack is not None:
            return f"{self.path} (syntax only, against the {self.pack.describe()})"
        release = f"ROCm {format_version(self.rocm)}" if self.rocm else "ROCm release unknown"
        run_as = f", run as {self.driver}" if self.driver else ""
        return f"{self.path} ({release}{run_as})"


@dataclass(frozen=True)
class CompileRun:
    command: tuple[str, ...]
    returncode: int
    output: str                      # the compiler's stderr and stdout
    seconds: float
    timed_out: bool = False


def environment() -> dict[str, str]:
    return dict(os.environ, HIP_PLATFORM="amd")


def find(name: str = "hipcc", rocm_path: str | None = None) -> Compiler:
    """The compiler to use; a missing one is a one-line error that says what to install."""
    found = shutil.which(name) or (name if Path(name).is_file() and os.access(name, os.X_OK) else None)
    if found is None:
        raise PortkitError(f"{name}: compiler not found; {INSTALL_HINT}")
    kind = "clang" if "clang" in Path(found).name else "hipcc"
    rocm = _hipcc_release(found) if kind == "hipcc" else None
    if rocm is None:
        rocm = _header_release(rocm_path)
    driver = _hipcc_driver(found) if kind == "hipcc" else None
    if driver is None:
        return Compiler(found, kind, rocm, rocm_path)
    return Compiler(found, kind, rocm, rocm_path, *driver)


# clang++ names that compile HIP for AMD targets, newest first (Debian's clang-19 does)
CLANGS = ("clang++-21", "clang++-20", "clang++-19", "clang++-18", "clang++")


def select(name: str, rocm_path: str | None, wanted: Version | None, headers: str | None,
           download: bool = True) -> Compiler:
    """The compiler for `--rocm X.Y`: the installed one when its release is X.Y; else clang with
    X.Y's header pack (packs.py), downloaded on first use when portkit pins one and `download`;
    else the installed one, with a note that its release differs.
    Without --rocm or --rocm-headers: the installed compiler, as asked."""
    if wanted is None and headers is None:
        return find(name, rocm_path)
    try:
        installed: Compiler | None = find(name, rocm_path)
    except PortkitError:
        installed = None
    matches = wanted is not None and installed is not None and installed.rocm is not None \
        and packs.same_release(installed.rocm, wanted)
    if wanted is None:
        pack = packs.install(Path(headers)) if headers.endswith(packs.ARCHIVES) else packs.load_given(Path(headers))
    else:
        pack = packs.locate(wanted, headers, required=not matches)
    if matches and (pack is None or headers is None):
        return installed        # the release asked for is installed: no pack needed (an explicit one still wins)
    why_not = ""
    if pack is None and wanted is not None and download and packs.pinned_release(wanted):
        try:
            _clang(name)                 # without a clang to use it, a pack is not worth downloading
            pack = packs.download(wanted)
        except PortkitError as exc:     # offline, no network, no clang: the installed compiler, with the reason
            why_not = f" ({exc})"
    if pack is not None:
        return Compiler(_clang(name), "clang", pack.release, pack=pack)
    installed = installed or find(name, rocm_path)
    return replace(installed, note=(
        f"no ROCm {format_version(wanted)} header pack found{why_not}, so the ROCm "
        f"{format_version(installed.rocm) if installed.rocm else '(unknown)'} headers installed here were used; "
        f"give one with --rocm-headers DIR or ${packs.ENV} (docs/verify.md)"))


def _clang(name: str) -> str:
    """A clang++ for the pack: --compiler when it is one, else the newest on PATH."""
    if "clang" in Path(name).name:
        return find(name).path
    for candidate in CLANGS:
        found = shutil.which(candidate)
        if found:
            return found
    raise PortkitError("no clang++ found to compile against the ROCm header pack; install one "
                       "(apt-get install clang-19) or name it with --compiler")


_PROBE_ARCH = "--offload-arch=gfx90a"


def _hipcc_driver(path: str) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """The clang hipcc runs and the options it adds before and after the targets, or None when
    this hipcc does not tell. `--cxxflags` prints the options and HIPCC_VERBOSE=1 the command
    without compiling anything; the arguments are fixed, so nothing from a tree reaches hipcc."""
    try:
        proc = subprocess.run([path, "-x", "hip", _PROBE_ARCH, "--cxxflags"], capture_output=True, text=True,
                              timeout=60, env=dict(environment(), HIPCC_VERBOSE="1"))
    except (OSError, subprocess.SubprocessError):
        return None
    lines = proc.stdout.splitlines()
    commands = [line[len("hipcc-cmd:"):] for line in lines if line.startswith("hipcc-cmd:")]
    try:
        driver = shlex.split(commands[0])[0] if proc.returncode == 0 and len(commands) == 1 else ""
        flags = shlex.split("\n".join(line for line in lines if not line.startswith("hipcc-cmd:")))
    except (ValueError, IndexError):
        return None
    if not (os.path.isabs(driver) and os.access(driver, os.X_OK)) or flags.count(_PROBE_ARCH) != 1:
        return None
    at = flags.index(_PROBE_ARCH)
    return driver, tuple(flags[:at]), tuple(flags[at + 1:])


def _hipcc_release(path: str) -> Version | None:
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60,
                              env=environment())
    except (OSError, subprocess.SubprocessError) as exc:
        raise PortkitError(f"{path}: cannot run the compiler: {exc}") from None
    match = _HIP_VERSION.search(proc.stdout + proc.stderr)
    return (int(match.group(1)), int(match.group(2)), 0) if match else None


def _header_release(rocm_path: str | None) -> Version | None:
    """The release in hip/hip_version.h, for compilers that do not print it."""
    roots = [rocm_path] if rocm_path else ["/opt/rocm", "/usr"]
    for root in roots:
        try:
            text = (Path(root) / "include" / "hip" / "hip_version.h").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        parts = dict(_HEADER_VERSION.findall(text))
        if "MAJOR" in parts and "MINOR" in parts:
            return (int(parts["MAJOR"]), int(parts["MINOR"]), 0)
    return None


def command(compiler: Compiler, path: Path, flags: tuple[str, ...], archs: tuple[str, ...],
            extra: tuple[str, ...] = ()) -> list[str]:
    """The command that compiles one unit for the AMD targets and throws the object away.
    For hipcc it is the clang command hipcc would run (its options, then the arguments)."""
    targets = [f"--offload-arch={a}" for a in archs]
    diagnostics = ["-fno-caret-diagnostics", "-fno-color-diagnostics", "-fno-diagnostics-fixit-info"]
    if compiler.pack is not None:   # no device libraries in a pack: both passes checked, no object made
        root = str(compiler.pack.root)
        return [compiler.path, "-x", "hip", *targets, "-nogpulib", f"--rocm-path={root}", "-isystem",
                os.path.join(root, "include"), *diagnostics, *flags, *extra, "-fsyntax-only", str(path)]
    if compiler.driver:
        cmd = [compiler.driver, *compiler.hip_before, *targets, *compiler.hip_after, "-x", "hip"]
    else:
        cmd = [compiler.path, "-x", "hip", *targets]
    if compiler.kind == "clang" and compiler.rocm_path:
        cmd.append(f"--rocm-path={compiler.rocm_path}")
    # one line per diagnostic, no caret lines and no colours: easy to read back, same on every terminal
    cmd += ["-fno-caret-diagnostics", "-fno-color-diagnostics", "-fno-diagnostics-fixit-info"]
    return [*cmd, *flags, *extra, "-c", str(path), "-o", os.devnull]


# what a POSIX shell gives a meaning to, and whitespace (word splitting)
_SHELL_SIGNIFICANT = re.compile(r"""[\s$`"'\\;&|<>()*?\[\]{}!#~]|^@|^-Wl,@""")


def unsafe(compiler: Compiler, cmd: list[str]) -> str | None:
    """The first argument a shell-interpreting wrapper could run as a command, or None. Only a
    hipcc run as itself (one that did not name its clang) re-parses its arguments with a shell."""
    if compiler.kind != "hipcc" or compiler.driver:
        return None
    return next((arg for arg in cmd[1:] if _SHELL_SIGNIFICANT.search(arg)), None)


_live: set[subprocess.Popen] = set()
_live_lock = threading.Lock()


def compile_unit(cmd: list[str], cwd: Path, timeout: float) -> CompileRun:
    """Run one compile. The compiler gets its own process group so that a timeout (or stop_all)
    ends hipcc's clang children too, not only the hipcc script."""
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", env=environment(), start_new_session=True)
    except OSError as exc:
        raise PortkitError(f"{cmd[0]}: cannot run the compiler: {exc.strerror or exc}") from None
    with _live_lock:
        _live.add(proc)
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        output, _ = proc.communicate()
        return CompileRun(tuple(cmd), -1, output or "", time.perf_counter() - start, timed_out=True)
    finally:
        with _live_lock:
            _live.discard(proc)
    return CompileRun(tuple(cmd), proc.returncode, output, time.perf_counter() - start)


def stop_all() -> None:
    """End every compile still running (verify was interrupted)."""
    with _live_lock:
        running = list(_live)
    for proc in running:
        _kill(proc)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
