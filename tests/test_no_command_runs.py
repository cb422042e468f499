"""Nothing from a tree, a compile database or an install path is ever run as a command.

Debian's hipcc (hipcc.pl) joins its arguments into one string for system() and leaves those
ending in .a or .lo unescaped; verify runs hipcc's clang itself instead (the command hipcc
would run, as a list), and a wrapper that does not name its clang only gets arguments no shell
would interpret. The installed git hook single-quotes its interpreter path.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, require_tool
from portkit.cli.app import main
from portkit.commands.verify import VerifyOptions, verify_tree
from portkit.commands.verify import compiler as compilers

HIPCC = "hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)"
KERNEL = "#include <hip/hip_runtime.h>\n#include <k.h>\n__global__ void k(float *x) { x[0] = K; }\n"
TRAP_DIR = "i$(touch${IFS}X).a"           # becomes -I.../i$(touch${IFS}X).a; hipcc's shell runs in the tree


def _tree_with_trap_dir(root: Path) -> Path:
    (root / TRAP_DIR).mkdir(parents=True)
    (root / TRAP_DIR / "k.h").write_text("#define K 1.0f\n")
    (root / "a.cu").write_text(KERNEL)
    return root


@pytest.mark.compile
def test_a_directory_named_like_a_command_is_only_an_include_directory(tmp_path: Path, monkeypatch):
    require_tool("hipcc", HIPCC)
    tree = _tree_with_trap_dir(tmp_path / "tree")
    monkeypatch.chdir(tmp_path)
    result = verify_tree(tree, VerifyOptions())
    assert not (tree / "X").exists() and not (tmp_path / "X").exists()
    [unit] = result.units
    assert (unit.rel, unit.status, unit.flags_from) == ("a.cu", "compiled", "tree")
    assert f"-I{tree / TRAP_DIR}" in unit.command
    assert unit.command[0] != result.compiler.path      # hipcc's clang, not the hipcc script


@pytest.mark.compile
def test_a_compile_database_flag_like_a_command_is_only_a_macro(tmp_path: Path, capsys):
    require_tool("hipcc", HIPCC)
    tree, marker = tmp_path / "tree", tmp_path / "X"
    tree.mkdir()
    (tree / "inc").mkdir()
    (tree / "inc" / "k.h").write_text("#define K 1.0f\n")
    (tree / "a.cu").write_text(KERNEL)
    trap = f"-DPK=$(touch {marker}).a"
    (tree / "compile_commands.json").write_text(json.dumps([{
        "directory": str(tree), "file": "a.cu", "arguments": ["nvcc", trap, "-Iinc", "-c", "a.cu"]}]))
    assert main(["verify", str(tree), "-p", str(tree), "--format", "json"]) == 0
    assert not marker.exists()
    [unit] = json.loads(capsys.readouterr().out)["units"]
    assert (unit["path"], unit["status"], unit["flags_from"]) == ("a.cu", "compiled", "compile_commands")
    assert unit["command"][-6:] == [trap, f"-I{tree}/inc", "-c", str(tree / "a.cu"), "-o", os.devnull]


@pytest.mark.compile
def test_verify_runs_the_clang_command_hipcc_would_run(tmp_path: Path):
    """Same argv as hipcc's own (HIPCC_VERBOSE=1 prints it; --cxxflags keeps it from running), so
    a converted tree compiles exactly as it did through hipcc."""
    require_tool("hipcc", HIPCC)
    compiler = compilers.find("hipcc")
    assert compiler.driver is not None and compiler.kind == "hipcc"
    flags = ("-DTILE=16", f"-I{tmp_path}/inc", "-isystem", f"{tmp_path}/sys", "-std=c++17")
    ours = compilers.command(compiler, tmp_path / "a.cu", flags, ("gfx90a", "gfx1030"), ("-DEXTRA",))
    theirs = [compiler.path, *compilers.command(compilers.Compiler(compiler.path, "hipcc", None), tmp_path / "a.cu",
                                                flags, ("gfx90a", "gfx1030"), ("-DEXTRA",))[1:], "--cxxflags"]
    out = subprocess.run(theirs, capture_output=True, text=True, env=dict(compilers.environment(), HIPCC_VERBOSE="1"),
                         check=True).stdout
    [line] = [line for line in out.splitlines() if line.startswith("hipcc-cmd:")]
    ran = shlex.split(line[len("hipcc-cmd:"):])
    ran.remove("--cxxflags")
    assert ours == ran


def _fake_wrapper(tmp_path: Path) -> Path:
    """A hipcc-like wrapper that does not name its clang: it records its arguments and succeeds."""
    script = tmp_path / "bin" / "hipcc-wrapper"
    script.parent.mkdir()
    script.write_text('#!/bin/sh\ncase "$*" in *--version*) echo "HIP version: 5.2.0"; exit 0;; '
                      '*--cxxflags*) exit 1;; esac\n'
                      f'printf "%s\\n" "$@" > {shlex.quote(str(tmp_path / "args"))}\n')
    script.chmod(0o755)
    return script


def test_a_wrapper_that_does_not_name_its_clang_never_gets_shell_text(tmp_path: Path, capsys, monkeypatch):
    wrapper = _fake_wrapper(tmp_path)
    tree = _tree_with_trap_dir(tmp_path / "tree")
    monkeypatch.chdir(tmp_path)
    assert main(["verify", str(tree), "--compiler", str(wrapper)]) == 2
    assert capsys.readouterr().err == (
        f"portkit: error: {tree}/a.cu: not compiled: {wrapper} would pass the argument "
        f"'-I{tree}/{TRAP_DIR}' to a shell, which could run part of it as a command; use Debian's or "
        f"ROCm's hipcc, or --compiler clang++ --rocm-path DIR\n")
    assert not (tmp_path / "args").exists() and not (tree / "X").exists()


def test_a_wrapper_that_does_not_name_its_clang_still_compiles_plain_trees(tmp_path: Path):
    wrapper = _fake_wrapper(tmp_path)
    tree = tmp_path / "tree"
    (tree / "inc").mkdir(parents=True)
    (tree / "inc" / "k.h").write_text("#define K 1.0f\n")
    (tree / "a.cu").write_text(KERNEL)
    result = verify_tree(tree, VerifyOptions(compiler=str(wrapper)))
    assert result.compiler.driver is None                 # run as itself: it named no clang
    assert [(u.rel, u.status) for u in result.units] == [("a.cu", "compiled")]
    assert (tmp_path / "args").read_text().splitlines() == [
        "-x", "hip", "--offload-arch=gfx90a", "-fno-caret-diagnostics", "-fno-color-diagnostics",
        "-fno-diagnostics-fixit-info", f"-I{tree}/inc", "-c", str(tree / "a.cu"), "-o", os.devnull]


@pytest.mark.parametrize("arg", ["-DV=\"1\"", "-Ia b", "-DX=`id`", "-DX=$HOME", "-DX=a;b", "-DX=(1)",
                                 "@resp", "-Wl,@resp", "-DX=a\nb", "-I/a/b'c"])
def test_every_argument_a_shell_would_interpret_is_refused(arg: str):
    wrapper = compilers.Compiler("/opt/x/hipcc", "hipcc", None)
    assert compilers.unsafe(wrapper, ["/opt/x/hipcc", "-x", "hip", arg, "-c", "/t/a.cu"]) == arg
    assert compilers.unsafe(wrapper, ["/opt/x/hipcc", "-DV=1", "-I/a/b-c_d+e,f.g", "-std=c++17"]) is None
    # clang, and hipcc's clang, take a list: nothing is refused
    assert compilers.unsafe(compilers.Compiler("/usr/bin/clang++", "clang", None), ["clang++", arg]) is None
    driven = compilers.Compiler("/usr/bin/hipcc", "hipcc", None, None, "/usr/bin/clang++-15")
    assert compilers.unsafe(driven, ["/usr/bin/clang++-15", arg]) is None


# --- relative --source (was: "none of its files is in OUT") --------------------------------------

@pytest.mark.compile
def test_verify_with_a_relative_source_maps_the_database(tmp_path: Path, capsys, monkeypatch):
    require_tool("hipcc", HIPCC)
    fixture = REPO / "fixtures" / "verify" / "compile_commands" / "input"
    proj = tmp_path / "proj"
    for rel in ("src/transpose.cu", "config/tile.h"):
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_bytes((fixture / rel).read_bytes())
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "compile_commands.json").write_text(json.dumps([{
        "directory": str(proj), "file": "src/transpose.cu",
        "command": "nvcc -DTILE=16 -Iconfig -std=c++17 -c src/transpose.cu -o x.o"}]))
    monkeypatch.chdir(tmp_path)
    assert main(["convert", "proj", "-o", "out", "--rocm", "5.2", "-q"]) == 0
    capsys.readouterr()
    assert main(["verify", "out", "-p", "build", "--source", "proj", "-q"]) == 0
    assert capsys.readouterr().out == "portkit verify: 1/1 compiled, 0 failed (0 unexplained)\n"


# --- the git hook ---------------------------------------------------------------------------------

def test_the_hook_quotes_its_interpreter_path(tmp_path: Path, monkeypatch, capsys):
    require_tool("git", "git")
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    place = tmp_path / "a'b\"c$(touch X)`touch Y`$HOME"
    place.mkdir()
    python = place / "py"
    python.symlink_to("/bin/echo")            # shows the arguments sh gave the very file named
    monkeypatch.chdir(repo)
    monkeypatch.setattr(sys, "executable", str(python))
    assert main(["hook", "install"]) == 0
    hook = repo / ".git" / "hooks" / "pre-commit"
    quoted = f"'{tmp_path}/a'\"'\"'b\"c$(touch X)`touch Y`$HOME/py'"     # a ' becomes '"'"' (shlex.quote)
    assert hook.read_text().splitlines()[-1] == f"exec {quoted} -P -m portkit check --staged"
    done = subprocess.run(["sh", str(hook)], cwd=repo, capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "-P -m portkit check --staged\n", "")
    assert not (repo / "X").exists() and not (repo / "Y").exists()
