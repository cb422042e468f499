"""Issue 46, defect 2: no file a compiler front end may open is a device, a FIFO or /proc.

`portkit audit --engine clang` followed `#include "/dev/zero"` and grew by gigabytes in seconds
(a CI runner was killed for memory); a FIFO an include names blocked it until the per-file time
limit. Now the deep worker reads every such file as empty and says so on one line, naming the
file and the include (portkit/commands/deep/worker_includes.py), and the rest of the tree is audited as
before; what text cannot resolve is stopped by the worker's memory limit. `portkit verify`
refuses to compile a unit that names one.

Each audit runs as users run it, `python -m portkit` in a process of its own, capped at 2 GiB
of address space and 60 s so that the code before the fix fails these tests instead of the
machine; its peak resident memory (with its workers') must stay under 1 GB.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import require_tool

ADDRESS_SPACE_CAP = 2 << 30     # the audited process and its workers: enough for every real unit
PEAK_LIMIT_KB = 1_000_000       # what the issue asks: under 1 GB resident, workers included
WALL_LIMIT = 60.0               # an audit of two small units takes a few seconds
KERNEL = "__global__ void k(int *o) { o[threadIdx.x % 32] = 1; }\n"
HAZARD = "b.cu:2:32: PK201 `threadIdx.x % 32` assumes 32-lane warps; an AMD wavefront has 64 lanes"
AS_EMPTY = "not a regular file; clang read it as empty"


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    peak_kb: int


def portkit(args: list[str], cwd: Path, cap: int = ADDRESS_SPACE_CAP) -> Run:
    """`python -m portkit ARGS` under the caps: its exit status, output and peak resident memory
    (wait4's, which covers the workers it waited for). A run past WALL_LIMIT fails the test."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "portkit", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err, start_new_session=True,
                                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap)))
        deadline = time.monotonic() + WALL_LIMIT
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                os.wait4(proc.pid, 0)
                proc.returncode = -9
                pytest.fail(f"portkit {' '.join(args)} still ran after {WALL_LIMIT:g} s")
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(proc.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace"),
                   usage.ru_maxrss)


def tree(root: Path, including: str) -> Path:
    """a.cu opens with `including` (one or more lines), b.cu holds a hazard: the rest of the tree."""
    root.mkdir()
    (root / "a.cu").write_text(including + KERNEL)
    (root / "b.cu").write_text("\n" + KERNEL.replace("k(", "k2("))
    return root


def _fifo(root: Path) -> None:
    os.mkfifo(root / "pipe.h")


def _link(root: Path) -> None:
    (root / "inc").mkdir()
    (root / "inc" / "zero.h").symlink_to("/dev/zero")


def _header_with_fifo(root: Path) -> None:
    os.mkfifo(root / "pipe.h")
    (root / "sub").mkdir()
    (root / "sub" / "h.cuh").write_text("#pragma once\n#include \"../pipe.h\"\n")


# what the walk itself says of a file it does not read (stdout, with either engine)
WALKED = {"pipe.h": "pipe.h: not a regular file, not read",
          "inc/zero.h": "inc/zero.h: symbolic link, not followed, though a.cu includes a file through it: that code "
                        "is not converted or audited (put the file itself there to have it read)"}

# (what a.cu starts with, what to make in the tree, extra flags, the exact note, the walk's own note)
CASES = {
    "dev-zero": ('#include "/dev/zero"\n', None, [],
                 'a.cu:1: #include "/dev/zero" names /dev/zero, a character device, ' + AS_EMPTY, None),
    "fifo-in-tree": ('#include "pipe.h"\n', _fifo, [],
                     'a.cu:1: #include "pipe.h" names pipe.h, a FIFO, ' + AS_EMPTY, "pipe.h"),
    "fifo-behind-a-header": ('#include "sub/h.cuh"\n', _header_with_fifo, [],
                             'sub/h.cuh:2: #include "../pipe.h" names pipe.h, a FIFO, ' + AS_EMPTY, "pipe.h"),
    "link-to-dev-zero": ('#include "inc/zero.h"\n', _link, [],
                         'a.cu:1: #include "inc/zero.h" names inc/zero.h, a link to /dev/zero, a character device, '
                         + AS_EMPTY, "inc/zero.h"),
    "proc-self": ('#include "/proc/self/environ"\n', None, [],
                  'a.cu:1: #include "/proc/self/environ" names /proc/self/environ, a file of /proc, ' + AS_EMPTY,
                  None),
    "dev-stdin": ('#include "/dev/stdin"\n', None, [],
                  'a.cu:1: #include "/dev/stdin" names /dev/stdin, a FIFO, ' + AS_EMPTY, None),
    "include-dir-dev": ('#include "zero"\n', None, ["-I", "/dev"],
                        'a.cu:1: #include "zero" names /dev/zero, a character device, ' + AS_EMPTY, None),
    "computed": ('#define Z "/dev/zero"\n#include Z\n', None, [],
                 'a.cu:2: #include Z names /dev/zero, a character device, ' + AS_EMPTY, None),
    "hidden-by-a-comment": ('#inc\\\nlude /* a\n */ "/dev/zero"\n', None, [],
                            'a.cu:1: #include "/dev/zero" names /dev/zero, a character device, ' + AS_EMPTY, None),
}


