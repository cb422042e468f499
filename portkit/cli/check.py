"""Command line of the commit gate: `portkit check`, `portkit baseline`, `portkit hook install`.

Kept apart from cli.py's other commands so that the pre-commit hook imports nothing it does not
use (no rich, no process pool): its whole run must fit in half a second.
"""

from __future__ import annotations

import argparse
import os
import shlex
import stat
import sys
from pathlib import Path

from ..core.errors import PortkitError
from ..report.safe_text import safe
from ..core.pylaunch import module_command
from ..rules.codes import Code

HOOK = """#!/bin/sh
# Installed by `portkit hook install`: blocks new non-portable CUDA code at commit time.
# Remove this file (or run `portkit hook uninstall`) to stop it; `git commit --no-verify` skips it once.
exec {command} check --staged
"""


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
    h.add_argument("--force", action="store_true", help="replace an existing hook (kept as pre-commit.portkit-backup)")


def _common(p: argparse.ArgumentParser, codes) -> None:
    p.add_argument("--select", type=codes, action="extend", default=[], metavar="CODES",
                   help="only these rule codes or prefixes (PK2,PK301)")
    p.add_argument("--ignore", type=codes, action="extend", default=[], metavar="CODES",
                   help="skip these rule codes or prefixes")
    p.add_argument("--rocm", metavar="X.Y", help="target ROCm release (default: the newest the tables know)")


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
        baseline=args.baseline, rocm=args.rocm)


def run(args: argparse.Namespace) -> int:
    if args.command == "check":
        return _check(args)
    if args.command == "baseline":
        return _baseline(args)
    return _hook(args)


def _check(args: argparse.Namespace) -> int:
    from ..commands.check import run_check

    result = run_check(_options(args))
    out, fail_on = sys.stdout, result.fail_on
    for f in result.blocking:
        _write(out, f"{safe(f.path)}:{f.line}:{f.column}: {f.code} {safe(f.message)}\n")
        if f.fix:
            _write(out, f"    fix: {safe(f.fix)}\n")
    for f in result.below:
        if f.code == Code.GATE_POLICY_CHANGED:   # a change of policy is always shown, blocking or not
            _write(out, f"{safe(f.path)}:{f.line}:{f.column}: note: {f.code} {safe(f.message)}\n")
    for rel, s in result.suppressions:
        codes = ",".join(s.codes) or "every code"
        lacks = s.lacks()
        _write(out, f"{safe(rel)}:{s.line}: note: this change adds a suppression of {safe(codes)}"
                    + (f" without {lacks}: it hides nothing (give the codes and the reason: "
                       f"`portkit: ignore[PK301] why it is safe`)\n" if lacks else f" ({safe(s.reason)})\n"))
    for rel, why in result.unchecked:   # unchecked is not clean: the commit waits for a decision
        _write(sys.stderr, f"portkit: error: {safe(rel)}: {why}; not checked, so the commit is blocked "
                           f"(exclude it in the configuration, or commit with --no-verify)\n")
    if result.not_compared and not result.blocking:
        n = result.not_compared
        out.write(f"portkit check: nothing to compare: {n} file{'s' if n != 1 else ''} not checked (none "
                  f"differs from HEAD; in CI pass --diff-base REV, or run pre-commit with --from-ref and "
                  f"--to-ref)\n")
        return 0
    known = result.accepted + result.untouched
    if result.blocking:
        n = len(result.blocking)
        out.write(f"portkit check: {n} new finding{'s' if n != 1 else ''} at or above {fail_on} "
                  f"({result.mode}). Fix {'them' if n != 1 else 'it'}, or suppress one on its line with "
                  f"`// portkit: ignore[CODE] reason` (`#` in build and Python files), or accept all "
                  f"current findings with `portkit baseline`.\n")
        return 2 if result.unchecked else 1
    if result.unchecked:
        return 2
    below = len(result.below)
    out.write(f"portkit check: {len(result.files)} file{'s' if len(result.files) != 1 else ''} checked "
              f"({result.mode}), no new findings at or above {fail_on}"
              f"{f'; {known} known' if known else ''}{f', {below} below {fail_on}' if below else ''}\n")
    return 0


def _write(stream, text: str) -> None:
    """Write a line of check's output. Text from the tree in it has been through report.safe_text
    (control characters and undecodable bytes shown as \\xNN); what remains is encoded as UTF-8
    whatever the stream's own encoding."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
        return
    stream.flush()
    buffer.write(text.encode("utf-8", "surrogateescape"))
    buffer.flush()


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
                                     tuple(args.ignore) or cfg.ignore, args.rocm or cfg.rocm)
    print(f"portkit baseline: {findings} finding{'s' if findings != 1 else ''} in {files} files accepted "
          f"-> {safe(str(target))}")
    return 0


def _hook(args: argparse.Namespace) -> int:
    from ..project import git

    root = git.toplevel(Path.cwd())
    if root is None:
        raise PortkitError("not in a git repository")
    hook = git.hooks_dir(root) / "pre-commit"
    backup = hook.with_name("pre-commit.portkit-backup")
    ours = hook.is_file() and "portkit hook install" in hook.read_text(encoding="utf-8", errors="replace")
    if args.action == "uninstall":
        if not ours:
            raise PortkitError(f"{hook}: not installed by portkit; left as it is")
        hook.unlink()
        if backup.exists():
            backup.rename(hook)
            print(f"portkit hook: removed; restored the previous hook from {safe(backup.name)}")
        else:
            print(f"portkit hook: removed {safe(str(hook))}")
        return 0
    if hook.exists() and not ours:
        if not args.force:
            raise PortkitError(f"{hook} exists and is not portkit's; use --force to replace it "
                               f"(it is kept as {backup.name})")
        os.replace(hook, backup)
        print(f"portkit hook: kept the existing hook as {safe(str(backup))}")
    hook.parent.mkdir(parents=True, exist_ok=True)
    # git runs the hook at the top of the work tree: the interpreter must not import a `portkit.py`
    # or `portkit/` the repository holds (pylaunch). Single quotes: whatever the interpreter's path
    # holds ($, `, ", $(...)), sh runs that very file (fsencode: a path that is not UTF-8 is
    # written as the bytes it is on disk)
    command = " ".join(shlex.quote(part) for part in module_command("portkit"))
    hook.write_bytes(os.fsencode(HOOK.format(command=command)))
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    print(f"portkit hook: {'updated' if ours else 'installed'} {safe(str(hook))} (runs `portkit check --staged` "
          f"before each commit)")
    return 0
