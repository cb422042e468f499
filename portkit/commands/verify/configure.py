"""verify --configure: configure a converted tree's top-level CMake for the HIP build, and say
in one line whether it configured or why not (issue 48: "every converted CMake configures").

The configure runs in a temporary build folder, never inside the tree (a build folder in the
tree would be read as the project's by the next convert or verify), with the newest CMake found
(cmake_tool.py), never through a shell, in its own process group so a timeout ends the downloads
and compiler checks it started too. Its first error is read by cmake_errors.py. With --offline
the configure cannot download: git may use no transport but file://, and curl (file(DOWNLOAD),
FetchContent's URLs) is sent to a proxy that cannot resolve, so a tree that downloads at configure
time fails the same way on every machine and is named as such, never as portkit's failure.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from ...buildfiles import cmake_lexer
from ...core.errors import PortkitError
from ..results import ConfigureOptions, ConfigureResult
from . import cmake_errors, cmake_tool, pack_fetch

_DEFINE = re.compile(r"^[A-Za-z_][\w.+-]*(?::[A-Z]+)?=")
# RFC 2606: .invalid never resolves, so every download fails at once, without touching a network
_NO_NETWORK = "http://offline.invalid:9"


def configure_tree(out: Path, opts: ConfigureOptions) -> ConfigureResult:
    """Configure `out`'s CMakeLists.txt for HIP in a temporary folder; the result says how it went."""
    _check(out, opts)
    cmake = cmake_tool.select(opts.cmake)
    rocm = cmake_tool.rocm_access(opts.rocm_path)
    download = opts.download and not pack_fetch.offline()   # PORTKIT_OFFLINE=1 is --offline, as for packs
    start = time.perf_counter()
    build = Path(tempfile.mkdtemp(prefix="portkit-configure-"))
    try:
        command = _command(cmake, rocm, out.absolute(), build, opts)
        result = ConfigureResult(out, cmake, rocm.note, tuple(command), "configured", offline=not download)
        returncode, output = _run(command, _environment(download), opts.timeout)
        result.hip = returncode == 0 and _reached_hip(build)
    finally:
        shutil.rmtree(build, ignore_errors=True)
    result.seconds = time.perf_counter() - start
    if returncode is None:
        result.status = "timeout"
    elif returncode != 0:
        result.stop = cmake_errors.first_stop(output, out, submodules(out, opts.source))
        result.status = result.stop.kind
    elif not result.hip:
        result.status = "configured_without_hip"
        result.hip_options = hip_options(out)
    return result


_HIP_CACHE = re.compile(r"^(?:hip|HIP|hip-lang)_DIR:PATH=(?!.*NOTFOUND)", re.M)


def _reached_hip(build: Path) -> bool:
    """Whether the configure enabled the HIP language or found the hip package: a tree whose HIP
    build is an option off by default configures without either, as a CPU build, and must not be
    reported as configuring for HIP."""
    if any(build.glob("CMakeFiles/*/CMakeHIPCompiler.cmake")):
        return True
    try:
        return bool(_HIP_CACHE.search((build / "CMakeCache.txt").read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


_GPU_WORD = re.compile(r"(?:^|_)(?:HIP|ROCM|AMD|CUDA|GPU)(?:_|$)", re.I)


def hip_options(out: Path, limit: int = 4) -> tuple[str, ...]:
    """Options the top-level CMakeLists.txt declares off whose name says GPU (GGML_HIP, USE_ROCM,
    USE_CUDA): where a tree's HIP build is asked for, named for --cmake-define; never turned on
    unasked, since one of them may be the tree's other vendor or an extra (GGML_HIP_RCCL)."""
    try:
        text = (out / "CMakeLists.txt").read_bytes()[:1 << 20].decode("latin-1")
    except OSError:
        return ()
    names = []
    for cmd in cmake_lexer.commands(text):
        values = cmd.values()
        if cmd.lower == "option" and values and _GPU_WORD.search(values[0]) \
                and (len(values) < 3 or values[2].upper() in ("OFF", "FALSE", "0", "NO")):
            names.append(values[0])
    hip_first = sorted(names, key=lambda n: not re.search(r"HIP|ROCM|AMD", n, re.I))   # stable: file order within
    return tuple(hip_first[:limit])


def _check(out: Path, opts: ConfigureOptions) -> None:
    """Bad usage, in one line, before anything runs."""
    if not out.is_dir():
        missing = "not a directory" if out.exists() else "no such file or directory"
        raise PortkitError(f"{out}: {missing} (verify --configure takes the converted tree, e.g. the -o of convert)")
    if not (out / "CMakeLists.txt").is_file():
        raise PortkitError(f"{out}: no CMakeLists.txt at its top: --configure configures a tree's top-level CMake")
    if opts.source is not None and not opts.source.is_dir():
        raise PortkitError(f"{opts.source}: --source: not a directory")
    if opts.timeout <= 0:
        raise PortkitError(f"--timeout must be positive, not {opts.timeout:g}")
    for define in opts.defines:
        if not _DEFINE.match(define):
            raise PortkitError(f"--cmake-define: {define!r} is not NAME=VALUE (or NAME:TYPE=VALUE)")


def _command(cmake: cmake_tool.CMakeTool, rocm: cmake_tool.RocmAccess, out: Path, build: Path,
             opts: ConfigureOptions) -> list[str]:
    cmd = [cmake.path, "-S", str(out), "-B", str(build), *rocm.args, "-DCMAKE_BUILD_TYPE=Release",
           f"-DCMAKE_HIP_ARCHITECTURES={';'.join(opts.offload_arch)}"]
    if cmake.version >= (4, 0, 0):
        # CMake 4 refuses cmake_minimum_required below 3.5, which many real trees still say; the
        # policy floor CMake's own error suggests keeps their configure what it was under 3.x
        cmd.append("-DCMAKE_POLICY_VERSION_MINIMUM=3.5")
    return cmd + [f"-D{define}" for define in opts.defines]


def _environment(download: bool) -> dict[str, str]:
    env = dict(os.environ, HIP_PLATFORM="amd")
    if not download:
        for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            env[name] = _NO_NETWORK
        for name in ("no_proxy", "NO_PROXY"):
            env.pop(name, None)
        env["GIT_ALLOW_PROTOCOL"] = "file"
    return env


def _run(command: list[str], env: dict[str, str], timeout: float) -> tuple[int | None, str]:
    """(exit status or None past the time limit, stderr then stdout): the whole process group ends
    at the limit, so a git clone or a compiler check it started does not outlive it."""
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                env=env, text=True, errors="replace", start_new_session=True)
    except OSError as exc:
        raise PortkitError(f"{command[0]}: cannot run: {exc.strerror or exc}") from None
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        proc.communicate()
        return None, ""
    except BaseException:     # Ctrl-C: no configure may outlive portkit
        _kill(proc)
        raise
    return proc.returncode, stderr + "\n" + stdout


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def submodules(out: Path, source: Path | None) -> dict[str, bool]:
    """Each submodule path .gitmodules names (the converted tree's, else the source's) -> whether
    the converted tree has it (a folder with something in it)."""
    paths: dict[str, bool] = {}
    for tree in (out, source):
        if tree is None:
            continue
        try:
            text = (tree / ".gitmodules").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for match in re.finditer(r"^\s*path\s*=\s*(.+?)\s*$", text, re.M):
            folder = out / match[1]
            paths[match[1]] = folder.is_dir() and any(folder.iterdir())
    return paths
