"""Issue 19, class 4: writes are atomic, confined, and never destroy what they did not create.

Backups are complete or absent and never trusted when they do not match; --in-place keeps owner
and group and writes through a link the user named; -o never lands on an input; --compat-header
never replaces a header it did not generate; outputs that are devices, FIFOs or links are written
as such; reading never blocks on a FIFO; temporary files are recognisable, ignored, and swept.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

import portkit.core.output
from portkit.project import pipeline
from portkit.cli.app import main

CUDA = b"#include <cuda_runtime.h>\nvoid f(float **p) { cudaMalloc(p, 64); cudaFree(*p); }\n"
HIP = b"#include <hip/hip_runtime.h>\nvoid f(float **p) { hipMalloc(p, 64); hipFree(*p); }\n"


class Hung(BaseException):
    """Raised by the alarm: the run blocked (a FIFO read) instead of finishing."""


@contextmanager
def no_hang(seconds: float = 20.0):
    def on_alarm(signum, frame):
        raise Hung(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def src(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    root.mkdir()
    (root / "a.cu").write_bytes(CUDA)
    return root


def err_lines(capsys) -> list[str]:
    return capsys.readouterr().err.splitlines()


# --- --backup -------------------------------------------------------------------------------------

@pytest.mark.parametrize("partial", [b"", CUDA[:20]], ids=["empty", "truncated"])
def test_a_partial_backup_never_stands_in_for_the_original(src: Path, partial: bytes, capsys):
    (src / "a.cu.orig").write_bytes(partial)     # what a full disk or a kill left behind
    assert main(["convert", str(src), "--in-place", "--backup", "-q"]) == 2
    assert err_lines(capsys) == ["portkit: a.cu: a.cu.orig exists but is not a backup of a.cu (a partial copy, or "
                                 "another version); not converted: move it away to make a new backup"]
    assert (src / "a.cu").read_bytes() == CUDA
    assert (src / "a.cu.orig").read_bytes() == partial
    (src / "a.cu.orig").write_bytes(CUDA)        # complete: a run killed after its backup, before the rewrite
    assert main(["convert", str(src), "--in-place", "--backup", "-q"]) == 0
    assert (src / "a.cu").read_bytes() == HIP
    assert (src / "a.cu.orig").read_bytes() == CUDA


@pytest.mark.slow
def test_a_backup_cut_short_by_a_full_disk_never_gets_the_final_name(src: Path):
    big = CUDA + b"// padding\n" * 6000           # 72 kB: more than the file size limit below
    (src / "a.cu").write_bytes(big)

    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # EFBIG instead of a signal, as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))
    cmd = [sys.executable, "-m", "portkit", "convert", str(src), "--in-place", "--backup", "-q"]
    first = subprocess.run(cmd, preexec_fn=limit_file_size, capture_output=True, text=True, timeout=120)
    assert first.returncode == 2
    assert first.stderr == "portkit: a.cu: cannot write: File too large\n"
    assert sorted(p.name for p in src.iterdir()) == ["a.cu"]          # no .orig, no temporary file
    assert (src / "a.cu").read_bytes() == big
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert (second.returncode, second.stderr) == (0, "")
    assert (src / "a.cu.orig").read_bytes() == big                     # the complete original
    assert (src / "a.cu").read_bytes().startswith(HIP)


@pytest.mark.parametrize("dangling", [True, False], ids=["dangling", "to-a-file"])
def test_backup_never_follows_a_link_named_orig(src: Path, tmp_path: Path, dangling: bool, capsys):
    victim = tmp_path / "victim.txt"
    if not dangling:
        victim.write_bytes(b"someone else's file\n")
    (src / "a.cu.orig").symlink_to(victim)
    assert main(["convert", str(src), "--in-place", "--backup", "-q"]) == 2
    assert err_lines(capsys) == ["portkit: a.cu: a.cu.orig exists and is not a regular file; not converted"]
    assert os.readlink(src / "a.cu.orig") == str(victim)
    assert victim.exists() is not dangling
    if not dangling:
        assert victim.read_bytes() == b"someone else's file\n"
    assert (src / "a.cu").read_bytes() == CUDA


# --- --in-place ---------------------------------------------------------------------------------

def test_in_place_keeps_owner_group_and_mode_of_the_file_and_its_backup(src: Path):
    target = src / "a.cu"
    os.chown(target, 1234, 5678)
    os.chmod(target, 0o640)
    os.utime(target, ns=(1_000_000_000_000_000_000, 1_500_000_000_000_000_000))
    assert main(["convert", str(src), "--in-place", "--backup", "-q"]) == 0
    assert (src / "a.cu.orig").stat().st_mtime_ns == 1_500_000_000_000_000_000
    for path in (target, src / "a.cu.orig"):
        st = path.stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1234, 5678, 0o640), path.name
    assert target.read_bytes() == HIP


def test_in_place_on_a_named_link_converts_its_target_and_keeps_the_link(tmp_path: Path, src: Path):
    link = tmp_path / "link.cu"
    link.symlink_to(src / "a.cu")
    assert main(["convert", str(link), "--in-place", "--backup", "-q"]) == 0
    assert link.is_symlink() and os.readlink(link) == str(src / "a.cu")
    assert (src / "a.cu").read_bytes() == HIP
    assert (src / "a.cu.orig").read_bytes() == CUDA       # beside the file that changed
    assert not os.path.lexists(tmp_path / "link.cu.orig")


# --- -o never lands on an input ---------------------------------------------------------------------

def test_output_that_is_the_inputs_directory_is_refused(src: Path, capsys):
    assert main(["convert", str(src / "a.cu"), "-o", str(src)]) == 2
    assert err_lines(capsys) == [f"portkit: error: {src}: writing a.cu there would overwrite the input a.cu; "
                                 f"choose an output directory outside the inputs"]
    assert (src / "a.cu").read_bytes() == CUDA


def test_output_inside_the_inputs_that_would_overwrite_one_is_refused(src: Path, capsys):
    (src / "x").mkdir()
    (src / "x" / "a.cu").write_bytes(b"// the other a.cu\n")
    assert main(["convert", str(src / "x" / "a.cu"), str(src / "a.cu"), "-o", str(src / "x")]) == 2
    assert err_lines(capsys) == [f"portkit: error: {src / 'x'}: writing a.cu there would overwrite the input "
                                 f"x/a.cu; choose an output directory outside the inputs"]
    assert (src / "x" / "a.cu").read_bytes() == b"// the other a.cu\n"
    assert sorted(p.relative_to(src).as_posix() for p in src.rglob("*")) == ["a.cu", "x", "x/a.cu"]


# --- --compat-header ----------------------------------------------------------------------------

def test_compat_header_never_replaces_a_file_it_did_not_generate(src: Path, capsys):
    header = src / "compat.h"
    header.write_bytes(b"// my own header\n#define MINE 1\n")
    assert main(["convert", str(src), "--compat-header", str(header), "--in-place", "-q"]) == 2
    assert err_lines(capsys) == [f"portkit: error: {header}: exists and was not generated by portkit (its first "
                                 f"line is not `// Generated by portkit: ...`); not overwritten, choose another "
                                 f"--compat-header"]
    assert header.read_bytes() == b"// my own header\n#define MINE 1\n"
    assert (src / "a.cu").read_bytes() == CUDA
    header.unlink()                             # one that portkit generated is regenerated
    assert main(["convert", str(src), "--compat-header", str(header), "--in-place", "-q"]) == 0
    first = header.read_bytes()
    assert first.startswith(b"// Generated by portkit: the CUDA names this project uses")
    header.write_bytes(first.replace(b"#pragma once\n", b"#pragma once\n// edited\n"))
    assert main(["convert", str(src), "--compat-header", str(header), "--in-place", "-q"]) == 0
    assert header.read_bytes() == first


# --- user-named outputs: devices, FIFOs, links ------------------------------------------------------

def _commands(tmp_path: Path, src: Path, out: Path) -> dict[str, list[str]]:
    audit_json = tmp_path / "audit.json"
    if not audit_json.exists():
        assert main(["audit", str(src), "--format", "json", "-o", str(audit_json), "-q"]) == 0
    return {
        "audit -o": ["audit", str(src), "--format", "json", "-o", str(out), "-q"],
        "audit --html": ["audit", str(src), "--html", str(out), "-q"],
        "report -o": ["report", str(audit_json), "-o", str(out)],
        "mappings -o": ["mappings", "--format", "json", "-o", str(out)],
        "baseline -o": ["baseline", str(src), "-o", str(out)],
    }


def _looks_right(name: str, data: bytes) -> None:
    """The output is complete: JSON parses, HTML ends (exact bytes vary with the time of the run)."""
    if name in ("audit -o", "mappings -o", "baseline -o"):
        assert isinstance(json.loads(data), (dict, list))
    else:
        assert data.startswith(b"<!doctype html>") and data.rstrip().endswith(b"</html>")


COMMANDS = ["audit -o", "audit --html", "report -o", "mappings -o", "baseline -o"]


@pytest.mark.parametrize("name", COMMANDS)
def test_an_output_link_to_a_device_stays_a_link(tmp_path: Path, src: Path, name: str):
    out = tmp_path / "null"
    out.symlink_to("/dev/null")
    assert main(_commands(tmp_path, src, out)[name]) == 0
    assert out.is_symlink() and os.readlink(out) == "/dev/null"


@pytest.mark.parametrize("name", COMMANDS)
def test_an_output_link_to_a_file_writes_the_file(tmp_path: Path, src: Path, name: str):
    real = tmp_path / "real" / "report.out"
    real.parent.mkdir()
    real.write_bytes(b"old")
    out = tmp_path / "link.out"
    out.symlink_to(real)
    assert main(_commands(tmp_path, src, out)[name]) == 0
    assert out.is_symlink() and os.readlink(out) == str(real)
    _looks_right(name, real.read_bytes())


@pytest.mark.parametrize("name", COMMANDS)
def test_an_output_fifo_is_streamed_to_its_reader(tmp_path: Path, src: Path, name: str):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    with no_hang():
        assert main(_commands(tmp_path, src, fifo)[name]) == 0
    reader.join(timeout=10)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert len(got) == 1
    _looks_right(name, got[0])


def test_an_output_fifo_nobody_reads_is_refused(tmp_path: Path, src: Path, capsys, monkeypatch):
    monkeypatch.setattr(portkit.core.named_output, "READER_WAIT_S", 0.2)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with no_hang():
        assert main(["mappings", "--format", "json", "-o", str(fifo)]) == 2
    assert err_lines(capsys) == [f"portkit: error: {fifo}: no process reads this FIFO; not written"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_an_output_directory_is_refused(tmp_path: Path, capsys):
    assert main(["mappings", "--format", "json", "-o", str(tmp_path)]) == 2
    assert err_lines(capsys) == [f"portkit: error: {tmp_path}: is a directory; not written"]


def test_a_mistyped_device_name_becomes_no_file_in_dev(capsys):
    """`-o /dev/nul` (one l): /dev's own file system gets no stray file, even when run as root."""
    name = Path(f"/dev/portkit-test-{os.getpid()}-nul")
    try:
        assert main(["mappings", "--format", "json", "-o", str(name)]) == 2
        assert err_lines(capsys) == [f"portkit: error: {name}: no such device; portkit creates no files there"]
        assert not os.path.lexists(name)
    finally:
        if os.path.lexists(name):
            name.unlink()


