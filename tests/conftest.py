"""Shared test helpers: the fixture corpus, and tools that may be missing on a developer machine.

A missing compiler or ROCm library skips the compile checks that need it on a developer machine,
but CI sets PORTKIT_REQUIRE_TOOLS=1 and then a missing tool fails the run instead of hiding it.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Iterable, Iterator, NoReturn

import pytest

REPO = Path(__file__).resolve().parent.parent
NVCC = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
# The tests never reach the network: verify would otherwise download a ROCm header pack it does
# not find (pack_fetch.py); the download tests serve their own archives and unset this.
os.environ["PORTKIT_OFFLINE"] = "1"
# Nor do they reuse scan results across runs (commands/scan/resultcache.py): a test that changes a rule in
# its process would otherwise read what an earlier run kept. test_result_cache.py turns it on.
os.environ["PORTKIT_NO_CACHE"] = "1"
CUDA_LIB_INCLUDE = Path(os.environ.get("CUDA_LIB_INCLUDE", REPO / ".ci" / "cache" / "cuda-libs" / "include"))


@pytest.fixture(scope="session", autouse=True)
def _compilers_temporary_folder():
    """hipcc (clang's HIP driver) leaves an empty folder in $TMPDIR for every unit it compiles:
    one suite run left hundreds in /tmp, 20,000 after a day's work. Each test process gives the
    compilers its own folder and removes it at the end."""
    folder = tempfile.mkdtemp(prefix="portkit-tests-")
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = folder
    yield
    if before is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before
    shutil.rmtree(folder, ignore_errors=True)


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """A small project under `root`: each relative path written with its text; returns `root`."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


# Markers (CONTRIBUTING.md, "Test markers"): a test that runs a compiler is `compile`, one that
# drives a browser `browser`; `-m "not compile and not browser and not slow"` is the fast subset.
# require_tool() fails a test that runs such a tool without its marker, so the subset stays fast.
_MARKER_OF_TOOL = (("nvcc", "compile"), ("hipcc", "compile"), ("clang", "compile"), ("hipify", "compile"),
                   ("chromium", "browser"), ("chromedriver", "browser"), ("chrome", "browser"))
_RUNNING: dict = {"test": None}


@pytest.fixture(autouse=True)
def _the_running_test(request):
    """Which test is running, for require_tool's marker check (None while session fixtures set up)."""
    _RUNNING["test"] = request.node
    yield
    _RUNNING["test"] = None


def _check_marker(tool: str) -> None:
    test = _RUNNING["test"]
    name = Path(tool).name
    marker = next((m for prefix, m in _MARKER_OF_TOOL if name.startswith(prefix)), None)
    if test is not None and marker is not None and test.get_closest_marker(marker) is None:
        pytest.fail(f"{test.nodeid} runs {name}: mark it @pytest.mark.{marker} (CONTRIBUTING.md, \"Test markers\")")


def require_tool(path_or_name: str, what: str) -> str:
    """The tool's path; skip the test when it is missing, or fail when CI requires every tool."""
    _check_marker(path_or_name)
    found = shutil.which(path_or_name) or (path_or_name if Path(path_or_name).is_file() else None)
    if found:
        return found
    missing(f"{what} not found ({path_or_name})")


def require_dir(path: Path, what: str) -> Path:
    if path.is_dir():
        return path
    missing(f"{what} not found ({path})")


# CUDA libraries whose headers are not in the CUDA toolkit install here (tools/fetch_cuda_lib_headers.sh)
LIBRARY_HEADERS = (b"cublas", b"curand", b"cufft", b"cusparse", b"cusolver", b"nccl", b"cutlass", b"cute/",
                   b"nvshmem", b"nvjpeg", b"nvrtc")


def cuda_library_includes(paths) -> list[str]:
    """`-I` for the CUDA library headers when one of `paths` includes one; skipped (or failed
    under PORTKIT_REQUIRE_TOOLS=1) with the reason when they are not here."""
    if not any(h in Path(p).read_bytes() for p in paths for h in LIBRARY_HEADERS):
        return []
    return ["-I", str(require_dir(CUDA_LIB_INCLUDE, "CUDA library headers (set CUDA_LIB_INCLUDE)"))]


def missing(message: str) -> NoReturn:
    """Skip the test for a missing tool, or fail it when CI requires every tool."""
    if os.environ.get("PORTKIT_REQUIRE_TOOLS") == "1":
        pytest.fail(message + " and PORTKIT_REQUIRE_TOOLS=1")
    pytest.skip(message)


# Where hipcc looks for ROCm library headers: $ROCM_PATH, AMD's packages, Debian's packages.
HIP_INCLUDE_DIRS = tuple(dict.fromkeys(
    Path(p) for p in (os.environ.get("ROCM_PATH", "/opt/rocm") + "/include", "/opt/rocm/include", "/usr/include")))

# A HIP library named in a tree (header, CMake package or -l flag), and the headers hipcc needs to
# compile code that uses it on AMD, with the Debian package of each. Debian's libhiprand-dev does
# not pull in librocrand-dev, although every hiprand header includes rocrand's.
ROCM_LIBRARIES = {
    b"hiprand": (("hiprand/hiprand.h", "libhiprand-dev"), ("rocrand/rocrand.h", "librocrand-dev")),
    b"hipsparse": (("hipsparse/hipsparse.h", "libhipsparse-dev"),),
    b"rocrand": (("rocrand/rocrand.h", "librocrand-dev"),),
    # Debian packages no hipCUB for ROCm 5.2; ROCm's own repository names these packages
    b"hipcub": (("hipcub/hipcub.hpp", "hipcub-dev"), ("rocprim/rocprim.hpp", "rocprim-dev")),
}


def require_rocm_libraries(paths: Iterable[Path]) -> None:
    """Skip (or fail under PORTKIT_REQUIRE_TOOLS=1) when code in `paths` (files or folders) uses a
    HIP library whose headers, or the headers they include, are not installed."""
    text = b"".join(f.read_bytes() for f in _files(paths))
    for name, headers in ROCM_LIBRARIES.items():
        if name not in text:
            continue
        for header, package in headers:
            if not any((d / header).is_file() for d in HIP_INCLUDE_DIRS):
                missing(f"{name.decode()} needs {header}, not found in {', '.join(map(str, HIP_INCLUDE_DIRS))} "
                        f"(apt-get install {package})")


def _files(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from (f for f in sorted(path.rglob("*")) if f.is_file())
        else:
            yield path


def isolated_git(tmp_path: Path, monkeypatch) -> None:
    """git as a fresh user would have it: a user configuration of the test's own (name, email, no
    autocrlf) and no system configuration, so the machine's settings never change a result."""
    require_tool("git", "git")
    user = tmp_path / "gitconfig"
    user.write_text("[user]\n\tname = dev\n\temail = dev@example.com\n[core]\n\tautocrlf = false\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture(scope="module")
def tc():
    """Deep mode's toolchain (libclang and clang's resource headers), or a skip with the reason;
    missing under PORTKIT_REQUIRE_TOOLS=1 (CI) is a failure."""
    from portkit.core.errors import PortkitError
    from portkit.commands.deep import toolchain
    try:
        return toolchain.find()
    except PortkitError as exc:
        if os.environ.get("PORTKIT_REQUIRE_TOOLS") == "1":
            pytest.fail(f"deep mode toolchain missing and PORTKIT_REQUIRE_TOOLS=1: {exc}")
        pytest.skip(str(exc))


PACK62_ARCHIVE = REPO / "fixtures" / "rocm-headers" / "rocm-6.2.0-headers.tar.xz"   # the pinned ROCm 6.2 pack


@pytest.fixture(scope="session")
def pack62(tmp_path_factory) -> Path:
    """The pinned ROCm 6.2 header pack, unpacked once per session (verify reads a folder)."""
    root = tmp_path_factory.mktemp("packs")
    with tarfile.open(PACK62_ARCHIVE) as tar:
        tar.extractall(root, filter="data")
    return root / "rocm-6.2.0-headers"


@pytest.fixture(scope="session")
def hipcc_pch(tmp_path_factory):
    """hipcc -c for gfx90a with hip_runtime.h precompiled once per session for each side
    (tests/hip_pch.py): a golden's compile spent 1.0 s of its 1.25 s of CPU parsing it."""
    import hip_pch
    return hip_pch.Precompiled(["hipcc", "-x", "hip", "--offload-arch=gfx90a"], ["-c", "-o", os.devnull],
                               tmp_path_factory.mktemp("pch-hipcc"), env=dict(os.environ, HIP_PLATFORM="amd"))


def clang19() -> str:
    """The clang that checks HIP against a pack (Debian's clang-19), or the test is skipped."""
    return require_tool("clang++-19", "clang 19 (apt-get install clang-19)")


# The order workers take tests in (issue 52): with -n, each worker is handed a contiguous run of the
# collection and an idle one steals from the end of a busy one's queue. A module of long compile tests
# collected last (test_verify.py, test_verify_packs.py) could start late and run on after the other
# core ran out of work.
# Modules are handed out longest first, by tests/durations.json (tools/record_test_durations.py writes
# it from a measured run); each module stays whole and in its own order, so a module-scoped fixture
# (a built torch pack, a pre-commit home) is still made once. Without -n the order is the collection's.
DURATIONS = Path(__file__).with_name("durations.json")


def pytest_collection_modifyitems(config, items) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER") and DURATIONS.is_file():
        import json
        longest_modules_first(items, json.loads(DURATIONS.read_text(encoding="utf-8")))


def longest_modules_first(items: list, seconds: dict[str, float]) -> None:
    """Sort `items` (in place) by their module's recorded seconds, longest first; a module not
    recorded counts 0; modules of equal seconds, and each module's tests, keep their order."""
    first: dict = {}
    for index, item in enumerate(items):
        first.setdefault(item.path, index)

    def recorded(path: Path) -> float:
        return seconds.get(path.relative_to(REPO).as_posix(), 0.0) if path.is_relative_to(REPO) else 0.0
    items.sort(key=lambda item: (-recorded(item.path), first[item.path]))
