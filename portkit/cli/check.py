"""Command line of the commit gate: `portkit check`, `portkit baseline`, `portkit hook install`.

Kept apart from cli.py's other commands so that the pre-commit hook imports nothing it does not
use (no rich, no process pool): its whole run must fit in half a second.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import stat
import sys
from pathlib import Path

from .common import add_mappings, add_no_cache
from ..core.errors import PortkitError
from ..report import GATE_EMITTERS
from ..report.safe_text import safe
from ..core.pylaunch import module_command

HOOK = """#!/bin/sh
# Installed by `portkit hook install`: blocks new non-portable CUDA code at commit time.
# Remove this file (or run `portkit hook uninstall`) to stop it; `git commit --no-verify` skips it once.
exec {command} check --staged
"""
BACKUP = "pre-commit.portkit-backup"   # a foreign hook that --force replaced; later ones get .1, .2 ...


def add_parsers(sub: argparse._SubParsersAction, codes) -> None:
    p = sub.add_parser(
        "check", help="pre-commit gate: fail on NEW non-portable code only",
        description="Scan the files given (or the staged files) and fail (exit 1) on findings that are "
                    "new - on lines the change adds, and not accepted in the baseline - at or above "
                    "--fail-on. Exit 0 otherwise, 2 on errors.")
    p.add_argument("files", nargs="*", type=Path, metavar="FILE",
                   help="files to check (pre-commit passes the staged ones); default: the staged files")
    p.add_argument("--staged", action="store_true",
                   help="new = added in the staged diff, contents from the index (default without FILEs)")
    p.add_argument("--diff-base", metavar="REV", help="new = added since REV (working tree against REV)")
    p.add_argument("--fail-on", choices=("blocker", "high", "medium", "low", "info"),
                   help="lowest severity that fails (default high, or fail-on in the configuration)")
    p.add_argument("--baseline", type=Path, metavar="FILE",
                   help="accepted findings (default .portkit-baseline.json at the project root)")
    p.add_argument("--format", choices=tuple(GATE_EMITTERS), default="text",
                   help="text (default), json, sarif (for code scanning) or github (workflow commands: an "
                        "annotation on each line in GitHub Actions); docs/ci.md")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but the findings and errors")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when new findings block (2 still for errors)")
    add_no_cache(p)
    _common(p, codes)
    b = sub.add_parser(
        "baseline", help="accept every current finding (write .portkit-baseline.json)",
        description="Audit the whole project and write the fingerprints of all its findings, sorted, to "
                    ".portkit-baseline.json at its root; `portkit check` then reports only new ones.")
    b.add_argument("path", nargs="?", type=Path, metavar="PATH",
                   help="the project root (default: the git repository root, or the current directory)")
    b.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the baseline to FILE instead")
    _common(b, codes)
    h = sub.add_parser("hook", help="install the git pre-commit hook",
                       description="Manage a plain .git/hooks/pre-commit that runs `portkit check --staged` "
                                   "(for repositories that do not use the pre-commit framework).")
    h.add_argument("action", choices=("install", "uninstall"))
    h.add_argument("--force", action="store_true", help="replace an existing hook (kept as pre-commit.portkit-backup, or .1, .2 ... when that is taken)")


def _common(p: argparse.ArgumentParser, codes) -> None:
    p.add_argument("--select", type=codes, action="extend", default=[], metavar="CODES",
                   help="only these rule codes or prefixes (PK2,PK301)")
    p.add_argument("--ignore", type=codes, action="extend", default=[], metavar="CODES",
                   help="skip these rule codes or prefixes")
    p.add_argument("--rocm", metavar="X.Y", help="target ROCm release (default: the newest the tables know)")
    add_mappings(p)


def _options(args: argparse.Namespace):
    """check's options as the user gave them; what is unset comes from the gate's policy, which
    check reads from the version the change is compared with (gate_policy.py). Outside --staged
    and --diff-base, pre-commit's --from-ref/--to-ref (in CI) say what the change is."""
    from ..commands.check import CheckOptions

    staged, diff_base, to_ref = args.staged, args.diff_base, None
    from_env = os.environ.get("PRE_COMMIT_FROM_REF")
    if not staged and diff_base is None and from_env:
        diff_base, to_ref = from_env, os.environ.get("PRE_COMMIT_TO_REF") or None
    return CheckOptions(
        files=tuple(args.files or ()), staged=staged, diff_base=diff_base, to_ref=to_ref,
        fail_on=args.fail_on, select=tuple(args.select), ignore=tuple(args.ignore),
        baseline=args.baseline, rocm=args.rocm, mappings=tuple(args.mappings),
        cache=getattr(args, "cache", True))


def run(args: argparse.Namespace) -> int:
    if args.command == "check":
        return _check(args)
    if args.command == "baseline":
        return _baseline(args)
    return _hook(args)


def _check(args: argparse.Namespace) -> int:
    from ..commands.check import run_check
    from ..report import gate_emitter

    result = run_check(_options(args))
    gate_emitter(args.format)(result, sys.stdout, sys.stderr, args.quiet)
    if result.unchecked:   # a file it could not check is an error, --exit-zero or not
        return 2
    return 1 if result.blocking and not args.exit_zero else 0