def _scratch_under_dev() -> Path | None:
    """/dev/shm when it is a folder on a file system of its own (a tmpfs), as on Linux and in containers."""
    shm = Path("/dev/shm")
    try:
        if shm.is_dir() and os.stat(shm).st_dev != os.stat("/dev").st_dev and os.access(shm, os.W_OK):
            return shm
    except OSError:
        pass
    return None


@pytest.mark.skipif(_scratch_under_dev() is None, reason="no writable /dev/shm on a file system of its own here")
@pytest.mark.parametrize("name", COMMANDS)
def test_an_output_in_dev_shm_is_written_as_in_any_folder(tmp_path: Path, src: Path, name: str):
    """/dev/shm is a tmpfs where CI and containers keep scratch files: reports go there, in new
    folders too, written atomically as anywhere else (not refused as a missing device)."""
    folder = _scratch_under_dev() / f"portkit-test-{os.getpid()}-{tmp_path.name}"
    out = folder / "new" / "report.out"
    try:
        assert main(_commands(tmp_path, src, out)[name]) == 0
        assert stat.S_ISREG(os.lstat(out).st_mode)
        _looks_right(name, out.read_bytes())
        assert sorted(p.name for p in out.parent.iterdir()) == ["report.out"]   # no temporary file left
    finally:
        subprocess.run(["rm", "-rf", "--", str(folder)], check=False)