def audit(root: Path, engine: str, flags: list[str], cap: int = ADDRESS_SPACE_CAP) -> Run:
    args = ["audit", str(root), "--fail-on", "high", "--file-timeout", "300"]
    return portkit(args + (["--engine", "clang", *flags] if engine == "clang" else []), root.parent, cap)


def findings(run: Run) -> list[str]:
    return [line for line in run.stdout.splitlines() if ": PK" in line]


def hazards(including: str) -> list[str]:
    """a.cu's and b.cu's findings: both files audited whatever a.cu includes."""
    return [f"a.cu:{including.count(chr(10)) + 1}:31: PK201 `threadIdx.x % 32` assumes 32-lane warps; an AMD "
            "wavefront has 64 lanes", HAZARD]


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_audit_with_either_engine_reads_no_device_fifo_or_proc_file(case: str, tmp_path: Path, tc):
    """tree-sitter never opens what an include names (includes.py resolves against the walked
    tree); clang reads it as empty, with one note, and parses the unit: no fallback line."""
    including, make, flags, note, walked = CASES[case]
    root = tree(tmp_path / "src", including)
    if make:
        make(root)
    if not flags:       # -I is deep mode's only
        run = audit(root, "tree-sitter", flags)
        assert (run.returncode, run.stderr, findings(run)) == (1, "", hazards(including))
        assert run.peak_kb < PEAK_LIMIT_KB
    run = audit(root, "clang", flags)
    lines = run.stderr.splitlines()
    assert lines[0].startswith("portkit: deep mode: 2 unit(s) through clang in "), run.stderr
    assert lines[1:] == [f"portkit: {note}"]
    assert (run.returncode, findings(run)) == (1, hazards(including))
    assert [line for line in run.stdout.splitlines() if line in WALKED.values()] == ([WALKED[walked]] if walked else [])
    assert run.peak_kb < PEAK_LIMIT_KB


@pytest.mark.slow
def test_a_file_past_the_size_limit_is_never_read_whole(tmp_path: Path, tc):
    """A 3 GB header (sparse: a few MB of zeros in git check out as gigabytes) is never read: the
    walk reports it, an error since nobody checked it, and clang reads it as empty, with one note."""
    including = '#include "big.h"\n'
    root = tree(tmp_path / "src", including)
    with open(root / "big.h", "wb") as big:
        big.truncate(3 << 30)
    walked = "big.h: larger than 64 MiB, not read"
    run = audit(root, "tree-sitter", [])
    assert (run.returncode, run.stderr, findings(run)) == (2, "", hazards(including))
    assert walked in run.stdout.splitlines()
    assert run.peak_kb < PEAK_LIMIT_KB
    run = audit(root, "clang", [])
    assert run.stderr.splitlines()[1:] == ['portkit: a.cu:1: #include "big.h" names big.h, a file of 3072 MiB, '
                                           'larger than the 64 MiB a unit may include; clang read it as empty']
    assert (run.returncode, findings(run)) == (2, hazards(including))
    assert walked in run.stdout.splitlines()
    assert run.peak_kb < PEAK_LIMIT_KB


@pytest.mark.slow
def test_an_include_text_cannot_resolve_is_stopped_by_the_worker_memory_limit(tmp_path: Path, tc):
    """`#include P(/dev/zero)` through a stringizing macro: only the preprocessor knows the name.
    The worker's address space is bounded (worker.MEMORY_LIMIT, or the limit it inherits: 1 GiB
    here); the unit falls back to tree-sitter with one line, the rest of the tree is audited."""
    including = "#define S(x) #x\n#define P(x) S(x)\n#include P(/dev/zero)\n"
    root = tree(tmp_path / "src", including)
    run = audit(root, "clang", [], cap=1 << 30)
    lines = run.stderr.splitlines()
    assert lines[0].startswith("portkit: deep mode: 2 unit(s) through clang in "), run.stderr
    assert lines[1:] == ["portkit: a.cu: clang needed more than the 1 GiB of memory deep mode gives a unit; "
                         "tree-sitter only for it"]
    assert (run.returncode, findings(run)) == (1, hazards(including))
    assert run.peak_kb < PEAK_LIMIT_KB


HIP_KERNEL = "#include <hip/hip_runtime.h>\n__global__ void k(int *o) { o[0] = 1; }\n"


@pytest.mark.compile
@pytest.mark.parametrize("case", ["dev-zero", "fifo-in-tree", "fifo-behind-a-header", "computed"])
def test_verify_refuses_a_unit_that_names_a_device_or_fifo_before_compiling(case: str, tmp_path: Path):
    require_tool("hipcc", "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
    including, make, _, note, _ = CASES[case]
    root = tmp_path / "out"
    root.mkdir()
    (root / "a.hip").write_text(including + HIP_KERNEL)
    (root / "b.hip").write_text(HIP_KERNEL.replace("k(", "k2("))
    if make:
        make(root)
    run = portkit(["verify", str(root)], tmp_path)
    reason = note.replace("a.cu:", "a.hip:").replace("; clang read it as empty", "")
    assert (run.returncode, run.stdout, run.stderr) == (
        2, "", f"portkit: error: {root / 'a.hip'}: not compiled: {reason}; a compiler reads such a file to its "
               "end, or waits on a FIFO forever\n")
    assert run.peak_kb < PEAK_LIMIT_KB