def _baseline(args: argparse.Namespace) -> int:
    """Write the baseline of the work tree: the user accepts what is there now. Its path comes
    from -o, or from the configuration, which may not place it outside the root or behind a link."""
    from ..project import config, git
    from ..commands.check import write_baseline
    from ..commands.gate_policy import baseline_rel, safe_path

    cfg = config.find()
    root = (args.path or git.toplevel(Path.cwd()) or cfg.root or Path.cwd()).absolute()
    if not root.is_dir():
        raise PortkitError(f"{root}: not a directory")
    target = args.output or safe_path(root, baseline_rel(root, cfg, None, Path.cwd()))
    findings, files = write_baseline(root, target, cfg, tuple(args.select) or cfg.select,
                                     tuple(args.ignore) or cfg.ignore, args.rocm, tuple(args.mappings),
                                     in_tree=args.output is None)
    print(f"portkit baseline: {findings} finding{'s' if findings != 1 else ''} in {files} files accepted "
          f"-> {safe(str(target))}")
    return 0


def _hook(args: argparse.Namespace) -> int:
    from ..core.output import atomic_write
    from ..project import git

    root = git.toplevel(Path.cwd())
    if root is None:
        raise PortkitError("not in a git repository")
    hook = git.hooks_dir(root) / "pre-commit"
    ours = _is_ours(hook)
    if args.action == "uninstall":
        return _uninstall(hook, ours)
    if os.path.lexists(hook) and not ours:
        if not args.force:
            raise PortkitError(f"{hook} exists and is not portkit's; use --force to replace it "
                               f"(it is kept as {_free_backup(hook).name})")
        print(f"portkit hook: {_keep(hook)}")
    hook.parent.mkdir(parents=True, exist_ok=True)
    # git runs the hook at the top of the work tree: the interpreter must not import a `portkit.py`
    # or `portkit/` the repository holds (pylaunch). Single quotes: whatever the interpreter's path
    # holds ($, `, ", $(...)), sh runs that very file (fsencode: a path that is not UTF-8 is
    # written as the bytes it is on disk). Replaced by a rename: a link there is not written through
    command = " ".join(shlex.quote(part) for part in module_command("portkit"))
    atomic_write(hook, os.fsencode(HOOK.format(command=command)))
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    print(f"portkit hook: {'updated' if ours else 'installed'} {safe(str(hook))} (runs `portkit check --staged` "
          f"before each commit)")
    return 0


_OWN_HOOK = re.compile(re.escape(HOOK.split("exec ")[0]) + r"exec [^\n]+ check --staged\n\Z")


def _is_ours(hook: Path) -> bool:
    """The hook is one `portkit hook install` wrote (any release: only its interpreter path
    differs), not a user's that merely mentions portkit: only ours is replaced without a backup."""
    data = _bytes(hook)
    return data is not None and _OWN_HOOK.match(data.decode("utf-8", "surrogateescape")) is not None


def _backups(hook: Path) -> list[Path]:
    """The hooks kept by earlier installs, oldest first: pre-commit.portkit-backup, then .1, .2 ..."""
    names = [hook.with_name(BACKUP)] + [hook.with_name(f"{BACKUP}.{n}") for n in range(1, _free_number(hook))]
    return [name for name in names if os.path.lexists(name)]


def _free_number(hook: Path) -> int:
    number = 1
    while os.path.lexists(hook.with_name(f"{BACKUP}.{number}")):
        number += 1
    return number


def _free_backup(hook: Path) -> Path:
    """The name the next foreign hook is kept under: one that no entry (a link included) has."""
    first = hook.with_name(BACKUP)
    return hook.with_name(f"{BACKUP}.{_free_number(hook)}") if os.path.lexists(first) else first


def _keep(hook: Path) -> str:
    """Move a foreign hook aside under a name no backup has: a second --force must never replace
    the user's original hook, kept by the first, with what stood there since."""
    current = _bytes(hook)
    for old in _backups(hook):
        if current is not None and _bytes(old) == current:   # already kept, byte for byte
            return f"the existing hook is already kept as {safe(str(old))}"
    backup = _free_backup(hook)
    os.rename(hook, backup)   # the entry itself (a link stays a link); the name was free
    return f"kept the existing hook as {safe(str(backup))}"


def _bytes(path: Path) -> bytes | None:
    """A hook's bytes; None for a link, a FIFO or anything else that is not a regular file."""
    from ..core.files import read_regular
    try:
        return read_regular(path, follow=False)
    except OSError:
        return None


def _uninstall(hook: Path, ours: bool) -> int:
    """Remove portkit's hook and put back the one it replaced last (the newest backup)."""
    if not ours:
        raise PortkitError(f"{hook}: not installed by portkit; left as it is")
    hook.unlink()
    kept = _backups(hook)
    if kept:
        os.rename(kept[-1], hook)
        print(f"portkit hook: removed; restored the previous hook from {safe(kept[-1].name)}")
    else:
        print(f"portkit hook: removed {safe(str(hook))}")
    return 0