# --- reading never blocks ---------------------------------------------------------------------------

def _swap_after_discovery(monkeypatch, module, swap) -> None:
    real = module.discover

    def discover(paths, *rest):
        found = real(paths, *rest)
        swap()
        return found
    monkeypatch.setattr(module, "discover", discover)


def _to_fifo(path: Path):
    def swap():
        path.unlink()
        os.mkfifo(path)
    return swap


@pytest.mark.parametrize("mode", ["-o", "--in-place", "--diff"])
def test_a_file_that_becomes_a_fifo_after_discovery_never_hangs_convert(src: Path, tmp_path: Path, mode: str,
                                                                        monkeypatch, capsys):
    os.mkfifo(src / "k.cu")                      # a FIFO at discovery: a note, never read
    (src / "b.cu").write_bytes(CUDA)
    _swap_after_discovery(monkeypatch, pipeline, _to_fifo(src / "a.cu"))
    args = ["convert", str(src), mode] + ([str(tmp_path / "out")] if mode == "-o" else []) + ["-q"]
    with no_hang():
        assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.err == "portkit: a.cu: not a regular file any more (it changed during the run), not read\n"
    written = tmp_path / "out" / "b.cu" if mode == "-o" else src / "b.cu"
    assert written.read_bytes() == (CUDA if mode == "--diff" else HIP)
    assert not (tmp_path / "out" / "a.cu").exists() and not (tmp_path / "out" / "k.cu").exists()


def test_a_file_that_becomes_a_fifo_after_discovery_never_hangs_audit(src: Path, monkeypatch, capsys):
    _swap_after_discovery(monkeypatch, pipeline, _to_fifo(src / "a.cu"))
    with no_hang():
        assert main(["audit", str(src), "--format", "json", "-q"]) == 2
    assert capsys.readouterr().err == ("portkit: a.cu: not a regular file any more (it changed during the run), "
                                       "not read\n")


def test_a_file_that_becomes_a_link_after_discovery_is_not_followed(src: Path, tmp_path: Path, monkeypatch, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"not part of the tree\n")

    def swap():
        (src / "a.cu").unlink()
        (src / "a.cu").symlink_to(secret)
    _swap_after_discovery(monkeypatch, pipeline, swap)
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "-q"]) == 2
    assert capsys.readouterr().err == "portkit: a.cu: became a symbolic link during the run, not followed\n"
    assert not (tmp_path / "out" / "a.cu").exists()


# --- temporary files --------------------------------------------------------------------------------

def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temporary_files_are_swept_and_never_inputs(src: Path, tmp_path: Path, capsys):
    stale = src / f".a.cu.portkit-tmp-{_dead_pid()}-k3j4h5gd"       # left by a run killed with SIGKILL
    live = src / f".a.cu.portkit-tmp-{os.getpid()}-abcdefgh"        # a concurrent run's, still writing
    older = src / ".b.cu.k3j4h5gd.portkit-tmp"                       # the older releases' naming
    for path in (stale, live, older):
        path.write_bytes(CUDA)
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.cu"]
    assert main(["audit", str(src), "--format", "json", "-o", str(tmp_path / "audit.json"), "-q"]) == 0
    assert {f["path"] for f in json.loads((tmp_path / "audit.json").read_bytes())["findings"]} <= {"a.cu"}
    assert main(["convert", str(src), "--in-place", "-q"]) == 0
    assert sorted(p.name for p in src.iterdir()) == sorted(["a.cu", live.name, older.name])
    assert live.read_bytes() == older.read_bytes() == CUDA


def test_temporary_files_are_named_so_that_they_are_recognised(src: Path, monkeypatch):
    names: list[str] = []
    real = os.replace

    def replace(a, b):
        names.append(os.path.basename(a))
        return real(a, b)
    monkeypatch.setattr(os, "replace", replace)
    assert main(["convert", str(src), "--in-place", "-q"]) == 0
    assert len(names) == 1 and names[0].startswith(f".a.cu.portkit-tmp-{os.getpid()}-")
    assert portkit.core.output.is_temp_name(names[0])


@pytest.mark.parametrize("name, command, code", [
    ("pyproject.toml", ["audit", "."], 2),
    ("portkit.toml", ["audit", "."], 2),
    (".portkit-baseline.json", ["check", "k.cu"], 2),   # outside git: in a repository check reads it from the index
])
def test_project_files_swapped_for_fifos_never_hang(tmp_path: Path, monkeypatch, capsys, name, command, code):
    """Files found in the tree (configuration, baseline) are read without blocking: one that turns
    into a FIFO after the is_file() check is a one-line error, never a hang."""
    (tmp_path / "k.cu").write_text("__global__ void k(int *o) { o[threadIdx.x % 32] = 1; }\n")
    if command[0] != "check":
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    os.mkfifo(tmp_path / name)
    real_is_file = Path.is_file
    monkeypatch.setattr(Path, "is_file", lambda self: self.name == name or real_is_file(self))   # the race
    monkeypatch.chdir(tmp_path)
    with no_hang():
        assert main(command) == code
    err = capsys.readouterr().err
    assert name in err and "not a regular file" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("write", ["atomic_write", "atomic_copy", "publish_new", "cache"])
def test_an_interrupt_right_after_the_temporary_file_is_made_leaves_none(tmp_path: Path, monkeypatch, write: str):
    """A SIGINT handled just after the temporary file's open returns (a CI runner's interrupt during
    an in-place run landed inside mkstemp, and left an empty `.k.cu.portkit-tmp-...`) is raised
    where the file is removed: none is left beside the file, which keeps its old bytes."""
    from portkit.core import output
    target = tmp_path / "k.cu"
    target.write_bytes(b"old\n")
    source = os.open(target, os.O_RDONLY)
    real = os.open

    def interrupted(path, flags, mode=0o777, **kwargs):
        fd = real(path, flags, mode, **kwargs)
        if output.TEMP_MARK in str(path):
            raise KeyboardInterrupt   # where Python would run the handler of a signal that came meanwhile
        return fd
    monkeypatch.setattr(output.os, "open", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            if write == "atomic_write":
                output.atomic_write(target, b"new\n")
            elif write == "atomic_copy":
                output.atomic_copy(target, source)
            elif write == "publish_new":
                output.publish_new(b"new\n", tmp_path / "k.cu.orig", target)
            else:   # the user's cache (core/datacache.py), which used mkstemp
                from portkit.core import datacache
                datacache._write(target, {"tables": []})
    finally:
        monkeypatch.undo()
        os.close(source)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.cu"] and target.read_bytes() == b"old\n"
